// Device helpers shared by grouped_gemm_check and grouped_gemm_bench: random fill, poison,
// a plain fp32 reference GEMM and the comparison reduction. Deliberately simple and separate from
// the kernel under test.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace tilesim::kernels::testing {

inline void check(cudaError_t err, const char* call) {
  if (err != cudaSuccess) {
    std::fprintf(stderr, "%s failed: %s\n", call, cudaGetErrorString(err));
    std::exit(2);
  }
}

__device__ __forceinline__ uint32_t hash32(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<uint32_t>(x);
}

// Uniform in [-1, 1], a different stream per seed.
__global__ void fill_uniform(__nv_bfloat16* data, int64_t count, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const float u = hash32(seed * 0x9E3779B97F4A7C15ULL + uint64_t(i)) * (2.0f / 4294967296.0f) - 1.0f;
    data[i] = __float2bfloat16(u);
  }
}

inline void fill_uniform_host(void* data, int64_t count, uint64_t seed) {
  if (count == 0) return;
  fill_uniform<<<1024, 256>>>(static_cast<__nv_bfloat16*>(data), count, seed);
  check(cudaGetLastError(), "fill_uniform launch");
}

// ref[i, :] = X[rows[i], :] * W[e]^T in fp32 for the sampled rows; one block per sampled row,
// the X row in shared memory, one warp per output column with lanes striding over K (coalesced).
__global__ void reference_rows(const __nv_bfloat16* x, const __nv_bfloat16* w, const int* token_offsets,
                               int experts, const int* rows, int n, int k, float* ref) {
  extern __shared__ float x_row[];
  const int row = rows[blockIdx.x];
  int e = 0;
  while (e + 1 < experts && token_offsets[e + 1] <= row) ++e;
  for (int i = threadIdx.x; i < k; i += blockDim.x) x_row[i] = __bfloat162float(x[int64_t(row) * k + i]);
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  const __nv_bfloat16* we = w + int64_t(e) * n * k;
  for (int col = warp; col < n; col += warps) {
    float sum = 0.0f;
    for (int i = lane; i < k; i += 32) sum += x_row[i] * __bfloat162float(we[int64_t(col) * k + i]);
    for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (lane == 0) ref[int64_t(blockIdx.x) * n + col] = sum;
  }
}

struct Comparison {
  double diff_sq;
  double ref_sq;
  unsigned long long unwritten; // poison (0xFFFF) left inside the output rows
  unsigned long long guard_hits; // guard rows after the output that changed
};

__global__ void compare_rows(const __nv_bfloat16* y, const float* ref, const int* rows, int sampled, int n,
                             Comparison* out) {
  double d = 0, r = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < int64_t(sampled) * n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int64_t s = i / n, col = i % n;
    const float got = __bfloat162float(y[int64_t(rows[s]) * n + col]);
    const float want = ref[i];
    d += double(got - want) * double(got - want);
    r += double(want) * want;
  }
  atomicAdd(&out->diff_sq, d);
  atomicAdd(&out->ref_sq, r);
}

__global__ void count_poison(const uint16_t* y, int64_t output_elems, int64_t guard_elems, Comparison* out) {
  unsigned long long unwritten = 0, guard = 0;
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < output_elems + guard_elems;
       i += int64_t(gridDim.x) * blockDim.x) {
    const bool poison = y[i] == 0xFFFF;
    if (i < output_elems)
      unwritten += poison ? 1 : 0;
    else
      guard += poison ? 0 : 1;
  }
  atomicAdd(&out->unwritten, unwritten);
  atomicAdd(&out->guard_hits, guard);
}

} // namespace tilesim::kernels::testing
