// The result loader (tilesim.result/1) refuses what would make compare and validate print wrong
// numbers: fields of the wrong type or range, fields that disagree, and keys it does not know.
#include "sim/kernel_result.h"

#include "models/gpu_profile.h"
#include "models/json_input.h"
#include "models/spec_error.h"
#include "sim/gpu_simulator.h"

#include "tests/spec_error_text.h"

#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

using namespace tilesim;
using nlohmann::json;

namespace {

// 256 x 256 x 128 in 128 x 128 x 64 tiles: 4 tiles, 2 K steps each.
KernelSpec small_gemm() {
  return parse_kernel_spec(json::parse(R"({"name":"small","kind":"gemm","dtype":"bf16","m":256,"n":256,"k":128,
    "tile":{"m":128,"n":128,"k":64},"stages":2,"warps":8,"persistent":false,"order":"row_major"})"),
                           "small.json");
}

json simulated() {
  static const json j = to_json(simulate(load_gpu_profile("h100"), small_gemm(), {.record_tiles = true, .progress = {}}));
  return j;
}

std::string error_of(const json& j) {
  return testing::spec_error_of([&] { kernel_result_from_json(j, "r.json"); });
}

} // namespace

TEST_CASE("a simulated result round-trips through JSON") {
  const KernelResult r = kernel_result_from_json(simulated(), "r.json");
  CHECK(r.source == "simulated");
  CHECK(r.tiles.size() == 4);
  CHECK(to_json(r) == simulated());
  // 2 * 256 * 256 * 128 FLOPs over the time, by hand.
  CHECK(r.tflops == Approx(2.0 * 256 * 256 * 128 / (r.time_ms * 1e-3) / 1e12));
}

TEST_CASE("times, rates and clocks that make no sense are refused") {
  json j = simulated();
  SECTION("a time of zero (compare divided by it)") {
    j["time_ms"] = 0;
    CHECK_THAT(error_of(j), Catch::StartsWith("r.json: time_ms: is 0, outside 1e-09..1000000000.0"));
  }
  SECTION("a negative time") {
    j["time_ms"] = -1.5;
    CHECK_THAT(error_of(j), Catch::Contains("time_ms: is -1.5"));
  }
  SECTION("a TFLOP/s the kernel's FLOPs and time do not give (the issue's 1e9)") {
    j["tflops"] = 1e9;
    CHECK_THAT(error_of(j), Catch::Contains("r.json: tflops: is 1000000000.000000, but the kernel's FLOPs over time_ms give"));
  }
  SECTION("an SM clock of 0 or below (predictions at it were infinite or negative)") {
    j["extra"]["sm_clock_mhz"] = 0;
    CHECK_THAT(error_of(j), Catch::Contains("extra.sm_clock_mhz: is 0, outside 100.0..5000.0"));
    j["extra"]["sm_clock_mhz"] = -1630;
    CHECK_THAT(error_of(j), Catch::Contains("extra.sm_clock_mhz: is -1630"));
  }
  SECTION("a hit rate above 1") {
    j["l2_hit_rate"] = 1.2;
    CHECK_THAT(error_of(j), Catch::Contains("l2_hit_rate: is 1.2"));
  }
  SECTION("an unknown source") {
    j["source"] = "guessed";
    CHECK_THAT(error_of(j), Catch::Contains("source: is 'guessed'"));
  }
}

TEST_CASE("result fields that must agree with the kernel") {
  json j = simulated();
  SECTION("an order other than the kernel's") {
    j["order"] = "hilbert";
    CHECK_THAT(error_of(j), Catch::Contains("order: is hilbert but kernel.order is row_major"));
  }
  SECTION("tile records for another tile count") {
    j["tiles"].erase(3);
    CHECK_THAT(error_of(j), Catch::Contains("tiles: has 3 records for 4 tiles"));
  }
  SECTION("a tile outside the grid, or ending before it starts") {
    j["tiles"][1]["col"] = 2;
    CHECK_THAT(error_of(j), Catch::Contains("tiles[1].col: is 2, outside 0..1"));
    j = simulated();
    j["tiles"][0]["end_ns"] = -1;
    CHECK_THAT(error_of(j), Catch::Contains("tiles[0].end_ns"));
  }
  SECTION("a tile field of the wrong type (was a raw type_error)") {
    j["tiles"][2]["sm"] = "7";
    const std::string e = error_of(j);
    CHECK_THAT(e, Catch::Contains("tiles[2].sm: must be an integer"));
    CHECK(e.find("type_error") == std::string::npos);
  }
  SECTION("the harness's tile count for another kernel") {
    j["kernel"]["tiles"] = 8;
    CHECK_THAT(error_of(j), Catch::Contains("kernel.tiles: is not the spec's tile count (4)"));
  }
  SECTION("a malformed kernel names its path inside the result") {
    j["kernel"]["stages"] = "four";
    CHECK_THAT(error_of(j), Catch::Contains("r.json: kernel.stages: must be an integer"));
  }
  SECTION("unknown keys, at the top and in a tile") {
    j["time_us"] = 1;
    CHECK_THAT(error_of(j), Catch::Contains("time_us: is not a known key; did you mean \"time_ms\"?"));
    j = simulated();
    j["tiles"][0]["start_cycles"] = 1;
    CHECK_THAT(error_of(j), Catch::Contains("tiles[0].start_cycles: is not a known key; did you mean \"start_cycle\""));
  }
}

TEST_CASE("every committed result loads") {
  int loaded = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(TILESIM_SOURCE_DIR "/validation/data")) {
    if (entry.path().extension() != ".json") continue;
    const json j = read_json_file(entry.path().string(), "result");
    if (!j.is_object() || !j.contains("schema") || j["schema"] != kResultSchema) continue;
    INFO(entry.path().string());
    CHECK_NOTHROW(kernel_result_from_json(j, entry.path().string()));
    ++loaded;
  }
  CHECK(loaded >= 280); // two H100 sweeps of 132, and the published A100 and B200 figures
}

TEST_CASE("a result is written whole or not at all") {
  const std::string dir = std::filesystem::temp_directory_path() / "tilesim_kernel_result_test";
  std::filesystem::create_directories(dir);
  const KernelResult r = kernel_result_from_json(simulated(), "r.json");
  save_kernel_result(r, dir + "/r.json");
  CHECK(to_json(load_kernel_result(dir + "/r.json")) == simulated());
  CHECK_THROWS_WITH(save_kernel_result(r, "/dev/full"), "/dev/full: --out: is not a regular file (a device, FIFO or socket); "
                                                        "give the path of a file to write");
  CHECK_THROWS_WITH(save_kernel_result(r, dir + "/no/such/dir/r.json"), Catch::Contains("--out: cannot create a file in its folder"));
  std::filesystem::remove_all(dir);
}
