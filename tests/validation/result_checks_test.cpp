// compare and validate refuse a pairing that would be scored wrongly: another kernel, another
// GPU, a measurement the GPU cannot have made.
#include "validation/compare/result_checks.h"

#include "models/spec_error.h"

#include "tests/spec_error_text.h"

#include <catch2/catch.hpp>

using namespace tilesim;
using nlohmann::json;

namespace {

json spec_json() {
  return json::parse(R"({"name":"d","kind":"gemm","dtype":"bf16","m":4096,"n":4096,"k":4096,
    "tile":{"m":128,"n":256,"k":64},"stages":4,"warps":12,"persistent":true,"cluster":2,"order":"grouped_m:8"})");
}

KernelResult result(const char* source, const char* gpu, double time_ms) {
  KernelResult r;
  r.source = source;
  r.gpu = gpu;
  r.kernel = spec_json();
  r.order = "grouped_m:8";
  r.time_ms = time_ms;
  r.tflops = 2.0 * 4096.0 * 4096.0 * 4096.0 / (time_ms * 1e-3) / 1e12;
  return r;
}

std::string comparison_error(const KernelResult& p, const KernelResult& m) {
  return testing::spec_error_of([&] { check_comparable(p, "p.json", m, "m.json", load_gpu_profile("h100")); });
}

} // namespace

TEST_CASE("a measured GPU name matches its profile by model") {
  const GpuProfile h100 = load_gpu_profile("h100");
  CHECK(gpu_matches(h100, "NVIDIA H100 80GB HBM3"));
  CHECK(gpu_matches(h100, "h100"));
  CHECK_FALSE(gpu_matches(h100, "NVIDIA H200"));
  CHECK_FALSE(gpu_matches(h100, "NVIDIA H1000"));
  CHECK(gpu_matches(load_gpu_profile("a100"), "a100"));
}

TEST_CASE("compare refuses another kernel, another GPU, or an impossible measurement") {
  const KernelResult p = result("simulated", "h100", 0.25);
  const KernelResult m = result("measured", "NVIDIA H100 80GB HBM3", 0.26);
  CHECK(comparison_error(p, m) == "no error");
  SECTION("another kernel: every differing field is named") {
    KernelResult other = m;
    other.kernel["k"] = 8192;
    other.kernel["stages"] = 3;
    other.tflops *= 2;
    CHECK_THAT(comparison_error(p, other), Catch::StartsWith("m.json: kernel: is another kernel than p.json's: k (predicted "
                                                             "4096, measured 8192), stages (predicted 4, measured 3)"));
  }
  SECTION("another order") {
    KernelResult other = m;
    other.kernel["order"] = "hilbert";
    CHECK_THAT(comparison_error(p, other), Catch::Contains("order (predicted \"grouped_m:8\", measured \"hilbert\")"));
  }
  SECTION("another GPU") {
    KernelResult other = m;
    other.gpu = "NVIDIA H200";
    CHECK_THAT(comparison_error(p, other), Catch::StartsWith("m.json: gpu: is 'NVIDIA H200', not the profile's"));
  }
  SECTION("a TFLOP/s above twice the H100's BF16 peak") {
    // Peak at the profile's clock: 132 SMs x 4096 FLOP/cycle x 1630 MHz = 881 TFLOP/s; 0.07 ms
    // for 2 x 4096^3 FLOPs is 1963 TFLOP/s.
    const KernelResult fast = result("measured", "NVIDIA H100 80GB HBM3", 0.07);
    CHECK_THAT(comparison_error(p, fast), Catch::StartsWith("m.json: tflops: is 1963."));
  }
  SECTION("the files swapped") {
    CHECK_THAT(comparison_error(m, p), Catch::StartsWith("p.json: source: is 'measured', not a prediction"));
  }
}
