// The MXFP8 quantisers and the dequantiser (bf16 <-> FP8 elements + E8M0 scale per 32 elements).
//
// Rowwise: the tensor is one run of blocks. Each thread loads 8 bf16 (one 16-byte ld.global.nc),
// four lanes hold one block and meet through two shuffles for its largest magnitude, each writes 8
// FP8 bytes, the first of the four the scale. A CTA step is kUnroll such vectors per thread,
// blockDim.x * 8 elements apart, all loads issued before the first conversion.
//
// Colwise: a CTA stages a 128-row x 128-column tile through shared memory (32 KiB, 16-byte loads
// along the rows); each thread then reads one column pair down one 32-row block as bf16 pairs and
// writes each column's 32 FP8 bytes as two 16-byte stores into row c of the transposed output.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/mxfp8/mxfp8_convert.cuh"

namespace tilesim::kernels::mxfp8 {

constexpr int kBlock = 32;
constexpr int kRowwiseUnroll = 4;
constexpr int kTileRows = 128;
constexpr int kTileCols = 128;
constexpr int kColwiseThreads = 256;

// Eight bf16 (one 16-byte vector) to eight FP8 bytes with the block's multiplier.
template <Mxfp8Element E> __device__ __forceinline__ uint2 convert8(const uint4& v, float m) {
  const std::uint32_t w[4] = {v.x, v.y, v.z, v.w};
  std::uint32_t b[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const std::uint32_t lo = cvt_fp8x2<E>(bf16_lo(w[2 * i]) * m, bf16_hi(w[2 * i]) * m);
    const std::uint32_t hi = cvt_fp8x2<E>(bf16_lo(w[2 * i + 1]) * m, bf16_hi(w[2 * i + 1]) * m);
    b[i] = lo | (hi << 16);
  }
  return make_uint2(b[0], b[1]);
}

// x: rows * cols bf16 (cols a multiple of 32) as `vectors` 16-byte vectors; out: as many FP8
// bytes; scales: one byte per 32 elements. Every lane of a warp reaches the shuffles; lanes past
// the end carry zeros and store nothing (vectors is a multiple of 4, so a block is whole or absent).
template <Mxfp8ScaleRule Rule, Mxfp8Element E>
__global__ void __launch_bounds__(256) quantize_rowwise_kernel(const uint4* __restrict__ x, uint2* __restrict__ out,
                                                                std::uint8_t* __restrict__ scales, std::int64_t vectors) {
  const std::int64_t step = static_cast<std::int64_t>(blockDim.x) * kRowwiseUnroll;
  for (std::int64_t first = blockIdx.x * step + threadIdx.x; first - threadIdx.x < vectors;
       first += static_cast<std::int64_t>(gridDim.x) * step) {
    uint4 v[kRowwiseUnroll];
#pragma unroll
    for (int u = 0; u < kRowwiseUnroll; ++u) {
      const std::int64_t i = first + u * static_cast<std::int64_t>(blockDim.x);
      v[u] = i < vectors ? __ldg(&x[i]) : make_uint4(0, 0, 0, 0);
    }
#pragma unroll
    for (int u = 0; u < kRowwiseUnroll; ++u) {
      const std::int64_t i = first + u * static_cast<std::int64_t>(blockDim.x);
      std::uint32_t pair = abs_max_bf16x2(abs_max_bf16x2(0, v[u].x), v[u].y);
      pair = abs_max_bf16x2(abs_max_bf16x2(pair, v[u].z), v[u].w);
      std::uint32_t amax = max_half(pair);
      amax = max(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 1));
      amax = max(amax, __shfl_xor_sync(0xFFFFFFFFu, amax, 2));
      const BlockScale s = block_scale<Rule, E>(amax);
      if (i < vectors) {
        out[i] = convert8<E>(v[u], s.multiplier);
        if ((i & 3) == 0) scales[i >> 2] = s.byte;
      }
    }
  }
}

// x: [rows, cols] bf16, rows a multiple of 32, cols of 8; out: [cols, rows] FP8; scales: [cols,
// rows / 32]. Grid: (ceil(rows / 128), ceil(cols / 128)), 256 threads.
//
// The tile is 128 rows x 128 columns, so that each output row gets 128 contiguous bytes (a whole
// line) from one CTA: lane l of warp w owns columns 2 (8w + l / 4) and the one after, down row
// block l % 4, and the four lanes of a column pair write one line of each of its two output rows
// per pair of 16-byte stores. (A 32-row x 512-column tile, 32 bytes per output row, ran at 1.4
// TB/s at 16384 x 7168: each warp store then touched 32 lines.) In shared memory the 16-byte chunk
// c of tile row r sits at c ^ 2 (r / 32): the four row blocks a warp reads at once land on
// disjoint banks.
template <Mxfp8ScaleRule Rule, Mxfp8Element E>
__global__ void __launch_bounds__(kColwiseThreads) quantize_colwise_kernel(const __nv_bfloat16* __restrict__ x,
                                                                            std::uint8_t* __restrict__ out,
                                                                            std::uint8_t* __restrict__ scales,
                                                                            std::int64_t rows, std::int64_t cols) {
  constexpr int kChunksPerRow = kTileCols / 8;
  constexpr int kChunksPerThread = kTileRows * kChunksPerRow / kColwiseThreads;
  __shared__ uint4 tile[kTileRows][kChunksPerRow];
  const std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * kTileRows;
  const std::int64_t col0 = static_cast<std::int64_t>(blockIdx.y) * kTileCols;
  auto swizzle = [](int row, int chunk) { return chunk ^ ((row / kBlock) << 1); };
  // Every load in flight before the first shared-memory store.
  uint4 chunks[kChunksPerThread];
#pragma unroll
  for (int i = 0; i < kChunksPerThread; ++i) {
    const int chunk = i * kColwiseThreads + threadIdx.x;
    const int r = chunk / kChunksPerRow, c = chunk % kChunksPerRow;
    chunks[i] = row0 + r < rows && col0 + c * 8 < cols
                    ? __ldg(reinterpret_cast<const uint4*>(x + (row0 + r) * cols + col0 + c * 8))
                    : make_uint4(0, 0, 0, 0);
  }
#pragma unroll
  for (int i = 0; i < kChunksPerThread; ++i) {
    const int chunk = i * kColwiseThreads + threadIdx.x;
    const int r = chunk / kChunksPerRow;
    tile[r][swizzle(r, chunk % kChunksPerRow)] = chunks[i];
  }
  __syncthreads();
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int pair = warp * 8 + lane / 4, row_block = lane % 4; // pair: 32-bit word of a tile row
  const std::int64_t c = col0 + 2 * pair;
  const std::int64_t first_row = row0 + row_block * kBlock;
  if (c >= cols || first_row >= rows) return; // cols is even: both columns of the pair are in or out
  const std::uint32_t* words = reinterpret_cast<const std::uint32_t*>(&tile[0][0]);
  const int chunk = swizzle(row_block * kBlock, pair / 4), word = pair % 4;
  std::uint32_t v[kBlock];
  std::uint32_t amax = 0;
#pragma unroll
  for (int r = 0; r < kBlock; ++r) {
    v[r] = words[(row_block * kBlock + r) * (kTileCols / 2) + chunk * 4 + word];
    amax = abs_max_bf16x2(amax, v[r]);
  }
  const BlockScale s_lo = block_scale<Rule, E>(amax & 0xFFFFu);
  const BlockScale s_hi = block_scale<Rule, E>(amax >> 16);
  std::uint32_t lo[kBlock / 4], hi[kBlock / 4];
#pragma unroll
  for (int r = 0; r < kBlock; r += 4) {
    lo[r / 4] = cvt_fp8x2<E>(bf16_lo(v[r]) * s_lo.multiplier, bf16_lo(v[r + 1]) * s_lo.multiplier) |
                (static_cast<std::uint32_t>(
                     cvt_fp8x2<E>(bf16_lo(v[r + 2]) * s_lo.multiplier, bf16_lo(v[r + 3]) * s_lo.multiplier))
                 << 16);
    hi[r / 4] = cvt_fp8x2<E>(bf16_hi(v[r]) * s_hi.multiplier, bf16_hi(v[r + 1]) * s_hi.multiplier) |
                (static_cast<std::uint32_t>(
                     cvt_fp8x2<E>(bf16_hi(v[r + 2]) * s_hi.multiplier, bf16_hi(v[r + 3]) * s_hi.multiplier))
                 << 16);
  }
  uint4* out_lo = reinterpret_cast<uint4*>(out + c * rows + first_row);
  uint4* out_hi = reinterpret_cast<uint4*>(out + (c + 1) * rows + first_row);
  out_lo[0] = make_uint4(lo[0], lo[1], lo[2], lo[3]);
  out_lo[1] = make_uint4(lo[4], lo[5], lo[6], lo[7]);
  out_hi[0] = make_uint4(hi[0], hi[1], hi[2], hi[3]);
  out_hi[1] = make_uint4(hi[4], hi[5], hi[6], hi[7]);
  const std::int64_t blocks_per_line = rows / kBlock;
  scales[c * blocks_per_line + first_row / kBlock] = s_lo.byte;
  scales[(c + 1) * blocks_per_line + first_row / kBlock] = s_hi.byte;
}

// elements: lines * length FP8 bytes (length a multiple of 32) with scales [lines, length / 32];
// out: as many bf16, rounded to nearest even. A NaN scale (0xFF) gives NaN. Thread per 8 elements.
template <Mxfp8Element E>
__global__ void __launch_bounds__(256) dequantize_kernel(const uint2* __restrict__ elements,
                                                          const std::uint8_t* __restrict__ scales,
                                                          uint4* __restrict__ out, std::int64_t vectors) {
  for (std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x; i < vectors;
       i += static_cast<std::int64_t>(gridDim.x) * blockDim.x) {
    const uint2 e = __ldg(&elements[i]);
    const std::uint32_t scale = __ldg(&scales[i >> 2]);
    // 2^(scale - 127) as fp32: exponent field scale for 1..254; 2^-127 (scale 0) is the subnormal 2^22 ulp.
    const float m = scale == 0xFFu ? __int_as_float(0x7FFFFFFF) : scale == 0 ? __uint_as_float(0x00400000u)
                                                                             : __uint_as_float(scale << 23);
    const std::uint32_t in[2] = {e.x, e.y};
    std::uint32_t o[4];
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const std::uint32_t h = cvt_f16x2<E>(static_cast<std::uint16_t>(in[j / 2] >> (16 * (j % 2))));
      const __half2 h2 = *reinterpret_cast<const __half2*>(&h);
      const __nv_bfloat162 b = __floats2bfloat162_rn(__low2float(h2) * m, __high2float(h2) * m);
      o[j] = *reinterpret_cast<const std::uint32_t*>(&b);
    }
    out[i] = make_uint4(o[0], o[1], o[2], o[3]);
  }
}

} // namespace tilesim::kernels::mxfp8
