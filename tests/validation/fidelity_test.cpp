#include "validation/compare/fidelity.h"

#include <catch2/catch.hpp>

using namespace tilesim;

TEST_CASE("recommendation_regret: measured slowdown of the order predicted fastest") {
  SECTION("the model picks the measured best: no regret") {
    CHECK(recommendation_regret({1.0, 2.0, 3.0}, {10.0, 11.0, 12.0}) == 0.0);
  }
  SECTION("the model picks an order that runs 12/10 of the best") {
    // predicted fastest is the third (0.5), which measured 12 against a best of 10.
    CHECK(recommendation_regret({1.0, 2.0, 0.5}, {10.0, 11.0, 12.0}) == Approx(0.2));
  }
  SECTION("ties in the prediction take the first listed") {
    CHECK(recommendation_regret({1.0, 1.0}, {11.0, 10.0}) == Approx(0.1));
  }
  SECTION("nothing to rank") { CHECK(recommendation_regret({}, {}) == 0.0); }
}

TEST_CASE("score: bias and regret per shape") {
  auto row = [](const char* shape, double predicted, double measured) {
    ConfigurationError e;
    e.shape = shape;
    e.held_back = true;
    e.has_counters = false;
    e.predicted_time_ms = predicted;
    e.measured_time_ms = measured;
    e.time_error = (predicted - measured) / measured;
    return e;
  };
  // Shape a: fast by 10% and 20%, picks the slower order (measured 1.25 vs 1.0): regret 25%.
  // Shape b has one order (slow by 10%): nothing to choose, so no regret entry.
  const std::vector<ConfigurationError> rows{row("a", 0.9, 1.0), row("a", 0.8, 1.25), row("b", 2.2, 2.0)};
  const SplitScore s = score(rows, true, FidelityBars{});
  CHECK(s.time_bias == Approx((-0.1 - 0.36 + 0.1) / 3));
  REQUIRE(s.regret_by_shape.size() == 1);
  CHECK(s.regret_by_shape.at("a") == Approx(0.25));
  CHECK(s.mean_regret() == Approx(0.25));
  CHECK(s.max_regret() == Approx(0.25));
}
