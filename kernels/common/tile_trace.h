// The per-tile trace every persistent kernel of kernels/ can record (tilesim-measure --trace).
#pragma once

namespace tilesim::kernels {

// One record per work item, written by the consumer when the tile is stored (trace[linear]).
struct TileTrace {
  int linear;                  // work-item index given to tile_at
  int sm;                      // %smid of the CTA that ran it
  unsigned long long start_ns; // %globaltimer when the consumer started the tile
  unsigned long long end_ns;   // %globaltimer after its epilogue stores were issued
};

} // namespace tilesim::kernels
