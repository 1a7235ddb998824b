// The per-tile trace every persistent kernel of kernels/ can record (tilesim-measure --trace).
#pragma once

namespace tilesim::kernels {

// One record per work item, written by the consumer when the tile is stored (trace[linear]).
struct TileTrace {
  int linear;                  // work-item index given to tile_at
  int sm;                      // %smid of the CTA that ran it
  unsigned long long start_ns; // %globaltimer when the consumer started the tile
  unsigned long long end_ns;   // %globaltimer after its epilogue stores were issued
  // The SM's clock64 at the same two points and after the first and the last K step's stage landed,
  // so that a tile's K steps come in cycles of its own launch and clock (%globaltimer ticks in 32 ns
  // and the clock moves between launches). Only kernels/grouped_gemm writes them; elsewhere they keep
  // the buffer's poison.
  long long start_cycles, first_step_cycles, last_step_cycles, end_cycles;
};

} // namespace tilesim::kernels
