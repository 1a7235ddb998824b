// Hardware counters over one kernel launch from the CUPTI Range Profiler API (cupti_range_profiler.h,
// CUDA 12.6+). One user range around the launch; user replay, so the caller re-runs the launch once
// per pass and can restore cold-L2 state before each pass, outside the range.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace tilesim::measure {

struct CounterPass {
  std::function<void()> before_pass; // runs outside the profiled range (e.g. flush L2), then syncs
  std::function<void()> launch;      // enqueues the profiled work; the profiler synchronises after it
};

struct CounterValues {
  std::map<std::string, double> values; // metric name -> value as ncu reports it (GPU units)
  int passes = 0;
  std::string chip; // CUPTI's chip name, e.g. GH100
};

// Bound to the current device's context; one at a time per process.
class RangeCounterProfiler {
public:
  explicit RangeCounterProfiler(std::vector<std::string> metrics);
  ~RangeCounterProfiler();
  RangeCounterProfiler(const RangeCounterProfiler&) = delete;
  RangeCounterProfiler& operator=(const RangeCounterProfiler&) = delete;

  CounterValues measure(const CounterPass& pass);

private:
  struct Session;
  std::unique_ptr<Session> session_;
};

} // namespace tilesim::measure
