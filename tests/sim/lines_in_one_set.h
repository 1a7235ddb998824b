// For tests of set-associative structures (the L2's sectored cache, the request coalescer): lines
// that map to one set, found by probing the structure's hash.
#pragma once

#include "sim/units.h"

#include <vector>

namespace tilesim::testing {

template <typename SetAssociative>
std::vector<LineAddress> lines_in_one_set(const SetAssociative& structure, int n) {
  std::vector<LineAddress> lines;
  const auto target = structure.set_of(0);
  for (LineAddress l = 0; static_cast<int>(lines.size()) < n; ++l)
    if (structure.set_of(l) == target) lines.push_back(l);
  return lines;
}

} // namespace tilesim::testing
