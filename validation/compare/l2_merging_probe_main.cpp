// l2_merging_probe_replay: the L2 request-merging probes, measured (committed runs) beside
// replayed. Exits 1 when the replayed lookups per requested sector are further from the median of
// the runs than --max-mean-error on average over the launches. --coalescer-lines and
// --coalescer-ways override the profile's coalescer (how it was fitted: validation/NOTES.md).
#include "models/json_fields.h"
#include "models/spec_error.h"
#include "validation/compare/l2_merging_probe_replay.h"

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

namespace {

constexpr const char* kProgram = "l2_merging_probe_replay";

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

struct Launch {
  nlohmann::json what; // the launch's parameters, as the probe printed them
  std::vector<double> lookups, time_us;
};

// Every distinct launch of the runs, in first-seen order, with each run's measurements.
std::vector<Launch> read_runs(const std::vector<std::string>& paths) {
  std::map<std::string, std::size_t> index;
  std::vector<Launch> launches;
  for (const std::string& path : paths) {
    const nlohmann::json run = tilesim::read_json_file(path, "probe run");
    const auto& runs_launches = tilesim::JsonFields(run, path).array("launches");
    for (size_t i = 0; i < runs_launches.size(); ++i) {
      const nlohmann::json& l = runs_launches[i];
      const tilesim::JsonFields fields(l, path, "launches[" + std::to_string(i) + "]");
      nlohmann::json what = l;
      what.erase("counters");
      what.erase("l2_read_lookups_per_requested_sector");
      what.erase("requested_sectors");
      const std::string key = what.dump();
      if (!index.contains(key)) {
        index[key] = launches.size();
        launches.push_back({what, {}, {}});
      }
      Launch& launch = launches[index[key]];
      launch.lookups.push_back(fields.number("l2_read_lookups_per_requested_sector", 0, 1e6));
      launch.time_us.push_back(fields.object("counters").number("gpu__time_duration.sum", 0, 1e15) / 1e3);
    }
  }
  return launches;
}

} // namespace

int main(int argc, char** argv) {
  namespace po = boost::program_options;
  std::string gpu_name;
  std::vector<std::string> runs;
  int coalescer_lines = -1, coalescer_ways = -1, coalescer_merges = -1;
  double max_mean_error = 0;
  po::options_description options("l2_merging_probe_replay [options] RUN.json...");
  options.add_options()("help", "this text")("gpu", po::value(&gpu_name)->default_value("h100"), "GPU profile")(
      "coalescer-lines", po::value(&coalescer_lines), "request coalescer lines per GPC (default: the profile's)")(
      "coalescer-ways", po::value(&coalescer_ways), "request coalescer ways (default: the profile's)")(
      "coalescer-merges", po::value(&coalescer_merges), "reads merged into one request, 0: no limit (default: the profile's)")(
      "max-mean-error", po::value(&max_mean_error)->default_value(0.1),
      "largest accepted mean |replayed - measured| lookups per requested sector")(
      "runs", po::value(&runs)->composing(), "the probes' JSON outputs");
  po::positional_options_description positional;
  positional.add("runs", -1);
  try {
    po::variables_map vm;
    po::store(po::command_line_parser(argc, argv).options(options).positional(positional).run(), vm);
    if (vm.count("help")) {
      std::cout << options;
      return 0;
    }
    po::notify(vm);
    if (runs.empty()) throw tilesim::SpecError(kProgram, "RUN.json", "none given", "pass the probes' JSON outputs");
    tilesim::GpuProfile gpu = tilesim::load_gpu_profile(gpu_name);
    if (coalescer_lines >= 0) gpu.l2.coalescer_lines_per_gpc = coalescer_lines;
    if (coalescer_ways > 0) gpu.l2.coalescer_ways = coalescer_ways;
    if (coalescer_merges >= 0) gpu.l2.coalescer_merges_per_request = coalescer_merges;
    double worst = 0, sum = 0;
    const auto launches = read_runs(runs);
    std::printf("%-55s %22s  %18s\n", "launch", "lookups/sector meas pred", "walk us meas pred");
    for (const Launch& launch : launches) {
      const tilesim::MergingProbeReplay r =
          tilesim::replay_merging_probe(gpu, tilesim::probe_walkers(gpu, launch.what));
      const double m = median(launch.lookups), error = std::abs(r.lookups_per_requested_sector - m);
      worst = std::max(worst, error);
      sum += error;
      std::printf("%-55s %10.3f %11.3f  %8.0f %9.0f\n", launch.what.dump().c_str(), m, r.lookups_per_requested_sector,
                  median(launch.time_us), r.time_us);
    }
    const double mean = sum / static_cast<double>(launches.size());
    std::printf("coalescer %d lines per GPC, %d ways: mean |error| %.3f (bar %.3f), worst %.3f\n",
                gpu.l2.coalescer_lines_per_gpc, gpu.l2.coalescer_ways, mean, max_mean_error, worst);
    return mean <= max_mean_error ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
    return 1;
  }
}
