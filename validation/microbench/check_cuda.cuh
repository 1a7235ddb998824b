// Error handling shared by the microbenchmarks: a failed CUDA call prints one line naming the
// program, the call and the error, and exits 1.
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

} // namespace microbench

#define CHECK_CUDA(call) microbench::check_cuda((call), kProgram, #call)
