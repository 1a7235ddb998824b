// Predicted against measured: per-configuration errors, rank agreement of launch orders within a
// shape, and the fidelity bars a dataset must meet (issue 4).
#pragma once

#include "sim/kernel_result.h"

#include <map>
#include <string>
#include <vector>

namespace tilesim {

struct ConfigurationError {
  std::string id;    // dataset file stem
  std::string shape; // the kernel spec without its launch order
  std::string order;
  bool held_back = false;
  bool has_counters = true; // false for published figures, which give a time only
  double measured_time_ms = 0, predicted_time_ms = 0;
  double time_error = 0;        // (predicted - measured) / measured
  double dram_read_error = 0;   // relative, as above
  double dram_write_error = 0;  // relative; 0 when both are below 1 MB
  double l2_hit_points = 0;     // predicted - measured, in percentage points
  double l2_read_sectors_error = 0;
};

ConfigurationError compare_results(const KernelResult& predicted, const KernelResult& measured);

// Spearman's rank correlation with tied ranks averaged; 1 for fewer than two points.
double spearman(const std::vector<double>& x, const std::vector<double>& y);

struct FidelityBars {
  double time_mape = 0.10;
  double dram_read_mape = 0.15;
  double l2_hit_mae_points = 5.0;
  double spearman_min = 0.9;
  int spearman_min_orders = 4;
  // Issue 16's bars on what a user acts on; not judged unless set (the defaults cannot be missed).
  double time_bias_abs = 1e9; // |mean signed time error|
  double mean_regret = 1e9;   // the recommended order's regret, mean over shapes
  double max_regret = 1e9;    // and on the worst shape
};

struct SplitScore {
  int configurations = 0;
  int with_counters = 0; // those the DRAM and L2 errors average over
  double time_mape = 0, dram_read_mape = 0, dram_write_mape = 0, l2_hit_mae_points = 0, l2_read_sectors_mape = 0;
  double time_bias = 0; // mean signed time error: negative when the model predicts fast
  std::map<std::string, double> spearman_by_shape; // shapes with at least spearman_min_orders orders
  // Per shape with two or more orders: how much slower, measured, the order the model ranks
  // first runs than the measured best (0 when the model picks the best). What a user who follows
  // the recommendation loses.
  std::map<std::string, double> regret_by_shape;
  // Per pair of orders of one shape: how far the model's time ratio of the two is from the measured
  // one, exp(|ln(p_i / p_j) - ln(m_i / m_j)|) - 1. The bias of a shape cancels in the ratio; what is
  // left is the error of the model's comparison of two orders, which whatif's close call rests on.
  std::vector<double> order_pair_errors;
  double min_spearman() const;
  double mean_regret() const;
  double max_regret() const;
  // The 90th percentile of order_pair_errors (0 when there are none): two orders whose predicted
  // times are closer than this are too close to call.
  double order_pair_error_p90() const;
};

// The q-quantile of `values` by nearest rank (the smallest value with at least a fraction q of the
// values at or below it); 0 for an empty list. q in (0, 1].
double nearest_rank_quantile(std::vector<double> values, double q);

// exp(|ln(predicted_i / predicted_j) - ln(measured_i / measured_j)|) - 1 for every pair i < j.
std::vector<double> order_pair_errors(const std::vector<double>& predicted, const std::vector<double>& measured);

// The measured slowdown of the order with the least predicted time against the measured best:
// measured[argmin predicted] / min measured - 1. 0 for an empty list.
double recommendation_regret(const std::vector<double>& predicted, const std::vector<double>& measured);

SplitScore score(const std::vector<ConfigurationError>& rows, bool held_back, const FidelityBars& bars);
// Names of the bars `s` misses; empty when it meets them all.
std::vector<std::string> missed_bars(const SplitScore& s, const FidelityBars& bars);

// The fixed split rule: a configuration is held back when the FNV-1a-style hash of its file stem is
// 0 modulo 3 (README.md, "Validation"). It depends on the name alone, never on the errors.
bool is_held_back(const std::string& id);

} // namespace tilesim
