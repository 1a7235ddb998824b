// The Blackwell GEMM model (sim/src/tcgen05_gemm_model.cpp) on the shipped B200 profile; every
// expected number is worked out by hand from the profile's figures in the comments.
#include "sim/kernel_model.h"

#include "models/spec_error.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace tilesim;

namespace {

nlohmann::json gemm_json(const char* dtype, int tile_m, int tile_n, int tile_k, int cluster, int stages = 4) {
  return {{"name", "t"},
          {"kind", "gemm"},
          {"dtype", dtype},
          {"m", 8192},
          {"n", 8192},
          {"k", 8192},
          {"layout", {{"a", "row"}, {"b", "col"}}},
          {"tile", {{"m", tile_m}, {"n", tile_n}, {"k", tile_k}}},
          {"stages", stages},
          {"warps", 8},
          {"persistent", true},
          {"cluster", cluster},
          {"order", "row_major"}};
}

std::unique_ptr<KernelModel> model(const nlohmann::json& j, const GpuProfile& gpu) {
  return make_kernel_model(parse_kernel_spec(j, "test"), gpu);
}

} // namespace

TEST_CASE("the profile's architecture picks the GEMM model") {
  const KernelSpec spec = parse_kernel_spec(gemm_json("bf16", 128, 256, 64, 2), "test");
  CHECK(kernel_model_name(spec, load_gpu_profile("b200")) == "tcgen05_gemm");
  CHECK(kernel_model_name(spec, load_gpu_profile("h100")) == "gemm");
  CHECK(kernel_model_name(spec, load_gpu_profile("a100")) == "gemm");
}

TEST_CASE("tcgen05 MMA time is the larger of the math and the shared-memory operand reads") {
  const GpuProfile b200 = load_gpu_profile("b200"); // 8192 bf16 FLOP/cycle, 128 operand B/cycle
  SECTION("2-SM 256x256x64 bf16: each SM 2*128*256*64 / 8192 = 512 cycles of math, (128 + 128) rows x 128 B / 128 = 256 of reads") {
    CHECK(model(gemm_json("bf16", 128, 256, 64, 2), b200)->mma_cycles_per_k_step() == Approx(512));
  }
  SECTION("1-SM 128x64x64 bf16: 128 cycles of math, (128 + 64) rows x 128 B / 128 = 192 of reads") {
    CHECK(model(gemm_json("bf16", 128, 64, 64, 1), b200)->mma_cycles_per_k_step() == Approx(192));
  }
  SECTION("M = 64 uses half the tensor core: 2*64*256*64 / 4096 = 512 cycles") {
    CHECK(model(gemm_json("bf16", 64, 256, 64, 1), b200)->mma_cycles_per_k_step() == Approx(512));
  }
  SECTION("mxfp8 128x256x128 from one SM: 2*128*256*128 / 16384 = 512; mxfp4 128x256x256 at 32768: 512") {
    CHECK(model(gemm_json("mxfp8", 128, 256, 128, 1), b200)->mma_cycles_per_k_step() == Approx(512));
    CHECK(model(gemm_json("mxfp4", 128, 256, 256, 1), b200)->mma_cycles_per_k_step() == Approx(512));
  }
}

TEST_CASE("tensor memory holds two accumulators, overlapped by the block scales where they crowd") {
  const GpuProfile b200 = load_gpu_profile("b200"); // 256 KB = 512 columns of 128 lanes x 4 B
  CHECK(model(gemm_json("bf16", 128, 256, 64, 2), b200)->accumulator_buffers() == 2);  // 512 / 256
  CHECK(model(gemm_json("mxfp8", 128, 256, 128, 2), b200)->accumulator_buffers() == 2); // 2 x 256 + 32 > 512: overlapped
  CHECK(model(gemm_json("mxfp8", 128, 128, 128, 2), b200)->accumulator_buffers() == 2); // 2 x 128 + 32 fit
  GpuProfile half_tmem = b200; // 256 columns: one bf16 accumulator of 256, none beside block scales
  half_tmem.sm.tensor_memory_bytes = 128 * 1024;
  CHECK(model(gemm_json("bf16", 128, 256, 64, 2), half_tmem)->accumulator_buffers() == 1);
  CHECK_THROWS_AS(model(gemm_json("mxfp8", 128, 256, 128, 2), half_tmem), SpecError); // 256 + 32 > 256
  CHECK(model(gemm_json("bf16", 128, 256, 64, 2), load_gpu_profile("h100"))->accumulator_buffers() == 1);
}

TEST_CASE("a 2-SM CTA holds its A rows and half of B, with the scale tiles") {
  const GpuProfile b200 = load_gpu_profile("b200");
  // 6 stages of 128x128 fp8 A (16384 B) + 128x128 fp8 B half (16384 B) + 512 B of A scales
  // (128 rows x 128/32) + 1024 B of B scales (all 256 columns: both CTAs hold them), plus 1024 B
  // of barriers: 6 x 34304 + 1024.
  CHECK(model(gemm_json("mxfp8", 128, 256, 128, 2, 6), b200)->resources().shared_memory_bytes == 206848);
  CHECK_THROWS_AS(model(gemm_json("mxfp8", 128, 256, 128, 2, 7), b200), SpecError); // 241152 > 232448
  CHECK_THROWS_AS(model(gemm_json("bf16", 256, 128, 64, 1), b200), SpecError);       // tcgen05: 64 or 128 rows per SM
  nlohmann::json mixed = gemm_json("bf16", 128, 256, 64, 2);
  mixed["b_dtype"] = "int8";
  CHECK_THROWS_AS(model(mixed, b200), SpecError); // no conversion modelled: refused, not run at the bf16 rate
}

TEST_CASE("2-SM work items are the halves of pair tiles walked in the launch order") {
  const GpuProfile b200 = load_gpu_profile("b200");
  const auto m = model(gemm_json("mxfp8", 128, 256, 128, 2), b200);
  CHECK(m->tile_count() == 2 * 32 * 32); // 8192 / 256 pair rows x 8192 / 256 columns, two CTAs each
  const TileLookup first = m->lookup_tile(0), second = m->lookup_tile(1), third = m->lookup_tile(2);
  CHECK(first.tile.row == 0);
  CHECK(second.tile.row == 1);
  CHECK(second.tile.col == first.tile.col);
  CHECK(third.tile.row == 0); // row_major: the next pair tile is the next column
  CHECK(third.tile.col == 1);

  WorkItem item;
  item.linear = 1;
  item.tile = second.tile;
  item.has_partner = true;
  item.partner = first.tile;
  item.rank = 1;
  std::vector<OperandBox> boxes;
  m->load_boxes(item, 0, boxes);
  REQUIRE(boxes.size() == 4); // A, B half, A scales, B scales
  CHECK(boxes[0].box.rows == 128);
  CHECK(boxes[0].box.row_bytes == 128);
  CHECK(boxes[1].box.rows == 128); // the second 128 of B's 256 rows
  CHECK(boxes[1].box.base == boxes[1].box.base / 8192 * 8192); // starts on a row of B (8192 B apart)
  CHECK(boxes[2].box.row_bytes == 512);
  CHECK(boxes[3].box.row_bytes == 512); // this CTA's half of the pair's multicast B scales
}

TEST_CASE("a grouped GEMM's odd tile row pairs with an idle half that stores nothing") {
  const GpuProfile b200 = load_gpu_profile("b200");
  nlohmann::json j = gemm_json("bf16", 128, 256, 64, 2);
  j.erase("m");
  j["kind"] = "grouped_gemm";
  j["experts"] = {128, 384}; // pair rows: 1 + 2; CTA rows 1 + 3
  const auto m = model(j, b200);
  CHECK(m->tile_count() == 2 * 3 * 32);
  const TileLookup idle = m->lookup_tile(1); // expert 0's second half: rows 128..255 of a 128-row expert
  CHECK(idle.tile.expert == 0);
  CHECK(idle.tile.local_row == 1);
  CHECK(m->store_box(idle.tile).rows == 0);
}

TEST_CASE("the Hopper model runs MXFP8 as software-scaled FP8") {
  const GpuProfile h100 = load_gpu_profile("h100"); // no block-scaled tensor cores; 8192 fp8
  const auto m = model(gemm_json("mxfp8", 128, 256, 128, 1), h100);
  CHECK(m->mma_cycles_per_k_step() == Approx(2.0 * 128 * 256 * 128 / 8192));
  // The mxfp8_gemm model's promote stage (tests/sim/mxfp8_gemm_model_test.cpp): 1367.1 ns per
  // 128 x 128 outputs x 4 blocks, measured, at the profile's 1630 MHz; 128 x 256 take twice that.
  CHECK(m->element_cycles_per_k_step() == Approx(2 * 1367.1 * 1.63));
  CHECK_THROWS_AS(model(gemm_json("mxfp8", 128, 256, 128, 1), load_gpu_profile("a100")), SpecError); // no FP8 at all
}
