// Units of the simulator. Time is kept in SM clock cycles (fractional: bandwidth shares split
// cycles); addresses are byte addresses in the device's virtual address space; conversions to
// wall time happen only through ClockDomain.
#pragma once

#include <cstdint>

namespace tilesim {

using Cycle = double;             // SM clock cycles since kernel start
using ByteCount = std::int64_t;   // a number of bytes
using Address = std::uint64_t;    // a device byte address
using LineAddress = std::uint64_t; // Address / line size
using SectorMask = std::uint8_t;  // bit i: sector i of a line (at most 8 sectors)

struct ClockDomain {
  double mhz;
  double ns(Cycle c) const { return c * 1000.0 / mhz; }
  double ms(Cycle c) const { return c / (mhz * 1000.0); }
};

} // namespace tilesim
