// The mixed-input kernel model (sim/src/mixed_input_model.cpp) on the H100 profile: numbers
// worked out by hand from the profile's measured K-block costs (mixed_input_k_block_cycles:
// 645 / 935 cycles for a 16-token tile with prmt / cvt, 731 with group scales, all with one K
// block a stage; 617 for a 64-token tile measured with two a stage (tile.k 256) and 979 for a
// 224-token tile, both from the K loops of 16-byte W units, v21's and v20's), its 4 schedulers,
// and the kernel's shapes. The measured K block holds the wgmma (a K step of the 16 x 64 x 128
// tile is 2 x 16 x 64 x 128 / 4096 = 64 tensor cycles).
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

TEST_CASE("K block, epilogue and shared memory of a 16 x 64 x 128 decode tile", "[mixed_input]") {
  const GpuProfile h100 = load_gpu_profile("h100");
  SECTION("prmt: the measured K block, which holds the MMA") {
    const auto m = make_kernel_model(decode("int8", 0, "prmt"), h100);
    CHECK(m->element_cycles_per_k_step() == Approx(645.0));
    // 9 instructions per output element, 16 x 64 elements, 4 x 32 issue slots per cycle (72), and
    // the split-K sums of 3 more consumers, 8 per thread, each a load and an add (48)
    CHECK(m->epilogue_cycles() == Approx(72.0 + 48.0));
    // 12 x (16 x 128 x 2 + 64 x 128) + 1024 barriers + 3 x 8 x 128 x 4 split-K sums
    CHECK(m->resources().shared_memory_bytes == 160768);
    CHECK(m->resources().threads == 640);
  }
  SECTION("cvt and group scales: their own measured K blocks") {
    CHECK(make_kernel_model(decode("int8", 0, "cvt"), h100)->element_cycles_per_k_step() == Approx(935.0));
    CHECK(make_kernel_model(decode("uint8", 128, "prmt"), h100)->element_cycles_per_k_step() == Approx(731.0));
  }
  SECTION("a stage K the profile's figures were not measured at is refused by name") {
    KernelSpec spec = decode("int8", 0, "prmt");
    spec.tile.k = 256;
    spec.stages = 4; // what shared memory holds
    CHECK_THROWS_WITH(make_kernel_model(spec, h100), Catch::Contains("decode.json") && Catch::Contains("tile.k") &&
                                                         Catch::Contains("measured with 128") &&
                                                         Catch::Contains("use tile.k 128"));
  }
}

TEST_CASE("a 64 x 64 x 256 decode tile: two measured K blocks a K step", "[mixed_input]") {
  const GpuProfile h100 = load_gpu_profile("h100");
  nlohmann::json j = nlohmann::json::parse(R"({"name":"d","kind":"gemm","dtype":"bf16","b_dtype":"int8","m":64,
    "n":8192,"k":8192,"layout":{"a":"row","b":"col"},"tile":{"m":64,"n":64,"k":256},"stages":4,"warps":12,
    "load":"tma","persistent":true,"order":"row_major"})");
  const auto m = make_kernel_model(parse_kernel_spec(j, "decode64.json"), h100);
  CHECK(m->element_cycles_per_k_step() == Approx(2 * 617.0));
  // 9 x 64 x 64 / 128 (288), and the other consumer's 32 sums a thread, a load and an add each (64)
  CHECK(m->epilogue_cycles() == Approx(288.0 + 64.0));
  // 4 x (64 x 256 x 2 + 64 x 256) + 1024 barriers + 1 x 32 x 128 x 4 split-K sums
  CHECK(m->resources().shared_memory_bytes == 214016);
}

TEST_CASE("a 224-token prefill tile: its K block, no split-K sums", "[mixed_input]") {
  const GpuProfile h100 = load_gpu_profile("h100");
  nlohmann::json j = nlohmann::json::parse(R"({"name":"p","kind":"gemm","dtype":"bf16","b_dtype":"int8","m":3456,
    "n":4096,"k":2048,"layout":{"a":"row","b":"col"},"tile":{"m":224,"n":128,"k":64},"stages":5,"warps":12,
    "load":"tma","persistent":true,"order":"grouped_m:8"})");
  const auto m = make_kernel_model(parse_kernel_spec(j, "prefill.json"), h100);
  CHECK(m->element_cycles_per_k_step() == Approx(979.0));
  CHECK(m->epilogue_cycles() == Approx(9.0 * 224 * 128 / 128)); // 2016
}

TEST_CASE("a 224-token prefill tile with the TMA-store epilogue", "[mixed_input]") {
  const GpuProfile h100 = load_gpu_profile("h100");
  nlohmann::json j = nlohmann::json::parse(R"({"name":"p","kind":"grouped_gemm","dtype":"bf16","b_dtype":"int8",
    "experts":[{"m":3456}],"n":4096,"k":2048,"layout":{"a":"row","b":"col"},"tile":{"m":224,"n":128,"k":64},
    "stages":4,"warps":12,"load":"tma","persistent":true,"order":"row_major","quant":{"store":"tma"}})");
  SECTION("every tile through TMA: 40 + 130/64 x 112 accumulators = 267.5 instructions a consumer warp, two "
          "consumer warps a scheduler") {
    const auto m = make_kernel_model(parse_kernel_spec(j, "prefill.json"), h100);
    CHECK(m->epilogue_cycles() == Approx(535.0));
    // 4 x (224 x 64 x 2 + 128 x 64) + 1024 barriers + 2 consumers x 224 tokens x 128 bytes
    CHECK(m->resources().shared_memory_bytes == 205824);
  }
  SECTION("a ragged expert's last tile keeps the element stores: experts of 300 and 224 tokens, 3 tiles, 1 ragged") {
    j["experts"] = {{{"m", 300}}, {{"m", 224}}};
    CHECK(make_kernel_model(parse_kernel_spec(j, "prefill.json"), h100)->epilogue_cycles() ==
          Approx((2016.0 + 2 * 535.0) / 3));
  }
  SECTION("the last expert's part-filled tile is clipped by TMA: experts of 224 and 300, no element stores") {
    j["experts"] = {{{"m", 224}}, {{"m", 300}}};
    CHECK(make_kernel_model(parse_kernel_spec(j, "prefill.json"), h100)->epilogue_cycles() == Approx(535.0));
  }
  SECTION("five stages beside the buffers do not fit (242,688 bytes) and are refused by name") {
    j["stages"] = 5;
    CHECK_THROWS_WITH(make_kernel_model(parse_kernel_spec(j, "prefill.json"), h100),
                      Catch::Contains("prefill.json") && Catch::Contains("stages") &&
                          Catch::Contains("242688") && Catch::Contains("use fewer stages"));
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

TEST_CASE("a tile the kernel is not built for, or a profile without its K-block cost, is refused by name",
          "[mixed_input]") {
  GpuProfile h100 = load_gpu_profile("h100");
  SECTION("a 48-token tile") {
    nlohmann::json j = nlohmann::json::parse(R"({"name":"d","kind":"gemm","dtype":"bf16","b_dtype":"int8","m":16,
      "n":8192,"k":8192,"layout":{"a":"row","b":"col"},"tile":{"m":48,"n":64,"k":128},"stages":4,"warps":20,
      "load":"tma","persistent":true,"order":"row_major"})");
    CHECK_THROWS_WITH(make_kernel_model(parse_kernel_spec(j, "decode.json"), h100),
                      Catch::Contains("decode.json") && Catch::Contains("tile") && Catch::Contains("16, 32 or 64"));
  }
  SECTION("a profile without mixed_input_k_block_cycles") {
    h100.mixed_input_k_block = {};
    CHECK_THROWS_WITH(make_kernel_model(decode("int8", 0, "prmt"), h100),
                      Catch::Contains("mixed_input_k_block_cycles") && Catch::Contains("mixed_input_block_rate"));
  }
}
