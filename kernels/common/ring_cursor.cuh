// Position in a shared-memory ring of `stages` buffers guarded by full/empty mbarriers: the stage
// index and the parity of the phase it is in. Producers and consumers of every kernel family
// walk their ring with one each.
#pragma once

#include <cstdint>

namespace tilesim::kernels {

struct RingCursor {
  int stage = 0;
  uint32_t phase = 0;
  __device__ void advance(int stages) {
    if (++stage == stages) {
      stage = 0;
      phase ^= 1;
    }
  }
};

} // namespace tilesim::kernels
