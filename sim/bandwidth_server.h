// A first-come-first-served server of fixed bandwidth: a request of n bytes occupies it for
// n / bytes_per_cycle cycles after everything queued before it. Requests must arrive in
// non-decreasing time order (the event loop guarantees that).
#pragma once

#include "sim/units.h"

#include <algorithm>

namespace tilesim {

class BandwidthServer {
public:
  explicit BandwidthServer(double bytes_per_cycle) : bytes_per_cycle_(bytes_per_cycle) {}

  // Cycle at which the last byte of the request has been served.
  Cycle serve(Cycle arrival, ByteCount bytes) {
    const Cycle start = std::max(arrival, free_at_);
    free_at_ = start + static_cast<double>(bytes) / bytes_per_cycle_;
    busy_ += free_at_ - start;
    served_ += bytes;
    return free_at_;
  }

  Cycle free_at() const { return free_at_; }
  Cycle busy_cycles() const { return busy_; }
  ByteCount served_bytes() const { return served_; }
  double bytes_per_cycle() const { return bytes_per_cycle_; }

private:
  double bytes_per_cycle_;
  Cycle free_at_ = 0;
  Cycle busy_ = 0;
  ByteCount served_ = 0;
};

} // namespace tilesim
