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
      dram_latency_(gpu.dram.latency_ns * gpu.sm.clock_mhz / 1000.0),
      l2_service_factor_(gpu.l2.sm_service_factor),
      dram_service_factor_(gpu.dram.sm_service_factor) {
  partition_reciprocal_ = ~std::uint64_t{0} / static_cast<std::uint64_t>(gpu.l2.partitions) + 1;
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

void MemorySystem::gather_lines(const Box& box, int partition) {
  // Locals, not members: stores of the one-byte fields may alias anything, so members would be
  // read again after every line.
  const int line_shift = line_shift_, sector_shift = sector_shift_;
  const SectorMask full = full_line_;
  const Address line_mask = (Address{1} << line_shift) - 1;
  // At most one line more per row than its bytes fill.
  const std::size_t most =
      static_cast<std::size_t>(std::max(box.rows, 0)) * ((static_cast<Address>(std::max<ByteCount>(box.row_bytes, 0)) >> line_shift) + 2);
  if (lines_.size() < most) {
    lines_.resize(most);
    looked_up_.resize(most);
    far_misses_.resize(most);
    fills_.resize(4 * most);
  }
  LineRequest* const begin_out = lines_.data();
  LineRequest* out = begin_out;
  const std::int64_t sets = partitions_.front().sets(); // every partition has the same sets
  const std::uint64_t coalescer_sets = coalescers_.front().sets();
  const std::uint64_t reciprocal = partition_reciprocal_, partitions = partitions_.size();
  // Every line's set at the SM's partition starts on its way into the host's caches before the
  // first lookup: the lookups are independent, so their host memory latencies overlap (a box is a
  // few hundred lines; their sets fit in the host's L2). A home set across is brought in only for
  // a near miss (read_lines).
  const SectoredCache* caches = partitions_.data();
  const auto request = [=](LineAddress line, SectorMask mask) {
    const auto set = static_cast<std::uint32_t>(SectoredCache::set_of(line, sets));
    const int home = home_of(line, reciprocal, partitions);
    if (partition >= 0) caches[partition].prefetch_set(set);
    return LineRequest{line, set, static_cast<std::uint32_t>(RequestCoalescer::set_of(line, coalescer_sets)), mask,
                       static_cast<std::uint32_t>(home)};
  };
  const bool aligned =
      box.row_bytes > 0 && ((box.base | static_cast<Address>(box.row_bytes) | static_cast<Address>(box.row_stride)) & line_mask) == 0;
  if (aligned) {
    // Rows of whole, aligned lines (a TMA box of 128-byte rows): every sector of every line.
    const LineAddress per_row = static_cast<Address>(box.row_bytes) >> line_shift;
    const LineAddress stride = static_cast<Address>(box.row_stride) >> line_shift;
    LineAddress first = box.base >> line_shift;
    if (per_row == 1) { // the usual TMA box: one loop, not one a row
      for (int r = 0; r < box.rows; ++r, first += stride) *out++ = request(first, full);
    } else {
      for (int r = 0; r < box.rows; ++r, first += stride)
        for (LineAddress line = first; line < first + per_row; ++line) *out++ = request(line, full);
    }
  } else {
    for (int r = 0; r < box.rows; ++r) {
      const Address begin = box.base + static_cast<Address>(r) * box.row_stride;
      const Address end = begin + box.row_bytes; // exclusive
      const LineAddress first_line = begin >> line_shift, last_line = (end - 1) >> line_shift;
      if (last_line < first_line) continue;
      const auto head = static_cast<SectorMask>(full & (full << ((begin & line_mask) >> sector_shift)));
      const auto tail = static_cast<SectorMask>(full >> ((line_mask - ((end - 1) & line_mask)) >> sector_shift));
      if (first_line == last_line) {
        *out++ = request(first_line, static_cast<SectorMask>(head & tail));
        continue;
      }
      *out++ = request(first_line, head);
      for (LineAddress line = first_line + 1; line < last_line; ++line) *out++ = request(line, full);
      *out++ = request(last_line, tail);
    }
  }
  line_count_ = static_cast<std::size_t>(out - begin_out);
  totals_.l2_line_lookups += static_cast<long long>(line_count_);
  // Rows of whole lines further apart than they are long never share a line; other boxes are checked.
  distinct_lines_ = aligned ? box.rows <= 1 || box.row_stride >= box.row_bytes
                            : std::adjacent_find(begin_out, out, [](const LineRequest& a, const LineRequest& b) {
                                return a.line >= b.line;
                              }) == out;
}

MemorySystem::BoxOutcome MemorySystem::read_lines(int partition, RequestCoalescer& coalescer, bool promote) {
  SectoredCache& near = partitions_[partition];
  const LineRequest* const lines = lines_.data();
  const std::size_t count = line_count_;
  const SectorMask full = full_line_;
  const int line_sectors = SectoredCache::sectors_in(full);
  // Counts kept in locals and added to the totals once (see gather_lines on aliasing).
  long long l2_sectors = 0, coalesced_sectors = 0, far_sectors = 0, dram_sectors = 0, promoted_dram_sectors = 0;
  long long sm_read = 0, near_hits = 0, fabric_read = 0, far_hits = 0, fabric_promotion = 0, fabric_promotion_hits = 0;
  long long writeback_sectors = 0; // dirty sectors the box's lookups evicted
  Cycle coalesced_ready = 0;
  // A hit on a pending line lands when the fill does, plus the trip over the fabric for one
  // homed across (microbench/l2_pending_hit.json: 128 ns behind the leader, a follower of the other
  // partition lands 64 ns after it, one of the leader's partition 16 ns after it): the latest
  // pending fill of the near hits and of the far ones.
  std::uint32_t near_ready = 0, far_ready = 0;
  LookedUp* looked_up = looked_up_.data();
  Fill* fill = fills_.data();
  FarRequest* far_miss = far_misses_.data();
  // The missed line's 256-byte block partner, looked up (and fetched if absent) in `cache` with it.
  const auto promote_buddy = [&](SectoredCache& cache, LineAddress buddy, long long& lookups, long long& hits) {
    const std::int64_t buddy_set = cache.set_of(buddy);
    const LookupOutcome b = cache.read_in_set(buddy_set, buddy, full);
    if (b.miss_sectors > 0) *fill++ = {&cache, buddy, buddy_set, b.slot};
    writeback_sectors += b.evicted_dirty_sectors;
    lookups += line_sectors;
    hits += b.hit_sectors;
    promoted_dram_sectors += b.miss_sectors;
  };
  const bool coalescing = coalescer.enabled();
  for (std::size_t i = 0; i < count; ++i) {
    const LineRequest req = lines[i];
    if (coalescing) {
      const RequestCoalescer::Merge merge = coalescer.merge_in_set(req.coalescer_set, req.line, req.sectors);
      if (merge.ready >= 0) {
        const int sectors = SectoredCache::sectors_in(req.sectors);
        l2_sectors += sectors;
        coalesced_sectors += sectors;
        coalesced_ready = std::max(coalesced_ready, merge.ready);
        continue;
      }
      // Where the line is held stays known for its insert only while no line comes twice.
      *looked_up++ = {static_cast<std::uint32_t>(i), merge.way >= 0 || distinct_lines_ ? merge.way : RequestCoalescer::kUnknown};
    }
    const auto sectors = static_cast<SectorMask>(req.sectors);
    const LookupOutcome o = near.read_in_set(req.set, req.line, sectors);
    if (o.hit_sectors > 0) near_ready = std::max(near_ready, o.hit_ready);
    writeback_sectors += o.evicted_dirty_sectors;
    sm_read += o.hit_sectors + o.miss_sectors;
    near_hits += o.hit_sectors;
    l2_sectors += o.hit_sectors;
    if (o.miss_sectors == 0) continue;
    *fill++ = {&near, req.line, req.set, o.slot};
    if (static_cast<int>(req.home) == partition) {
      dram_sectors += o.miss_sectors;
      if (promote) promote_buddy(near, req.line ^ 1, sm_read, near_hits);
      continue;
    }
    // Looked up at its home after the box's near lookups: the two partitions' states are apart, so
    // the order between them changes nothing, and only the home sets a near miss needs are
    // brought into the host's caches, while the near lookups go on.
    partitions_[req.home].prefetch_set(req.set);
    *far_miss++ = {static_cast<std::uint32_t>(i), o.missed};
    fabric_read += o.miss_sectors;
  }
  for (const FarRequest* f = far_misses_.data(); f != far_miss; ++f) {
    const LineRequest req = lines[f->line];
    SectoredCache& home = partitions_[req.home];
    const LookupOutcome far = home.read_in_set(req.set, req.line, static_cast<SectorMask>(f->sectors));
    if (far.hit_sectors > 0) far_ready = std::max(far_ready, far.hit_ready);
    if (far.miss_sectors > 0) *fill++ = {&home, req.line, req.set, far.slot};
    writeback_sectors += far.evicted_dirty_sectors;
    far_hits += far.hit_sectors;
    l2_sectors += far.hit_sectors;
    far_sectors += far.hit_sectors;
    dram_sectors += far.miss_sectors;
    if (promote && far.miss_sectors > 0) promote_buddy(home, req.line ^ 1, fabric_promotion, fabric_promotion_hits);
  }
  looked_up_count_ = static_cast<std::size_t>(looked_up - looked_up_.data());
  fill_count_ = static_cast<std::size_t>(fill - fills_.data());
  totals_.sm_read_sectors += sm_read;
  totals_.near_read_hit_sectors += near_hits;
  totals_.fabric_read_sectors += fabric_read;
  totals_.far_read_hit_sectors += far_hits;
  totals_.fabric_promotion_sectors += fabric_promotion;
  totals_.fabric_promotion_hit_sectors += fabric_promotion_hits;
  BoxOutcome out;
  out.l2_sectors = l2_sectors;
  out.coalesced_sectors = coalesced_sectors;
  out.coalesced_ready = coalesced_ready;
  out.far_sectors = far_sectors;
  out.dram_sectors = dram_sectors;
  out.promoted_dram_sectors = promoted_dram_sectors;
  out.writeback_sectors = writeback_sectors;
  out.hit_ready = near_ready;
  if (far_ready > 0) out.hit_ready = std::max(out.hit_ready, far_ready + (far_latency_ - near_latency_));
  return out;
}

MemorySystem::BoxOutcome MemorySystem::write_lines(int partition) {
  BoxOutcome out;
  for (std::size_t i = 0; i < line_count_; ++i) {
    const LineRequest& req = lines_[i];
    // Write-back: the home partition's copy is allocated dirty and reaches DRAM when it is
    // evicted; what is still dirty when the kernel ends is written after it. The H100 element-wise
    // data shows it: an add over 4 M fp32 elements (a 16 MB output) writes 2.7 MB to DRAM inside
    // the kernel, one over 16 M (67 MB) 47 MB, and from 64 M elements up 16-19 MB of each output
    // is missing from the kernel's DRAM writes (validation/data/h100/elementwise/measured/).
    const int home = static_cast<int>(req.home);
    const LookupOutcome o = partitions_[home].write_in_set(req.set, req.line, static_cast<SectorMask>(req.sectors));
    const int sectors = o.hit_sectors + o.miss_sectors;
    totals_.write_sectors += home == partition ? sectors : 2 * sectors;
    out.l2_sectors += sectors;
    out.writeback_sectors += o.evicted_dirty_sectors;
  }
  return out;
}

Cycle MemorySystem::read_box(Cycle issue, int sm, const Box& box, SectorCount& outcome) {
  gather_lines(box, partition_of_sm_[sm]);
  RequestCoalescer& coalescer = coalescers_[gpc_of_sm_[sm]];
  const BoxOutcome o = read_lines(partition_of_sm_[sm], coalescer, box.l2_promotion_256b);
  outcome.hits += o.l2_sectors;
  outcome.misses += o.dram_sectors;
  totals_.coalesced_read_sectors += o.coalesced_sectors;
  const ByteCount dram_bytes = (o.dram_sectors + o.promoted_dram_sectors) << sector_shift_;
  totals_.dram_read_bytes += dram_bytes;
  write_back(issue, o.writeback_sectors);

  Cycle done = std::max({issue + near_latency_, o.coalesced_ready, o.hit_ready});
  const ByteCount looked_up_bytes = (o.l2_sectors - o.coalesced_sectors + o.dram_sectors) << sector_shift_;
  if (looked_up_bytes > 0)
    done = std::max(done, served_at(issue, l2_bandwidth_.serve(issue, looked_up_bytes), l2_service_factor_, sm) +
                              (o.far_sectors > 0 ? far_latency_ : near_latency_));
  if (dram_bytes > 0)
    done = std::max(done, served_at(issue, dram_.serve(issue, dram_bytes), dram_service_factor_, sm) + dram_latency_);
  for (std::size_t i = 0; i < fill_count_; ++i)
    fills_[i].partition->set_fill_ready_in_set(fills_[i].set, fills_[i].line, done, fills_[i].slot);
  for (std::size_t i = 0; i < looked_up_count_; ++i) {
    const LineRequest& req = lines_[looked_up_[i].line];
    coalescer.insert_in_set(req.coalescer_set, req.line, req.sectors, done, looked_up_[i].way);
  }
  return done;
}

Cycle MemorySystem::write_box(Cycle issue, int sm, const Box& box) {
  gather_lines(box, -1);
  const BoxOutcome o = write_lines(partition_of_sm_[sm]);
  write_back(issue, o.writeback_sectors);
  return l2_bandwidth_.serve(issue, o.l2_sectors << sector_shift_) + far_latency_;
}

// Evicted dirty sectors take DRAM bandwidth when they leave; nothing waits for them.
void MemorySystem::write_back(Cycle issue, long long sectors) {
  if (sectors == 0) return;
  const ByteCount bytes = sectors << sector_shift_;
  totals_.dram_write_bytes += bytes;
  dram_.serve(issue, bytes);
}

} // namespace tilesim
