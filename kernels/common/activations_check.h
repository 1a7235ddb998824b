// Double-precision references of kernels/common/activations.cuh for the checks (host, and device
// for the GEMM check's reference kernel): ReLU, and GELU in its tanh form with an exact tanh.
// Named *_check* so that the measured kernels' source hash (validation/CMakeLists.txt) leaves it out.
#pragma once

#include <cmath>

#ifdef __CUDACC__
#define TILESIM_HOST_DEVICE __host__ __device__
#else
#define TILESIM_HOST_DEVICE
#endif

namespace tilesim::kernels {

TILESIM_HOST_DEVICE inline double relu_reference(double x) { return x > 0 ? x : 0.0; }

TILESIM_HOST_DEVICE inline double gelu_tanh_reference(double x) {
  return 0.5 * x * (1.0 + tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
}

} // namespace tilesim::kernels

#undef TILESIM_HOST_DEVICE
