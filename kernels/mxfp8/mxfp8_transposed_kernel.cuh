// The block-scaled MXFP8 grouped GEMM, transposed scheme (kernels/mxfp8/NOTES.md): Y_e^T =
// dequant(W_e) * dequant(X_e)^T, the mixed-input kernel's structure (kernels/mixed_input/) for the
// few tokens per expert of decode and small-batch MoE layers.
//
// The converted weights are wgmma's register A: a consumer warpgroup reads its W bytes (64 channels
// x 128 of K per stage, 128-byte swizzle) with ld.shared, converts them with their blocks' scales
// straight into A fragments (mxfp8_dequant.h: exact) and never writes them back. The tile's tokens
// are wgmma's N (16..128), so a decode tile of 16 tokens wastes nothing of a 64-row MMA. X's FP8
// tile is converted once per stage into the consumer's bf16 copy ([tokens x 64] halves, the layout
// TMA gives the mixed-input kernel's bf16 X), which wgmma reads as B; a consumer waits for its
// wgmma before its next block, so one copy per consumer is enough and the ring holds FP8 only.
//
// One CTA = one producer warpgroup (one thread issues the TMA loads of the W tile and the X tile into
// a ring of `stages`) + consumer warpgroups splitting K: the CTA's blocks, counted over all its
// tiles, go to the consumers in turn, so stage s always serves consumer s % consumers (the ring
// depth is a multiple of the consumers) and a consumer needs no other consumer until the tile's
// split-K sums are added. Per K block a consumer waits for its stage, converts X's units and stores
// them as bf16, fences them into the async proxy, loads and converts its W fragments, meets the
// other warps of its warpgroup (their X stores are done), issues 8 wgmma m64nTk16 and waits for
// them (one fragment set: the registers go to more consumers), then releases the stage. Each
// thread's scale words (its two W rows, its X units' rows) for its next block are loaded a block
// ahead, so the L2's round trip stays off the chain.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/common/fragment_source.cuh"
#include "kernels/common/ptx_wrappers.cuh"
#include "kernels/common/ring_cursor.cuh"
#include "kernels/common/tile_trace.h"
#include "kernels/common/transposed_tiles.cuh"
#include "kernels/common/wgmma_rs.cuh"
#include "kernels/mxfp8/mxfp8_dequant.h"
#include "models/launch_order.h"

namespace tilesim::kernels::mxfp8_transposed {

constexpr int kBlockN = 64;  // channels per tile: one consumer's m64
constexpr int kBlockK = 128; // FP8 bytes per row and stage: one 128-byte swizzle row, four MX blocks
constexpr int kScaleBlock = 32;

struct TensorMaps {
  CUtensorMap x; // bytes [tokens, k], boxes of tile_tokens x 128, 128-byte swizzle
  CUtensorMap w; // bytes [experts * n, k], boxes of 64 x 128, 128-byte swizzle
};

struct Params {
  LaunchOrder order;
  TileSpace space;          // row_offsets: device prefix sums of token tiles per expert
  const int* token_offsets; // device, experts + 1 prefix sums of tokens
  const uint8_t* x_scales;  // [total_tokens, k / 32] e8m0
  const uint8_t* w_scales;  // [experts * n, k / 32] e8m0
  __nv_bfloat16* y;         // [total_tokens, n]
  TileTrace* trace;         // one record per linear tile, or nullptr
  int total_tokens;
  int n;
  int k_blocks;
  int scale_cols; // k / 32
  int stages;
  const uint16_t* x_info; // xpass_f16: the pass's row references (mxfp8_f16_pass_kernel.cuh), [total_tokens]
  const uint16_t* w_info; // and W's, [experts * n]; nullptr for every other scheme
};

// Consumers: four at 16 and 32 tokens (96 registers each at 640 threads), two at 64 and 128 (their
// accumulators and split-K sums need the producer's registers and less shared memory).
constexpr int transposed_consumers(int tile_tokens) { return tile_tokens <= 32 ? 4 : 2; }

template <int BlockTokens> struct TileShape {
  static_assert(BlockTokens == 16 || BlockTokens == 32 || BlockTokens == 64 || BlockTokens == 128,
                "wgmma N of 16, 32, 64 or 128 tokens");
  static constexpr int block_tokens = BlockTokens;
  static constexpr int channels = kBlockN;
  static constexpr int consumers = transposed_consumers(BlockTokens);
  static constexpr int x_copies = consumers; // one bf16 copy of X per consumer
  static constexpr int threads = 128 * (consumers + 1);
  static constexpr int k_steps = kBlockK / 16;
  static constexpr int w_bytes = kBlockN * kBlockK;           // FP8
  static constexpr int x_bytes = BlockTokens * kBlockK;       // FP8
  static constexpr int x_half_bytes = BlockTokens * 64 * 2;   // bf16 [tokens x 64]: one swizzle row a token
  static constexpr int x_bf16_bytes = 2 * x_half_bytes;
  static constexpr int stage_bytes = w_bytes + x_bytes;
  static constexpr int units = BlockTokens * kBlockK / 16 / 128; // X's 16-byte units a consumer thread converts
  static constexpr int accumulators = BlockTokens / 2;
  static constexpr bool shares_registers = consumers == 2;
  static constexpr int reduce_bytes = (consumers - 1) * accumulators * 128 * 4;
  static constexpr int shared_bytes(int stages) {
    return 1024 + consumers * x_bf16_bytes + stages * (stage_bytes + 16) + reduce_bytes;
  }
};

// W stages, then X's FP8 stages, then the bf16 copies of X (Shape::x_copies), each 1024-byte aligned (the
// swizzle atoms); then the barriers and the split-K buffer.
template <class Shape> struct SharedRing {
  uint8_t* base;
  int stages;
  __device__ SharedRing(uint8_t* raw, int stages_)
      : base(reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023))),
        stages(stages_) {}
  __device__ uint8_t* w(int s) const { return base + s * Shape::w_bytes; }
  __device__ uint8_t* x(int s) const { return base + stages * Shape::w_bytes + s * Shape::x_bytes; }
  __device__ uint8_t* x_bf16(int consumer) const {
    return base + stages * Shape::stage_bytes + consumer * Shape::x_bf16_bytes;
  }
  __device__ uint64_t* full(int s) const {
    return reinterpret_cast<uint64_t*>(base + stages * Shape::stage_bytes + Shape::x_copies * Shape::x_bf16_bytes) + s;
  }
  __device__ uint64_t* empty(int s) const { return full(stages) + s; }
  __device__ float* reduce_buffer() const { return reinterpret_cast<float*>(empty(stages)); }
};

// Thread 0 prefetches the tensor maps and initialises the ring's barriers (full: the producer's one
// arrival with the stage's bytes; empty: `consumer_warps` warps' arrivals); then every thread sees them.
template <class Ring>
__device__ __forceinline__ void init_ring(const Ring& ring, const TensorMaps& maps, int consumer_warps) {
  if (threadIdx.x == 0) {
    ptx::prefetch_tensor_map(&maps.x);
    ptx::prefetch_tensor_map(&maps.w);
    for (int s = 0; s < ring.stages; ++s) {
      ptx::mbarrier_init(ring.full(s), 1);
      ptx::mbarrier_init(ring.empty(s), consumer_warps);
    }
    ptx::fence_barrier_init();
  }
  __syncthreads();
}

// The producer thread's walk: per stage, wait for it to be empty, expect its Shape::stage_bytes and let
// `load_stage(s, k0, x_row, w_row)` issue its TMA loads (K offset k0, the tile's first X and W rows).
template <class Shape, class Ring, class LoadStage>
__device__ __forceinline__ void producer_loop(const Params& p, const Ring& ring, LoadStage&& load_stage) {
  TileWalk walk(p.order, p.space);
  RingCursor cursor;
  int linear;
  TileIndex tile;
  while (walk.next(linear, tile)) {
    const int x_row = token_rows(p.token_offsets, tile, Shape::block_tokens).first;
    const int w_row = tile.expert * p.n + tile.col * Shape::channels; // rows past n: masked at the store
    for (int kb = 0; kb < p.k_blocks; ++kb) {
      const int s = cursor.stage, k0 = kb * kBlockK;
      ptx::mbarrier_wait(ring.empty(s), cursor.phase ^ 1);
      ptx::mbarrier_arrive_expect_tx(ring.full(s), Shape::stage_bytes);
      load_stage(s, k0, x_row, w_row);
      cursor.advance(ring.stages);
    }
  }
}

// FP8 X and W: one box each a stage.
template <class Shape>
__device__ __forceinline__ void producer_loop(const Params& p, const SharedRing<Shape>& ring, const TensorMaps& maps) {
  producer_loop<Shape>(p, ring, [&](int s, int k0, int x_row, int w_row) {
    ptx::tma_load_2d(ring.x(s), &maps.x, k0, x_row, ring.full(s));
    ptx::tma_load_2d(ring.w(s), &maps.w, k0, w_row, ring.full(s));
  });
}

// Where a consumer thread's X units sit: unit q = t + 128 i is token row first_row + q / 8, 16-byte
// unit q % 8 (K 16 u .. 16 u + 15, MX block u / 2). A quarter warp reads one row's eight units (TMA's 128-byte
// swizzle puts unit u of row r at u ^ (r % 8)): no bank conflict. The bf16 values go to K half
// u / 4, chunks 2 (u % 4) and + 1 of the row, swizzled as TMA would.
template <class Shape> struct XUnits {
  uint32_t src[Shape::units];
  uint32_t dst[Shape::units][2];
  int row[Shape::units];
  uint32_t block; // MX block of the units in the stage (the same for all of a thread's units)
  __device__ explicit XUnits(int t, int first_row = 0) : block((t % 8) / 2) {
    const int u = t % 8;
#pragma unroll
    for (int i = 0; i < Shape::units; ++i) {
      row[i] = first_row + t / 8 + 16 * i;
      const int phase = row[i] % 8;
      src[i] = row[i] * kBlockK + ((u ^ phase) << 4);
#pragma unroll
      for (int c = 0; c < 2; ++c)
        dst[i][c] = (u / 4) * Shape::x_half_bytes + row[i] * 128 + (((2 * (u % 4) + c) ^ phase) << 4);
    }
  }
};

// The scale words of one K block a thread needs: four blocks' bytes of each of its two W rows
// (channels channel0 and + 8) and of each of its X units' rows (rows past the tensor: 0, never stored).
template <class Shape> struct BlockScaleWords {
  uint32_t w[2];
  uint32_t x[Shape::units];
};

template <class Shape> struct ScaleRows {
  const uint32_t* w[2];
  const uint32_t* x[Shape::units];
  __device__ ScaleRows(const Params& p, const TileIndex& tile, const TokenRows& rows, int channel0,
                       const XUnits<Shape>& units) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int channel = min(channel0 + 8 * i, p.n - 1);
      w[i] = reinterpret_cast<const uint32_t*>(p.w_scales + (static_cast<int64_t>(tile.expert) * p.n + channel) * p.scale_cols);
    }
#pragma unroll
    for (int i = 0; i < Shape::units; ++i) {
      const int token = rows.first + units.row[i];
      x[i] = token < p.total_tokens ? reinterpret_cast<const uint32_t*>(p.x_scales + static_cast<int64_t>(token) * p.scale_cols)
                                    : nullptr;
    }
  }
  __device__ BlockScaleWords<Shape> load(int kb) const {
    BlockScaleWords<Shape> s;
#pragma unroll
    for (int i = 0; i < 2; ++i) s.w[i] = __ldg(w[i] + kb);
#pragma unroll
    for (int i = 0; i < Shape::units; ++i) s.x[i] = x[i] ? __ldg(x[i] + kb) : 0u;
    return s;
  }
};

template <bool TwoSteps>
__device__ __forceinline__ uint32_t convert(uint32_t word, uint32_t b, const mxfp8_dequant::BlockScale& s) {
  return mxfp8_dequant::convert_pair_steps<TwoSteps>(word, b, s);
}

// X's units of the stage into a bf16 copy, fenced for wgmma.
template <class Shape, bool TwoSteps>
__device__ __forceinline__ void convert_x_units(uint32_t x_stage, uint32_t x_bf16, const XUnits<Shape>& units,
                                                const mxfp8_dequant::BlockScale (&xs)[Shape::units]) {
#pragma unroll
  for (int i = 0; i < Shape::units; ++i) {
    const uint4 raw = ptx::ld_shared_v4(x_stage + units.src[i]);
    ptx::st_shared_v4(x_bf16 + units.dst[i][0],
                      make_uint4(convert<TwoSteps>(raw.x, 0, xs[i]), convert<TwoSteps>(raw.x, 2, xs[i]),
                                 convert<TwoSteps>(raw.y, 0, xs[i]), convert<TwoSteps>(raw.y, 2, xs[i])));
    ptx::st_shared_v4(x_bf16 + units.dst[i][1],
                      make_uint4(convert<TwoSteps>(raw.z, 0, xs[i]), convert<TwoSteps>(raw.z, 2, xs[i]),
                                 convert<TwoSteps>(raw.w, 0, xs[i]), convert<TwoSteps>(raw.w, 2, xs[i])));
  }
  ptx::fence_proxy_async_shared(); // generic-proxy stores, read by wgmma (the async proxy)
}

// W's bytes of k16 steps First .. First + Steps - 1 into their A fragments (step kk lies in MX block kk / 2).
template <int First, int Steps, bool TwoSteps>
__device__ __forceinline__ void convert_w_steps(uint32_t w_stage, const FragmentWords<kBlockK>& src,
                                                const mxfp8_dequant::BlockScale (&ws)[2][4], uint32_t (&frag)[Steps][4]) {
  const uint32_t row_base = w_stage + src.base;
#pragma unroll
  for (int j = 0; j < Steps; ++j) {
    const int kk = First + j;
    const uint32_t a = row_base ^ (kk << 4);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int i = 0; i < 2; ++i)
        frag[j][2 * h + i] = convert<TwoSteps>(ptx::ld_shared_u32(a + 8 * h + i * FragmentWords<kBlockK>::row8_bytes),
                                               src.byte, ws[i][kk / 2]);
  }
}

// X's units of the stage into its bf16 copy, W's bytes into the A fragments.
template <class Shape, bool TwoSteps>
__device__ __forceinline__ void convert_block(uint32_t x_stage, uint32_t x_bf16, uint32_t w_stage,
                                              const XUnits<Shape>& units, const FragmentWords<kBlockK>& src,
                                              const mxfp8_dequant::BlockScale (&xs)[Shape::units],
                                              const mxfp8_dequant::BlockScale (&ws)[2][4], uint32_t (&frag)[8][4]) {
  convert_x_units<Shape, TwoSteps>(x_stage, x_bf16, units, xs);
  convert_w_steps<0, 8, TwoSteps>(w_stage, src, ws, frag);
}

// A block's multipliers: one step for every scale byte up to kSingleMultiplyMaxScale (the common
// case: one multiply-add a scale), two for any.
template <bool TwoSteps> __device__ __forceinline__ mxfp8_dequant::BlockScale scale_of(uint32_t word, uint32_t block) {
  const uint32_t e = (word >> (8 * block)) & 0xFF;
  if constexpr (TwoSteps) return mxfp8_dequant::block_scale(e);
  else return {mxfp8_dequant::single_multiplier(e), 0x3F803F80u, false};
}

// Every block's multipliers of a thread's K block: its X units' (one MX block each) and its two W rows' four.
template <class Shape, bool TwoSteps> struct BlockScales {
  mxfp8_dequant::BlockScale x[Shape::units], w[2][4];
  __device__ BlockScales(const BlockScaleWords<Shape>& words, uint32_t x_block) {
#pragma unroll
    for (int i = 0; i < Shape::units; ++i) x[i] = scale_of<TwoSteps>(words.x[i], x_block);
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int b = 0; b < 4; ++b) w[i][b] = scale_of<TwoSteps>(words.w[i], b);
  }
};

template <class Shape, bool TwoSteps>
__device__ __forceinline__ void scale_and_convert(uint32_t x_stage, uint32_t x_bf16, uint32_t w_stage,
                                                  const XUnits<Shape>& units, const FragmentWords<kBlockK>& src,
                                                  const BlockScaleWords<Shape>& words, uint32_t (&frag)[8][4]) {
  const BlockScales<Shape, TwoSteps> scales(words, units.block);
  convert_block<Shape, TwoSteps>(x_stage, x_bf16, w_stage, units, src, scales.x, scales.w, frag);
}

// The largest scale byte of a thread's K block: above kSingleMultiplyMaxScale its warp takes the two-multiply path.
template <class Shape>
__device__ __forceinline__ uint32_t largest_scale(const BlockScaleWords<Shape>& words, const XUnits<Shape>& units) {
  uint32_t largest = 0;
#pragma unroll
  for (int i = 0; i < Shape::units; ++i) largest = max(largest, (words.x[i] >> (8 * units.block)) & 0xFF);
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int b = 0; b < 4; ++b) largest = max(largest, (words.w[i] >> (8 * b)) & 0xFF);
  return largest;
}

// One K block of this consumer (see the header comment).
template <class Shape>
__device__ __forceinline__ void k_block(const SharedRing<Shape>& ring, const RingCursor& cursor,
                                        const XUnits<Shape>& units, const FragmentWords<kBlockK>& src,
                                        const BlockScaleWords<Shape>& words, int consumer, uint32_t x_desc_lo,
                                        uint32_t x_desc_hi, uint32_t (&frag)[8][4], float (&acc)[Shape::accumulators]) {
  const int s = cursor.stage;
  const uint32_t largest = largest_scale(words, units);
  ptx::mbarrier_wait(ring.full(s), cursor.phase);
  const uint32_t x_stage = ptx::smem_addr(ring.x(s)), x_bf16 = ptx::smem_addr(ring.x_bf16(consumer)),
                 w_stage = ptx::smem_addr(ring.w(s));
  if (__any_sync(0xFFFFFFFFu, largest > mxfp8_dequant::kSingleMultiplyMaxScale))
    scale_and_convert<Shape, true>(x_stage, x_bf16, w_stage, units, src, words, frag);
  else
    scale_and_convert<Shape, false>(x_stage, x_bf16, w_stage, units, src, words, frag);
  ptx::named_barrier_sync(3 + consumer, 128); // every warp's X stores of this stage are done
  ptx::wgmma_fence(); // the fragments were written by ordinary instructions
  // K half kk / 4, + 32 bytes per k16 step inside its swizzle row: the descriptor's start address is
  // its low word's 14-bit field in 16-byte units, and the consumer's copy of X lies inside shared
  // memory (< 256 KB), so no step carries out of the field and a 32-bit add of the low word is enough.
#pragma unroll
  for (int kk = 0; kk < 8; ++kk)
    ptx::wgmma_rs<Shape::block_tokens>(
        acc, frag[kk], (uint64_t(x_desc_hi) << 32) | (x_desc_lo + (kk / 4) * (Shape::x_half_bytes >> 4) + 2 * (kk % 4)));
  ptx::wgmma_commit_group();
  ptx::wgmma_wait_group<0>(); // the fragments and the bf16 X are rewritten by this consumer's next block
#pragma unroll
  for (int kk = 0; kk < 8; ++kk)
#pragma unroll
    for (int r = 0; r < 4; ++r) asm volatile("" : "+r"(frag[kk][r])::"memory");
  if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(ring.empty(s));
}

template <class Shape>
__device__ __forceinline__ void consumer_loop(const Params& p, const SharedRing<Shape>& ring, int consumer) {
  constexpr int C = Shape::consumers;
  const int t = threadIdx.x % 128, lane = t % 32;
  const int row0 = 16 * (t / 32) + lane / 4; // tile-local channel of fragment row 0 (and + 8)
  const FragmentWords<kBlockK> src(row0, lane);
  const XUnits<Shape> units(t);
  const uint64_t x_desc = ptx::smem_descriptor_sw128(ring.x_bf16(consumer));
  const bool trace_writer = p.trace != nullptr && t == 0 && consumer == 0;
  TileWalk walk(p.order, p.space);
  // The CTA's K block g, counted over all its tiles, is stage g % stages, phase (g / stages) % 2, and
  // serves consumer g % C: this consumer's first is g = consumer, each next C stages on.
  RingCursor cursor;
  cursor.stage = consumer;
  int linear, blocks_before = 0; // the CTA's K blocks before this tile
  TileIndex tile;
  float acc[Shape::accumulators];
  uint32_t frag[8][4];
  while (walk.next(linear, tile)) {
    if (trace_writer) p.trace[linear].start_ns = ptx::global_timer_ns();
    const TokenRows rows = token_rows(p.token_offsets, tile, Shape::block_tokens);
    const ScaleRows<Shape> scale_rows(p, tile, rows, tile.col * kBlockN + row0, units);
#pragma unroll
    for (int i = 0; i < Shape::accumulators; ++i) acc[i] = 0.0f;
    int kb = ((consumer - blocks_before) % C + C) % C; // this consumer's first block of the tile
    BlockScaleWords<Shape> words;
    if (kb < p.k_blocks) words = scale_rows.load(kb);
    while (kb < p.k_blocks) {
      const BlockScaleWords<Shape> current = words;
      if (kb + C < p.k_blocks) words = scale_rows.load(kb + C); // a block ahead
      k_block<Shape>(ring, cursor, units, src, current, consumer, static_cast<uint32_t>(x_desc),
                     static_cast<uint32_t>(x_desc >> 32), frag, acc);
      cursor.stage += C; // C <= stages: at most one wrap
      if (cursor.stage >= ring.stages) {
        cursor.stage -= ring.stages;
        cursor.phase ^= 1;
      }
      kb += C;
    }
    blocks_before += p.k_blocks;
#pragma unroll
    for (int i = 0; i < Shape::accumulators; ++i) ptx::fence_operand(acc[i]);
    reduce_split_k<Shape::accumulators, C>(ring.reduce_buffer(), acc, consumer);
    if (consumer != 0) continue; // consumer 0 stores the sum
    const float unit_scale[2] = {1.0f, 1.0f};
    store_transposed_tile<Shape::block_tokens>(p.y, p.n, acc, rows, tile.col * kBlockN + row0, unit_scale);
    if (trace_writer) {
      TileTrace& record = p.trace[linear];
      record.linear = linear;
      record.sm = static_cast<int>(ptx::sm_id());
      record.end_ns = ptx::global_timer_ns();
    }
  }
}

template <int BlockTokens>
__global__ void __launch_bounds__(TileShape<BlockTokens>::threads, 1)
    mxfp8_transposed_kernel(const __grid_constant__ TensorMaps maps, const Params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Shape = TileShape<BlockTokens>;
  extern __shared__ uint8_t shared_raw[];
  const SharedRing<Shape> ring(shared_raw, p.stages);
  const int warpgroup = threadIdx.x / 128;
  init_ring(ring, maps, 4); // the four warps of the one consumer using the stage
  if (warpgroup == 0) {
    if constexpr (Shape::shares_registers) ptx::setmaxnreg_dec<40>();
    if (threadIdx.x == 0) producer_loop<Shape>(p, ring, maps);
  } else {
    if constexpr (Shape::shares_registers) ptx::setmaxnreg_inc<232>();
    consumer_loop<Shape>(p, ring, warpgroup - 1);
  }
#endif
}

} // namespace tilesim::kernels::mxfp8_transposed
