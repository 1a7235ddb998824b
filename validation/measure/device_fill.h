// Device-side fills: random bf16 operands (never zeros: a zero operand runs measurably faster on
// Hopper and hides indexing errors) and the L2 flush that makes every launch start cold.
#pragma once

#include "validation/measure/device_buffer.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace tilesim::measure {

#ifdef __CUDACC__
// splitmix64's finaliser: the device fills' hash of (index, seed).
__device__ inline std::uint64_t splitmix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
#endif

// Fills `count` bf16 values with a hash of (index, seed), uniform in [-1, 1) and never exactly 0.
void fill_random_bf16(void* data, std::size_t count, std::uint64_t seed, cudaStream_t stream);

// The flush kernel's name in CUPTI activity records.
inline constexpr const char* kL2FlushKernelName = "tilesim_l2_flush_kernel";

// Evicts every line of the GPU's L2 by streaming reads over a buffer twice the L2's size. Reads,
// not a memset: a memset would leave the L2 full of dirty lines whose write-back the next kernel's
// dram__bytes_write would count.
class L2Flusher {
public:
  explicit L2Flusher(int device);
  void flush(cudaStream_t stream) const;
  std::size_t bytes() const { return scratch_.bytes(); }

private:
  DeviceBuffer scratch_;
  DeviceBuffer sink_;
};

} // namespace tilesim::measure
