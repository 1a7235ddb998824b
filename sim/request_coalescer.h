// The L2 Request Coalescer (LRC) in front of each GH100 L2 partition: a read of a line that
// another SM of the same partition asked for recently is merged into that request, in flight or
// already answered, and never reaches the L2's tags (no lookup, no share of the L2 bandwidth); its
// data comes with the first request's. ncu counts it (lrc__request_sectors_op_read_coalescing_
// achieved_type_hardware; validation/data/h100/microbench/lrc_gemm_counters.csv: 21% of the
// sectors dense 4096^3 row_major asks for, 6% for column_major).
//
// How long a line stays mergeable: two SMs of one partition reading the same boxes, the second
// 0-64 us after the first, with nothing else running (l2_merging_pairs_run*.json): every read of
// the second is merged up to 2 us (512 lines later), 93% after 1024 further lines, 85% after 2048,
// 65% after 4096, none after 16384; an SM of the other partition is never merged. A table of
// `lines` entries in sets of `ways`, the oldest entry of a set replaced first, reproduces that with
// 6144 lines in 2 ways (l2_merging_probe_replay; validation/NOTES.md row 12).
#pragma once

#include "sim/units.h"

#include <cstdint>
#include <vector>

namespace tilesim {

class RequestCoalescer {
public:
  RequestCoalescer(int lines, int ways)
      : ways_(ways > 0 ? ways : 1), sets_(static_cast<std::uint64_t>(lines / ways_)),
        entries_(static_cast<std::size_t>(sets_ * static_cast<std::uint64_t>(ways_))) {}

  bool enabled() const { return sets_ > 0; }

  // The cycle the data of `sectors` of `line` arrives with the request already made for it, or a
  // negative value when no request for them is held.
  Cycle merge(LineAddress line, SectorMask sectors) const {
    const Entry* set = &entries_[first_of(line)];
    for (int w = 0; w < ways_; ++w)
      if (set[w].line == line && (set[w].sectors & sectors) == sectors) return set[w].ready;
    return -1;
  }

  // Holds a request that went to the L2, its data back at `ready`, in place of the set's oldest.
  void insert(LineAddress line, SectorMask sectors, Cycle ready) {
    Entry* set = &entries_[first_of(line)];
    Entry* oldest = set;
    for (int w = 0; w < ways_; ++w) {
      if (set[w].line == line) {
        set[w].sectors |= sectors;
        return;
      }
      if (set[w].inserted < oldest->inserted) oldest = &set[w];
    }
    *oldest = {line, sectors, ready, ++insertions_};
  }

private:
  struct Entry {
    LineAddress line = ~LineAddress{0};
    SectorMask sectors = 0;
    Cycle ready = 0;
    std::uint64_t inserted = 0;
  };
  std::size_t first_of(LineAddress line) const {
    const std::uint64_t h = (line * 0xC2B2AE3D27D4EB4Full) >> 32;
    return static_cast<std::size_t>((h * sets_) >> 32) * static_cast<std::size_t>(ways_);
  }
  int ways_;
  std::uint64_t sets_;
  std::vector<Entry> entries_;
  std::uint64_t insertions_ = 0;
};

} // namespace tilesim
