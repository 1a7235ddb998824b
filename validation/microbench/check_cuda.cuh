// Error handling shared by the microbenchmarks: a failed CUDA call, or no GPU at all, prints one
// line naming the program and the cause, and exits 1.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

namespace microbench {

inline void check_cuda(cudaError_t err, const char* program, const char* call) {
  if (err == cudaSuccess) return;
  std::fprintf(stderr, "%s: %s failed: %s\n", program, call, cudaGetErrorString(err));
  std::exit(1);
}

// The first GPU's properties.
inline cudaDeviceProp first_device(const char* program) {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::fprintf(stderr, "%s: no CUDA device; run it on a GPU machine\n", program);
    std::exit(1);
  }
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, 0), program, "cudaGetDeviceProperties");
  return prop;
}

} // namespace microbench

#define CHECK_CUDA(call) microbench::check_cuda((call), kProgram, #call)
