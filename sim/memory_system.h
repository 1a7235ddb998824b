// The memory side of the GPU: a sectored L2 in front of HBM, each behind a bandwidth server.
// A TMA box (or a tile store) arrives as rows of contiguous bytes; each row becomes 128-byte lines
// and 32-byte sectors looked up in the L2, misses queue at DRAM.
#pragma once

#include "models/gpu_profile.h"
#include "sim/bandwidth_server.h"
#include "sim/sectored_cache.h"
#include "sim/units.h"

#include <vector>

namespace tilesim {

// `rows` runs of `row_bytes` bytes, `row_stride` apart, starting at `base`.
struct Box {
  Address base = 0;
  ByteCount row_bytes = 0;
  ByteCount row_stride = 0;
  int rows = 0;
};

struct SectorCount {
  long long hits = 0;
  long long misses = 0;
};

struct MemoryTotals {
  long long l2_line_lookups = 0;
  long long l2_read_hit_sectors = 0;
  long long l2_read_miss_sectors = 0;
  long long l2_write_hit_sectors = 0;
  long long l2_write_miss_sectors = 0;
  ByteCount dram_read_bytes = 0;
  ByteCount dram_write_bytes = 0;
};

class MemorySystem {
public:
  explicit MemorySystem(const GpuProfile& gpu);

  // Cycle at which the whole box has landed in the SM's shared memory; sector outcomes are
  // added to `outcome`.
  Cycle read_box(Cycle issue, const Box& box, SectorCount& outcome);
  // Cycle at which the stored bytes have reached the L2.
  Cycle write_box(Cycle issue, const Box& box);

  const MemoryTotals& totals() const { return totals_; }
  const BandwidthServer& dram() const { return dram_; }
  const BandwidthServer& l2_bandwidth() const { return l2_bandwidth_; }

private:
  // Looks up every line of `box`; returns {hit, miss, written back} sectors.
  LookupOutcome lookup_box(const Box& box, bool is_write);

  SectoredCache l2_;
  BandwidthServer l2_bandwidth_;
  BandwidthServer dram_;
  int line_shift_;   // log2(line bytes)
  int sector_shift_; // log2(sector bytes)
  SectorMask full_line_;
  Cycle l2_hit_latency_;
  Cycle dram_latency_;
  MemoryTotals totals_;
  struct LineRequest {
    LineAddress line;
    SectorMask sectors;
  };
  std::vector<LineRequest> lines_; // scratch for lookup_box
};

} // namespace tilesim
