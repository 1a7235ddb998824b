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
                                           gpu.l2.sector_bytes, gpu.l2.ways},
                             fill_cycles_.get());
  // Without a GPC map no coalescer is modelled: one disabled coalescer serves every SM.
  gpc_of_sm_ = gpu.sm.gpc.empty() ? std::vector<int>(gpu.sm.count, 0) : gpu.sm.gpc;
  const int gpcs = *std::max_element(gpc_of_sm_.begin(), gpc_of_sm_.end()) + 1;
  const int lines = gpu.sm.gpc.empty() ? 0 : gpu.l2.coalescer_lines_per_gpc;
  for (int g = 0; g < gpcs; ++g) coalescers_.emplace_back(lines, gpu.l2.coalescer_ways, gpu.l2.coalescer_merges_per_request);
  if (gpu.l2.gpc_port_bytes_per_s > 0)
    gpc_ports_ = GpcPorts(gpu.l2.gpc_port_bytes_per_s / (gpu.sm.clock_mhz * 1e6), gpcs);
}

void MemorySystem::gather_lines(const Box& box) {
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
  const auto request = [=](LineAddress line, SectorMask mask) {
    const auto set = static_cast<std::uint32_t>(SectoredCache::set_of(line, sets));
    return LineRequest{line, set, static_cast<std::uint32_t>(RequestCoalescer::set_of(line, coalescer_sets)), mask,
                       static_cast<std::uint32_t>(SectoredCache::sectors_in(mask))};
  };
  const bool aligned =
      box.row_bytes > 0 && ((box.base | static_cast<Address>(box.row_bytes) | static_cast<Address>(box.row_stride)) & line_mask) == 0;
  if (aligned) {
    // Rows of whole, aligned lines (a TMA box of 128-byte rows): every sector of every line.
    const LineAddress per_row = static_cast<Address>(box.row_bytes) >> line_shift;
    const LineAddress stride = static_cast<Address>(box.row_stride) >> line_shift;
    LineAddress first = box.base >> line_shift;
    if (per_row == 1) { // the usual TMA box: one loop, not one a row, each line's hashes a step from the last's
      const std::uint32_t count = static_cast<std::uint32_t>(SectoredCache::sectors_in(full));
      std::uint64_t set_product = first * SectoredCache::kSetHash, coalescer_product = first * RequestCoalescer::kSetHash;
      const std::uint64_t set_step = stride * SectoredCache::kSetHash, coalescer_step = stride * RequestCoalescer::kSetHash;
      for (int r = 0; r < box.rows; ++r, first += stride, set_product += set_step, coalescer_product += coalescer_step) {
        const auto set = static_cast<std::uint32_t>(SectoredCache::set_of_product(set_product, sets));
        *out++ = {first, set, static_cast<std::uint32_t>(RequestCoalescer::set_of_product(coalescer_product, coalescer_sets)), full,
                  count};
      }
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
  // The hot loop keeps only what a merge or a whole hit needs in locals (few enough for the host's
  // registers: spilled, each was stored and reloaded every line); a line that misses any sector
  // goes to near_miss(), whose counts live in `cold`.
  ColdCounts cold;
  long long coalesced_sectors = 0, looked_up_sectors = 0;
  Cycle coalesced_ready = 0;
  // A hit on a pending line lands when the fill does, plus the trip over the fabric for one
  // homed across (microbench/l2_pending_hit.json: 128 ns behind the leader, a follower of the other
  // partition lands 64 ns after it, one of the leader's partition 16 ns after it): the latest
  // pending fill of the near hits and of the far ones.
  std::uint32_t near_ready = 0;
  LookedUp* looked_up = looked_up_.data();
  cold.fill = fills_.data();
  cold.far_miss = far_misses_.data();
  cold.deferred.queued = deferred_buckets_.data();
  const bool coalescing = coalescer.enabled();
  const bool distinct = distinct_lines_;
  const SectoredCache::View near_view = near.view();
  const RequestCoalescer::View coalescer_view = coalescer.view();
  // Each line's set starts on its way into the host's caches kPrefetchAhead lines before its lookup,
  // so that the host memory latencies of the lookups in between overlap it.
  for (std::size_t i = 0; i < std::min(count, kPrefetchAhead); ++i) SectoredCache::prefetch_set(near_view, lines[i].set);
  for (std::size_t i = 0; i < count; ++i) {
    if (i + kPrefetchAhead < count) SectoredCache::prefetch_set(near_view, lines[i + kPrefetchAhead].set);
    const LineRequest req = lines[i];
    const long long sectors = req.sector_count;
    if (coalescing) {
      const RequestCoalescer::Merge merge = RequestCoalescer::merge_in_set(coalescer_view, req.coalescer_set, req.line, req.sectors);
      if (merge.ready >= 0) {
        coalesced_sectors += sectors;
        coalesced_ready = std::max(coalesced_ready, merge.ready);
        continue;
      }
      // Where the line is held stays known for its insert only while no line comes twice.
      *looked_up++ = {static_cast<std::uint32_t>(i), merge.way >= 0 || distinct ? merge.way : RequestCoalescer::kUnknown};
    }
    looked_up_sectors += sectors;
    if (cold.deferred.conflicts(req.set)) run_deferred_through(cold, req.set);
    int slot;
    const std::uint32_t ready = SectoredCache::read_hit(near_view, req.set, req.line, static_cast<SectorMask>(req.sectors), slot);
    if (ready != SectoredCache::kNotHit) { // every sector present: nothing to fetch, nothing evicted
      near_ready = std::max(near_ready, ready);
      continue;
    }
    const std::uint32_t partial_ready = near_miss(partition, near_view, static_cast<std::uint32_t>(i), slot, promote, cold);
    near_ready = std::max(near_ready, partial_ready);
  }
  // The near partition's queued lookups stay queued: the far lookups are all in other partitions.
  for (const FarRequest* f = far_misses_.data(); f != cold.far_miss; ++f) {
    const LineRequest req = lines[f->line];
    if (cold.deferred.conflicts(req.set)) run_deferred_through(cold, req.set);
    SectoredCache& home = partitions_[f->home];
    const LookupOutcome far = home.read_in_set(req.set, req.line, static_cast<SectorMask>(f->sectors), box_fill_);
    if (far.hit_sectors > 0) cold.far_ready = std::max(cold.far_ready, far.hit_ready);
    if (far.miss_sectors > 0 && !far.allocated) *cold.fill++ = {&home, req.line, req.set, far.slot};
    cold.writeback_sectors += far.evicted_dirty_sectors;
    cold.far_hits += far.hit_sectors;
    cold.dram_sectors += far.miss_sectors;
    if (promote && far.miss_sectors > 0) defer_buddy(home, req.line ^ 1, true, cold);
  }
  run_deferred(cold);
  looked_up_count_ = static_cast<std::size_t>(looked_up - looked_up_.data());
  fill_count_ = static_cast<std::size_t>(cold.fill - fills_.data());
  const long long near_hits = looked_up_sectors - cold.near_miss_sectors + cold.near_promotion_hits;
  totals_.sm_read_sectors += looked_up_sectors + cold.near_promotion;
  totals_.near_read_hit_sectors += near_hits;
  totals_.fabric_read_sectors += cold.fabric_read;
  totals_.far_read_hit_sectors += cold.far_hits;
  totals_.fabric_promotion_sectors += cold.fabric_promotion;
  totals_.fabric_promotion_hit_sectors += cold.fabric_promotion_hits;
  BoxOutcome out;
  // What the L2 served: the coalescer's merges, the near hits (the promoted buddies' hits are not
  // the box's) and the far hits.
  out.l2_sectors = coalesced_sectors + (looked_up_sectors - cold.near_miss_sectors) + cold.far_hits;
  out.coalesced_sectors = coalesced_sectors;
  out.coalesced_ready = coalesced_ready;
  out.far_sectors = cold.far_hits;
  out.dram_sectors = cold.dram_sectors;
  out.promoted_dram_sectors = cold.promoted_dram_sectors;
  out.writeback_sectors = cold.writeback_sectors;
  out.hit_ready = near_ready;
  if (cold.far_ready > 0) out.hit_ready = std::max(out.hit_ready, cold.far_ready + (far_latency_ - near_latency_));
  return out;
}

// A near lookup that missed sectors: they are fetched, from DRAM for a line homed here (with its
// 256-byte block's other line when promoted), else looked up at the home partition after the box's
// near lookups.
inline std::uint32_t MemorySystem::near_miss(int partition, const SectoredCache::View& near_view, std::uint32_t index,
                                             int slot, bool promote, ColdCounts& cold) {
  const LineRequest& req = lines_[index];
  SectoredCache& near = partitions_[partition];
  const LookupOutcome o = SectoredCache::read_miss(near_view, req.set, req.line, static_cast<SectorMask>(req.sectors), slot, box_fill_);
  const std::uint32_t hit_ready = o.hit_sectors > 0 ? o.hit_ready : 0;
  cold.writeback_sectors += o.evicted_dirty_sectors;
  cold.near_miss_sectors += o.miss_sectors;
  if (!o.allocated) *cold.fill++ = {&near, req.line, req.set, o.slot};
  const int home = home_of(req.line);
  if (home == partition) {
    cold.dram_sectors += o.miss_sectors;
    if (promote) defer_buddy(near, req.line ^ 1, false, cold);
    return hit_ready;
  }
  // Looked up at its home after the box's near lookups: the two partitions' states are apart, so
  // the order between them changes nothing, and only the home sets a near miss needs are
  // brought into the host's caches, while the near lookups go on.
  partitions_[home].prefetch_set(req.set);
  *cold.far_miss++ = {index, o.missed, static_cast<std::uint32_t>(home)};
  cold.fabric_read += o.miss_sectors;
  return hit_ready;
}

// The missed line's 256-byte block partner, looked up (and fetched if absent) in `cache` with it:
// queued, its set on its way into the host's caches (in a streaming kernel most lines miss, and
// the partner's set is a random one), and looked up a few misses later or before any lookup in a
// set that may be its own, whichever comes first. Lookups in different sets change different
// state, and what they add up to is sums, a latest fill and a list of fills that all land at the
// box's end: so the order between them changes nothing, and only the order within a set is kept.
inline void MemorySystem::defer_buddy(SectoredCache& cache, LineAddress buddy, bool far, ColdCounts& cold) {
  DeferredBuddies& d = cold.deferred;
  const std::int64_t set = cache.set_of(buddy);
  cache.prefetch_set(set);
  if (d.count == DeferredBuddies::kSize) run_oldest_deferred(d, cold);
  d.queue[(d.first + d.count) % DeferredBuddies::kSize] = {&cache, buddy, set, far};
  ++d.count;
  d.mark(set);
}

void MemorySystem::run_oldest_deferred(DeferredBuddies& d, ColdCounts& cold) {
  const DeferredBuddy& b = d.queue[d.first];
  promote_buddy(b, cold);
  d.unmark(b.set);
  d.first = (d.first + 1) % DeferredBuddies::kSize;
  --d.count;
}

void MemorySystem::run_deferred(ColdCounts& cold) {
  DeferredBuddies& d = cold.deferred;
  while (d.count > 0) run_oldest_deferred(d, cold);
}

// The lookups queued before the last one that may be in `set` run with it, in their order; those
// after it are in other sets and stay queued, their sets still on their way.
void MemorySystem::run_deferred_through(ColdCounts& cold, std::int64_t set) {
  DeferredBuddies& d = cold.deferred;
  while (d.conflicts(set)) run_oldest_deferred(d, cold);
}

void MemorySystem::promote_buddy(const DeferredBuddy& b, ColdCounts& cold) {
  const LookupOutcome o = b.cache->read_in_set(b.set, b.line, full_line_, box_fill_);
  if (o.miss_sectors > 0 && !o.allocated) *cold.fill++ = {b.cache, b.line, b.set, o.slot};
  cold.writeback_sectors += o.evicted_dirty_sectors;
  (b.far ? cold.fabric_promotion : cold.near_promotion) += SectoredCache::sectors_in(full_line_);
  (b.far ? cold.fabric_promotion_hits : cold.near_promotion_hits) += o.hit_sectors;
  cold.promoted_dram_sectors += o.miss_sectors;
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
    const int home = home_of(req.line);
    const LookupOutcome o = partitions_[home].write_in_set(req.set, req.line, static_cast<SectorMask>(req.sectors));
    const int sectors = o.hit_sectors + o.miss_sectors;
    totals_.write_sectors += home == partition ? sectors : 2 * sectors;
    out.l2_sectors += sectors;
    out.writeback_sectors += o.evicted_dirty_sectors;
  }
  return out;
}

std::uint32_t MemorySystem::open_fill() {
  if (fill_cycles_->full()) {
    auto fresh = std::make_unique<FillCycles>();
    for (SectoredCache& p : partitions_) p.renumber_fills(*fill_cycles_, *fresh);
    *fill_cycles_ = std::move(*fresh); // the partitions keep the table's address
  }
  return fill_cycles_->open();
}

Cycle MemorySystem::read_box(Cycle issue, int sm, const Box& box, SectorCount& outcome) {
  gather_lines(box);
  box_fill_ = open_fill();
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
  const Cycle l2_latency = o.far_sectors > 0 ? far_latency_ : near_latency_;
  if (looked_up_bytes > 0)
    done = std::max(done,
                    served_at(issue, l2_bandwidth_.serve(issue, looked_up_bytes), l2_service_factor_, sm) + l2_latency);
  if (gpc_ports_.enabled()) { // every sector asked for: the coalescer's merges and the misses too
    const ByteCount asked_bytes = (o.l2_sectors + o.dram_sectors) << sector_shift_;
    done = std::max(done, gpc_ports_.serve(issue, gpc_of_sm_[sm], asked_bytes) + l2_latency);
  }
  if (dram_bytes > 0)
    done = std::max(done, served_at(issue, dram_.serve(issue, dram_bytes), dram_service_factor_, sm) + dram_latency_);
  fill_cycles_->cycle[box_fill_] = FillCycles::rounded(done);
  for (std::size_t i = 0; i < fill_count_; ++i)
    fills_[i].partition->set_fill_ready_in_set(fills_[i].set, fills_[i].line, box_fill_, fills_[i].slot);
  const RequestCoalescer::View coalescer_view = coalescer.view();
  const LineRequest* const lines = lines_.data();
  const LookedUp* const looked_up = looked_up_.data();
  for (std::size_t i = 0, n = looked_up_count_; i < n; ++i) {
    const LineRequest& req = lines[looked_up[i].line];
    RequestCoalescer::insert_in_set(coalescer_view, req.coalescer_set, req.line, req.sectors, done, looked_up[i].way);
  }
  return done;
}

Cycle MemorySystem::write_box(Cycle issue, int sm, const Box& box) {
  gather_lines(box);
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
