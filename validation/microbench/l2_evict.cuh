// Flushes the L2 by reading a buffer several times its size with L2-only loads (ld.global.cg),
// shared by the microbenchmarks that need a cold L2. `sink` is written only if the XOR of the
// words read hits a value the buffers never produce, so the loads cannot be optimised away.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

namespace microbench {

__global__ void evict_l2(const uint4* buffer, std::size_t n, uint4* sink) {
  unsigned x = 0;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) x ^= __ldcg(buffer + i).x;
  if (x == 0x12345678u) sink[0].x = x;
}

} // namespace microbench
