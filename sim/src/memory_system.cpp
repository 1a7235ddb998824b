#include "sim/memory_system.h"

#include <algorithm>
#include <bit>

namespace tilesim {
MemorySystem::MemorySystem(const GpuProfile& gpu)
    : partition_of_sm_(gpu.l2.sm_partition),
      l2_bandwidth_(gpu.l2.bandwidth_bytes_per_s / (gpu.sm.clock_mhz * 1e6)),
      dram_(gpu.dram_bytes_per_cycle()),
      line_shift_(std::countr_zero(static_cast<unsigned>(gpu.l2.line_bytes))),
      sector_shift_(std::countr_zero(static_cast<unsigned>(gpu.l2.sector_bytes))),
      full_line_(static_cast<SectorMask>((1u << (gpu.l2.line_bytes / gpu.l2.sector_bytes)) - 1)),
      near_latency_(gpu.l2.hit_latency_cycles),
      far_latency_(gpu.l2.hit_latency_cycles + gpu.l2.far_hit_extra_latency_cycles),
      dram_latency_(gpu.dram.latency_ns * gpu.sm.clock_mhz / 1000.0) {
  if (partition_of_sm_.empty())
    for (int sm = 0; sm < gpu.sm.count; ++sm) partition_of_sm_.push_back(sm * gpu.l2.partitions / gpu.sm.count);
  for (int p = 0; p < gpu.l2.partitions; ++p)
    partitions_.emplace_back(CacheGeometry{gpu.l2.size_bytes / gpu.l2.partitions, gpu.l2.line_bytes,
                                           gpu.l2.sector_bytes, gpu.l2.ways});
  // Without a GPC map no coalescer is modelled: one disabled coalescer serves every SM.
  gpc_of_sm_ = gpu.sm.gpc.empty() ? std::vector<int>(gpu.sm.count, 0) : gpu.sm.gpc;
  const int gpcs = *std::max_element(gpc_of_sm_.begin(), gpc_of_sm_.end()) + 1;
  const int lines = gpu.sm.gpc.empty() ? 0 : gpu.l2.coalescer_lines_per_gpc;
  for (int g = 0; g < gpcs; ++g) coalescers_.emplace_back(lines, gpu.l2.coalescer_ways, gpu.l2.coalescer_merges_per_request);
}

void MemorySystem::gather_lines(const Box& box) {
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
}

MemorySystem::BoxOutcome MemorySystem::read_lines(int partition, RequestCoalescer& coalescer, bool promote) {
  SectoredCache& near = partitions_[partition];
  BoxOutcome out;
  looked_up_.clear();
  fills_.clear();
  // A hit on a pending line lands when the fill does, plus the trip over the fabric for one
  // homed across (microbench/l2_pending_hit.json: 128 ns behind the leader, a follower of the other
  // partition lands 64 ns after it, one of the leader's partition 16 ns after it).
  const auto note = [&](SectoredCache& cache, LineAddress line, const LookupOutcome& o, Cycle extra) {
    if (o.hit_sectors > 0 && o.hit_ready > 0) out.hit_ready = std::max(out.hit_ready, o.hit_ready + extra);
    if (o.miss_sectors > 0) fills_.push_back({&cache, line});
  };
  const int line_sectors = SectoredCache::sectors_in(full_line_);
  // Every line's set starts on its way into the host's caches before the first lookup, at the
  // SM's partition and, for a line homed across, at its home: the lookups are independent, so their
  // host memory latencies overlap (a box is a few hundred lines; their sets fit in the host's L2).
  for (const LineRequest& req : lines_) {
    near.prefetch(req.line);
    const int home = home_of(req.line);
    if (home != partition) partitions_[home].prefetch(req.line);
  }
  for (std::size_t i = 0; i < lines_.size(); ++i) {
    const LineRequest& req = lines_[i];
    if (coalescer.enabled()) {
      const Cycle ready = coalescer.merge(req.line, req.sectors);
      if (ready >= 0) {
        const int sectors = SectoredCache::sectors_in(req.sectors);
        out.l2_sectors += sectors;
        out.coalesced_sectors += sectors;
        out.coalesced_ready = std::max(out.coalesced_ready, ready);
        continue;
      }
      looked_up_.push_back(req);
    }
    const LookupOutcome o = near.read(req.line, req.sectors);
    note(near, req.line, o, 0);
    totals_.sm_read_sectors += o.hit_sectors + o.miss_sectors;
    totals_.near_read_hit_sectors += o.hit_sectors;
    out.l2_sectors += o.hit_sectors;
    if (o.miss_sectors == 0) continue;
    const int home = home_of(req.line);
    const LineAddress buddy = req.line ^ 1;
    if (home == partition) {
      out.dram_sectors += o.miss_sectors;
      if (promote) {
        const LookupOutcome b = near.read(buddy, full_line_);
        if (b.miss_sectors > 0) fills_.push_back({&near, buddy});
        totals_.sm_read_sectors += line_sectors;
        totals_.near_read_hit_sectors += b.hit_sectors;
        out.promoted_dram_sectors += b.miss_sectors;
      }
      continue;
    }
    SectoredCache& home_partition = partitions_[home];
    const LookupOutcome far = home_partition.read(req.line, o.missed);
    note(home_partition, req.line, far, far_latency_ - near_latency_);
    totals_.fabric_read_sectors += o.miss_sectors;
    totals_.far_read_hit_sectors += far.hit_sectors;
    out.l2_sectors += far.hit_sectors;
    out.far_sectors += far.hit_sectors;
    out.dram_sectors += far.miss_sectors;
    if (promote && far.miss_sectors > 0) {
      const LookupOutcome b = home_partition.read(buddy, full_line_);
      if (b.miss_sectors > 0) fills_.push_back({&home_partition, buddy});
      totals_.fabric_promotion_sectors += line_sectors;
      totals_.fabric_promotion_hit_sectors += b.hit_sectors;
      out.promoted_dram_sectors += b.miss_sectors;
    }
  }
  return out;
}

MemorySystem::BoxOutcome MemorySystem::write_lines(int partition) {
  BoxOutcome out;
  for (const LineRequest& req : lines_) {
    // Write-through: the home partition's copy is updated (allocated clean) and the bytes go on
    // to DRAM. The H100 dataset shows it: DRAM writes equal the output's size in every
    // configuration, also where the output fits in L2 (validation/NOTES.md).
    const int home = home_of(req.line);
    const LookupOutcome o = partitions_[home].read(req.line, req.sectors);
    const int sectors = o.hit_sectors + o.miss_sectors;
    totals_.write_sectors += home == partition ? sectors : 2 * sectors;
    out.l2_sectors += sectors;
  }
  return out;
}

Cycle MemorySystem::read_box(Cycle issue, int sm, const Box& box, SectorCount& outcome) {
  gather_lines(box);
  RequestCoalescer& coalescer = coalescers_[gpc_of_sm_[sm]];
  const BoxOutcome o = read_lines(partition_of_sm_[sm], coalescer, box.l2_promotion_256b);
  outcome.hits += o.l2_sectors;
  outcome.misses += o.dram_sectors;
  totals_.coalesced_read_sectors += o.coalesced_sectors;
  const ByteCount dram_bytes = (o.dram_sectors + o.promoted_dram_sectors) << sector_shift_;
  totals_.dram_read_bytes += dram_bytes;

  Cycle done = std::max({issue + near_latency_, o.coalesced_ready, o.hit_ready});
  const ByteCount looked_up_bytes = (o.l2_sectors - o.coalesced_sectors + o.dram_sectors) << sector_shift_;
  if (looked_up_bytes > 0)
    done = std::max(done, l2_bandwidth_.serve(issue, looked_up_bytes) + (o.far_sectors > 0 ? far_latency_ : near_latency_));
  if (dram_bytes > 0) done = std::max(done, dram_.serve(issue, dram_bytes) + dram_latency_);
  for (const Fill& fill : fills_) fill.partition->set_fill_ready(fill.line, done);
  if (coalescer.enabled())
    for (const LineRequest& req : looked_up_) coalescer.insert(req.line, req.sectors, done);
  return done;
}

Cycle MemorySystem::write_box(Cycle issue, int sm, const Box& box) {
  gather_lines(box);
  const BoxOutcome o = write_lines(partition_of_sm_[sm]);
  const ByteCount bytes = o.l2_sectors << sector_shift_;
  totals_.dram_write_bytes += bytes;
  dram_.serve(issue, bytes);
  return l2_bandwidth_.serve(issue, bytes) + far_latency_;
}

} // namespace tilesim
