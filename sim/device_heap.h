// Where the simulated kernels' tensors live: cudaMalloc hands out 2 MiB-aligned regions, and each
// model places its tensors one after another from one base, as the measured programs allocate them.
#pragma once

#include "sim/units.h"

namespace tilesim {

inline constexpr Address kHeapBase = Address{1} << 40;
inline constexpr Address kAllocationAlignment = Address{2} << 20;

inline Address align_allocation(Address a) {
  return (a + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment;
}

} // namespace tilesim
