// A set-associative, sectored cache with LRU replacement: the L2 model. Lines are allocated on
// any access; a read fetches only the sectors it lacks (NVIDIA L2s fill at sector granularity:
// "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", Jia et al. 2018, sec. 3).
// A write allocates its sectors dirty without fetching anything (stores write whole sectors); the
// access that evicts a line reports its dirty sectors, which the caller writes back to DRAM.
// A line is allocated when it is looked up but its data lands later: each line keeps the cycle
// its last fill arrives (set by the caller once it knows), and a hit on it is served no earlier.
// The line keeps it as a fill id, an index into FillCycles: a lookup that allocates a line can
// give it the id of a fill whose cycle is not yet known, and the caller writes that cycle once
// for every line the fill brings, instead of visiting each line's set again (a box's misses).
#pragma once

#include "sim/units.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tilesim {

struct CacheGeometry {
  std::int64_t size_bytes = 0;
  int line_bytes = 128;
  int sector_bytes = 32;
  int ways = 16;
};

// When each fill lands, by fill id (cycle[0] = 0: nothing pending). A cycle is rounded up, so a hit
// never sees data early, and held at kLatest: a line's state has 24 bits for its id, so a fill
// held later than that no longer delays a hit.
struct FillCycles {
  static constexpr std::uint32_t kLatest = (1u << 24) - 1;
  static constexpr std::uint32_t kIds = 1u << 24; // ids a state can hold
  std::vector<std::uint32_t> cycle{0};
  static std::uint32_t rounded(Cycle c) { return static_cast<std::uint32_t>(std::min(c + 1.0, static_cast<double>(kLatest))); }
  // A new id, its cycle 0 until the caller knows it.
  std::uint32_t open() {
    cycle.push_back(0);
    return static_cast<std::uint32_t>(cycle.size() - 1);
  }
  bool full() const { return cycle.size() >= kIds; }
};

struct LookupOutcome {
  SectorMask missed = 0; // the sectors of this access that were not present
  int hit_sectors = 0;
  int miss_sectors = 0; // sectors the cache had to fetch; their fill time is set_fill_ready's to record
  std::uint32_t hit_ready = 0; // when the hit sectors' fill lands (0: long since)
  int evicted_dirty_sectors = 0; // dirty sectors of the line this access evicted, to be written back
  int slot = 0; // where the line now sits in its set: set_fill_ready's hint
  bool allocated = false; // the line was absent and took the fill id the lookup gave
};

class SectoredCache {
public:
  // `fills`: the fill ids' table, shared by the caches whose lookups one fill spans (null: the
  // cache's own).
  explicit SectoredCache(const CacheGeometry& geometry, FillCycles* fills = nullptr);

  // Looks the sectors up, allocating the line (LRU victim) and its missing sectors.
  LookupOutcome read(LineAddress line, SectorMask sectors) { return access(set_of(line), line, sectors, false, 0); }
  // Stores the sectors: allocates the line like a read, marks them valid and dirty; fetches nothing.
  LookupOutcome write(LineAddress line, SectorMask sectors) { return access(set_of(line), line, sectors, true, 0); }
  // The same, for a caller that already knows the line's set (set_of(line)). A line the read
  // allocates takes `fill` (a FillCycles id) as its fill; a line it finds keeps its own, and the
  // caller records the new fill with set_fill_ready_in_set.
  LookupOutcome read_in_set(std::int64_t set, LineAddress line, SectorMask sectors, std::uint32_t fill = 0) {
    return access(set, line, sectors, false, fill);
  }
  LookupOutcome write_in_set(std::int64_t set, LineAddress line, SectorMask sectors) { return access(set, line, sectors, true, 0); }

  // The cache's arrays and ways, copied out once for a loop of lookups: a store to a set may alias
  // any member (the ranks are stored as vectors, which alias everything), so a loop calling
  // read_in_set would read the members again after every lookup.
  struct Set;
  struct Ranks;
  struct View {
    Set* sets;
    Ranks* ranks;
    const std::uint32_t* fill_cycle; // FillCycles::cycle: valid until its next id is opened
    int ways;
  };
  View view() { return {sets_data_.data(), ranks_.data(), fills_->cycle.data(), ways_}; }
  // A read split in two for the hot loop: read_hit serves it when the line holds every sector
  // asked for (the line becomes the most recently used; the result is when its fill lands) and
  // otherwise changes nothing and returns kNotHit with the line's slot in `slot` (kSlots: absent);
  // read_miss then does the rest of read_in_set from that slot.
  static constexpr std::uint32_t kNotHit = ~std::uint32_t{0};
  static std::uint32_t read_hit(const View& v, std::int64_t set, LineAddress line, SectorMask sectors, int& slot) {
    Set& s = v.sets[static_cast<std::size_t>(set)];
    slot = find(s, static_cast<std::uint32_t>(line));
    if (slot >= v.ways) return kNotHit;
    const std::uint32_t state = s.state[slot];
    if ((sectors & ~state & kValidBits) != 0) return kNotHit;
    touch(v.ranks[static_cast<std::size_t>(set)], slot);
    return v.fill_cycle[state >> kFillShift];
  }
  static LookupOutcome read_miss(const View& v, std::int64_t set, LineAddress line, SectorMask sectors, int slot, std::uint32_t fill) {
    return access_at(v, set, line, sectors, false, fill, slot);
  }
  // Records that the fill of `line`'s sectors fetched by its last read lands at `cycle`; the
  // line's fill time never moves back. Nothing happens when the line has been evicted since.
  void set_fill_ready(LineAddress line, Cycle cycle) {
    if (own_fills_ && own_fills_->full()) { // (a shared table's owner renumbers it)
      auto fresh = std::make_unique<FillCycles>();
      renumber_fills(*own_fills_, *fresh);
      own_fills_ = std::move(fresh);
      fills_ = own_fills_.get();
    }
    const std::uint32_t fill = fills_->open();
    fills_->cycle[fill] = FillCycles::rounded(cycle);
    set_fill_ready_in_set(set_of(line), line, fill);
  }
  // The same in a known set, for a fill id whose cycle is known; `slot_hint` is the line's slot at
  // its lookup (LookupOutcome::slot), searched for only when another line has taken it since.
  void set_fill_ready_in_set(std::int64_t set, LineAddress line, std::uint32_t fill, int slot_hint = -1) {
    Set& s = sets_data_[static_cast<std::size_t>(set)];
    const auto tag = static_cast<std::uint32_t>(line);
    const int slot = slot_hint >= 0 && tag != kEmpty && s.tags[slot_hint] == tag ? slot_hint : find(s, tag);
    if (slot >= ways_ || slot >= kSlots) return; // (ways_ <= kSlots: the second test is for the compiler)
    std::uint32_t& state = s.state[slot];
    const std::uint32_t* cycle = fills_->cycle.data();
    if (cycle[fill] > cycle[state >> kFillShift]) state = fill << kFillShift | (state & kLowBits);
  }
  // Gives every line with a fill pending a fill id of its own in `to`, with its cycle in `from`:
  // for the owner of a shared FillCycles when its ids run out.
  void renumber_fills(const FillCycles& from, FillCycles& to) {
    for (Set& s : sets_data_)
      for (std::uint32_t& state : s.state)
        if ((state >> kFillShift) != 0) {
          const std::uint32_t fill = to.open();
          to.cycle[fill] = from.cycle[state >> kFillShift];
          state = fill << kFillShift | (state & kLowBits);
        }
  }

  // Which set a line maps to. The hardware's hash is undocumented; a multiplicative hash spreads
  // lines evenly so that strided tiles see no artificial conflicts (reduced to the set count by a
  // multiply-shift rather than a division: this is the simulator's hottest line).
  std::int64_t set_of(LineAddress line) const { return set_of(line, sets_); }
  static std::int64_t set_of(LineAddress line, std::int64_t sets) { return set_of_product(line * kSetHash, sets); }
  // set_of in two steps, for lines an equal stride apart: their products (mod 2^64) are too.
  static constexpr std::uint64_t kSetHash = 0x9E3779B97F4A7C15ull;
  static std::int64_t set_of_product(std::uint64_t product, std::int64_t sets) {
    return static_cast<std::int64_t>(((product >> 32) * static_cast<std::uint64_t>(sets)) >> 32);
  }
  std::int64_t sets() const { return sets_; }
  int ways() const { return ways_; }
  bool contains(LineAddress line, SectorMask sectors) const;
  // Starts bringing a set (its tags, states and LRU ranks) into the host's caches; a box's
  // lookups prefetch each line's set a few lines ahead, so that their host memory latencies
  // overlap (the model's state is megabytes).
  void prefetch_set(std::int64_t set) const { prefetch(&sets_data_[static_cast<std::size_t>(set)], &ranks_[static_cast<std::size_t>(set)]); }
  static void prefetch_set(const View& v, std::int64_t set) {
    prefetch(&v.sets[static_cast<std::size_t>(set)], &v.ranks[static_cast<std::size_t>(set)]);
  }

  // Sectors in a mask of at most 4 bits (the portable x86-64 baseline has no popcount
  // instruction): nibble m of the constant is m's count, so no table is read.
  static int sectors_in(SectorMask m) { return static_cast<int>((0x4332322132212110ull >> ((m & 0xF) * 4)) & 0xF); }

private:
  // Tags keep the low 32 bits of the line address: lines 2^32 apart (512 GiB) never meet in one
  // kernel. A set is two host cache lines, the tags and beside each its state, the valid sectors
  // (low 4 bits), the dirty ones (next 4 bits) and the id of its last fill (high 24 bits, an index
  // into FillCycles); a line stays in its slot while it is cached. LRU order is
  // kept apart, as each slot's rank (0: most recently used), 16 bytes a set: a hit makes its
  // slot's rank 0 and ages the ranks below it by one, a miss takes the slot ranked last, which is
  // an empty one while the set has any (empty slots rank behind the used ones), else the least
  // recently used line. Slots past the ways rank kUnused and are never chosen.
  static constexpr int kSlots = 16;
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;
  static constexpr int kDirtyShift = 4;
  static constexpr int kFillShift = 8;
  static constexpr std::uint8_t kUnused = 0x7F;

public:
  struct alignas(64) Set {
    std::uint32_t tags[kSlots];
    std::uint32_t state[kSlots];
  };
  struct alignas(16) Ranks {
    std::uint8_t rank[kSlots];
  };

private:
  static constexpr std::uint32_t kValidBits = 0xF;
  static constexpr std::uint32_t kLowBits = 0xFF; // valid and dirty sectors
  static void prefetch(const Set* s, const Ranks* ranks) {
    __builtin_prefetch(s->tags, 1);
    __builtin_prefetch(s->state, 1);
    __builtin_prefetch(ranks, 1);
  }
  // Looks the sectors up, allocating the line on a miss; `dirty` marks them dirty. Inline, as the
  // simulator's hottest call.
  LookupOutcome access(std::int64_t set, LineAddress line, SectorMask sectors, bool dirty, std::uint32_t fill) {
    const View v = view();
    return access_at(v, set, line, sectors, dirty, fill, find(v.sets[static_cast<std::size_t>(set)], static_cast<std::uint32_t>(line)));
  }
  // The same, with the line's slot found (kSlots: absent).
  static LookupOutcome access_at(const View& v, std::int64_t set, LineAddress line, SectorMask sectors, bool dirty, std::uint32_t fill,
                                 int slot) {
    Set& s = v.sets[static_cast<std::size_t>(set)];
    Ranks& ranks = v.ranks[static_cast<std::size_t>(set)];
    const auto tag = static_cast<std::uint32_t>(line);
    const std::uint32_t marks = (sectors & kValidBits) | (dirty ? (sectors & kValidBits) << kDirtyShift : 0u);
    LookupOutcome out;
    if (slot < v.ways) {
      const std::uint32_t state = s.state[slot];
      const auto missing = static_cast<SectorMask>(sectors & ~state & kValidBits);
      out.missed = missing;
      out.miss_sectors = sectors_in(missing);
      out.hit_sectors = sectors_in(sectors) - out.miss_sectors;
      out.hit_ready = v.fill_cycle[state >> kFillShift];
      // Stored only when it changes: a host cache line written back costs memory bandwidth, and
      // most hits change nothing.
      if ((state | marks) != state) s.state[slot] = state | marks;
      touch(ranks, slot);
      out.slot = slot;
      return out;
    }
    // Miss: the least recently used slot goes, an empty one while the set has any; its dirty
    // sectors are written back.
    const int w = victim(ranks, v.ways);
    if (s.tags[w] != kEmpty) out.evicted_dirty_sectors = sectors_in(static_cast<SectorMask>(s.state[w] >> kDirtyShift));
    s.tags[w] = tag;
    s.state[w] = fill << kFillShift | marks;
    touch(ranks, w);
    out.slot = w;
    out.allocated = true;
    out.missed = sectors;
    out.miss_sectors = sectors_in(sectors);
    return out;
  }
  // The slot holding `tag`, or kSlots.
  static int find(const Set& set, std::uint32_t tag) {
#if defined(__SSE2__)
    // Four compares of four tags, packed to one byte a slot; the hit's slot is unpredictable, so
    // no early exit.
    const __m128i key = _mm_set1_epi32(static_cast<int>(tag));
    const __m128i* tags = reinterpret_cast<const __m128i*>(set.tags);
    const __m128i low = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_load_si128(tags), key), _mm_cmpeq_epi32(_mm_load_si128(tags + 1), key));
    const __m128i high = _mm_packs_epi32(_mm_cmpeq_epi32(_mm_load_si128(tags + 2), key), _mm_cmpeq_epi32(_mm_load_si128(tags + 3), key));
    const auto match = static_cast<unsigned>(_mm_movemask_epi8(_mm_packs_epi16(low, high)));
    return match != 0 ? __builtin_ctz(match) : kSlots;
#else
    for (int s = 0; s < kSlots; ++s)
      if (set.tags[s] == tag) return s;
    return kSlots;
#endif
  }
#if defined(__SSE2__)
  // Byte vectors by table rather than built from a register (SSE2 has no byte broadcast):
  // splat(v) is v in every byte, lane(s) 0xFF in byte s alone.
  struct alignas(16) ByteVector {
    std::uint8_t b[16];
  };
  struct ByteTables {
    ByteVector splat[16];
    ByteVector lane[16];
  };
  static const ByteTables kByteTables;
  static __m128i splat(int v) { return _mm_load_si128(reinterpret_cast<const __m128i*>(kByteTables.splat[v].b)); }
  static __m128i lane(int s) { return _mm_load_si128(reinterpret_cast<const __m128i*>(kByteTables.lane[s].b)); }
#endif
  // Makes `slot` the most recently used, aging the slots more recent than it.
  static void touch(Ranks& ranks, int slot) {
#if defined(__SSE2__)
    // Ranks below the slot's gain one, the slot's becomes 0, all 16 at once. (Signed compares:
    // kUnused, 127, is never below a rank.)
    __m128i* r = reinterpret_cast<__m128i*>(ranks.rank);
    const __m128i current = _mm_load_si128(r);
    const __m128i younger = _mm_cmpgt_epi8(splat(ranks.rank[slot]), current);
    _mm_store_si128(r, _mm_andnot_si128(lane(slot), _mm_sub_epi8(current, younger)));
#else
    const std::uint8_t own = ranks.rank[slot];
    for (int s = 0; s < kSlots; ++s)
      if (ranks.rank[s] < own) ++ranks.rank[s];
    ranks.rank[slot] = 0;
#endif
  }
  // The least recently used slot (ranked ways - 1).
  static int victim(const Ranks& ranks, int ways) {
#if defined(__SSE2__)
    const __m128i last = _mm_cmpeq_epi8(_mm_load_si128(reinterpret_cast<const __m128i*>(ranks.rank)), splat(ways - 1));
    return __builtin_ctz(static_cast<unsigned>(_mm_movemask_epi8(last)));
#else
    for (int s = 0; s < ways; ++s)
      if (ranks.rank[s] == ways - 1) return s;
    return 0;
#endif
  }

  std::int64_t sets_;
  int ways_;
  std::vector<Set> sets_data_;
  std::vector<Ranks> ranks_;
  std::unique_ptr<FillCycles> own_fills_; // when no table is shared
  FillCycles* fills_;
};

} // namespace tilesim
