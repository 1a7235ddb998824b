// The host side of the tile space every grouped kernel of kernels/ walks: per expert, prefix sums
// of tile rows (for tilesim::TileSpace) and of tokens (where each expert's rows start), with the
// problem's int limits checked. Throws KernelError("<who>: ...") naming the field.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "kernels/common/kernel_error.h"

namespace tilesim::kernels {

struct ExpertTiles {
  std::vector<int> offsets; // row_offsets (experts + 1) then token_offsets (experts + 1)
  int total_tokens = 0;
  int tiles = 0;            // tile rows x tile columns
  int tile_cols = 0;
};

inline ExpertTiles expert_tiles(const std::vector<int>& tokens_per_expert, int tile_m, int n, int tile_n,
                                const std::string& who) {
  const auto require = [&](bool ok, const std::string& message) {
    if (!ok) throw KernelError(who + ": " + message);
  };
  const int experts = static_cast<int>(tokens_per_expert.size());
  ExpertTiles t;
  t.offsets.assign(2 * (experts + 1), 0);
  int64_t tokens = 0;
  for (int e = 0; e < experts; ++e) {
    const int count = tokens_per_expert[e];
    require(count >= 0, "tokens_per_expert[" + std::to_string(e) + "] = " + std::to_string(count) + " is negative");
    t.offsets[e + 1] = t.offsets[e] + (count + tile_m - 1) / tile_m;
    tokens += count;
    require(tokens <= std::numeric_limits<int>::max() - tile_m, "total tokens overflow int");
    t.offsets[experts + 1 + e + 1] = static_cast<int>(tokens);
  }
  t.total_tokens = static_cast<int>(tokens);
  require(static_cast<int64_t>(experts) * n <= std::numeric_limits<int>::max(), "experts * n overflows int");
  t.tile_cols = (n + tile_n - 1) / tile_n;
  const int64_t tiles = static_cast<int64_t>(t.offsets[experts]) * t.tile_cols;
  require(tiles <= std::numeric_limits<int>::max(), "tile count overflows int");
  t.tiles = static_cast<int>(tiles);
  return t;
}

} // namespace tilesim::kernels
