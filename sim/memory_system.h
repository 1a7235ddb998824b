// The memory side of the GPU: a partitioned, sectored L2 in front of HBM, behind bandwidth
// servers. A TMA box (or a tile store) arrives as rows of contiguous bytes; each row becomes
// 128-byte lines and 32-byte sectors.
//
// L2 partitions: the GA100/GH100 L2 is two halves joined by a crossbar, and "each L2 partition
// localizes and caches data for memory accesses from SMs in the GPCs directly connected to the
// partition" (NVIDIA A100 Tensor Core GPU Architecture whitepaper, "L2 cache"). So a read looks
// in its SM's partition first; lines whose home (an address hash) is the other partition that
// miss there are looked up in the home partition over the fabric, and only misses there go to
// DRAM. Lines read from both sides occupy space in both halves. The lab's pointer chase sees the
// step this implies: ~285 cycles up to ~20 MB, ~409 cycles from 28 MB (models/gpus/h100_sxm.json).
// Stores go to the home partition, the point of coherence, and stay there dirty until evicted
// (write-back): DRAM sees them on eviction, or after the kernel for what is left.
//
// L2 promotion: TMA loads whose tensor map asks for CU_TENSOR_MAP_L2_PROMOTION_L2_256B (the
// kernels' maps do) fill the whole aligned 256-byte block on a miss, so the block's other line is
// looked up (and fetched if absent) along with the missing one: at the SM's partition for lines
// homed there, at the home partition for lines homed across. ncu's split of the L2 lookups by
// source unit shows it (validation/data/h100/microbench/l2_counter_breakdown.csv): a streaming
// copy with plain loads makes 1 tag lookup per sector read at the SM's partition and 0.5 more over
// the fabric, a DRAM-streaming TMA GEMM 1.25 and 0.77, of which half of the fabric reads hit.
// Both lines of a 256-byte block share a home, since the block is filled as one.
//
// Pending fills: a hit on a line whose fill is still on its way is served when the fill lands,
// not at the L2's hit latency; the L2 tracks outstanding misses and queues later requests for the
// same sectors behind them instead of fetching again.
//
// Request coalescing: before any of this, a read that another SM of the same GPC asked for
// recently is merged into that request (sim/request_coalescer.h) and is no lookup at all.
//
// GPC ports: every sector a box asks for, merged or not, also crosses its GPC's read port
// (sim/gpc_port.h), where the profile gives one.
#pragma once

#include "models/gpu_profile.h"
#include "sim/bandwidth_server.h"
#include "sim/gpc_port.h"
#include "sim/request_coalescer.h"
#include "sim/sectored_cache.h"
#include "sim/units.h"

#include <memory>
#include <vector>

namespace tilesim {

// `rows` runs of `row_bytes` bytes, `row_stride` apart, starting at `base`.
struct Box {
  Address base = 0;
  ByteCount row_bytes = 0;
  ByteCount row_stride = 0;
  int rows = 0;
  bool l2_promotion_256b = false; // a TMA load with 256-byte L2 promotion
};

// Sectors of one operand served by the L2 (hits, near or far) and by DRAM (misses).
struct SectorCount {
  long long hits = 0;
  long long misses = 0;
};

// Sector lookups in the L2's tags, named after the ncu counters they model.
struct MemoryTotals {
  long long l2_line_lookups = 0;
  long long sm_read_sectors = 0;       // read lookups in the SM's partition, promoted ones included (lts__t_sectors_srcunit_tex_op_read)
  long long near_read_hit_sectors = 0;
  long long fabric_read_sectors = 0;   // near misses looked up in the home partition (srcunit_ltcfabric_op_read)
  long long far_read_hit_sectors = 0;
  long long fabric_promotion_sectors = 0; // promoted lookups in the home partition (srcunit_ltcfabric, neither read nor write)
  long long fabric_promotion_hit_sectors = 0;
  long long write_sectors = 0;         // store lookups at the SM's partition and again at a home across; all hit
  long long coalesced_read_sectors = 0; // reads served by the request coalescer, without a lookup (sim/request_coalescer.h)
  ByteCount dram_read_bytes = 0;
  ByteCount dram_write_bytes = 0; // dirty sectors written back during the kernel
  // All L2 tag lookups, and those that hit: lts__t_sector_hit_rate. A store never misses: it
  // writes whole sectors, so nothing is fetched (the breakdown's copy: 100.7 M of 100.7 M hit).
  long long lookup_sectors() const {
    return sm_read_sectors + fabric_read_sectors + fabric_promotion_sectors + write_sectors;
  }
  long long hit_sectors() const {
    return near_read_hit_sectors + far_read_hit_sectors + fabric_promotion_hit_sectors + write_sectors;
  }
};

class MemorySystem {
public:
  MemorySystem(const GpuProfile& gpu);

  // Cycle at which the whole box has landed in SM `sm`'s shared memory; sector outcomes are
  // added to `outcome`.
  Cycle read_box(Cycle issue, int sm, const Box& box, SectorCount& outcome);
  // Cycle at which the bytes SM `sm` stored have reached the L2.
  Cycle write_box(Cycle issue, int sm, const Box& box);

  const MemoryTotals& totals() const { return totals_; }
  const BandwidthServer& dram() const { return dram_; }
  const BandwidthServer& l2_bandwidth() const { return l2_bandwidth_; }

private:
  struct LineRequest {
    LineAddress line;
    std::uint32_t set; // set_of(line): every partition has the same sets
    std::uint32_t coalescer_set; // the request coalescers' set_of(line)
    // Not one-byte types: a store of those may alias anything, so the loops writing requests
    // would read every member they use again after each one.
    std::uint32_t sectors;
    std::uint32_t sector_count; // of `sectors`: a constant for rows of whole lines
    // The line's home partition is not kept: only a near miss and a store need it (home_of).
  };
  struct BoxOutcome {
    long long l2_sectors = 0;   // sectors served by the L2, near or far, or by its request coalescer
    long long coalesced_sectors = 0; // of which by the coalescer
    Cycle coalesced_ready = 0;       // when the last of those arrives
    long long far_sectors = 0;  // of which over the fabric
    long long dram_sectors = 0;
    long long promoted_dram_sectors = 0; // fetched by promotion, for lines the box did not ask for
    Cycle hit_ready = 0; // when the fills the box's hits wait for land
    long long writeback_sectors = 0; // dirty sectors the box's lookups evicted
  };

  // The box's lines, each with its sets (read_lines brings them into the host's caches).
  void gather_lines(const Box& box);
  int home_of(LineAddress line) const { return home_of(line, partition_reciprocal_, partitions_.size()); }
  static int home_of(LineAddress line, std::uint64_t reciprocal, std::uint64_t partitions) {
    const std::uint64_t block = line >> 1; // the 256-byte block
    const auto hash = static_cast<std::uint32_t>((block * 0xD6E8FEB86659FD93ull) >> 40);
    // hash % partitions without a division (Lemire, Kaser and Kurz, "Faster Remainder by Direct
    // Computation", 2019: exact for every 32-bit hash and divisor).
    // A power of two (the profiles' 2 partitions) takes the low bits, which is the same remainder.
    if ((partitions & (partitions - 1)) == 0) return static_cast<int>(hash & (partitions - 1));
    const std::uint64_t fraction = reciprocal * hash;
    return static_cast<int>((static_cast<unsigned __int128>(fraction) * partitions) >> 64);
  }
  BoxOutcome read_lines(int partition, RequestCoalescer& coalescer, bool promote);
  static constexpr std::size_t kPrefetchAhead = 16;
  struct Fill;
  struct FarRequest;
  // A promoted lookup waiting for its set to reach the host's caches (defer_buddy).
  struct DeferredBuddy {
    SectoredCache* cache;
    LineAddress line;
    std::int64_t set;
    bool far; // at the home partition of a near miss homed across
  };
  struct DeferredBuddies {
    static constexpr unsigned kSize = 16;
    DeferredBuddy queue[kSize];
    unsigned first = 0, count = 0;
    // How many queued lookups have each value of their set's low bits (a bucket): a lookup in a
    // set whose bucket is counted runs the queue first, up to the last of them. Counted, not a
    // bit each, so that taking one out does not mean going over the others; kept by the
    // MemorySystem (deferred_buckets_), all 0 whenever the queue is empty. Not one-byte counts: a
    // store of those may alias anything.
    static constexpr std::int64_t kBuckets = 4096;
    std::uint16_t* queued = nullptr;
    static std::size_t bucket(std::int64_t set) { return static_cast<std::size_t>(set & (kBuckets - 1)); }
    void mark(std::int64_t set) { ++queued[bucket(set)]; }
    void unmark(std::int64_t set) { --queued[bucket(set)]; }
    bool conflicts(std::int64_t set) const { return queued[bucket(set)] != 0; }
  };
  // What a box's lookups that miss add up to, kept apart from the hot loop's counts.
  struct ColdCounts {
    Fill* fill = nullptr;          // the next of fills_
    FarRequest* far_miss = nullptr; // the next of far_misses_
    long long near_miss_sectors = 0;
    long long near_promotion = 0, near_promotion_hits = 0; // promoted lookups at the SM's partition
    long long fabric_read = 0, far_hits = 0, fabric_promotion = 0, fabric_promotion_hits = 0;
    long long dram_sectors = 0, promoted_dram_sectors = 0, writeback_sectors = 0;
    std::uint32_t far_ready = 0;
    DeferredBuddies deferred;
  };
  // The rest of a near lookup that read_hit did not serve (`slot`: where it found the line); returns
  // when the fill of the sectors it did hold lands (0: none held). Inlined, with defer_buddy: as calls
  // (registers saved and restored, arguments on the stack) they cost 7-9% of a miss-heavy
  // configuration's CPU and 3% of the dense replay's (validation/data/h100/speed/session7.txt).
  [[gnu::always_inline]] std::uint32_t near_miss(int partition, const SectoredCache::View& near_view, std::uint32_t index,
                                                 int slot, bool promote, ColdCounts& cold);
  // A fill id for the box about to be read (renumbering every cached line's when they run out).
  std::uint32_t open_fill();
  [[gnu::always_inline]] void defer_buddy(SectoredCache& cache, LineAddress buddy, bool far, ColdCounts& cold);
  // Runs the queued lookups, all of them, or (with `set`) those up to the last that may be in `set`.
  [[gnu::noinline]] void run_deferred(ColdCounts& cold);
  [[gnu::noinline]] void run_deferred_through(ColdCounts& cold, std::int64_t set);
  void run_oldest_deferred(DeferredBuddies& d, ColdCounts& cold);
  void promote_buddy(const DeferredBuddy& buddy, ColdCounts& cold);
  BoxOutcome write_lines(int partition);
  void write_back(Cycle issue, long long sectors);

  // The box being read: the lines its lookups allocate take its fill id (the cycle is written at
  // its end); a line found with some sectors missing keeps its own and is listed in fills_.
  std::unique_ptr<FillCycles> fill_cycles_ = std::make_unique<FillCycles>(); // shared by the partitions
  std::uint32_t box_fill_ = 0;
  std::vector<SectoredCache> partitions_;
  std::uint64_t partition_reciprocal_; // 2^64 / partitions, rounded up
  std::vector<RequestCoalescer> coalescers_; // one per GPC
  std::vector<int> gpc_of_sm_;
  std::vector<int> partition_of_sm_;
  BandwidthServer l2_bandwidth_;
  GpcPorts gpc_ports_; // every box read passes its SM's GPC's port beside the shared L2 server
  BandwidthServer dram_;
  int line_shift_;   // log2(line bytes)
  int sector_shift_; // log2(sector bytes)
  SectorMask full_line_;
  Cycle near_latency_;
  Cycle far_latency_;
  Cycle dram_latency_;
  // Under load the L2 and DRAM serve some SMs more slowly than others, the same SMs every time
  // (the profile's sm_service_factor, validation/data/h100/microbench/gpc_speed.json): an SM's
  // wait and service at each server stretch by its factor. Empty: every SM alike.
  std::vector<double> l2_service_factor_;
  std::vector<double> dram_service_factor_;
  static Cycle served_at(Cycle issue, Cycle served, const std::vector<double>& factor, int sm) {
    return factor.empty() ? served : issue + (served - issue) * factor[static_cast<std::size_t>(sm)];
  }
  MemoryTotals totals_;
  std::vector<LineRequest> lines_;      // scratch: the box's lines, the first line_count_ of them
  std::size_t line_count_ = 0;
  // Scratch: the lines of a box the tags served (indices into lines_) and where the coalescer
  // holds each (RequestCoalescer::insert_in_set's hint), for the coalescer.
  struct LookedUp {
    std::uint32_t line;
    std::int32_t way;
  };
  std::vector<LookedUp> looked_up_;
  bool distinct_lines_ = true; // no line of the box comes twice
  std::size_t looked_up_count_ = 0;
  struct Fill {
    SectoredCache* partition;
    LineAddress line;
    std::int64_t set;
    int slot; // the line's slot at its lookup
  };
  // Scratch: the box's near misses of lines homed across (index into lines_, the sectors missed, the home),
  // looked up at their homes after the near lookups.
  struct FarRequest {
    std::uint32_t line;
    std::uint32_t sectors;
    std::uint32_t home;
  };
  std::vector<FarRequest> far_misses_;
  // DeferredBuddies::queued, a count a bucket
  std::vector<std::uint16_t> deferred_buckets_ = std::vector<std::uint16_t>(DeferredBuddies::kBuckets, 0);
  std::vector<Fill> fills_; // scratch: the box's lookups that fetch sectors into a line they found (at most four a line)
  std::size_t fill_count_ = 0;
};

} // namespace tilesim
