// The pass of scheme xpass_f16 (kernels/mxfp8/NOTES.md, "f16 with a reference exponent a row"), two
// launches before the GEMM:
//   - w_row_info_kernel, a thread a row of W: its reference (the largest scale byte that is not NaN) and
//     whether it is wide (a NaN scale, or a scale more than 21 below the reference), one uint16 a row.
//     W's rows are only read for their scales (k / 32 bytes a row): the GEMM converts W itself. (A warp a
//     row, as X's, took 0.05 ms for decode's 131,072 rows of W: one row's few loads at a time a warp.)
//   - x_pass_kernel, a warp a row of X: the same info by a warp's max, then the row converted to f16
//     (mxfp8_f16_dequant.h), element x 2^(s - ref + 7), each 16-element group in permuted_k's order (the
//     low pairs of its four words, then the high pairs): the f16 X the GEMM reads by TMA as wgmma's B.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/mxfp8/mxfp8_f16_dequant.h"

namespace tilesim::kernels::mxfp8_f16 {

constexpr int kPassThreads = 256;

struct PassParams {
  const uint4* x;           // [x_rows, k] E4M3
  const uint32_t* x_scales; // [x_rows, k / 32] E8M0, as words
  const uint32_t* w_scales; // [w_rows, k / 32]
  uint4* x_f16;             // [x_rows, k] f16, permuted
  uint16_t* x_info;         // [x_rows] ref | kWideFlag
  uint16_t* w_info;         // [w_rows]
  int64_t x_rows, w_rows;
  int k;
};

// The info of one row of scale words, by one thread: the largest and smallest scale that are not NaN, and
// whether one is NaN, in one read (eight words in flight at a time).
__device__ __forceinline__ uint32_t thread_row_info(const uint32_t* scales, int words) {
  constexpr int kBatch = 8;
  uint32_t largest = 0, smallest = 0xFF;
  bool nan = false;
  for (int i0 = 0; i0 < words; i0 += kBatch) {
    uint32_t w[kBatch];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) w[i] = i0 + i < words ? __ldg(scales + i0 + i) : 0u;
#pragma unroll
    for (int i = 0; i < kBatch; ++i)
#pragma unroll
      for (int b = 0; b < 4; ++b) {
        if (i0 + i >= words) break;
        const uint32_t s = (w[i] >> (8 * b)) & 0xFF;
        nan = nan || s == kScaleNaN;
        largest = max(largest, s == kScaleNaN ? 0u : s);
        smallest = min(smallest, s); // a NaN scale (255) never lowers it
      }
  }
  const bool wide = nan || smallest + kNarrowSpan < largest;
  return largest | (wide ? kWideFlag : 0u);
}

__global__ void __launch_bounds__(kPassThreads) w_row_info_kernel(const PassParams p) {
  const int words = p.k / 128;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * kPassThreads + threadIdx.x; r < p.w_rows;
       r += static_cast<int64_t>(gridDim.x) * kPassThreads)
    p.w_info[r] = static_cast<uint16_t>(thread_row_info(p.w_scales + r * words, words));
}

// The row's info from its scale words (k / 128 of them: the GEMM's k is a multiple of 128), every lane's
// result the same.
__device__ __forceinline__ uint32_t warp_row_info(const uint32_t* scales, int words, int lane) {
  uint32_t largest = 0;
  for (int i = lane; i < words; i += 32) {
    const uint32_t w = __ldg(scales + i);
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const uint32_t s = (w >> (8 * b)) & 0xFF;
      largest = max(largest, s == kScaleNaN ? 0u : s);
    }
  }
  const uint32_t ref = __reduce_max_sync(0xFFFFFFFFu, largest);
  bool wide = false;
  for (int i = lane; i < words; i += 32) {
    const uint32_t w = __ldg(scales + i);
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const uint32_t s = (w >> (8 * b)) & 0xFF;
      wide = wide || s == kScaleNaN || s + kNarrowSpan < ref;
    }
  }
  return ref | (__any_sync(0xFFFFFFFFu, wide) ? kWideFlag : 0u);
}

// X's row: each lane converts 16-element groups lane, lane + 32, ... (two 16-byte stores of f16 each).
__device__ __forceinline__ void convert_row(const uint4* row, const uint8_t* scales, uint32_t ref, uint4* out,
                                            int groups, int lane) {
  constexpr int kUnroll = 4;
  for (int g0 = lane; g0 < groups; g0 += 32 * kUnroll) {
    uint4 v[kUnroll];
    uint32_t s[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) { // every load in flight before the first conversion
      const int g = g0 + 32 * u;
      v[u] = g < groups ? __ldg(row + g) : make_uint4(0, 0, 0, 0);
      s[u] = g < groups ? __ldg(scales + g / 2) : 0u;
    }
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const int g = g0 + 32 * u;
      if (g >= groups) break;
      const WideMultipliers m = wide_multipliers(s[u], ref); // any row: two multiplies, the pass is memory-bound
      uint4 lo, hi;
      convert_word(v[u].x, m, lo.x, hi.x);
      convert_word(v[u].y, m, lo.y, hi.y);
      convert_word(v[u].z, m, lo.z, hi.z);
      convert_word(v[u].w, m, lo.w, hi.w);
      out[2 * g] = lo;
      out[2 * g + 1] = hi;
    }
  }
}

__global__ void __launch_bounds__(kPassThreads) x_pass_kernel(const PassParams p) {
  const int lane = threadIdx.x % 32;
  const int64_t warps = static_cast<int64_t>(gridDim.x) * (kPassThreads / 32);
  const int words = p.k / 128, groups = p.k / 16;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * (kPassThreads / 32) + threadIdx.x / 32; r < p.x_rows; r += warps) {
    const uint32_t info = warp_row_info(p.x_scales + r * words, words, lane);
    if (lane == 0) p.x_info[r] = static_cast<uint16_t>(info);
    convert_row(p.x + r * groups, reinterpret_cast<const uint8_t*>(p.x_scales + r * words), info & 0xFF,
                p.x_f16 + r * 2 * groups, groups, lane);
  }
}

} // namespace tilesim::kernels::mxfp8_f16
