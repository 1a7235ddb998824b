// The pass of scheme xpass_f16 (kernels/mxfp8/NOTES.md, "f16 with a reference exponent a row"), two
// launches before the GEMM:
//   - row_info_kernel, a thread a row of X and of W: its reference (the largest scale byte that is not
//     NaN) and whether it is wide (a NaN scale, or a scale more than 21 below the reference), one uint16 a
//     row. W's rows are only read for their scales (k / 32 bytes a row): the GEMM converts W itself.
//   - x_convert_kernel, a thread a 16-element group of X: converted to f16 (mxfp8_f16_dequant.h),
//     element x 2^(s - ref + 7), in permuted_k's order (the low pairs of its four words, then the high
//     pairs): the f16 X the GEMM reads by TMA as wgmma's B.
// At E = 128 x 128 this pass takes 0.21 ms where the dequantiser moves X's bytes in 0.125 (a warp a row
// took 0.20-0.24); what the rest is, is not measured (kernels/mxfp8/NOTES.md, the xpass_f16 calls).
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

// Every row's info, X's rows then W's, a thread a row.
__global__ void __launch_bounds__(kPassThreads) row_info_kernel(const PassParams p) {
  const int words = p.k / 128;
  for (int64_t r = static_cast<int64_t>(blockIdx.x) * kPassThreads + threadIdx.x; r < p.x_rows + p.w_rows;
       r += static_cast<int64_t>(gridDim.x) * kPassThreads) {
    if (r < p.x_rows) p.x_info[r] = static_cast<uint16_t>(thread_row_info(p.x_scales + r * words, words));
    else p.w_info[r - p.x_rows] = static_cast<uint16_t>(thread_row_info(p.w_scales + (r - p.x_rows) * words, words));
  }
}

// X to f16 after row_info_kernel, a thread a 16-element group (16 bytes in, 32 out) over the whole of X, as the
// dequantiser streams it: one multiply a pair on a narrow row, two on a wide one.
__global__ void __launch_bounds__(kPassThreads) x_convert_kernel(const PassParams p) {
  const int64_t groups_per_row = p.k / 16, groups = p.x_rows * groups_per_row;
  const uint8_t* scales = reinterpret_cast<const uint8_t*>(p.x_scales);
  for (int64_t g = static_cast<int64_t>(blockIdx.x) * kPassThreads + threadIdx.x; g < groups;
       g += static_cast<int64_t>(gridDim.x) * kPassThreads) {
    const uint4 v = __ldg(p.x + g);
    const uint32_t s = __ldg(scales + g / 2), info = __ldg(p.x_info + g / groups_per_row);
    const uint32_t ref = info & 0xFF;
    uint4 lo, hi;
    if (info & kWideFlag) {
      const WideMultipliers m = wide_multipliers(s, ref);
      convert_word(v.x, m, lo.x, hi.x);
      convert_word(v.y, m, lo.y, hi.y);
      convert_word(v.z, m, lo.z, hi.z);
      convert_word(v.w, m, lo.w, hi.w);
    } else {
      const uint32_t m = narrow_multiplier(s * 0x10001u, narrow_offset(ref));
      convert_word(v.x, m, lo.x, hi.x);
      convert_word(v.y, m, lo.y, hi.y);
      convert_word(v.z, m, lo.z, hi.z);
      convert_word(v.w, m, lo.w, hi.w);
    }
    p.x_f16[2 * g] = lo;
    p.x_f16[2 * g + 1] = hi;
  }
}

} // namespace tilesim::kernels::mxfp8_f16
