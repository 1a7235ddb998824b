// The block and unroll the element-wise launcher takes when the caller names neither (a spec with
// no "block" and no "unroll"). Shared by the kernel's launcher (kernels/elementwise/), which asks
// the device for its SMs, and the simulator's model, which reads them from the GPU profile, so the
// model charges the kernel that runs. Header-only: the kernel's C entry point links no models code.
#pragma once

#include "models/kernel_spec.h"

#include <cstdint>

namespace tilesim {

struct ElementwiseLaunchShape {
  int block;
  int unroll;
};

// 256 threads x 1 vector, except 64 x 4 vectors (the same 1024 fp32 elements a CTA, a quarter of
// the warps) where the 256 x 1 grid is one wave that holds more than half the GPU's threads and has
// no masked CTA. There a grid of all the warp slots starts its last CTA 0.35-0.65 us after its
// first, a grid of a quarter of them 0.13-0.22 us after, and the kernel lasts 4-5 us. On the H100 that
// is 541,696 <= n <= 1,081,344 fp32 elements with n a multiple of 1024: run C5 timed 64 x 4 x 4
// there at 1.041x (786,432) and 1.027x (1,048,576) the speed of 256 x 4. Where the grid has a
// masked CTA, 64 x 4 x 4's tail takes more dependent trips: 0.926x at 1,000,003 (kernels/
// elementwise/NOTES.md, runs C1 and C5). Measured for fp32 in 16-byte vectors, grid form, only; other
// types, vectors and the persistent form keep 256 x 1.
constexpr ElementwiseLaunchShape elementwise_launch_shape(std::int64_t elements, Dtype dtype, int vector,
                                                          bool persistent, int sm_count, int max_threads_per_sm) {
  constexpr ElementwiseLaunchShape wide{256, 1}, deep{64, 4};
  if (persistent || dtype != Dtype::fp32 || vector != 4) return wide;
  const std::int64_t step = static_cast<std::int64_t>(wide.block) * vector;
  if (elements % step != 0) return wide;
  const std::int64_t ctas = elements / step;
  const std::int64_t wave = static_cast<std::int64_t>(sm_count) * (max_threads_per_sm / wide.block);
  return 2 * ctas > wave && ctas <= wave ? deep : wide;
}

} // namespace tilesim
