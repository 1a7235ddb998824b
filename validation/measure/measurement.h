// One measurement: warm up, time cold launches with CUPTI activity records, read hardware counters
// over one cold launch with the range profiler, optionally trace tiles, and fill a KernelResult.
#pragma once

#include "sim/kernel_result.h"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tilesim::measure {

struct MeasureOptions {
  std::string kernel_path;          // kernel spec JSON (empty with copy_bytes)
  std::optional<std::string> order; // overrides the spec's order
  std::size_t copy_bytes = 0;       // > 0: measure the streaming copy instead of a spec
  int runs = 20;
  int warmup = 3;
  int counter_launches = 5; // profiled launches; counters are their median
  bool trace = false;
  bool counters = true;
  bool launch_only = false; // no CUPTI at all: flushed launches for an external profiler (ncu)
  int device = 0;
  std::uint64_t seed = 1;
  std::vector<std::string> argv; // for provenance
};

// The counters read over the profiled launch (same names as `ncu --metrics`).
const std::vector<std::string>& counter_metrics();

// Throws MeasureError (or SpecError for a malformed spec).
KernelResult measure_kernel(const MeasureOptions& options);

// The same warm-up and flushed launches with no CUPTI in the process, so ncu or nsys can attach;
// checks the output and returns nothing.
void launch_for_external_profiler(const MeasureOptions& options);

} // namespace tilesim::measure
