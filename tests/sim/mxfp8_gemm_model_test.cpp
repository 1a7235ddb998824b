// The MXFP8 grouped GEMM model (sim/src/mxfp8_gemm_model.cpp) on the shipped H100 profile; every
// expected number is worked out by hand from the profile's figures and the measured promote rate.
#include "models/gpu_profile.h"
#include "models/kernel_spec.h"
#include "models/spec_error.h"
#include "sim/kernel_model.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace tilesim;

namespace {

nlohmann::json mxfp8_json(const char* scheme, int stages = 4) {
  return {{"name", "t"},
          {"kind", "grouped_gemm"},
          {"dtype", "mxfp8"},
          {"experts", {300, 0, 128}},
          {"n", 256},
          {"k", 7168},
          {"layout", {{"a", "row"}, {"b", "col"}}},
          {"tile", {{"m", 128}, {"n", 128}, {"k", 128}}},
          {"stages", stages},
          {"warps", 12},
          {"persistent", true},
          {"cluster", 2},
          {"order", "row_major"},
          {"block_scale", {{"scheme", scheme}}}};
}

// The transposed scheme's spec: tile_m tokens x tile_n channels x 128, its warpgroups, no clusters.
nlohmann::json transposed_json(int tile_m, int stages, int tile_n = 64) {
  nlohmann::json j = mxfp8_json("transposed", stages);
  j["tile"] = {{"m", tile_m}, {"n", tile_n}, {"k", 128}};
  j["warps"] = tile_m <= 32 ? 20 : 12;
  j["cluster"] = 1;
  return j;
}

std::unique_ptr<KernelModel> model(const nlohmann::json& j, const GpuProfile& gpu) {
  return make_kernel_model(parse_kernel_spec(j, "spec.json"), gpu);
}

GpuProfile gpu(const char* file) {
  return load_gpu_profile(std::string(TILESIM_SOURCE_DIR) + "/models/gpus/" + file + ".json");
}

} // namespace

TEST_CASE("mxfp8 GEMM model: chosen for MXFP8 x MXFP8 on Hopper, the tcgen05 model on Blackwell") {
  const KernelSpec spec = parse_kernel_spec(mxfp8_json("promote"), "spec.json");
  CHECK(kernel_model_name(spec, gpu("h100_sxm")) == "mxfp8_gemm");
  CHECK(kernel_model_name(spec, gpu("b200")) == "tcgen05_gemm");
  CHECK_THROWS_AS(model(mxfp8_json("promote"), gpu("a100_sxm4_80gb")), SpecError); // no FP8 tensor cores
}

TEST_CASE("mxfp8 GEMM model: per 128-deep step, the MMA and the measured stage of each scheme") {
  // fp8 8192 and bf16 4096 FLOP per SM cycle, SM clock 1630 MHz; mxfp8_stage_ns: promote 1367.1,
  // dequantize 1898.9, transposed 385.2 / 514.0 / 738.6 / 1059.2 ns at 16 / 32 / 64 / 128 tokens x 64
  // channels, 1606.0 at 128 x 128.
  const GpuProfile h100 = gpu("h100_sxm");
  REQUIRE(h100.sm.clock_mhz == Approx(1630));
  SECTION("promote: FP8 MMA 2 x 128^3 / 8192 = 512 cycles; the stage 1367.1 ns x 1.63 GHz = 2228.4 cycles") {
    const auto m = model(mxfp8_json("promote"), h100);
    CHECK(m->mma_cycles_per_k_step() == Approx(512));
    CHECK(m->element_cycles_per_k_step() == Approx(2228.4).epsilon(1e-4));
    CHECK(m->k_steps() == 56); // 7168 / 128
  }
  SECTION("dequantize: bf16 MMA 2 x 128^3 / 4096 = 1024; the stage 1898.9 ns x 1.63 GHz = 3095.2 cycles") {
    const auto m = model(mxfp8_json("dequantize", 3), h100);
    CHECK(m->mma_cycles_per_k_step() == Approx(1024));
    CHECK(m->element_cycles_per_k_step() == Approx(3095.2).epsilon(1e-4));
  }
  SECTION("dequantize keeps two converted bf16 B tiles (64 KB) beside the ring: 6 stages no longer fit") {
    // 6 x 32 KB + 1 KB + 64 KB = 263168 > 232448; 4 stages: 131072 + 1024 + 65536
    CHECK_THROWS_AS(model(mxfp8_json("dequantize", 6), h100), SpecError);
    CHECK(model(mxfp8_json("dequantize", 4), h100)->resources().shared_memory_bytes == 197632);
    CHECK(model(mxfp8_json("promote", 6), h100)->resources().shared_memory_bytes == 197632);
  }
  SECTION("transposed, 16 tokens x 64 channels: bf16 MMA 2 x 16 x 64 x 128 / 4096 = 64; the stage 385.2 ns = 627.9 cycles") {
    const auto m = model(transposed_json(16, 12), h100);
    CHECK(m->mma_cycles_per_k_step() == Approx(64));
    CHECK(m->element_cycles_per_k_step() == Approx(627.9).epsilon(1e-4));
    // Epilogue: 9 instructions for each of 16 x 64 outputs over 4 schedulers' 32 lanes (72), and
    // consumer 0 loads and adds 8 sums of each of 3 other consumers, 2 instructions each (48).
    CHECK(m->epilogue_cycles() == Approx(120));
    // The FP8 ring, 12 x (16 + 64) x 128 + 1 KB = 123904, four bf16 copies of X (4 x 16 x 128 x 2 =
    // 16384) and three consumers' split-K sums (3 x 8 x 128 x 4 = 12288).
    CHECK(m->resources().shared_memory_bytes == 152576);
  }
  SECTION("transposed, 128 tokens: two consumers, the stage 1059.2 ns = 1726.5 cycles") {
    const auto m = model(transposed_json(128, 4), h100);
    CHECK(m->element_cycles_per_k_step() == Approx(1726.5).epsilon(1e-4));
    CHECK(m->epilogue_cycles() == Approx(9.0 * 128 * 64 / 128 + 2 * 64)); // one other consumer's 64 sums
  }
  SECTION("transposed, 128 x 128: MMA 2 x 128^3 / 4096 = 1024, the stage 1606.0 ns = 2617.8 cycles") {
    const auto m = model(transposed_json(128, 4, 128), h100);
    CHECK(m->mma_cycles_per_k_step() == Approx(1024));
    CHECK(m->element_cycles_per_k_step() == Approx(2617.8).epsilon(1e-4));
    CHECK(m->epilogue_cycles() == Approx(9.0 * 128 * 128 / 128)); // each consumer its own 64 channels, no split-K
    // The FP8 ring, 4 x (128 + 128) x 128 + 1 KB = 132096, and three bf16 copies of X (3 x 128 x 128 x 2).
    CHECK(m->resources().shared_memory_bytes == 230400);
    CHECK_THROWS_AS(model(transposed_json(128, 5, 128), h100), SpecError); // 263168 > 232448
  }
  SECTION("xpass, 128 x 128 on bf16 X: MMA 1024, the stage 953.1 ns = 1553.6 cycles, X's ring stages in bf16") {
    nlohmann::json j = transposed_json(128, 4, 128);
    j["block_scale"]["scheme"] = "xpass";
    const auto m = model(j, h100);
    CHECK(m->mma_cycles_per_k_step() == Approx(1024));
    CHECK(m->element_cycles_per_k_step() == Approx(1553.6).epsilon(1e-4));
    CHECK(m->epilogue_cycles() == Approx(9.0 * 128 * 128 / 128));
    // 4 x (128 x 128 x 2 of bf16 X + 128 x 128 of FP8 W) + 1 KB = 197632; 5 stages 246784 > 232448.
    CHECK(m->resources().shared_memory_bytes == 197632);
    j["stages"] = 5;
    CHECK_THROWS_AS(model(j, h100), SpecError);
    j = transposed_json(128, 4);
    j["block_scale"]["scheme"] = "xpass";
    CHECK_THROWS_WITH(model(j, h100), Catch::Contains("tile") && Catch::Contains("xpass") && Catch::Contains("128 x 128 x 128"));
  }
  SECTION("xpass_f16, 128 x 128 on f16 X: MMA 1024 (f16 wgmma at bf16's rate), the stage 627.2 ns = 1022.3 cycles") {
    nlohmann::json j = transposed_json(128, 4, 128);
    j["block_scale"]["scheme"] = "xpass_f16";
    const auto m = model(j, h100);
    CHECK(m->mma_cycles_per_k_step() == Approx(1024));
    CHECK(m->element_cycles_per_k_step() == Approx(1022.3).epsilon(1e-4)); // 627.2 ns x 1630 MHz
    CHECK(m->epilogue_cycles() == Approx((9.0 + 2.0) * 128 * 128 / 128)); // and the power of two: add, FMUL
    CHECK(m->resources().shared_memory_bytes == 197632);                   // xpass's ring: f16 X is bf16's bytes
    j = transposed_json(64, 4);
    j["block_scale"]["scheme"] = "xpass_f16";
    CHECK_THROWS_WITH(model(j, h100), Catch::Contains("tile") && Catch::Contains("xpass_f16") &&
                                          Catch::Contains("16, 32, 64 or 128 tokens x 128 x 128"));
  }
  SECTION("xpass_f16, 16 tokens x 128 channels: MMA 128, the stage 413.4 ns = 673.8 cycles, a 20 KB stage") {
    nlohmann::json j = transposed_json(16, 8, 128);
    j["warps"] = 12; // two consumers of 64 channels, as at 128 tokens
    j["block_scale"]["scheme"] = "xpass_f16";
    const auto m = model(j, h100);
    CHECK(m->mma_cycles_per_k_step() == Approx(128)); // 2 x 16 x 128 x 128 at 4096 a cycle
    CHECK(m->element_cycles_per_k_step() == Approx(673.8).epsilon(1e-4)); // 413.4 ns x 1630 MHz
    CHECK(m->epilogue_cycles() == Approx((9.0 + 2.0) * 16 * 128 / 128));
    CHECK(m->resources().shared_memory_bytes == 164864); // 8 x (16 x 128 x 2 of f16 X + 128 x 128 of W) + 1 KB
    j["tile"]["m"] = 32; // built, but its stage not measured
    CHECK_THROWS_WITH(model(j, h100), Catch::Contains("mxfp8_stage_ns") && Catch::Contains("32x128") &&
                                          Catch::Contains("mxfp8_stage_rate"));
    j["tile"]["m"] = 48;
    CHECK_THROWS_WITH(model(j, h100), Catch::Contains("tile") && Catch::Contains("16, 32, 64 or 128 tokens"));
  }
  SECTION("xpass_f16, 128 tokens x 256 channels: MMA 2048, the stage 1371.3 ns = 2235.2 cycles, 64 KB stages") {
    nlohmann::json j = transposed_json(128, 3, 256);
    j["block_scale"]["scheme"] = "xpass_f16";
    const auto m = model(j, h100);
    CHECK(m->mma_cycles_per_k_step() == Approx(2048)); // 2 x 128 x 256 x 128 at 4096 a cycle
    CHECK(m->element_cycles_per_k_step() == Approx(2235.2).epsilon(1e-4)); // 1371.3 ns x 1630 MHz
    CHECK(m->epilogue_cycles() == Approx((9.0 + 2.0) * 128 * 256 / 128));
    CHECK(m->resources().shared_memory_bytes == 197632); // 3 x (128 x 128 x 2 of f16 X + 256 x 128 of W) + 1 KB
    j["stages"] = 4; // 263168 > 232448
    CHECK_THROWS_AS(model(j, h100), SpecError);
    j = transposed_json(64, 3, 256); // 256 channels at 128 tokens only
    j["block_scale"]["scheme"] = "xpass_f16";
    CHECK_THROWS_WITH(model(j, h100), Catch::Contains("tile") && Catch::Contains("or 128 x 256 x 128"));
    j = transposed_json(128, 3, 256);
    j["block_scale"]["scheme"] = "xpass"; // xpass has no 256-channel kernel
    CHECK_THROWS_WITH(model(j, h100), Catch::Contains("tile") && Catch::Contains("use 128 x 128 x 128"));
  }
  SECTION("transposed refuses a tile its kernel is not built for, and a tile_m without a measured stage") {
    CHECK_THROWS_WITH(model(transposed_json(16, 12, 128), h100), Catch::Contains("tile") && Catch::Contains("x 64 x 128"));
    CHECK_THROWS_WITH(model(transposed_json(48, 12), h100),
                      Catch::Contains("mxfp8_stage_ns") && Catch::Contains("mxfp8_stage_rate"));
  }
  SECTION("a profile without mxfp8_stage_ns: one error naming the field and the microbenchmark") {
    GpuProfile bare = h100;
    bare.mxfp8_stage = Mxfp8StageNs{};
    CHECK_THROWS_WITH(model(mxfp8_json("promote"), bare),
                      Catch::Contains("mxfp8_stage_ns") && Catch::Contains("mxfp8_stage_rate"));
  }
}

TEST_CASE("mxfp8 GEMM model: scales are one 32-byte sector per row every 8 steps, X rows then W rows") {
  const auto m = model(mxfp8_json("promote"), gpu("h100_sxm"));
  WorkItem item;
  item.tile = m->lookup_tile(5).tile; // row_major over 3 + 0 + 1 tile rows x 2 columns: expert 0, row 2, col 1
  REQUIRE(item.tile.expert == 0);
  REQUIRE(item.tile.local_row == 2);
  REQUIRE(item.tile.col == 1);
  std::vector<OperandBox> step0, step1, step8;
  m->load_boxes(item, 0, step0);
  m->load_boxes(item, 1, step1);
  m->load_boxes(item, 8, step8);
  REQUIRE(step0.size() == step1.size() + 2);
  const Box x = step0[step0.size() - 2].box, w = step0.back().box;
  CHECK(x.rows == 300 - 256); // the expert's last 44 tokens
  CHECK(x.row_bytes == 32);
  CHECK(x.row_stride == 7168 / 32);
  CHECK(w.rows == 128);
  CHECK(w.base > x.base); // W's scales after X's
  // Step 8 reads the next sector of the same rows: 32 blocks = 32 bytes further.
  REQUIRE(step8.size() == step0.size());
  CHECK(step8[step8.size() - 2].box.base == x.base + 32);
  CHECK(step8.back().box.base == w.base + 32);
}

TEST_CASE("mxfp8 GEMM model: xpass reads W's scales only, after a pass over X modelled as its rowwise quantiser") {
  nlohmann::json j = transposed_json(128, 4, 128);
  j["block_scale"]["scheme"] = "xpass";
  const KernelSpec spec = parse_kernel_spec(j, "spec.json");
  const auto m = make_kernel_model(spec, gpu("h100_sxm"));
  WorkItem item;
  item.tile = m->lookup_tile(0).tile;
  std::vector<OperandBox> step0, step1;
  m->load_boxes(item, 0, step0);
  m->load_boxes(item, 1, step1);
  REQUIRE(step0.size() == step1.size() + 1); // W's scale sector, no X scales: X arrives dequantised
  CHECK(step0.back().operand == Operand::b);
  // X's box: 128 tokens x 128 of K in bf16, 256 bytes a row, k x 2 bytes apart.
  CHECK(step1.front().operand == Operand::a);
  CHECK(step1.front().box.row_bytes == 256);
  CHECK(step1.front().box.row_stride == 7168 * 2);
  const std::optional<KernelSpec> pass = mxfp8_pass_before(spec, gpu("h100_sxm"));
  REQUIRE(pass);
  CHECK(pass->kind == KernelKind::mxfp8_quantize);
  CHECK(pass->mxfp8.rows == 300 + 0 + 128);
  CHECK(pass->mxfp8.cols == 7168);
  CHECK(pass->mxfp8.axis == Mxfp8Axis::rowwise);
  CHECK(pass->mxfp8.dequantize); // FP8 and scales in, bf16 out
  CHECK_FALSE(mxfp8_pass_before(spec, gpu("b200"))); // block scaling in the tensor cores: no pass
  CHECK_FALSE(mxfp8_pass_before(parse_kernel_spec(transposed_json(128, 4, 128), "t.json"), gpu("h100_sxm")));
}

TEST_CASE("mxfp8 GEMM model: xpass_f16's pass also reads W's scales, charged as that many bytes more of X's stream") {
  nlohmann::json j = transposed_json(128, 4, 128);
  j["block_scale"]["scheme"] = "xpass_f16";
  const std::optional<KernelSpec> pass = mxfp8_pass_before(parse_kernel_spec(j, "spec.json"), gpu("h100_sxm"));
  REQUIRE(pass);
  CHECK(pass->kind == KernelKind::mxfp8_quantize);
  CHECK(pass->mxfp8.dequantize);
  // W: 3 experts x 256 channels x 224 scale bytes = 172,032 bytes; a row of X's stream moves (3 + 1/32) x 7168 =
  // 21,728: 7.92 rows, 8 more than X's 300 + 0 + 128.
  CHECK(pass->mxfp8.rows == 428 + 8);
  CHECK(pass->mxfp8.cols == 7168);
}

TEST_CASE("mxfp8 GEMM spec: K in whole MX blocks, the block of 32, an FP8 element, only on MXFP8") {
  nlohmann::json j = mxfp8_json("promote");
  const auto error_of = [](const nlohmann::json& spec) {
    try {
      parse_kernel_spec(spec, "spec.json");
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of(j) == "no error");
  j["k"] = 7000;
  CHECK_THAT(error_of(j), Catch::Contains("spec.json") && Catch::Contains("k") && Catch::Contains("multiple of 32") &&
                              Catch::Contains("7008"));
  j["k"] = 7168;
  j["block_scale"]["block"] = 16;
  CHECK_THAT(error_of(j), Catch::Contains("block_scale.block") && Catch::Contains("use 32"));
  j["block_scale"] = {{"element", "e2m1"}};
  CHECK_THAT(error_of(j), Catch::Contains("block_scale.element") && Catch::Contains("e4m3"));
  j["block_scale"] = {{"scheme", "magic"}};
  CHECK_THAT(error_of(j), Catch::Contains("block_scale.scheme") && Catch::Contains("promote"));
  j["block_scale"] = {{"schema", "promote"}};
  CHECK_THAT(error_of(j), Catch::Contains("schema") && Catch::Contains("scheme"));
  j = mxfp8_json("promote");
  j["dtype"] = "bf16";
  CHECK_THAT(error_of(j), Catch::Contains("block_scale") && Catch::Contains("MXFP8"));
  // The scheme survives the JSON round trip (results carry their spec).
  j = mxfp8_json("dequantize", 3);
  const KernelSpec again = parse_kernel_spec(to_json(parse_kernel_spec(j, "a.json")), "b.json");
  CHECK(again.block_scale.scheme == BlockScaleScheme::dequantize);
  CHECK(again.block_scale.element == Mxfp8Element::e4m3);
}
