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

TEST_CASE("mxfp8 GEMM model: per 128 x 128 x 128 step, the MMA and the consumers' work of each scheme") {
  const GpuProfile h100 = gpu("h100_sxm"); // fp8 8192 and bf16 4096 FLOP per SM cycle; prmt 31.15 values per cycle
  SECTION("promote: FP8 MMA 2 x 128^3 / 8192 = 512 cycles; promotion 1938.5 cycles (the microbenchmark's stage)") {
    const auto m = model(mxfp8_json("promote"), h100);
    CHECK(m->mma_cycles_per_k_step() == Approx(512));
    CHECK(m->element_cycles_per_k_step() == Approx(1938.5));
    CHECK(m->k_steps() == 56); // 7168 / 128
  }
  SECTION("dequantize: bf16 MMA 2 x 128^3 / 4096 = 1024, after (128 + 128) x 128 conversions / 31.15 = 1051.97") {
    const auto m = model(mxfp8_json("dequantize", 3), h100);
    CHECK(m->mma_cycles_per_k_step() == Approx(1024));
    CHECK(m->element_cycles_per_k_step() == Approx(256.0 * 128 / 31.15 + 1024));
  }
  SECTION("dequantize keeps two converted bf16 B tiles (64 KB) beside the ring: 6 stages no longer fit") {
    // 6 x 32 KB + 1 KB + 64 KB = 263168 > 232448; 4 stages: 131072 + 1024 + 65536
    CHECK_THROWS_AS(model(mxfp8_json("dequantize", 6), h100), SpecError);
    CHECK(model(mxfp8_json("dequantize", 4), h100)->resources().shared_memory_bytes == 197632);
    CHECK(model(mxfp8_json("promote", 6), h100)->resources().shared_memory_bytes == 197632);
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
