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

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tilesim {

class RequestCoalescer {
public:
  // merges_per_request 0: no limit.
  RequestCoalescer(int lines, int ways, int merges_per_request)
      : merges_per_request_(merges_per_request > 0 && merges_per_request < kUnlimited ? merges_per_request : kUnlimited),
        ways_(ways > 0 ? ways : 1),
        sets_(static_cast<std::uint64_t>(lines / ways_)),
        tags_(static_cast<std::size_t>(sets_ * static_cast<std::uint64_t>(ways_)), kNoLine),
        entries_(tags_.size()),
        oldest_(static_cast<std::size_t>(sets_), 0) {}

  bool enabled() const { return sets_ > 0; }

  // The cycle the data of `sectors` of `line` arrives with the request already made for it, or a
  // negative value when no request for them is held or the one held is full.
  Cycle merge(LineAddress line, SectorMask sectors) { return merge_in_set(set_of(line), line, sectors).ready; }
  // The same, for a caller that already knows the line's set (set_of(line)); also says where the
  // line is held (-1: nowhere), for the insert that follows a failed merge.
  struct Merge {
    Cycle ready;
    int way;
  };
  Merge merge_in_set(std::size_t set, LineAddress line, SectorMask sectors) { return merge_in_set(view(), set, line, sectors); }
  // The coalescer's arrays and limits, copied out once for a loop of merges (see
  // SectoredCache::View: the members would be read again after every store).
  struct Entry;
  struct View {
    std::uint32_t* tags;
    Entry* entries;
    std::uint32_t* oldest;
    int ways;
    int merges_per_request;
  };
  View view() { return {tags_.data(), entries_.data(), oldest_.data(), ways_, merges_per_request_}; }
  static Merge merge_in_set(const View& v, std::size_t set, LineAddress line, SectorMask sectors) {
    const std::size_t first = set * static_cast<std::size_t>(v.ways);
    const int w = find(v.tags + first, static_cast<std::uint32_t>(line), v.ways);
    if (w < 0) return {-1, -1};
    Entry& e = v.entries[first + static_cast<std::size_t>(w)];
    if ((e.sectors & sectors) != sectors || e.merges >= v.merges_per_request) return {-1, w};
    if (e.merges < kUnlimited - 1) ++e.merges;
    return {e.ready, w};
  }

  // Holds a request that went to the L2, its data back at `ready`, in place of the set's oldest;
  // a line already held keeps its entry and the time its first request's data arrives, unless
  // that request is full: then the new one takes its place.
  void insert(LineAddress line, SectorMask sectors, Cycle ready) { insert_in_set(set_of(line), line, sectors, ready); }
  // `way` is what the failed merge_in_set said of the line: the way holding it (checked by tag:
  // another line may have taken it since), -1 when it was held nowhere and has not been inserted
  // since, or kUnknown: then it is searched for.
  static constexpr int kUnknown = -2;
  void insert_in_set(std::size_t index, LineAddress line, SectorMask sectors, Cycle ready, int way = kUnknown) {
    insert_in_set(view(), index, line, sectors, ready, way);
  }
  static void insert_in_set(const View& v, std::size_t index, LineAddress line, SectorMask sectors, Cycle ready, int way = kUnknown) {
    const std::size_t first = index * static_cast<std::size_t>(v.ways);
    const auto tag = static_cast<std::uint32_t>(line);
    const int w = way == -1 ? -1 : way >= 0 && v.tags[first + static_cast<std::size_t>(way)] == tag ? way : find(v.tags + first, tag, v.ways);
    if (w >= 0) {
      Entry& e = v.entries[first + static_cast<std::size_t>(w)];
      if (e.merges >= v.merges_per_request)
        e = {ready, 0, sectors};
      else
        e.sectors |= sectors;
      return;
    }
    // Entries are only ever added, so the oldest of a set is the next in turn. Read once: the
    // compiler cannot rule out that the stores below alias it, and read it again behind each one.
    const std::uint32_t oldest = v.oldest[index];
    v.tags[first + oldest] = tag;
    v.entries[first + oldest] = {ready, 0, sectors};
    // Wrapped without a branch: sets are hashed, so whether the next insert's turn wraps is as
    // good as random to the host's branch predictor (the branch cost the 8192^3 replay about 12%).
    const std::uint32_t next = oldest + 1;
    v.oldest[index] = next & (0u - static_cast<std::uint32_t>(next != static_cast<std::uint32_t>(v.ways)));
  }

  // Which set a line maps to; every coalescer of one GPU has the same sets.
  std::size_t set_of(LineAddress line) const { return set_of(line, sets_); }
  static std::size_t set_of(LineAddress line, std::uint64_t sets) { return set_of_product(line * kSetHash, sets); }
  // set_of in two steps, for lines an equal stride apart: their products (mod 2^64) are too.
  static constexpr std::uint64_t kSetHash = 0xC2B2AE3D27D4EB4Full;
  static std::size_t set_of_product(std::uint64_t product, std::uint64_t sets) {
    return static_cast<std::size_t>(((product >> 32) * sets) >> 32);
  }
  std::uint64_t sets() const { return sets_; }

  // Lines keep their low 32 bits, as the L2's tags do (sim/sectored_cache.h), apart from the rest
  // of their entry so that a set's tags are compared at once; a line is held at most once per
  // set. Merges count up to the limit, which is held below 2^16.
  static constexpr int kUnlimited = 0xFFFF;
  static constexpr std::uint32_t kNoLine = ~std::uint32_t{0};
  // No one-byte fields: a store of those may alias anything, which costs reloads in the loops.
  struct Entry {
    Cycle ready = 0;
    std::int32_t merges = 0;
    std::uint32_t sectors = 0;
  };

private:
  // The first way of a set holding `tag`, or -1.
  static int find(const std::uint32_t* tags, std::uint32_t tag, int ways) {
#if defined(__SSE2__)
    if (ways == 4) { // the profiles' ways: one compare
      const auto match = static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(
          _mm_cmpeq_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(tags)), _mm_set1_epi32(static_cast<int>(tag))))));
      return match != 0 ? __builtin_ctz(match) : -1;
    }
#endif
    for (int w = 0; w < ways; ++w)
      if (tags[w] == tag) return w;
    return -1;
  }
  int merges_per_request_;
  int ways_;
  std::uint64_t sets_;
  std::vector<std::uint32_t> tags_;
  std::vector<Entry> entries_;
  std::vector<std::uint32_t> oldest_; // per set: the way to replace next
};

} // namespace tilesim
