#include "validation/compare/reference_clock.h"

#include "models/json_fields.h"
#include "models/power_limit.h"
#include "sim/gpu_simulator.h"
#include "validation/compare/parallel_jobs.h"

#include <cmath>
#include <cstdio>
#include <map>

namespace tilesim {
namespace {

// The keys of extra.reference (README.md, the result schema's `extra`; validation/data/b200/README.md,
// "Reference kernels"): the kernel as a spec, its measured time, what it is and where the source says so.
constexpr std::string_view kReferenceKeys[] = {"what", "source", "kernel", "time_ms", "time_ms_derivation"};

constexpr double kProbeClock = 0.9;    // the elasticity is read between the limit's clock and 0.9x it
constexpr double kTimeTolerance = 0.002; // a reading whose predicted time is within 0.2% of the measured one
constexpr int kMaxSteps = 8;
// A reading outside a quarter to twice the limit's clock is taken as no reading: the reference's
// time is set by something the model does not have, not by the clock.
constexpr double kLowestClock = 0.25, kHighestClock = 2.0;

struct Reference {
  std::string file;
  std::string what;
  KernelSpec kernel;
  double time_ms = 0;
};

Reference parse_reference(const nlohmann::json& j, const std::string& file) {
  const JsonFields r(j, file, "extra.reference");
  r.refuse_unknown_keys(kReferenceKeys);
  r.string("source"); // required: where the source states the reference's time
  return {file, r.string("what"), parse_kernel_spec(j.at("kernel"), file, "extra.reference.kernel"),
          r.number("time_ms", 1e-6, 1e6)};
}

double predicted_ms(GpuProfile gpu, const Reference& ref, double clock_mhz) {
  gpu.sm.clock_mhz = clock_mhz;
  try {
    return simulate(gpu, ref.kernel, {.record_tiles = false, .progress = {}}).time_ms;
  } catch (const SpecError& e) {
    throw SpecError(ref.file, "extra.reference.kernel", std::string("cannot run on ") + gpu.name + " (" + e.what() + ")",
                    "give the reference kernel as its source ran it");
  }
}

// Newton's method on ln(time) against ln(clock), the slope re-read from each step (a kernel is
// partly clock-bound: its elasticity changes with the clock).
ReferenceReading read_clock(const GpuProfile& gpu_at_limit, const Reference& ref) {
  ReferenceReading reading;
  reading.what = ref.what;
  const double f0 = gpu_at_limit.sm.clock_mhz;
  reading.limit_clock_mhz = f0;
  const double t0 = predicted_ms(gpu_at_limit, ref, f0);
  double f = f0 * kProbeClock, t = predicted_ms(gpu_at_limit, ref, f);
  double slope = std::log(t / t0) / std::log(f0 / f);
  reading.elasticity = slope;
  if (!(slope >= kMinReferenceElasticity)) {
    char why[160];
    std::snprintf(why, sizeof why, "its predicted time follows the SM clock with elasticity %.2f, under %.1f: L2 or DRAM sets it",
                  slope, kMinReferenceElasticity);
    reading.why_not = why;
    return reading;
  }
  for (int step = 0; step < kMaxSteps; ++step) {
    if (std::abs(t / ref.time_ms - 1) < kTimeTolerance) {
      reading.used = true;
      reading.clock_mhz = f;
      return reading;
    }
    const double next = f * std::pow(t / ref.time_ms, 1 / slope);
    if (!(next >= kLowestClock * f0 && next <= kHighestClock * f0)) {
      reading.why_not = "no clock from a quarter to twice the limit's gives its measured time";
      return reading;
    }
    const double t_next = predicted_ms(gpu_at_limit, ref, next);
    const double new_slope = std::log(t_next / t) / std::log(f / next);
    if (std::isfinite(new_slope) && new_slope > 0.1) slope = new_slope;
    f = next;
    t = t_next;
  }
  reading.why_not = "the clock did not settle within " + std::to_string(kMaxSteps) + " steps";
  return reading;
}

GpuProfile at_recorded_limit(const GpuProfile& gpu, const MeasuredConfiguration& c) {
  const nlohmann::json& extra = c.measured.extra;
  if (extra.contains("power_limit_w") && extra["power_limit_w"].is_number())
    return at_power_limit(gpu, extra["power_limit_w"].get<double>(), c.file + ": extra.power_limit_w");
  return gpu;
}

} // namespace

std::vector<ReferenceReading> set_reference_clocks(const GpuProfile& gpu, std::vector<MeasuredConfiguration>& dataset,
                                                   unsigned threads) {
  // A source's figures share one reference: each distinct (reference, limit) is read once.
  struct Job {
    GpuProfile gpu;
    Reference ref;
    ReferenceReading reading;
  };
  std::map<std::string, size_t> job_of;
  std::vector<Job> jobs;
  std::vector<std::pair<size_t, size_t>> figures; // (configuration, job)
  for (size_t i = 0; i < dataset.size(); ++i) {
    MeasuredConfiguration& c = dataset[i];
    const GpuProfile at_limit = at_recorded_limit(gpu, c);
    c.measured.extra["sm_clock_mhz"] = at_limit.sm.clock_mhz;
    if (!c.measured.extra.contains("reference")) continue;
    const nlohmann::json& j = c.measured.extra["reference"];
    Reference ref = parse_reference(j, c.file);
    const std::string key = j.dump() + "@" + std::to_string(at_limit.sm.clock_mhz);
    auto [it, added] = job_of.try_emplace(key, jobs.size());
    if (added) jobs.push_back({at_limit, std::move(ref), {}});
    figures.emplace_back(i, it->second);
  }
  run_parallel_jobs(jobs.size(), threads, [&](size_t n) { jobs[n].reading = read_clock(jobs[n].gpu, jobs[n].ref); });

  std::vector<ReferenceReading> readings;
  for (const auto& [i, job] : figures) {
    ReferenceReading r = jobs[job].reading;
    r.id = dataset[i].id;
    if (r.used) dataset[i].measured.extra["sm_clock_mhz"] = r.clock_mhz;
    readings.push_back(std::move(r));
  }
  return readings;
}

} // namespace tilesim
