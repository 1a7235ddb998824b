// validate --clock reference: the clock a published figure's machine ran at, read from a reference
// kernel its source timed in the same run.
#include "validation/compare/reference_clock.h"

#include "models/power_limit.h"
#include "sim/gpu_simulator.h"

#include "tests/spec_error_text.h"

#include <catch2/catch.hpp>

using namespace tilesim;
using nlohmann::json;

namespace {

// Compute-bound on the B200: 8192 MMA cycles a K step of 128 per SM pair tile, 2 x 32 K steps.
json dense_fp8() {
  return json::parse(R"({"name":"ref","kind":"gemm","dtype":"fp8_e4m3","m":4096,"n":4096,"k":8192,
    "layout":{"a":"row","b":"col"},"tile":{"m":128,"n":256,"k":128},"stages":6,"warps":8,"persistent":true,
    "cluster":2,"order":"row_major"})");
}

// Bound by its stores: a 16384 x 16384 bf16 output (512 MiB) and one K step.
json store_bound() {
  return json::parse(R"({"name":"ref","kind":"gemm","dtype":"bf16","m":16384,"n":16384,"k":64,
    "layout":{"a":"row","b":"col"},"tile":{"m":128,"n":256,"k":64},"stages":4,"warps":8,"persistent":true,
    "cluster":2,"order":"row_major"})");
}

double predicted_ms(const GpuProfile& gpu, const json& kernel, double clock_mhz) {
  GpuProfile g = gpu;
  g.sm.clock_mhz = clock_mhz;
  return simulate(g, parse_kernel_spec(kernel, "test"), {.record_tiles = false, .progress = {}}).time_ms;
}

MeasuredConfiguration figure(json extra) {
  MeasuredConfiguration c{"figure", "figure.json", {}};
  c.measured.source = "published";
  c.measured.extra = std::move(extra);
  return c;
}

json reference(const json& kernel, double time_ms) {
  return {{"what", "a dense FP8 GEMM in the same run"}, {"source", "a test"}, {"kernel", kernel}, {"time_ms", time_ms}};
}

} // namespace

TEST_CASE("a compute-bound reference tells the clock its measured time was run at", "[reference_clock]") {
  const GpuProfile b200 = load_gpu_profile("b200");
  // The machine ran the reference as the model does at 1000 MHz; the figure is at 750 W, where the
  // power law gives 1580 x ((750 - 456) / (1000 - 456))^(1/3) = 1287 MHz.
  std::vector<MeasuredConfiguration> dataset{
      figure({{"power_limit_w", 750}, {"reference", reference(dense_fp8(), predicted_ms(b200, dense_fp8(), 1000))}})};
  const auto readings = set_reference_clocks(b200, dataset, 2);
  REQUIRE(readings.size() == 1);
  CHECK(readings[0].used);
  CHECK(readings[0].limit_clock_mhz == Approx(1287).margin(1));
  CHECK(readings[0].elasticity > 0.9);
  CHECK(readings[0].clock_mhz == Approx(1000).epsilon(0.005));
  CHECK(dataset[0].measured.extra["sm_clock_mhz"].get<double>() == Approx(1000).epsilon(0.005));
}

TEST_CASE("a reference bound by L2 or DRAM cannot tell the clock and leaves the power limit's", "[reference_clock]") {
  const GpuProfile b200 = load_gpu_profile("b200");
  std::vector<MeasuredConfiguration> dataset{
      figure({{"power_limit_w", 750}, {"reference", reference(store_bound(), predicted_ms(b200, store_bound(), 1287) * 1.3)}})};
  const auto readings = set_reference_clocks(b200, dataset, 1);
  REQUIRE(readings.size() == 1);
  CHECK_FALSE(readings[0].used);
  CHECK(readings[0].elasticity < kMinReferenceElasticity);
  CHECK(readings[0].why_not.find("elasticity") != std::string::npos);
  CHECK(dataset[0].measured.extra["sm_clock_mhz"].get<double>() == Approx(1287).margin(1));
}

TEST_CASE("a figure without a reference runs at its power limit's clock, or the profile's", "[reference_clock]") {
  const GpuProfile b200 = load_gpu_profile("b200");
  std::vector<MeasuredConfiguration> dataset{figure({{"power_limit_w", 1000}}), figure(json::object())};
  dataset[1].measured.extra["sm_clock_mhz"] = 1700; // a recorded clock is not what --clock reference predicts at
  CHECK(set_reference_clocks(b200, dataset, 1).empty());
  CHECK(dataset[0].measured.extra["sm_clock_mhz"].get<double>() == 1580);
  CHECK(dataset[1].measured.extra["sm_clock_mhz"].get<double>() == 1580);
}

TEST_CASE("a malformed reference is refused naming its field", "[reference_clock]") {
  const GpuProfile b200 = load_gpu_profile("b200");
  const auto refusal = [&](json ref) {
    std::vector<MeasuredConfiguration> dataset{figure({{"power_limit_w", 750}, {"reference", std::move(ref)}})};
    return testing::spec_error_of([&] { set_reference_clocks(b200, dataset, 1); });
  };
  json typo = reference(dense_fp8(), 1.0);
  typo["time_msec"] = 1.0;
  CHECK(refusal(typo).find("extra.reference.time_msec: is not a known key") != std::string::npos);
  json no_time = reference(dense_fp8(), 1.0);
  no_time.erase("time_ms");
  CHECK(refusal(no_time).find("extra.reference.time_ms") != std::string::npos);
  CHECK(refusal(reference(dense_fp8(), 0)).find("extra.reference.time_ms") != std::string::npos);
  json bad_tile = reference(dense_fp8(), 1.0);
  bad_tile["kernel"]["tile"]["m"] = 100;
  CHECK(refusal(bad_tile).find("extra.reference.kernel.tile") != std::string::npos);
  CHECK(refusal(json("a kernel")).find("extra.reference: is not a JSON object") != std::string::npos);
}
