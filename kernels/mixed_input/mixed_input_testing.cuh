// Device helpers shared by mixed_input_check and mixed_input_bench: random operands, a plain fp32
// reference of X * dequant(W)^T, and the comparison with poisoned outputs. Deliberately simple
// and separate from the kernel under test (no shared memory tricks, no conversion tricks).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "kernels/common/check_kernels.cuh"
#include "kernels/mixed_input/mixed_input_gemm.h"

namespace tilesim::kernels::testing {

__global__ void fill_bytes(uint8_t* data, int64_t count, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x)
    data[i] = static_cast<uint8_t>(hash32(seed * 0x9E3779B97F4A7C15ULL + uint64_t(i)) >> 24);
}

// Scales around 1/128 (0.5/128 .. 1.5/128), as symmetric int8 quantisation of unit weights gives.
__global__ void fill_scales(__nv_bfloat16* data, int64_t count, uint64_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < count; i += int64_t(gridDim.x) * blockDim.x) {
    const float u = hash32(seed * 0x9E3779B97F4A7C15ULL + uint64_t(i)) * (1.0f / 4294967296.0f);
    data[i] = __float2bfloat16((0.5f + u) / 128.0f);
  }
}

// The operands of one problem on the device, filled with fresh random data for `seed`.
struct MixedInputOperands {
  int experts = 0, total = 0, n = 0, k = 0;
  std::vector<int> token_offsets;
  void *x = nullptr, *w = nullptr, *scales = nullptr, *zeros = nullptr, *y = nullptr;
  int64_t y_elems = 0, guard_elems = 0;
  std::size_t scale_count = 0, zero_count = 0;

  MixedInputOperands(const MixedInputProblem& p, uint64_t seed) : experts(p.experts), n(p.n), k(p.k) {
    token_offsets.assign(experts + 1, 0);
    for (int e = 0; e < experts; ++e) token_offsets[e + 1] = token_offsets[e] + p.tokens_per_expert[e];
    total = token_offsets[experts];
    scale_count = MixedInputGemm::scale_count(p);
    zero_count = MixedInputGemm::zero_count(p);
    y_elems = int64_t(total) * n;
    guard_elems = 64 * int64_t(n);
    const int64_t x_elems = int64_t(total) * k, w_elems = int64_t(experts) * n * k;
    check(cudaMalloc(&x, std::max<int64_t>(x_elems, 8) * 2), "cudaMalloc(x)");
    check(cudaMalloc(&w, w_elems), "cudaMalloc(w)");
    check(cudaMalloc(&scales, scale_count * 2), "cudaMalloc(scales)");
    if (zero_count) check(cudaMalloc(&zeros, zero_count), "cudaMalloc(zeros)");
    check(cudaMalloc(&y, (y_elems + guard_elems) * 2), "cudaMalloc(y)");
    if (x_elems) fill_uniform_host(x, x_elems, seed * 4 + 1);
    fill_bytes<<<1024, 256>>>(static_cast<uint8_t*>(w), w_elems, seed * 4 + 2);
    fill_scales<<<256, 256>>>(static_cast<__nv_bfloat16*>(scales), int64_t(scale_count), seed * 4 + 3);
    if (zero_count) fill_bytes<<<64, 256>>>(static_cast<uint8_t*>(zeros), int64_t(zero_count), seed * 4 + 4);
    check(cudaGetLastError(), "operand fill launch");
  }
  ~MixedInputOperands() {
    cudaFree(x);
    cudaFree(w);
    cudaFree(scales);
    cudaFree(zeros);
    cudaFree(y);
  }
  MixedInputBuffers buffers() const { return {x, w, scales, scale_count, zeros, zero_count, y}; }
  void poison() const { check(cudaMemset(y, 0xFF, (y_elems + guard_elems) * 2), "cudaMemset(y poison)"); }
};

// ref[i, :] = X[rows[i], :] * dequant(W[e])^T in fp32, dequant(q) = (q - zero) * scale in fp32
// (no bf16 rounding of the dequantised weight). One block per sampled row, a warp per column.
__global__ void reference_rows_dequant(const __nv_bfloat16* x, const uint8_t* w, const __nv_bfloat16* scales,
                                       const uint8_t* zeros, bool is_signed, int groups, const int* token_offsets,
                                       int experts, const int* rows, int n, int k, float* ref) {
  extern __shared__ float x_row[];
  const int row = rows[blockIdx.x];
  int e = 0;
  while (e + 1 < experts && token_offsets[e + 1] <= row) ++e;
  for (int i = threadIdx.x; i < k; i += blockDim.x) x_row[i] = __bfloat162float(x[int64_t(row) * k + i]);
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, warps = blockDim.x / 32;
  for (int col = warp; col < n; col += warps) {
    const int64_t channel = int64_t(e) * n + col;
    const float zero = zeros ? float(zeros[channel]) : 0.0f;
    float sum = 0.0f;
    for (int i = lane; i < k; i += 32) {
      const uint8_t byte = w[channel * k + i];
      const float q = is_signed ? float(int8_t(byte)) : float(byte);
      const float scale = __bfloat162float(scales[groups ? channel * groups + i / 128 : channel]);
      sum += x_row[i] * ((q - zero) * scale);
    }
    for (int off = 16; off > 0; off /= 2) sum += __shfl_xor_sync(0xffffffffu, sum, off);
    if (lane == 0) ref[int64_t(blockIdx.x) * n + col] = sum;
  }
}

struct CheckResult {
  double rel_err;
  unsigned long long unwritten;
  unsigned long long guard_changed;
  bool ok() const { return rel_err < 1e-2 && std::isfinite(rel_err) && unwritten == 0 && guard_changed == 0; }
};

// Sampled rows: every `stride`-th plus the first and last of each expert.
inline std::vector<int> sample_rows(const MixedInputOperands& o, int stride) {
  std::vector<int> rows;
  for (int r = 0; r < o.total; r += stride) rows.push_back(r);
  for (int e = 0; e < o.experts; ++e)
    if (o.token_offsets[e + 1] > o.token_offsets[e]) {
      rows.push_back(o.token_offsets[e]);
      rows.push_back(o.token_offsets[e + 1] - 1);
    }
  return rows;
}

// Compares Y (after one run on a poisoned output) with the fp32 reference on the sampled rows, and
// counts poison left in Y and guard elements after Y that changed.
inline CheckResult check_output(const MixedInputOperands& o, const MixedInputProblem& p, int stride) {
  const std::vector<int> rows = sample_rows(o, stride);
  float* ref = nullptr;
  int *d_rows = nullptr, *d_offsets = nullptr;
  Comparison* d_cmp = nullptr;
  check(cudaMalloc(&ref, std::max<size_t>(rows.size(), 1) * o.n * sizeof(float)), "cudaMalloc(ref)");
  check(cudaMalloc(&d_rows, std::max<size_t>(rows.size(), 1) * sizeof(int)), "cudaMalloc(rows)");
  check(cudaMalloc(&d_offsets, o.token_offsets.size() * sizeof(int)), "cudaMalloc(offsets)");
  check(cudaMalloc(&d_cmp, sizeof(Comparison)), "cudaMalloc(comparison)");
  check(cudaMemset(d_cmp, 0, sizeof(Comparison)), "cudaMemset(comparison)");
  check(cudaMemcpy(d_rows, rows.data(), rows.size() * sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy(rows)");
  check(cudaMemcpy(d_offsets, o.token_offsets.data(), o.token_offsets.size() * sizeof(int), cudaMemcpyHostToDevice),
        "cudaMemcpy(offsets)");
  if (!rows.empty()) {
    reference_rows_dequant<<<static_cast<int>(rows.size()), 256, o.k * sizeof(float)>>>(
        static_cast<const __nv_bfloat16*>(o.x), static_cast<const uint8_t*>(o.w),
        static_cast<const __nv_bfloat16*>(o.scales), static_cast<const uint8_t*>(o.zeros),
        p.weight == WeightType::int8, p.scale_group ? p.k / p.scale_group : 0, d_offsets, o.experts, d_rows, o.n, o.k,
        ref);
    check(cudaGetLastError(), "reference_rows_dequant launch");
    compare_rows<<<512, 256>>>(static_cast<const __nv_bfloat16*>(o.y), ref, d_rows, static_cast<int>(rows.size()),
                               o.n, d_cmp);
    check(cudaGetLastError(), "compare_rows launch");
  }
  count_poison<<<1024, 256>>>(static_cast<const uint16_t*>(o.y), o.y_elems, o.guard_elems, d_cmp);
  check(cudaGetLastError(), "count_poison launch");
  Comparison cmp{};
  check(cudaMemcpy(&cmp, d_cmp, sizeof cmp, cudaMemcpyDeviceToHost), "cudaMemcpy(comparison)");
  cudaFree(ref);
  cudaFree(d_rows);
  cudaFree(d_offsets);
  cudaFree(d_cmp);
  return {cmp.ref_sq > 0 ? std::sqrt(cmp.diff_sq / cmp.ref_sq) : 0.0, cmp.unwritten, cmp.guard_hits};
}

} // namespace tilesim::kernels::testing
