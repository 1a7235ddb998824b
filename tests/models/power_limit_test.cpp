// The sustained clock at a power limit (models/power_limit.h), on numbers worked by hand.
#include "models/power_limit.h"
#include "models/spec_error.h"

#include <catch2/catch.hpp>

using namespace tilesim;

namespace {

// A profile whose law is easy to work: 1600 MHz at its 1000 W board limit and 400 W that does not
// follow the clock, so the SMs' share at P is (P - 400) / 600.
GpuProfile made_up_gpu() {
  GpuProfile gpu;
  gpu.name = "made_up";
  gpu.display_name = "Made-up GPU";
  gpu.source = "made_up.json";
  gpu.sm.clock_mhz = 1600;
  gpu.power = {.max_limit_w = 1000, .clock_independent_w = 400};
  return gpu;
}

} // namespace

TEST_CASE("the clock falls with the cube root of the power left for the SMs") {
  const GpuProfile gpu = made_up_gpu();
  CHECK(sustained_clock_mhz(gpu, 1000, "--gpu") == Approx(1600));
  // (475 - 400) / 600 = 1/8, whose cube root is 1/2: 800 MHz.
  CHECK(sustained_clock_mhz(gpu, 475, "--gpu") == Approx(800));
  // (602.5 - 400) / 600 = 0.3375, whose cube root is 0.69624 (0.69624^3 = 0.33750): 1113.98 MHz.
  CHECK(sustained_clock_mhz(gpu, 602.5, "--gpu") == Approx(1113.98).epsilon(1e-4));
}

TEST_CASE("a profile at a power limit keeps its name and says the limit") {
  const GpuProfile at = at_power_limit(made_up_gpu(), 475, "--gpu");
  CHECK(at.name == "made_up");
  CHECK(at.display_name == "Made-up GPU at 475 W");
  CHECK(at.sm.clock_mhz == Approx(800));
  CHECK(at.power_limit_w == 475);
  // A second limit would start the law from the first one's clock.
  CHECK_THROWS_WITH(at_power_limit(at, 600, "--gpu made_up@475@600"), Catch::Contains("is already at a power limit"));
}

TEST_CASE("limits the law cannot give a clock for are refused, naming the range") {
  const GpuProfile gpu = made_up_gpu();
  CHECK_THROWS_WITH(sustained_clock_mhz(gpu, 400, "--gpu made_up@400"),
                    Catch::StartsWith("--gpu made_up@400: 400 W: is outside made_up's power range: above its "
                                      "clock-independent 400 W, at most its board's 1000 W"));
  CHECK_THROWS_WITH(sustained_clock_mhz(gpu, 1001, "--gpu"), Catch::Contains("at most its board's 1000 W"));
  GpuProfile no_model = gpu;
  no_model.power = {};
  CHECK_THROWS_WITH(sustained_clock_mhz(no_model, 700, "--gpu"), Catch::Contains("Made-up GPU has no power model"));
}

TEST_CASE("a profile name may carry a power limit after '@'") {
  CHECK(split_power_limit("b200").name == "b200");
  CHECK(split_power_limit("b200").power_limit_w == 0);
  CHECK(split_power_limit("b200@750").name == "b200");
  CHECK(split_power_limit("b200@750").power_limit_w == 750);
  CHECK(split_power_limit("b200@750W").power_limit_w == 750);
  // An '@' inside a path is part of the path.
  CHECK(split_power_limit("/tmp/run@2/gpu.json").name == "/tmp/run@2/gpu.json");
  CHECK(split_power_limit("/tmp/run@2/gpu.json").power_limit_w == 0);
  CHECK_THROWS_WITH(split_power_limit("b200@fast"), Catch::Contains("'fast' is not a power limit in watts"));
  CHECK_THROWS_WITH(split_power_limit("b200@"), Catch::Contains("is not a power limit in watts"));
  CHECK_THROWS_WITH(split_power_limit("b200@-5"), Catch::Contains("is not a power limit in watts"));
}

TEST_CASE("the B200 at Meta's 750 W cap runs at 0.8146 of its 1000 W clock") {
  // models/gpus/b200.json: 1580 MHz at 1000 W, 456 W clock-independent:
  // ((750 - 456) / (1000 - 456))^(1/3) = 0.540441^(1/3) = 0.81457 (0.81457^3 = 0.54049): 1287.0 MHz.
  const GpuProfile b200 = load_gpu_profile("b200@750");
  CHECK(b200.sm.clock_mhz == Approx(1287.0).epsilon(2e-4));
  CHECK(load_gpu_profile("b200@1000").sm.clock_mhz == Approx(load_gpu_profile("b200").sm.clock_mhz));
  CHECK_THROWS_WITH(load_gpu_profile("h100@700"), Catch::Contains("has no power model"));
}
