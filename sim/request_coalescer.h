// The L2 request coalescer of a GPC: a read of a line that another SM of the same GPC asked for
// is merged into that request, in flight or answered a short while ago, and never reaches the L2's
// tags (no lookup, no share of the L2's bandwidth); its data comes with the first request's. ncu
// counts it (the lrc__ counters; validation/data/h100/microbench/lrc_gemm_counters.csv: 21.8% of
// the sectors dense 4096^3 row_major asks for are merged, 6.9% for column_major).
//
// Why per GPC, and for how long: two SMs reading the same boxes, the second 0-64 us after the
// first, with nothing else running (l2_merging_pairs_run*.json). A second SM of the first's GPC
// has 99.6% of its reads merged 0.5 us behind, 91% at 4 us, 67% at 16 us, none at 64 us; an SM of
// any other GPC none, in the same L2 partition or not. The table below (`lines` entries in sets of
// `ways`, the oldest of a set replaced first) is sized by replaying that probe and the 132-SM one
// (validation/compare/l2_merging_probe_replay; validation/NOTES.md row 13).
//
// A held request takes at most `merges_per_request` reads in, as a miss-status entry holds a
// bounded number of waiting requests; the next read is looked up and its request takes the
// following ones in. Fitted by the same replay (row 14): without a limit all 132 SMs reading the
// same boxes in lockstep are merged to 0.06 lookups per requested sector, the GPU 0.30; with 2,
// 0.37.
#pragma once

#include "sim/units.h"

#include <cstdint>
#include <vector>

namespace tilesim {

class RequestCoalescer {
public:
  // merges_per_request 0: no limit.
  RequestCoalescer(int lines, int ways, int merges_per_request)
      : merges_per_request_(merges_per_request > 0 && merges_per_request < kUnlimited ? merges_per_request : kUnlimited),
        ways_(ways > 0 ? ways : 1),
        sets_(static_cast<std::uint64_t>(lines / ways_)),
        entries_(static_cast<std::size_t>(sets_ * static_cast<std::uint64_t>(ways_))),
        oldest_(static_cast<std::size_t>(sets_), 0) {}

  bool enabled() const { return sets_ > 0; }

  // The cycle the data of `sectors` of `line` arrives with the request already made for it, or a
  // negative value when no request for them is held or the one held is full.
  Cycle merge(LineAddress line, SectorMask sectors) {
    Entry* set = &entries_[first_of(line)];
    const auto tag = static_cast<std::uint32_t>(line);
    for (int w = 0; w < ways_; ++w)
      if (set[w].line == tag && (set[w].sectors & sectors) == sectors) {
        if (set[w].merges >= merges_per_request_) return -1;
        if (set[w].merges < kUnlimited - 1) ++set[w].merges;
        return set[w].ready;
      }
    return -1;
  }

  // Holds a request that went to the L2, its data back at `ready`, in place of the set's oldest;
  // a line already held keeps its entry and the time its first request's data arrives, unless
  // that request is full: then the new one takes its place.
  void insert(LineAddress line, SectorMask sectors, Cycle ready) {
    const std::size_t first = first_of(line);
    Entry* set = &entries_[first];
    const auto tag = static_cast<std::uint32_t>(line);
    for (int w = 0; w < ways_; ++w)
      if (set[w].line == tag) {
        if (set[w].merges >= merges_per_request_)
          set[w] = {ready, tag, 0, sectors};
        else
          set[w].sectors |= sectors;
        return;
      }
    // Entries are only ever added, so the oldest of a set is the next in turn.
    std::uint8_t& oldest = oldest_[first / static_cast<std::size_t>(ways_)];
    set[oldest] = {ready, tag, 0, sectors};
    oldest = static_cast<std::uint8_t>((oldest + 1) % ways_);
  }

private:
  // 16 bytes, so a set of 4 is one host cache line. Lines keep their low 32 bits, as the L2's tags
  // do (sim/sectored_cache.h); merges count up to the limit, which is held below 2^16.
  static constexpr int kUnlimited = 0xFFFF;
  struct Entry {
    Cycle ready = 0;
    std::uint32_t line = ~std::uint32_t{0};
    std::uint16_t merges = 0;
    SectorMask sectors = 0;
  };
  std::size_t first_of(LineAddress line) const {
    const std::uint64_t h = (line * 0xC2B2AE3D27D4EB4Full) >> 32;
    return static_cast<std::size_t>((h * sets_) >> 32) * static_cast<std::size_t>(ways_);
  }
  int merges_per_request_;
  int ways_;
  std::uint64_t sets_;
  std::vector<Entry> entries_;
  std::vector<std::uint8_t> oldest_; // per set: the way to replace next
};

} // namespace tilesim
