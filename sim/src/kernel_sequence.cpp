#include "sim/kernel_sequence.h"

namespace tilesim {
namespace {

// The L2 sectors a result's hit rate is over: its reads and, where the simulator counted them, writes.
double l2_sectors(const KernelResult& r) {
  const double writes = r.extra.contains("l2_write_sectors") ? r.extra["l2_write_sectors"].get<double>() : 0.0;
  return static_cast<double>(r.l2_read_sectors) + writes;
}

} // namespace

KernelResult run_in_sequence(const KernelResult& first, KernelResult second) {
  const double second_ms = second.time_ms;
  const double first_sectors = l2_sectors(first), second_sectors = l2_sectors(second);
  const double sectors = first_sectors + second_sectors;
  if (sectors > 0)
    second.l2_hit_rate = (first.l2_hit_rate * first_sectors + second.l2_hit_rate * second_sectors) / sectors;
  second.time_ms = first.time_ms + second_ms;
  second.tflops = second_ms > 0 ? second.tflops * second_ms / second.time_ms : 0.0;
  second.dram_read_bytes += first.dram_read_bytes;
  second.dram_write_bytes += first.dram_write_bytes;
  second.l2_read_sectors += first.l2_read_sectors;
  const double shift_ns = first.time_ms * 1e6;
  const double clock_mhz = second.extra.value("sm_clock_mhz", 0.0);
  for (TileRecord& t : second.tiles) {
    t.start_ns += shift_ns;
    t.end_ns += shift_ns;
    if (t.start_cycle) *t.start_cycle += shift_ns * clock_mhz / 1000.0;
    if (t.end_cycle) *t.end_cycle += shift_ns * clock_mhz / 1000.0;
  }
  if (second.extra.contains("cycles") && first.extra.contains("cycles"))
    second.extra["cycles"] = second.extra["cycles"].get<double>() + first.extra["cycles"].get<double>();
  second.extra["launched_before"] = {{"kernel", first.kernel},
                                     {"time_ms", first.time_ms},
                                     {"dram_read_bytes", first.dram_read_bytes},
                                     {"dram_write_bytes", first.dram_write_bytes},
                                     {"l2_hit_rate", first.l2_hit_rate}};
  return second;
}

} // namespace tilesim
