// The read port of each GPC: every byte an SM of the GPC reads from the L2 crosses it, at a rate
// of its own, whatever the shared L2 server leaves free. The H100's L2 probe found it
// (validation/NOTES.md, "A port per GPC"): with operands in L2, a GPC that runs full beside
// emptier ones (66 SMs: GPC 0's 16 SMs) or the 18-SM GPCs beside 16-SM ones (132 SMs) take 2-5%
// longer a tile than the median GPC and draw 1.03-1.10 TB/s over their tile periods whichever
// launch they are in, and with operands partly from DRAM too (validation/microbench/
// gpc_port_rate.py). A rate over the period, not over a tile's K loop: the producer fills the next
// tile's stages during the epilogue, so the bytes cross between loops as well. Counted in the
// bytes the SMs ask for: a read the request coalescer merges saves a lookup, not the data's trip
// to the SM that asked.
#pragma once

#include "sim/bandwidth_server.h"
#include "sim/units.h"

#include <vector>

namespace tilesim {

class GpcPorts {
public:
  GpcPorts() = default; // none: every read passes freely
  GpcPorts(double bytes_per_cycle, int gpcs)
      : ports_(static_cast<std::size_t>(gpcs), BandwidthServer(bytes_per_cycle)) {}

  bool enabled() const { return !ports_.empty(); }
  // Cycle at which GPC `gpc`'s port has passed the last of `bytes` arriving at `arrival`.
  Cycle serve(Cycle arrival, int gpc, ByteCount bytes) {
    return ports_[static_cast<std::size_t>(gpc)].serve(arrival, bytes);
  }
  const BandwidthServer& port(int gpc) const { return ports_[static_cast<std::size_t>(gpc)]; }

private:
  std::vector<BandwidthServer> ports_;
};

} // namespace tilesim
