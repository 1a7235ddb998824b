// A set-associative, sectored cache with LRU replacement: the L2 model. Lines are allocated on
// any access; a read fetches only the sectors it lacks (NVIDIA L2s fill at sector granularity:
// "Dissecting the NVIDIA Volta GPU Architecture via Microbenchmarking", Jia et al. 2018, sec. 3),
// and eviction is silent: stores write through (sim/memory_system.h), so no line is ever dirty.
// A line is allocated when it is looked up but its data lands later: each line keeps the cycle
// its last fill arrives (set by the caller once it knows), and a hit on it is served no earlier.
#pragma once

#include "sim/units.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tilesim {

struct CacheGeometry {
  std::int64_t size_bytes = 0;
  int line_bytes = 128;
  int sector_bytes = 32;
  int ways = 16;
};

struct LookupOutcome {
  SectorMask missed = 0; // the sectors of this access that were not present
  int hit_sectors = 0;
  int miss_sectors = 0; // sectors the cache had to fetch; their fill time is set_fill_ready's to record
  std::uint32_t hit_ready = 0; // when the hit sectors' fill lands (0: long since)
};

class SectoredCache {
public:
  explicit SectoredCache(const CacheGeometry& geometry);

  // Looks the sectors up, allocating the line (LRU victim) and its missing sectors.
  LookupOutcome read(LineAddress line, SectorMask sectors);
  // Records that the fill of `line`'s sectors fetched by its last read lands at `cycle`; the
  // line's fill time never moves back. Nothing happens when the line has been evicted since.
  void set_fill_ready(LineAddress line, Cycle cycle);

  // Which set a line maps to. The hardware's hash is undocumented; a multiplicative hash spreads
  // lines evenly so that strided tiles see no artificial conflicts (reduced to the set count by a
  // multiply-shift rather than a division: this is the simulator's hottest line).
  std::int64_t set_of(LineAddress line) const {
    const std::uint64_t h = (line * 0x9E3779B97F4A7C15ull) >> 32;
    return static_cast<std::int64_t>((h * static_cast<std::uint64_t>(sets_)) >> 32);
  }
  std::int64_t sets() const { return sets_; }
  int ways() const { return ways_; }
  bool contains(LineAddress line, SectorMask sectors) const;
  // Starts bringing a line's set (both its host cache lines) into the host's caches; a box
  // prefetches all its sets before its first lookup, so that their host memory latencies overlap
  // (the model's state is megabytes).
  void prefetch(LineAddress line) const {
    const Set& set = sets_data_[static_cast<std::size_t>(set_of(line))];
    __builtin_prefetch(set.tags, 1);
    __builtin_prefetch(set.state, 1);
  }

  // Cycles a fill time can reach: later ones are held there (a hit then no longer waits for them).
  static constexpr std::uint32_t kLatestFill = (1u << 28) - 1;
  // Sectors in a mask of at most 4 bits (the portable x86-64 baseline has no popcount instruction).
  static int sectors_in(SectorMask m) {
    constexpr std::uint8_t kCount[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
    return kCount[m & 0xF];
  }

private:
  // Tags keep the low 32 bits of the line address: lines 2^32 apart (512 GiB) never meet in one
  // kernel. A set is two host cache lines, so a lookup touches two adjacent lines and nothing
  // else: the tags, most recently used first (LRU order is the order of the array: a hit moves its
  // line to the front, a miss pushes the last one out), and beside each its state, the valid
  // sectors (low 4 bits) and the cycle its last fill lands (high 28 bits; 0: long since; 2^28
  // cycles is over 130 ms of kernel time at 2 GHz).
  static constexpr int kSlots = 16;
  static constexpr std::uint32_t kEmpty = 0xFFFFFFFFu;
  static constexpr int kFillShift = 4;
  struct alignas(64) Set {
    std::uint32_t tags[kSlots];
    std::uint32_t state[kSlots];
  };
  // The slot holding `tag`, or kSlots.
  static int find(const Set& set, std::uint32_t tag);
  // Moves slot `from` to the front, the slots before it one back.
  __attribute__((always_inline)) static void move_to_front(Set& set, int from);

  std::int64_t sets_;
  int ways_;
  std::vector<Set> sets_data_;
};

} // namespace tilesim
