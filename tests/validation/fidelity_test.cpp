#include "validation/compare/fidelity.h"

#include <catch2/catch.hpp>

using namespace tilesim;

namespace {

// A held-back configuration of `shape` with times only (a published figure's kind of row).
ConfigurationError row(const char* shape, double predicted, double measured) {
  ConfigurationError e;
  e.shape = shape;
  e.held_back = true;
  e.has_counters = false;
  e.predicted_time_ms = predicted;
  e.measured_time_ms = measured;
  e.time_error = (predicted - measured) / measured;
  return e;
}

} // namespace

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

TEST_CASE("order_pair_errors: the error of the model's time ratio of two orders of one shape") {
  SECTION("a shape's bias cancels: fast by 10% on both orders is no error in their ratio") {
    const auto e = order_pair_errors({0.9, 0.99}, {1.0, 1.1});
    REQUIRE(e.size() == 1);
    CHECK(e[0] == Approx(0.0).margin(1e-12));
  }
  SECTION("three orders measured 1, 1.1 and 1.2, predicted alike: errors 10%, 20% and 1.2/1.1 - 1") {
    const auto e = order_pair_errors({1.0, 1.0, 1.0}, {1.0, 1.1, 1.2});
    REQUIRE(e.size() == 3);
    CHECK(e[0] == Approx(0.1));
    CHECK(e[1] == Approx(0.2));
    CHECK(e[2] == Approx(1.2 / 1.1 - 1));
  }
  SECTION("symmetric: the ratio predicted 10% too wide or too narrow is the same error") {
    CHECK(order_pair_errors({1.0, 1.1}, {1.0, 1.0})[0] == Approx(0.1));
    CHECK(order_pair_errors({1.1, 1.0}, {1.0, 1.0})[0] == Approx(0.1));
  }
  SECTION("one order or none: no pair") {
    CHECK(order_pair_errors({1.0}, {2.0}).empty());
    CHECK(order_pair_errors({}, {}).empty());
  }
}

TEST_CASE("nearest_rank_quantile") {
  CHECK(nearest_rank_quantile({0.3, 0.1, 0.2, 0.4, 0.5, 0.6, 0.7, 0.8, 1.0, 0.9}, 0.9) == 0.9);
  CHECK(nearest_rank_quantile({0.3, 0.1, 0.2}, 0.9) == 0.3); // rank ceil(2.7) = 3
  CHECK(nearest_rank_quantile({0.3, 0.1, 0.2}, 0.5) == 0.2); // rank ceil(1.5) = 2
  CHECK(nearest_rank_quantile({}, 0.9) == 0.0);
}

TEST_CASE("score: order pairs per shape, never across shapes") {
  // Shape a: orders measured 1.0 and 1.1, predicted alike (error 10%); shape b: two orders whose
  // ratio is right (0); shape c has one order. Pairs: a's and b's, never a with b.
  const std::vector<ConfigurationError> rows{row("a", 1.0, 1.0), row("a", 1.0, 1.1), row("b", 5.0, 2.0),
                                             row("b", 10.0, 4.0), row("c", 1.0, 3.0)};
  const SplitScore s = score(rows, true, FidelityBars{});
  REQUIRE(s.order_pair_errors.size() == 2);
  CHECK(s.order_pair_error_p90() == Approx(0.1)); // rank ceil(0.9 * 2) = 2 of {0, 0.1}
}

TEST_CASE("missed_bars: bias and regret judged only when set") {
  SplitScore s;
  s.configurations = 2;
  s.time_bias = -0.04;
  s.regret_by_shape = {{"a", 0.01}, {"b", 0.06}}; // mean 3.5%, worst 6%
  FidelityBars bars;
  bars.spearman_min = -1;
  CHECK(missed_bars(s, bars).empty()); // the defaults judge neither
  bars.time_bias_abs = 0.03;
  bars.mean_regret = 0.02;
  bars.max_regret = 0.05;
  CHECK(missed_bars(s, bars) == std::vector<std::string>{"time bias", "mean regret", "worst regret"});
  bars.time_bias_abs = 0.05;
  bars.mean_regret = 0.04;
  bars.max_regret = 0.07;
  CHECK(missed_bars(s, bars).empty());
}
