// libFuzzer target: bytes -> JSON guard -> GPU profile loader. A SpecError is the expected answer
// to bad input; anything else, or an accepted profile the simulator could not run with, is a finding.
#include "models/gpu_profile.h"
#include "models/json_input.h"
#include "tests/fuzz/accepted.h"

#include <cmath>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto profile = tilesim::fuzz::accepted(
      [&] { return tilesim::parse_gpu_profile(tilesim::parse_json_text(text, "fuzz.json", "GPU profile"), "fuzz.json"); });
  if (!profile) return 0;
  const tilesim::GpuProfile& p = *profile;
  const double dram = p.dram_bytes_per_cycle();
  if (!(dram > 0) || !std::isfinite(dram) || p.sm.count < 1 || !(p.sm.clock_mhz > 0)) std::abort();
  // The L2 geometry the simulator builds: at least one set per partition, whole sectors per line.
  const long long sets = p.l2.size_bytes / p.l2.partitions / (static_cast<long long>(p.l2.line_bytes) * p.l2.ways);
  if (sets < 1 || p.l2.line_bytes % p.l2.sector_bytes != 0) std::abort();
  for (const auto* list : {&p.sm.dispatch_order, &p.sm.cluster_dispatch_order, &p.sm.gpc, &p.l2.sm_partition})
    if (!list->empty() && static_cast<int>(list->size()) != p.sm.count) std::abort();
  return 0;
}
