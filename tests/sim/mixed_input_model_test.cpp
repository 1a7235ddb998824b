// The mixed-input kernel model (sim/src/mixed_input_model.cpp) on the H100 profile: numbers
// worked out by hand from the profile's measured conversion rates (31.15 prmt, 15.80 cvt bf16
// values per SM cycle), its 4096 bf16 FLOP per SM cycle, 128 fp32 lanes and 4 schedulers, and the
// kernel's shapes. A K step of the 16 x 64 x 128 tile is 2 x 16 x 64 x 128 / 4096 = 64 MMA cycles,
// which the conversion adds to (a consumer converts, then issues its wgmma).
#include "models/gpu_profile.h"
#include "models/kernel_spec.h"
#include "models/spec_error.h"
#include "sim/kernel_model.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace tilesim;

namespace {

KernelSpec decode(const char* weight, int group, const char* conversion) {
  nlohmann::json j = nlohmann::json::parse(R"({"name":"d","kind":"gemm","dtype":"bf16","m":16,"n":8192,"k":8192,
    "layout":{"a":"row","b":"col"},"tile":{"m":16,"n":64,"k":128},"stages":12,"warps":20,"load":"tma",
    "persistent":true,"order":"row_major"})");
  j["b_dtype"] = weight;
  j["quant"] = {{"scale_group", group}, {"zero_points", std::string(weight) == "uint8"}, {"conversion", conversion}};
  return parse_kernel_spec(j, "decode.json");
}

} // namespace

TEST_CASE("bf16 x int8 on a Hopper runs the mixed-input model", "[mixed_input]") {
  const GpuProfile h100 = load_gpu_profile("h100");
  CHECK(kernel_model_name(decode("int8", 0, "prmt"), h100) == "mixed_input_gemm");
}

TEST_CASE("conversion, epilogue and shared memory of a 16 x 64 x 128 decode tile", "[mixed_input]") {
  const GpuProfile h100 = load_gpu_profile("h100");
  SECTION("prmt: 64 x 128 values per K step at 31.15 per cycle, then the MMA") {
    const auto m = make_kernel_model(decode("int8", 0, "prmt"), h100);
    CHECK(m->mma_cycles_per_k_step() == Approx(64.0));
    CHECK(m->element_cycles_per_k_step() == Approx(8192.0 / 31.15 + 64.0));
    // 9 instructions per output element, 16 x 64 elements, 4 x 32 issue slots per cycle
    CHECK(m->epilogue_cycles() == Approx(72.0));
    // 12 x (16 x 128 x 2 + 64 x 128) + 1024 barriers + 3 x 8 x 128 x 4 split-K sums
    CHECK(m->resources().shared_memory_bytes == 160768);
    CHECK(m->resources().threads == 640);
  }
  SECTION("cvt: the same values at 15.80 per cycle") {
    CHECK(make_kernel_model(decode("int8", 0, "cvt"), h100)->element_cycles_per_k_step() ==
          Approx(8192.0 / 15.80 + 64.0));
  }
  SECTION("group scales: one bf16x2 multiply per two values on 128 lanes, 32 cycles more") {
    CHECK(make_kernel_model(decode("int8", 128, "prmt"), h100)->element_cycles_per_k_step() ==
          Approx(8192.0 / 31.15 + 32.0 + 64.0));
  }
}

TEST_CASE("the weights travel as one byte each, the scales and zero points beside them", "[mixed_input]") {
  const GpuProfile h100 = load_gpu_profile("h100");
  WorkItem item;
  item.tile.col = 3;
  std::vector<OperandBox> boxes;
  SECTION("per-channel scales: one 128-byte row at the tile's first K step only") {
    const auto m = make_kernel_model(decode("int8", 0, "prmt"), h100);
    m->load_boxes(item, 0, boxes);
    REQUIRE(boxes.size() == 3); // X, W, scales
    CHECK(boxes[1].box.row_bytes == 128); // 128 int8 of K
    CHECK(boxes[1].box.rows == 64);
    CHECK(boxes[2].box.row_bytes == 128); // 64 bf16 scales
    CHECK(boxes[2].box.rows == 1);
    boxes.clear();
    m->load_boxes(item, 1, boxes);
    CHECK(boxes.size() == 2);
  }
  SECTION("uint8, group scales: a 32-byte sector per channel every 16 groups, zero points at the start") {
    const auto m = make_kernel_model(decode("uint8", 128, "prmt"), h100);
    m->load_boxes(item, 0, boxes);
    REQUIRE(boxes.size() == 4); // X, W, scale sectors, zero points
    CHECK(boxes[2].box.rows == 64);
    CHECK(boxes[2].box.row_bytes == 32);
    CHECK(boxes[2].box.row_stride == 64 * 2); // 8192 / 128 groups of bf16
    CHECK(boxes[3].box.row_bytes == 64);      // one byte per channel
    boxes.clear();
    m->load_boxes(item, 15, boxes); // K 1920: inside the first 16 groups (2048 of K)
    CHECK(boxes.size() == 2);
    boxes.clear();
    m->load_boxes(item, 16, boxes); // K 2048: the next sector
    CHECK(boxes.size() == 3);
  }
}

TEST_CASE("a Hopper profile without the conversion rates is refused by name", "[mixed_input]") {
  GpuProfile h100 = load_gpu_profile("h100");
  h100.dequant = {};
  CHECK_THROWS_WITH(make_kernel_model(decode("int8", 0, "prmt"), h100),
                    Catch::Contains("dequant_values_per_cycle_per_sm"));
}
