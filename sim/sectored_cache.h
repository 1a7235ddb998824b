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
  int miss_sectors = 0; // sectors the cache had to fetch
  std::uint32_t hit_ready = 0; // when the hit sectors' fill lands (0: long since)
  std::uint32_t* fill_ready = nullptr; // where the caller records when this access's fill lands
};

class SectoredCache {
public:
  explicit SectoredCache(const CacheGeometry& geometry);

  // Looks the sectors up, allocating the line (LRU victim) and its missing sectors.
  LookupOutcome read(LineAddress line, SectorMask sectors);
  // Records that the fill of `outcome`'s missing sectors lands at `cycle`.
  static void set_fill_ready(const LookupOutcome& outcome, Cycle cycle) {
    // Rounded up, so a hit never sees data early; held at the largest stamp past 2^32 cycles.
    const auto c = static_cast<std::uint32_t>(std::min(cycle + 1.0, 4294967295.0));
    if (outcome.fill_ready != nullptr && c > *outcome.fill_ready) *outcome.fill_ready = c;
  }

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
  // Starts bringing a line's set into the host's caches; a box's lookups prefetch all their sets
  // first so that the host's memory latency overlaps (the model's state is tens of MB).
  void prefetch(LineAddress line) const {
    const char* set = reinterpret_cast<const char*>(&words_[static_cast<std::size_t>(set_of(line)) * words_per_set_]);
    for (std::size_t offset = 0; offset < words_per_set_ * sizeof(std::uint32_t); offset += 64)
      __builtin_prefetch(set + offset);
  }

private:
  // Tags keep the low 32 bits of the line address: lines 2^32 apart (512 GiB) never meet in one
  // kernel, and a set's 16 tags then fill one host cache line, which the lookup scans.
  using Tag = std::uint32_t;
  static constexpr Tag kEmpty = 0xFFFFFFFFu;

  std::int64_t sets_;
  int ways_;
  std::size_t words_per_set_;
  // One set is one contiguous block, so a lookup touches a few adjacent host cache lines:
  // [tags: ways][last-use stamps: ways][access counter][fill-ready cycles: ways][valid masks: ways bytes].
  // Stamps count the set's own accesses, so 32 bits last for 4 billion lookups of one set; fill
  // cycles last 4 billion cycles, over 2 s of kernel time.
  std::vector<std::uint32_t> words_;
  SectorMask* valid_of(std::size_t set) { return reinterpret_cast<SectorMask*>(&words_[set * words_per_set_ + 3 * ways_ + 1]); }
  const SectorMask* valid_of(std::size_t set) const {
    return reinterpret_cast<const SectorMask*>(&words_[set * words_per_set_ + 3 * ways_ + 1]);
  }
};

} // namespace tilesim
