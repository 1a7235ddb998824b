// The pieces of the kernels that compute Y^T = W * X^T per expert with the tokens on wgmma's N and
// the converted weights as its register A (the mixed-input kernel, the MXFP8 transposed scheme):
// the CTA's walk through the launch order, a tile's token rows, the split-K reduction of 64-channel
// tiles and the store of the transposed accumulators.
#pragma once

#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/common/ptx_wrappers.cuh"
#include "models/launch_order.h"

namespace tilesim::kernels {

// Owns this CTA's walk through the launch order: items blockIdx.x, + gridDim.x, ... (persistent:
// grid ~ SM count; otherwise one item each), each mapped to a tile by tilesim::tile_at, the walk the
// simulator replays.
struct TileWalk {
  LaunchOrder order;
  TileSpace space;
  int item;
  int count;
  __device__ TileWalk(LaunchOrder order_, TileSpace space_)
      : order(order_), space(space_), item(static_cast<int>(blockIdx.x)), count(tile_count(space_)) {}
  __device__ bool next(int& linear, TileIndex& tile) {
    if (item >= count) return false;
    linear = item;
    tile = tile_at(order, space, item);
    item += static_cast<int>(gridDim.x);
    return true;
  }
};

struct TokenRows {
  int first; // global token row of the tile's first token
  int valid; // tokens of this tile that belong to the expert
};

__device__ __forceinline__ TokenRows token_rows(const int* token_offsets, const TileIndex& t, int block_tokens) {
  const int first = __ldg(token_offsets + t.expert) + t.local_row * block_tokens;
  return {first, min(block_tokens, __ldg(token_offsets + t.expert + 1) - first)};
}

// Split K: consumers 1.. hand their accumulators to consumer 0 through shared memory (slot
// [consumer - 1][i][thread]: conflict-free), which adds them before the store. The second barrier
// keeps the others from overwriting their slots with the next tile's sums before consumer 0 has
// read these. Named barriers 1 and 2.
template <int Accumulators, int Consumers>
__device__ __forceinline__ void reduce_split_k(float* buffer, float (&acc)[Accumulators], int consumer) {
  constexpr int A = Accumulators, threads = 128 * Consumers;
  const int t = threadIdx.x % 128;
  if (consumer > 0)
#pragma unroll
    for (int i = 0; i < A; ++i) buffer[((consumer - 1) * A + i) * 128 + t] = acc[i];
  ptx::named_barrier_sync(1, threads);
  if (consumer == 0)
#pragma unroll
    for (int c = 1; c < Consumers; ++c)
#pragma unroll
      for (int i = 0; i < A; ++i) acc[i] += buffer[((c - 1) * A + i) * 128 + t];
  ptx::named_barrier_sync(2, threads);
}

// Accumulator layout of wgmma m64nN (PTX ISA 9.7.15.5.1.1, "Matrix D"): thread t holds rows
// (channels) 16 (t / 32) + (t % 32) / 4 and + 8, columns (tokens) 8 j + 2 (t % 4) and + 1. Each
// sum times its channel's `scale` goes to y[token, channel] as bf16; tokens past the tile's valid
// ones and channels past n are not stored.
template <int BlockTokens>
__device__ __forceinline__ void store_transposed_tile(__nv_bfloat16* y, int n, const float (&acc)[BlockTokens / 2],
                                                      TokenRows rows, int channel0, const float (&scale)[2]) {
  const int t = threadIdx.x % 128;
  const int channel[2] = {channel0, channel0 + 8};
#pragma unroll
  for (int j = 0; j < BlockTokens / 8; ++j)
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int token = 8 * j + 2 * (t % 4) + (c & 1);
      const int i = c >> 1;
      if (token < rows.valid && channel[i] < n)
        y[static_cast<int64_t>(rows.first + token) * n + channel[i]] = __float2bfloat16_rn(acc[4 * j + c] * scale[i]);
    }
}

} // namespace tilesim::kernels
