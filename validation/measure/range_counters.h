// Hardware counters over kernel launches from the CUPTI Range Profiler API (cupti_range_profiler.h,
// CUDA 12.6+). One user range around each of `launches` launches; user replay, so the caller's
// launches re-run once per pass, and cold-L2 state is restored before each launch, outside its range.
// Several launches because some counters vary from launch to launch on the same inputs (measured on
// an H100: dram__bytes_read of persistent GEMMs by up to ~10%, see validation/MEASURE.md).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tilesim::measure {

struct CounterLaunch {
  std::function<void()> before; // runs outside the profiled range (e.g. flush L2), then syncs
  std::function<void()> launch; // enqueues the profiled work; the profiler synchronises after it
};

struct CounterSamples {
  // One map per profiled launch: metric name -> value as ncu reports it (GPU units).
  std::vector<std::map<std::string, double>> launches;
  int passes = 0;   // replay passes the metric list needed
  std::string chip; // CUPTI's chip name, e.g. GH100
};

// Bound to the current device's context; one at a time per process.
class RangeCounterProfiler {
public:
  RangeCounterProfiler(std::vector<std::string> metrics, int launches);
  ~RangeCounterProfiler();
  RangeCounterProfiler(const RangeCounterProfiler&) = delete;
  RangeCounterProfiler& operator=(const RangeCounterProfiler&) = delete;

  // Once per profiler: the counter data image holds exactly `launches` ranges.
  CounterSamples measure(const CounterLaunch& launch);

private:
  void profile_one_range(const CounterLaunch& launch, int index);
  std::vector<std::map<std::string, double>> evaluate_ranges();

  struct Session;
  std::unique_ptr<Session> session_;
};

} // namespace tilesim::measure
