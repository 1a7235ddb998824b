#include "sim/memory_system.h"

#include <algorithm>
#include <bit>

namespace tilesim {

MemorySystem::MemorySystem(const GpuProfile& gpu)
    : l2_({gpu.l2.size_bytes, gpu.l2.line_bytes, gpu.l2.sector_bytes, gpu.l2.ways}),
      l2_bandwidth_(gpu.l2.bandwidth_bytes_per_cycle),
      dram_(gpu.dram_bytes_per_cycle()),
      line_shift_(std::countr_zero(static_cast<unsigned>(gpu.l2.line_bytes))),
      sector_shift_(std::countr_zero(static_cast<unsigned>(gpu.l2.sector_bytes))),
      full_line_(static_cast<SectorMask>((1u << (gpu.l2.line_bytes / gpu.l2.sector_bytes)) - 1)),
      // Lines hash across both partitions, so a box of many lines always waits for some far ones.
      l2_hit_latency_(gpu.l2.hit_latency_cycles + gpu.l2.far_hit_extra_latency_cycles),
      dram_latency_(gpu.dram.latency_ns * gpu.sm.clock_mhz / 1000.0) {}

LookupOutcome MemorySystem::lookup_box(const Box& box, bool is_write) {
  // Gather the box's lines first, then look them up with the set of a line a few places ahead
  // already on its way into the host's caches: the lookups are independent, their host memory
  // latency need not be paid one after another.
  lines_.clear();
  const Address line_mask = (Address{1} << line_shift_) - 1;
  for (int r = 0; r < box.rows; ++r) {
    const Address begin = box.base + static_cast<Address>(r) * box.row_stride;
    const Address end = begin + box.row_bytes; // exclusive
    const LineAddress first_line = begin >> line_shift_, last_line = (end - 1) >> line_shift_;
    for (LineAddress line = first_line; line <= last_line; ++line) {
      SectorMask mask = full_line_;
      if (line == first_line) mask &= static_cast<SectorMask>(full_line_ << ((begin & line_mask) >> sector_shift_));
      if (line == last_line) mask &= static_cast<SectorMask>(full_line_ >> ((line_mask - ((end - 1) & line_mask)) >> sector_shift_));
      lines_.push_back({line, mask});
    }
  }
  totals_.l2_line_lookups += static_cast<long long>(lines_.size());
  constexpr std::size_t kPrefetchDistance = 8;
  for (std::size_t i = 0; i < std::min(kPrefetchDistance, lines_.size()); ++i) l2_.prefetch(lines_[i].line);
  LookupOutcome sum;
  for (std::size_t i = 0; i < lines_.size(); ++i) {
    if (i + kPrefetchDistance < lines_.size()) l2_.prefetch(lines_[i + kPrefetchDistance].line);
    const LookupOutcome o = is_write ? l2_.write(lines_[i].line, lines_[i].sectors) : l2_.read(lines_[i].line, lines_[i].sectors);
    sum.hit_sectors += o.hit_sectors;
    sum.miss_sectors += o.miss_sectors;
    sum.written_back_sectors += o.written_back_sectors;
  }
  return sum;
}

Cycle MemorySystem::read_box(Cycle issue, const Box& box, SectorCount& outcome) {
  const LookupOutcome o = lookup_box(box, false);
  outcome.hits += o.hit_sectors;
  outcome.misses += o.miss_sectors;
  totals_.l2_read_hit_sectors += o.hit_sectors;
  totals_.l2_read_miss_sectors += o.miss_sectors;

  const ByteCount miss_bytes = static_cast<ByteCount>(o.miss_sectors) << sector_shift_;
  const ByteCount writeback_bytes = static_cast<ByteCount>(o.written_back_sectors) << sector_shift_;
  totals_.dram_read_bytes += miss_bytes;
  totals_.dram_write_bytes += writeback_bytes;

  const ByteCount all_bytes = static_cast<ByteCount>(o.hit_sectors + o.miss_sectors) << sector_shift_;
  Cycle done = l2_bandwidth_.serve(issue, all_bytes) + l2_hit_latency_;
  if (writeback_bytes > 0) dram_.serve(issue, writeback_bytes);
  if (miss_bytes > 0) done = std::max(done, dram_.serve(issue, miss_bytes) + dram_latency_);
  return done;
}

Cycle MemorySystem::write_box(Cycle issue, const Box& box) {
  const LookupOutcome o = lookup_box(box, true);
  totals_.l2_write_hit_sectors += o.hit_sectors;
  totals_.l2_write_miss_sectors += o.miss_sectors;
  const ByteCount writeback_bytes = static_cast<ByteCount>(o.written_back_sectors) << sector_shift_;
  totals_.dram_write_bytes += writeback_bytes;
  if (writeback_bytes > 0) dram_.serve(issue, writeback_bytes);
  const ByteCount bytes = static_cast<ByteCount>(o.hit_sectors + o.miss_sectors) << sector_shift_;
  return l2_bandwidth_.serve(issue, bytes) + l2_hit_latency_;
}

} // namespace tilesim
