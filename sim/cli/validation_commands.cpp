#include "sim/cli/commands.h"

#include "models/gpu_profile.h"
#include "models/spec_error.h"
#include "sim/trace_writer.h"
#include "models/output_file.h"
#include "validation/compare/dataset_validation.h"
#include "validation/compare/reference_clock.h"
#include "validation/compare/result_checks.h"

#include <boost/program_options.hpp>

#include <cmath>
#include <cstdio>
#include <iostream>
#include <thread>

namespace tilesim::cli {
namespace {

nlohmann::json to_json(const SplitScore& s) {
  return {{"configurations", s.configurations},     {"time_mape", s.time_mape},
          {"dram_read_mape", s.dram_read_mape},     {"dram_write_mape", s.dram_write_mape},
          {"l2_hit_mae_points", s.l2_hit_mae_points}, {"l2_read_sectors_mape", s.l2_read_sectors_mape},
          {"spearman_by_shape", s.spearman_by_shape}, {"min_spearman", s.min_spearman()},
          {"time_bias", s.time_bias},               {"regret_by_shape", s.regret_by_shape},
          {"mean_regret", s.mean_regret()},         {"max_regret", s.max_regret()},
          {"order_pairs", s.order_pair_errors.size()}, {"order_pair_error_p90", s.order_pair_error_p90()}};
}

void print_errors(const char* name, const SplitScore& s, const FidelityBars& bars) {
  if (s.with_counters == 0) {
    std::printf("%-10s %4d configs  time MAPE %5.1f%% (bar %.0f%%)  no counters  min Spearman %.2f over %zu shapes\n", name,
                s.configurations, 100 * s.time_mape, 100 * bars.time_mape, s.min_spearman(), s.spearman_by_shape.size());
    return;
  }
  std::printf("%-10s %4d configs  time MAPE %5.1f%% (bar %.0f%%)  DRAM read MAPE %5.1f%% (bar %.0f%%)  "
              "DRAM write MAPE %5.1f%%  L2 hit MAE %4.1f pt (bar %.1f)  L2 sectors MAPE %5.1f%%  "
              "min Spearman %.2f over %zu shapes (bar %.2f)\n",
              name, s.configurations, 100 * s.time_mape, 100 * bars.time_mape, 100 * s.dram_read_mape,
              100 * bars.dram_read_mape, 100 * s.dram_write_mape, s.l2_hit_mae_points, bars.l2_hit_mae_points,
              100 * s.l2_read_sectors_mape, s.min_spearman(), s.spearman_by_shape.size(), bars.spearman_min);
}

void print_split(const char* name, const SplitScore& s, const FidelityBars& bars) {
  print_errors(name, s, bars);
  std::printf("%-10s time bias %+5.1f%%  recommended order's regret: mean %.1f%%, worst %.1f%% over %zu shapes\n", "",
              100 * s.time_bias, 100 * s.mean_regret(), 100 * s.max_regret(), s.regret_by_shape.size());
  std::printf("%-10s order comparisons: 90%% of %zu pairs of orders have their predicted time ratio within %.1f%% of the "
              "measured one\n",
              "", s.order_pair_errors.size(), 100 * s.order_pair_error_p90());
}

} // namespace

int compare_command(const Args& args) {
  namespace po = boost::program_options;
  std::vector<std::string> files;
  std::string trace_path, gpu_name;
  po::options_description options("tilesim compare predicted.json measured.json [--trace-out t.json]");
  options.add_options()("help,h", "this help")("files", po::value(&files)->multitoken(), "the two results")(
      "trace-out", po::value(&trace_path),
      "write both per-SM timelines here as two processes, predicted and measured (Chrome trace-event JSON)")(
      "gpu", po::value(&gpu_name), "the profile the prediction was made with (default: the predicted result's gpu)");
  po::positional_options_description positional;
  positional.add("files", 2);
  if (!parse_options(args, options, positional)) return 0;
  if (files.size() != 2) throw SpecError("tilesim compare", "arguments", "needs two result files", "give predicted.json measured.json");
  const KernelResult p = load_kernel_result(files[0]), m = load_kernel_result(files[1]);
  check_prediction(p, files[0]); // before its gpu is taken for a profile name
  check_comparable(p, files[0], m, files[1], load_gpu_profile(gpu_name.empty() ? p.gpu : gpu_name));
  const ConfigurationError e = compare_results(p, m);
  if (!trace_path.empty())
    write_chrome_trace({{"predicted", &p, files[0]}, {"measured", &m, files[1]}}, trace_path);
  std::printf("%-18s %14s %14s %10s\n", "metric", "predicted", "measured", "error");
  std::printf("%-18s %14.4f %14.4f %+9.1f%%\n", "time ms", p.time_ms, m.time_ms, 100 * e.time_error);
  std::printf("%-18s %14.1f %14.1f %+9.1f%%\n", "TFLOP/s", p.tflops, m.tflops, 100 * (p.tflops / m.tflops - 1));
  std::printf("%-18s %13.1f%% %13.1f%% %+8.1f pt\n", "L2 hit rate", 100 * p.l2_hit_rate, 100 * m.l2_hit_rate, e.l2_hit_points);
  std::printf("%-18s %14.4f %14.4f %+9.1f%%\n", "DRAM read GB", p.dram_read_bytes / 1e9, m.dram_read_bytes / 1e9,
              100 * e.dram_read_error);
  std::printf("%-18s %14.4f %14.4f %+9.1f%%\n", "DRAM write GB", p.dram_write_bytes / 1e9, m.dram_write_bytes / 1e9,
              100 * e.dram_write_error);
  std::printf("%-18s %14lld %14lld %+9.1f%%\n", "L2 read sectors", p.l2_read_sectors, m.l2_read_sectors,
              100 * e.l2_read_sectors_error);
  return 0;
}

int validate_command(const Args& args) {
  namespace po = boost::program_options;
  std::vector<std::string> dataset_dirs;
  std::string gpu_name, json_path;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  bool quiet = false;
  std::string clock = "measured";
  std::string part = "all";
  FidelityBars bars;
  po::options_description options("tilesim validate --dataset validation/data/h100/measured [--gpu h100] [--json out.json]");
  options.add_options()("help,h", "this help")("dataset", po::value(&dataset_dirs)->required()->composing(),
                                               "folder of measured results (tilesim.result/1); give it again to score several together")(
      "gpu", po::value(&gpu_name)->default_value("h100"), "GPU profile to predict with")(
      "json", po::value(&json_path), "also write every row and the scores as JSON here")(
      "threads", po::value(&threads), "simulations run in parallel")(
      "quiet", po::bool_switch(&quiet), "print only the scores, not every configuration")(
      "part", po::value(&part)->default_value("all"),
      "configurations to score: all, held-back (what the bars judge) or calibration")(
      "clock", po::value(&clock)->default_value("measured"),
      "SM clock to predict at: measured (each configuration's recorded extra.sm_clock_mhz), profile (the "
      "profile's, at the board power limit a configuration records in extra.power_limit_w) or reference (profile, "
      "except where a configuration names a reference kernel its source timed on the same machine, "
      "extra.reference: the clock at which the model predicts that kernel's time)")(
      "time-mape", po::value(&bars.time_mape)->default_value(bars.time_mape), "bar: time MAPE (fraction)")(
      "dram-read-mape", po::value(&bars.dram_read_mape)->default_value(bars.dram_read_mape), "bar: DRAM read MAPE")(
      "l2-hit-mae", po::value(&bars.l2_hit_mae_points)->default_value(bars.l2_hit_mae_points),
      "bar: L2 hit rate mean absolute error, points")(
      "spearman", po::value(&bars.spearman_min)->default_value(bars.spearman_min),
      "bar: least Spearman rank correlation of orders within a shape of 4+ orders")(
      "time-bias", po::value(&bars.time_bias_abs), "bar: |mean signed time error| (fraction; not judged unless given)")(
      "mean-regret", po::value(&bars.mean_regret),
      "bar: the recommended order's measured slowdown against the best, mean over shapes (not judged unless given)")(
      "max-regret", po::value(&bars.max_regret), "bar: the same on the worst shape (not judged unless given)");
  if (!parse_options(args, options)) return 0;
  // boost parses "nan" and "inf" into a double; a NaN bar compares false and so is always "met".
  const auto check_bar = [](const char* option, double value, double min, double max) {
    if (!std::isfinite(value) || value < min || value > max) {
      char given[32], range[64];
      std::snprintf(given, sizeof given, "%g", value);
      std::snprintf(range, sizeof range, "is outside %g..%g", min, max);
      throw SpecError(option, given, range, "give a finite bar in that range");
    }
  };
  check_bar("--time-mape", bars.time_mape, 0, 100);
  check_bar("--dram-read-mape", bars.dram_read_mape, 0, 100);
  check_bar("--l2-hit-mae", bars.l2_hit_mae_points, 0, 100);
  check_bar("--spearman", bars.spearman_min, -1, 1);
  check_bar("--time-bias", bars.time_bias_abs, 0, 1e9);
  check_bar("--mean-regret", bars.mean_regret, 0, 1e9);
  check_bar("--max-regret", bars.max_regret, 0, 1e9);
  if (!json_path.empty()) check_output_path(json_path, "--json");
  if (threads < 1 || threads > 1024) throw SpecError("--threads", std::to_string(threads), "is outside 1..1024", "give a thread count");
  if (clock != "measured" && clock != "profile" && clock != "reference")
    throw SpecError("--clock", clock, "is not measured, profile or reference", "write one of those");
  if (part != "all" && part != "held-back" && part != "calibration")
    throw SpecError("--part", part, "is not all, held-back or calibration", "write one of those");
  const GpuProfile gpu = load_gpu_profile(gpu_name);
  auto dataset = load_measured_datasets(dataset_dirs);
  if (part != "all")
    std::erase_if(dataset, [&](const MeasuredConfiguration& c) { return is_held_back(c.id) != (part == "held-back"); });
  const std::vector<ReferenceReading> readings =
      clock == "reference" ? set_reference_clocks(gpu, dataset, threads) : std::vector<ReferenceReading>{};
  if (!quiet)
    for (const auto& r : readings) {
      if (r.used)
        std::printf("%s: SM clock %.0f MHz from its reference (%s), %.0f MHz at its power limit\n", r.id.c_str(),
                    r.clock_mhz, r.what.c_str(), r.limit_clock_mhz);
      else
        std::printf("%s: reference not used (%s): %s; %.0f MHz at its power limit\n", r.id.c_str(), r.what.c_str(),
                    r.why_not.c_str(), r.limit_clock_mhz);
    }
  const auto rows = validate_dataset(gpu, dataset, threads, clock != "profile");
  if (!quiet) {
    std::printf("%-44s %-14s %4s %10s %10s %8s %8s %8s %8s\n", "configuration", "order", "set", "meas ms", "pred ms",
                "time", "DRAM rd", "L2 hit", "sectors");
    for (const auto& r : rows) {
      std::printf("%-44s %-14s %4s %10.4f %10.4f %+7.1f%%", r.id.c_str(), r.order.c_str(), r.held_back ? "held" : "cal",
                  r.measured_time_ms, r.predicted_time_ms, 100 * r.time_error);
      if (r.has_counters)
        std::printf(" %+7.1f%% %+6.1fpt %+7.1f%%\n", 100 * r.dram_read_error, r.l2_hit_points, 100 * r.l2_read_sectors_error);
      else
        std::printf(" %8s %8s %8s  (published: time only)\n", "-", "-", "-");
    }
  }
  const SplitScore calibration = score(rows, false, bars), held = score(rows, true, bars);
  if (part != "held-back") print_split("calibrate", calibration, bars);
  if (part != "calibration") print_split("held-back", held, bars);
  const auto missed = part == "calibration" ? missed_bars(calibration, bars) : missed_bars(held, bars);
  if (!json_path.empty()) {
    std::string command = "tilesim validate"; // how to reproduce the file: the dataset rule of validation/data
    for (const auto& a : args) command += " " + a;
    nlohmann::json j{{"command", command}, {"gpu", gpu.name}, {"dataset", dataset_dirs}, {"clock", clock}, {"calibration", to_json(calibration)},
                     {"held_back", to_json(held)}, {"missed_bars", missed}, {"rows", nlohmann::json::array()}};
    for (const auto& r : readings)
      j["reference_clocks"].push_back({{"id", r.id}, {"reference", r.what}, {"used", r.used}, {"clock_mhz", r.clock_mhz},
                                       {"limit_clock_mhz", r.limit_clock_mhz}, {"elasticity", r.elasticity},
                                       {"why_not", r.why_not}});
    for (const auto& r : rows)
      j["rows"].push_back({{"id", r.id}, {"order", r.order}, {"held_back", r.held_back}, {"measured_time_ms", r.measured_time_ms},
                           {"predicted_time_ms", r.predicted_time_ms}, {"time_error", r.time_error},
                           {"dram_read_error", r.dram_read_error}, {"dram_write_error", r.dram_write_error},
                           {"l2_hit_points", r.l2_hit_points}, {"l2_read_sectors_error", r.l2_read_sectors_error}});
    write_output_file(json_path, j.dump(1) + '\n', "--json");
  }
  const char* judged = part == "calibration" ? "calibration" : "held-back";
  if (missed.empty()) {
    std::printf("%s configurations meet every fidelity bar\n", judged);
    return 0;
  }
  std::printf("%s configurations miss:", judged);
  for (const auto& m : missed) std::printf(" [%s]", m.c_str());
  std::printf("\n");
  return 3;
}

} // namespace tilesim::cli
