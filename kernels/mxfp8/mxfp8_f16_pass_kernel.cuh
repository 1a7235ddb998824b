// The pass of scheme xpass_f16 (kernels/mxfp8/NOTES.md, "f16 with a reference exponent a row"), two
// launches before the GEMM:
//   - row_info_kernel, a thread a row of X and of W: its reference (the largest scale byte that is not
//     NaN) and whether it is wide (a NaN scale, or a scale more than 21 below the reference), one uint16 a
//     row. W's rows are only read for their scales (k / 32 bytes a row): the GEMM converts W itself.
//   - x_convert_kernel, a thread half a 16-element group of X: converted to f16 (mxfp8_f16_dequant.h),
//     element x 2^(s - ref + 7), in permuted_k's order (the low pairs of its four words, then the high
//     pairs): the f16 X the GEMM reads by TMA as wgmma's B.
// (Earlier forms, a warp a row and a thread a group, took 0.20-0.24 ms at E = 128 x 128 where the
// dequantiser moves X's bytes in 0.125; kernels/mxfp8/NOTES.md, the xpass_f16 calls.)
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

// A row's scale bytes folded into (largest not NaN, smallest, any NaN).
struct RowScan {
  uint32_t largest = 0, smallest = 0xFF;
  bool nan = false;
  __device__ void add(uint32_t word) {
#pragma unroll
    for (int b = 0; b < 4; ++b) {
      const uint32_t s = (word >> (8 * b)) & 0xFF;
      nan = nan || s == kScaleNaN;
      largest = max(largest, s == kScaleNaN ? 0u : s);
      smallest = min(smallest, s); // a NaN scale (255) never lowers it
    }
  }
  __device__ uint32_t info() const {
    return largest | (nan || smallest + kNarrowSpan < largest ? kWideFlag : 0u);
  }
};

// One row's info by one thread, its scales read as 16-byte units where the row is whole aligned ones (k a
// multiple of 512 and the scales 16-byte aligned: a warp load then takes 16 bytes of each of its 32 rows'
// sectors, not 4), else as words.
__device__ __forceinline__ uint32_t thread_row_info(const uint32_t* scales, int words) {
  RowScan scan;
  if (words % 4 == 0 && reinterpret_cast<uintptr_t>(scales) % 16 == 0) {
    const uint4* units = reinterpret_cast<const uint4*>(scales);
    constexpr int kBatch = 4;
    for (int i0 = 0; i0 < words / 4; i0 += kBatch) {
      uint4 u[kBatch];
#pragma unroll
      for (int i = 0; i < kBatch; ++i) u[i] = i0 + i < words / 4 ? __ldg(units + i0 + i) : make_uint4(0, 0, 0, 0);
#pragma unroll
      for (int i = 0; i < kBatch; ++i) {
        if (i0 + i >= words / 4) break;
        scan.add(u[i].x);
        scan.add(u[i].y);
        scan.add(u[i].z);
        scan.add(u[i].w);
      }
    }
  } else {
    for (int i = 0; i < words; ++i) scan.add(__ldg(scales + i));
  }
  return scan.info();
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

// X to f16 after row_info_kernel, a thread an 8-element half of a 16-element group over the whole of X: both
// halves' threads load the group's 16 bytes, each converts its half (the low pairs of the four words, or the
// high ones) and stores one 16-byte unit, so that a warp's store is 512 contiguous bytes, as the dequantiser's.
// One multiply a pair on a narrow row, two on a wide one.
__global__ void __launch_bounds__(kPassThreads) x_convert_kernel(const PassParams p) {
  const int64_t groups_per_row = p.k / 16, halves = 2 * p.x_rows * groups_per_row;
  const uint8_t* scales = reinterpret_cast<const uint8_t*>(p.x_scales);
  for (int64_t h = static_cast<int64_t>(blockIdx.x) * kPassThreads + threadIdx.x; h < halves;
       h += static_cast<int64_t>(gridDim.x) * kPassThreads) {
    const int64_t g = h >> 1;
    const uint4 v = __ldg(p.x + g);
    const uint32_t s = __ldg(scales + g / 2), info = __ldg(p.x_info + g / groups_per_row);
    const uint32_t shift = 16 * static_cast<uint32_t>(h & 1); // the high pairs: the words' upper halves
    const uint32_t w[4] = {v.x >> shift, v.y >> shift, v.z >> shift, v.w >> shift};
    uint32_t out[4], unused;
    if (info & kWideFlag) {
      const WideMultipliers m = wide_multipliers(s, info & 0xFF);
#pragma unroll
      for (int i = 0; i < 4; ++i) convert_word(w[i], m, out[i], unused);
    } else {
      const uint32_t m = narrow_multiplier(s * 0x10001u, narrow_offset(info & 0xFF));
#pragma unroll
      for (int i = 0; i < 4; ++i) convert_word(w[i], m, out[i], unused);
    }
    p.x_f16[h] = make_uint4(out[0], out[1], out[2], out[3]);
  }
}

} // namespace tilesim::kernels::mxfp8_f16
