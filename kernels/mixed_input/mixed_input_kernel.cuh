// The mixed-input GEMM kernel: Y^T = dequant(W) * X^T per expert, on sm_90a (design log: NOTES.md).
//
// wgmma takes only its A operand from registers, so the converted weights are A: a consumer
// warpgroup computes 64 output channels (wgmma's M), the tile's tokens are wgmma's N (16..256, so
// the decode shapes with 1..64 tokens waste little), and X's tile comes from shared memory as B.
// One CTA = one producer warpgroup (one thread issues TMA loads of the X tile [tokens x 64] and the
// W tile [channels x K-block bytes] into a ring of `stages`, full/empty mbarriers per stage) +
// consumer warpgroups. A consumer reads its W bytes from shared memory (ld.shared, swizzled:
// conflict-free), converts them into the wgmma A fragment in registers (dequant.h) and issues one
// wgmma m64nTk16 per 16 of K. 128-channel tiles (128, 224 or 256 tokens): each of two consumers owns
// 64 of the channels and converts block k + 1 while block k's wgmma run; with the prmt conversion
// it loads W as whole 16-byte units and keeps its ring addresses in registers (prefill_k_loop,
// NOTES.md v20). 64-channel tiles (16..64
// tokens, decode): the consumers (four; two at 64 tokens) split K, each taking every fourth
// (second) ring stage, of one K block (at 64 tokens one, two or four, a template parameter:
// MixedInputProblem::tile_k), and add their accumulators through shared memory at the end: one
// warpgroup's chain of wait, load, convert and wgmma per K block is latency-bound, and chains side
// by side stream more weights (NOTES.md).
//
// 128-channel tiles may store their tile through shared memory instead (a template parameter,
// NOTES.md v16): each consumer writes its 64 channels x tokens transposed (stmatrix .trans) into a
// 128B-swizzled buffer of token rows, one thread stores it with TMA, and the consumers go on to the
// next tile while the store drains; element-wise 2-byte stores cost 8.7 instructions an element.
//
// CTA blockIdx.x computes work items blockIdx.x, blockIdx.x + gridDim.x, ... (persistent: grid ~
// SM count; otherwise one item each), each mapped to a tile by tilesim::tile_at, the walk the
// simulator replays. Tiles that run past an expert's last token load the next expert's tokens
// (or TMA's zeros) and mask them at the store, as the bf16 grouped GEMM does.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/common/ptx_wrappers.cuh"
#include "kernels/common/ring_cursor.cuh"
#include "kernels/common/tile_trace.h"
#include "kernels/common/wgmma_rs.cuh"
#include "kernels/mixed_input/dequant.h"
#include "kernels/mixed_input/mixed_input_gemm.h"
#include "models/launch_order.h"

namespace tilesim::kernels::mixed_input {

struct TensorMaps {
  CUtensorMap x; // bf16 [tokens, k], boxes of tile_tokens x 64, 128-byte swizzle
  CUtensorMap w; // bytes [experts * n, k], boxes of tile_n x block_k, swizzled by the row length
};

struct Params {
  LaunchOrder order;
  TileSpace space;          // row_offsets: device prefix sums of token tiles per expert
  const int* token_offsets; // device, experts + 1 prefix sums of tokens
  const uint16_t* scales;   // bf16 bits, [experts * n] or [experts * n, groups]
  const uint8_t* zeros;     // [experts * n], or nullptr (int8)
  __nv_bfloat16* y;         // [total_tokens, n]
  TileTrace* trace;         // one record per linear tile, or nullptr
  int n;
  int k_blocks;       // K blocks of Shape::block_k
  int groups;         // scales per channel along K (k / 128), 0 for per-channel scales
  int stages;
  bool signed_weights; // int8: bytes are flipped to q + 128 and taken from 128
};

// The TMA-store epilogue's map of Y (bf16 [total_tokens, n], boxes of tile_tokens x 64, 128-byte
// swizzle) and the token count it clips at. The kernel's last parameter, so that the parameter
// offsets of the kernels that store element by element, and with them their code, are as before.
struct StoreMap {
  CUtensorMap y;
  int total_tokens;
};

template <int BlockTokens, int BlockN, int StageBlocks = 1, bool TmaStore = false> struct TileShape {
  static_assert(BlockN == 64 || BlockN == 128, "64 channels per consumer, or consumers splitting K on 64");
  static_assert(!TmaStore || BlockN == 128, "the TMA-store epilogue on 128-channel tiles only");
  static_assert(StageBlocks == 1 || (BlockN == 64 && (StageBlocks == 2 || StageBlocks == 4)),
                "1 K block a stage, or 2 / 4 on 64-channel (split K) tiles");
  static constexpr int block_tokens = BlockTokens;
  static constexpr int block_n = BlockN;
  static constexpr bool split_k = BlockN == 64;
  static constexpr int consumers = mixed_input_consumers(BlockTokens, BlockN);
  // Decode tiles' MMAs are tiny (m64n16..64): one fragment set, each K block's wgmma waited for
  // before the next conversion, leaves registers for four consumers; prefill tiles keep two sets
  // so that a consumer converts block k + 1 while block k's wgmma run, and so do decode stages of
  // several K blocks (64 tokens, two consumers with the registers for it), inside the stage
  // (NOTES.md, v13).
  static constexpr int fragment_sets = split_k && StageBlocks == 1 ? 1 : 2;
  // 64-channel (decode) tiles take 128-deep K blocks: twice the bytes per barrier round trip and
  // per TMA request, which the weight stream needs (NOTES.md, v3); 128-channel tiles keep 64 so
  // that four stages of 256 tokens fit in shared memory. X arrives as block_k / 64 boxes of
  // [tokens x 64] (one 128-byte swizzle row each); W as one box [channels x block_k bytes],
  // swizzled by its row length (64 or 128 bytes).
  static constexpr int block_k = BlockN == 64 ? 128 : 64;
  // K blocks a ring stage carries: one barrier round trip and hand-off for them all. A template
  // parameter: read at run time, it made the one-block stage's K block 5-13% slower (NOTES.md,
  // stage K), and a constant count lets the stage's block loop unroll.
  static constexpr int stage_blocks = StageBlocks;
  static constexpr int k_steps = block_k / 16;      // wgmma k16 steps per K block
  static constexpr int x_boxes = block_k / 64;
  static constexpr int x_box_bytes = BlockTokens * 128;
  static constexpr int threads = 128 * (consumers + 1);
  static constexpr int x_bytes = BlockTokens * block_k * 2;
  static constexpr int w_bytes = block_n * block_k;
  static constexpr int stage_bytes = x_bytes + w_bytes;
  static constexpr int accumulators = BlockTokens / 2; // 64 x BlockTokens fp32 over 128 threads
  static constexpr int release_arrivals = split_k ? 4 : 8; // the warps of the consumer(s) using a stage
  static constexpr bool shares_registers = consumers == 2; // setmaxnreg: the producer's go to them
  static constexpr int reduce_bytes = split_k ? (consumers - 1) * accumulators * 128 * 4 : 0;
  // The TMA-store epilogue: a buffer of BlockTokens rows of 64 channels (128 bytes) per consumer.
  static constexpr bool tma_store = TmaStore;
  static constexpr int staging_bytes = TmaStore ? BlockTokens * 128 : 0;
  static int shared_bytes(int stages) {
    return 1024 + stages * (StageBlocks * stage_bytes + 16) + reduce_bytes + consumers * staging_bytes;
  }
};

// Ring: X stages then W stages, each 1024-byte aligned (the swizzle atoms), then the TMA-store
// epilogue's buffers where it has them (as aligned: every stage and buffer is a multiple of 1024
// bytes), then the barriers. A
// stage holds Shape::stage_blocks K blocks side by side: block j's X at x(s, j), its W at w(s, j).
template <class Shape> struct SharedRing {
  static constexpr int blocks = Shape::stage_blocks;
  uint8_t* base;
  int stages;
  __device__ SharedRing(uint8_t* raw, int stages_)
      : base(reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023))),
        stages(stages_) {}
  __device__ uint8_t* x(int s, int j) const { return base + (s * blocks + j) * Shape::x_bytes; }
  __device__ uint8_t* w(int s, int j) const {
    return base + stages * blocks * Shape::x_bytes + (s * blocks + j) * Shape::w_bytes;
  }
  __device__ uint8_t* staging(int consumer) const {
    return base + stages * blocks * Shape::stage_bytes + consumer * Shape::staging_bytes;
  }
  __device__ uint64_t* full(int s) const { return reinterpret_cast<uint64_t*>(staging(Shape::consumers)) + s; }
  __device__ uint64_t* empty(int s) const { return full(stages) + s; }
  __device__ float* reduce_buffer() const { return reinterpret_cast<float*>(empty(stages)); }
};

// The K blocks of the stage that starts at K block `first`: all of them but in the last stage of a
// K that is not a multiple of the stage's, and the constant 1 where a stage carries one, so that
// those tiles' loops over a stage's blocks compile to v10's straight code.
template <class Shape> __device__ __forceinline__ int stage_blocks_left(const Params& p, int first) {
  if constexpr (Shape::stage_blocks == 1) return 1;
  else return min(Shape::stage_blocks, p.k_blocks - first);
}

// Owns this CTA's walk through the launch order: items blockIdx.x, + gridDim.x, ...
struct TileWalk {
  LaunchOrder order;
  TileSpace space;
  int item;
  int count;
  __device__ explicit TileWalk(const Params& p)
      : order(p.order), space(p.space), item(static_cast<int>(blockIdx.x)), count(tile_count(p.space)) {}
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

__device__ __forceinline__ TokenRows token_rows(const Params& p, const TileIndex& t, int block_tokens) {
  const int first = __ldg(p.token_offsets + t.expert) + t.local_row * block_tokens;
  return {first, min(block_tokens, __ldg(p.token_offsets + t.expert + 1) - first)};
}

template <class Shape> __device__ __forceinline__ void producer_loop(const Params& p, const SharedRing<Shape>& ring,
                                                                     const TensorMaps& maps) {
  TileWalk walk(p);
  RingCursor cursor;
  int linear;
  TileIndex tile;
  while (walk.next(linear, tile)) {
    const int x_row = token_rows(p, tile, Shape::block_tokens).first;
    const int w_row = tile.expert * p.n + tile.col * Shape::block_n; // rows past n: masked at the store
    for (int first = 0; first < p.k_blocks; first += ring.blocks) {
      const int s = cursor.stage, blocks = stage_blocks_left<Shape>(p, first);
      ptx::mbarrier_wait(ring.empty(s), cursor.phase ^ 1);
      ptx::mbarrier_arrive_expect_tx(ring.full(s), blocks * Shape::stage_bytes);
      for (int j = 0; j < blocks; ++j) {
        const int k0 = (first + j) * Shape::block_k;
        for (int b = 0; b < Shape::x_boxes; ++b)
          ptx::tma_load_2d(ring.x(s, j) + b * Shape::x_box_bytes, &maps.x, k0 + 64 * b, x_row, ring.full(s));
        ptx::tma_load_2d(ring.w(s, j), &maps.w, k0, w_row, ring.full(s));
      }
      cursor.advance(ring.stages);
    }
  }
}

// The channel constants a thread needs for its two rows.
struct ChannelQuant {
  float zero[2];       // effective zero (cvt path)
  float magic_zero[2]; // 2^23 + effective zero (prmt path)
  float scale[2];      // per-channel scale applied in the epilogue (1 with group scales)
  int64_t scale_row[2];
};

// Where a thread's W words sit in a stage, as one XOR per k16 step. Thread (warp, lane) holds
// A-fragment rows r = 16 warp + lane / 4 and r + 8 and, in k16 step kk, K columns 16 kk + 8 h +
// 2 (lane % 4) and + 1 (h = 0, 1) (PTX ISA 9.7.15.5.1.1, "Register fragments: matrix A"): two
// bytes of the 32-bit word at byte 16 kk + 8 h + 4 ((lane % 4) / 2) of row r. TMA's swizzle
// stores 16-byte unit u of row r at u ^ phase, phase = (r / 2) % 4 for 64-byte rows and r % 8 for
// 128-byte rows (a warp's 16 distinct words then fall in 16 banks; rows r and r + 8 share the
// phase). So the word (kk, h) of row r is at (stage + base) ^ (kk << 4), + 8 h, + 8 BlockK for row
// r + 8, with base = r BlockK + (phase << 4) + 4 ((lane % 4) / 2): the stage is 1024-aligned and
// r BlockK is a multiple of 64, so the unit bits (4 and 5, and 6 for 128-byte rows) hold the phase
// alone and the XOR sets them to kk ^ phase. One LOP3 per k16 step, the rest ld.shared immediates
// (the per-word offsets they replace cost the K block ~50 integer instructions, NOTES.md v10).
template <int BlockK> struct WordAddress {
  static constexpr uint32_t row8_bytes = 8 * BlockK;
  uint32_t base;
  uint32_t byte; // 0 or 2: the pair's first byte inside the word
  __device__ WordAddress(int row, int lane)
      : base(row * BlockK + ((BlockK == 64 ? (row >> 1) & 3 : row & 7) << 4) + (((lane & 3) >> 1) << 2)),
        byte(2 * (lane & 1)) {}
};

// A stage's wgmma descriptor for k16 step kk, from the descriptor of its first box: the start
// address is the low word's 14-bit field in 16-byte units, and shared memory (< 256 KB) keeps
// every step inside a stage from carrying out of it, so a 32-bit add of the low word is the
// 64-bit add, and the high word stays where it was computed (NOTES.md v10).
template <class Shape> __device__ __forceinline__ uint64_t x_descriptor(uint32_t lo, uint32_t hi, int kk) {
  return (uint64_t(hi) << 32) | (lo + (kk / 4) * (Shape::x_box_bytes >> 4) + 2 * (kk % 4));
}

// One K block (block j of the cursor's stage, block kb of K): its W bytes into A fragments
// (converted, group-scaled), then one wgmma per k16 step over its X. The stage's first block waits
// for the stage to be full.
template <class Shape, dequant::Conversion Path>
__device__ __forceinline__ void k_block(const Params& p, const SharedRing<Shape>& ring, const RingCursor& cursor,
                                        const WordAddress<Shape::block_k>& src, const ChannelQuant& cq, int j, int kb,
                                        uint32_t (&frag)[Shape::k_steps][4], float (&acc)[Shape::accumulators]) {
  constexpr int K = Shape::k_steps;
  constexpr uint32_t row8 = WordAddress<Shape::block_k>::row8_bytes;
  uint32_t group_scale[2] = {0, 0};
  if (p.groups) // issued before the wait so that the load overlaps it; a group is 128 of K
    for (int i = 0; i < 2; ++i) group_scale[i] = __ldg(p.scales + cq.scale_row[i] + kb * Shape::block_k / 128);
  if (j == 0) ptx::mbarrier_wait(ring.full(cursor.stage), cursor.phase);
  const uint32_t row_base = ptx::smem_addr(ring.w(cursor.stage, j)) + src.base;
  const uint32_t flip = dequant::flip_mask(p.signed_weights);
  uint32_t word[2][K][2];
#pragma unroll
  for (int kk = 0; kk < K; ++kk) {
    const uint32_t a = row_base ^ (kk << 4);
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int i = 0; i < 2; ++i) word[i][kk][h] = ptx::ld_shared_u32(a + 8 * h + i * row8) ^ flip;
  }
#pragma unroll
  for (int kk = 0; kk < K; ++kk)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int i = 0; i < 2; ++i)
        frag[kk][2 * h + i] = dequant::convert_pair<Path>(word[i][kk][h], src.byte, cq.zero[i], cq.magic_zero[i]);
  if (p.groups) {
#pragma unroll
    for (int kk = 0; kk < K; ++kk)
#pragma unroll
      for (int r = 0; r < 4; ++r)
        frag[kk][r] = dequant::mul_bf16x2(frag[kk][r], group_scale[r & 1] * 0x10001u);
  }
  const uint64_t desc = ptx::smem_descriptor_sw128(ring.x(cursor.stage, j));
  const uint32_t desc_lo = static_cast<uint32_t>(desc), desc_hi = static_cast<uint32_t>(desc >> 32);
  ptx::wgmma_fence(); // the fragments were written by ordinary instructions
#pragma unroll
  for (int kk = 0; kk < K; ++kk) // box kk / 4 of the stage's X, + 32 bytes per k16 step inside its swizzle row
    ptx::wgmma_rs<Shape::block_tokens>(acc, frag[kk], x_descriptor<Shape>(desc_lo, desc_hi, kk));
  ptx::wgmma_commit_group();
}

// A consumer's ring as 32-bit shared addresses, for the K loops from 16-byte units: the ring's base
// and the thread's first W unit in stage 0 (row r, unit `phase`) computed once and held, every
// stage's barrier, W and X descriptor a multiply-add from them, where k_block rebuilds each from
// generic pointers every K block. Both (and the lane's pair selector) go through an empty asm that
// the compiler cannot see through: left to itself, ptxas rebuilt them from the special registers
// every block (v20's SASS). Block j of stage s is SharedRing's x(s, j), w(s, j).
template <class Shape> struct UnitRing {
  static constexpr int blocks = Shape::stage_blocks;
  static constexpr uint32_t x_block = Shape::x_bytes, w_block = Shape::w_bytes;
  uint32_t base, w0;
  int stages;
  __device__ UnitRing(const SharedRing<Shape>& ring, const WordAddress<Shape::block_k>& src)
      : base(held(ptx::smem_addr(ring.base))), w0(held(base + ring.stages * blocks * x_block + (src.base & ~15u))),
        stages(ring.stages) {}
  __device__ uint32_t full(int s) const { // SharedRing::full: past the stages and the TMA-store buffers
    return base + stages * blocks * (x_block + w_block) + Shape::consumers * Shape::staging_bytes + 8 * s;
  }
  __device__ uint32_t empty(int s) const { return full(stages + s); }
  __device__ uint32_t w(int s, int j) const { return w0 + (s * blocks + j) * w_block; }
  // The low word of block j's X descriptor (ptx::smem_descriptor_sw128: the 14-bit start address in
  // 16-byte units, the leading byte offset 1 above it); the high word is a constant.
  __device__ uint32_t x_descriptor_lo(int s, int j) const {
    return (((base + (s * blocks + j) * x_block) & 0x3FFFF) >> 4) | (1u << 16);
  }
  static constexpr uint32_t x_descriptor_hi = static_cast<uint32_t>(((1024 >> 4) | (uint64_t(1) << 30)));
  // Up to 224 tokens: beside 256 tokens' 128 accumulators, holding them spilled.
  __device__ static uint32_t held(uint32_t v) {
    if constexpr (Shape::block_tokens <= 224) asm volatile("" : "+r"(v));
    return v;
  }
};

// One K block's W from whole 16-byte units: row i's unit kk (K 16 kk .. 16 kk + 15) holds every
// byte the thread's four fragment registers of that row and step need, two of each 8-byte half:
// bytes 2q, 2q + 1 and 8 + 2q, 9 + 2q (q = lane % 4; PTX ISA 9.7.15.5.1.1, "Register fragments:
// matrix A"). The four lanes of a row load the same unit and the warp's 8 rows sit in 8 distinct
// 16-byte bank groups (64-byte rows, 64-byte swizzle: unit kk ^ (r / 2) % 4 of row r; 128-byte
// rows, 128-byte swizzle: kk ^ r % 8), so one ld.shared.v4 a row and step where k_block issues two
// ld.shared.b32; the lane picks its pair out of each half with one prmt whose selector is its own
// (dequant::pair_selector). All loads issue before the first conversion: 32 registers of units a
// prefill block, which fit beside 256 tokens' 128 accumulators without a spill; 64 a decode block
// (K 128), beside 64 tokens' 32 accumulators and two fragment sets.
template <class Shape, bool Signed, bool GroupScales>
__device__ __forceinline__ void units_to_fragments(uint32_t w, uint32_t pick, const ChannelQuant& cq,
                                                           const uint32_t (&group_scale)[2],
                                                           uint32_t (&frag)[Shape::k_steps][4]) {
  constexpr int K = Shape::k_steps;
  constexpr uint32_t row8 = WordAddress<Shape::block_k>::row8_bytes;
  uint4 unit[K][2];
#pragma unroll
  for (int kk = 0; kk < K; ++kk)
#pragma unroll
    for (int i = 0; i < 2; ++i) unit[kk][i] = ptx::ld_shared_v4((w ^ (kk << 4)) + i * row8);
#pragma unroll
  for (int kk = 0; kk < K; ++kk) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const uint4 u = unit[kk][i];
      if constexpr (Signed) {
        frag[kk][i] = dequant::convert_pair_int8_bf16x2(dequant::byte_perm(u.x, u.y, pick));
        frag[kk][2 + i] = dequant::convert_pair_int8_bf16x2(dequant::byte_perm(u.z, u.w, pick));
      } else {
        frag[kk][i] = dequant::convert_pair_prmt(dequant::byte_perm(u.x, u.y, pick), 0, cq.magic_zero[i]);
        frag[kk][2 + i] = dequant::convert_pair_prmt(dequant::byte_perm(u.z, u.w, pick), 0, cq.magic_zero[i]);
      }
      if constexpr (GroupScales) {
        frag[kk][i] = dequant::mul_bf16x2(frag[kk][i], group_scale[i] * 0x10001u);
        frag[kk][2 + i] = dequant::mul_bf16x2(frag[kk][2 + i], group_scale[i] * 0x10001u);
      }
    }
  }
}

// One K block from 16-byte units (block j of the cursor's stage, block kb of K); the stage's first
// block waits for the stage to be full.
template <class Shape, bool GroupScales>
__device__ __forceinline__ void unit_k_block(const Params& p, const UnitRing<Shape>& at, const RingCursor& cursor,
                                             uint32_t pick, const ChannelQuant& cq, int j, int kb,
                                             uint32_t (&frag)[Shape::k_steps][4], float (&acc)[Shape::accumulators]) {
  uint32_t group_scale[2] = {0, 0};
  if constexpr (GroupScales) // issued before the wait so that the load overlaps it; a group is 128 of K
    for (int i = 0; i < 2; ++i) group_scale[i] = __ldg(p.scales + cq.scale_row[i] + kb * Shape::block_k / 128);
  if (j == 0) ptx::mbarrier_wait(at.full(cursor.stage), cursor.phase);
  const uint32_t w = at.w(cursor.stage, j);
  if (p.signed_weights)
    units_to_fragments<Shape, true, GroupScales>(w, pick, cq, group_scale, frag);
  else
    units_to_fragments<Shape, false, GroupScales>(w, pick, cq, group_scale, frag);
  const uint32_t x_lo = at.x_descriptor_lo(cursor.stage, j), x_hi = UnitRing<Shape>::x_descriptor_hi;
  ptx::wgmma_fence(); // the fragments were written by ordinary instructions
#pragma unroll
  for (int kk = 0; kk < Shape::k_steps; ++kk)
    ptx::wgmma_rs<Shape::block_tokens>(acc, frag[kk], x_descriptor<Shape>(x_lo, x_hi, kk));
  ptx::wgmma_commit_group();
}

// A prefill tile's K loop (k_block's, one K block a stage, alternating fragment sets), compiled
// once with group scales and once without, so that per-channel problems issue no group-scale load.
template <class Shape, bool GroupScales>
__device__ __forceinline__ void prefill_k_loop(const Params& p, const UnitRing<Shape>& at, RingCursor& cursor,
                                               uint32_t pick, const ChannelQuant& cq,
                                               uint32_t (&frag)[2][Shape::k_steps][4],
                                               float (&acc)[Shape::accumulators]) {
  const int lane = threadIdx.x % 32;
  int previous_stage = -1;
  for (int kb = 0; kb < p.k_blocks; ++kb) {
    if (kb % 2 == 0)
      unit_k_block<Shape, GroupScales>(p, at, cursor, pick, cq, 0, kb, frag[0], acc);
    else
      unit_k_block<Shape, GroupScales>(p, at, cursor, pick, cq, 0, kb, frag[1], acc);
    ptx::wgmma_wait_group<1>(); // the previous block's wgmma are done: its stage goes back
    if (previous_stage >= 0 && lane == 0) ptx::mbarrier_arrive(at.empty(previous_stage));
    previous_stage = cursor.stage;
    cursor.advance(p.stages);
  }
  ptx::wgmma_wait_group<0>();
  if (previous_stage >= 0 && lane == 0) ptx::mbarrier_arrive(at.empty(previous_stage));
}

// A split-K (decode) tile's K loop from 16-byte units (NOTES.md v21): the consumer takes every
// consumers-th stage, converts each of its blocks with unit_k_block (block j + 1 into the other
// fragment set while block j's wgmma run, where there are two), and gives the stage back once its
// wgmma are done. Compiled with and without group scales, as prefill_k_loop.
template <class Shape, bool GroupScales>
__device__ __forceinline__ void split_k_unit_loop(const Params& p, const UnitRing<Shape>& at, RingCursor& cursor,
                                                  uint32_t pick, const ChannelQuant& cq, int consumer,
                                                  uint32_t (&frag)[Shape::fragment_sets][Shape::k_steps][4],
                                                  float (&acc)[Shape::accumulators]) {
  const int lane = threadIdx.x % 32;
  for (int first = 0, ks = 0; first < p.k_blocks; first += Shape::stage_blocks, ++ks) {
    if (ks % Shape::consumers == consumer) {
      const int blocks = stage_blocks_left<Shape>(p, first);
#pragma unroll // a constant count: each block's shared-memory offsets are immediates
      for (int j = 0; j < Shape::stage_blocks; ++j) {
        if (j >= blocks) break; // the last stage of a K tail
        unit_k_block<Shape, GroupScales>(p, at, cursor, pick, cq, j, first + j, frag[j % Shape::fragment_sets], acc);
        if constexpr (Shape::fragment_sets == 1) ptx::wgmma_wait_group<0>();
        else ptx::wgmma_wait_group<1>();
      }
      if constexpr (Shape::fragment_sets > 1) ptx::wgmma_wait_group<0>(); // the stage is read before it goes back
      if (lane == 0) ptx::mbarrier_arrive(at.empty(cursor.stage));
    }
    cursor.advance(p.stages);
  }
}

// The tiles that run prefill_k_loop: 128 channels with the prmt conversion (NOTES.md v20). The
// cvt path, kept as the naive baseline, and the other decode tiles run k_block.
template <class Shape, dequant::Conversion Path>
constexpr bool prefill_units = !Shape::split_k && Path == dequant::Conversion::prmt;

// The tiles that run split_k_unit_loop (NOTES.md v21): 64 tokens with the prmt conversion, one or
// two K blocks a stage. Their 64 registers of units fit beside two consumers' accumulators and
// fragments; at four blocks a stage ptxas serialises the wgmma for want of registers, and the 16-
// and 32-token tiles' four consumers have 96 registers.
template <class Shape, dequant::Conversion Path>
constexpr bool decode_units =
    Shape::split_k && Shape::block_tokens == 64 && Shape::stage_blocks <= 2 && Path == dequant::Conversion::prmt;

// Accumulator layout of wgmma m64nN (PTX ISA 9.7.15.5.1.1, "Matrix D"): thread t holds rows
// (channels) 16 (t / 32) + (t % 32) / 4 and + 8, columns (tokens) 8 j + 2 (t % 4) and + 1.
template <class Shape>
__device__ __forceinline__ void store_tile(const Params& p, const float (&acc)[Shape::accumulators], TokenRows rows,
                                           int channel0, const ChannelQuant& cq) {
  const int t = threadIdx.x % 128;
  const int channel[2] = {channel0, channel0 + 8};
#pragma unroll
  for (int j = 0; j < Shape::block_tokens / 8; ++j)
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int token = 8 * j + 2 * (t % 4) + (c & 1);
      const int i = c >> 1;
      if (token < rows.valid && channel[i] < p.n)
        p.y[static_cast<int64_t>(rows.first + token) * p.n + channel[i]] = __float2bfloat16_rn(acc[4 * j + c] * cq.scale[i]);
    }
}

__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

// True where a TMA store of the tile's token rows writes no other expert's: every row is this
// expert's, or the rows past it lie past the last token, where TMA clips them.
__device__ __forceinline__ bool tile_stores_whole(TokenRows rows, int block_tokens, int total_tokens) {
  return rows.valid == block_tokens || rows.first + rows.valid == total_tokens;
}

// The TMA-store epilogue of a consumer's 64 channels x BlockTokens tokens. Accumulator pair (4j,
// 4j + 1) is channel r, tokens 8j + 2q and + 1 (r = 16 warp + lane / 4, q = lane % 4), and (4j + 2,
// 4j + 3) channel r + 8: per j, two 8 x 8 fragment matrices (channels 16 warp.. and + 8, tokens 8j..)
// of one stmatrix .x4 .trans, which writes each token's 8 channels as one 16-byte row. The buffer
// holds token rows of 128 bytes, 16-byte unit u of row t at u ^ (t % 8) (TMA's 128-byte swizzle,
// which also puts the 8 rows of a matrix in 8 distinct units: no bank conflicts). Lane 8m + i
// addresses row 8 (2jj + m / 2) + i, unit 2 warp + m % 2 (swizzled by i = row % 8). One thread
// waits for the previous tile's store to have read the buffer before anyone writes it, and issues
// this one's; columns (channels) past n are clipped by TMA, and a half wholly past n is skipped.
template <class Shape>
__device__ __forceinline__ void store_tile_tma(const Params& p, const SharedRing<Shape>& ring, const StoreMap& store,
                                               const float (&acc)[Shape::accumulators], TokenRows rows,
                                               int tile_col, int consumer, const ChannelQuant& cq) {
  const int t = threadIdx.x % 128, lane = t % 32, warp = t / 32;
  const int m = lane / 8, i = lane % 8;
  uint8_t* buffer = ring.staging(consumer);
  const uint32_t lane_address = ptx::smem_addr(buffer) + (8 * (m >> 1) + i) * 128 + (((2 * warp + (m & 1)) ^ i) << 4);
  if (t == 0) ptx::bulk_wait_group_read<0>();
  ptx::named_barrier_sync(1 + consumer, 128);
#pragma unroll
  for (int jj = 0; jj < Shape::block_tokens / 16; ++jj) {
    const int j0 = 2 * jj, j1 = 2 * jj + 1;
    ptx::stmatrix_x4_trans(lane_address + jj * 16 * 128,
                           pack_bf16x2(acc[4 * j0] * cq.scale[0], acc[4 * j0 + 1] * cq.scale[0]),
                           pack_bf16x2(acc[4 * j0 + 2] * cq.scale[1], acc[4 * j0 + 3] * cq.scale[1]),
                           pack_bf16x2(acc[4 * j1] * cq.scale[0], acc[4 * j1 + 1] * cq.scale[0]),
                           pack_bf16x2(acc[4 * j1 + 2] * cq.scale[1], acc[4 * j1 + 3] * cq.scale[1]));
  }
  ptx::fence_proxy_async_shared();
  ptx::named_barrier_sync(1 + consumer, 128);
  const int channel = tile_col * Shape::block_n + consumer * 64;
  if (t == 0 && channel < p.n) {
    ptx::tma_store_2d(&store.y, buffer, channel, rows.first);
    ptx::bulk_commit_group();
  }
}

// Split K: consumers 1.. hand their accumulators to consumer 0 through shared memory (slot
// [consumer - 1][i][thread]: conflict-free), which adds them before the store. The second barrier
// keeps the others from overwriting their slots with the next tile's sums before consumer 0 has
// read these.
template <class Shape>
__device__ __forceinline__ void reduce_split_k(const SharedRing<Shape>& ring, float (&acc)[Shape::accumulators],
                                               int consumer) {
  constexpr int A = Shape::accumulators, threads = 128 * Shape::consumers;
  const int t = threadIdx.x % 128;
  float* buffer = ring.reduce_buffer();
  if (consumer > 0)
#pragma unroll
    for (int i = 0; i < A; ++i) buffer[((consumer - 1) * A + i) * 128 + t] = acc[i];
  ptx::named_barrier_sync(1, threads);
  if (consumer == 0)
#pragma unroll
    for (int c = 1; c < Shape::consumers; ++c)
#pragma unroll
      for (int i = 0; i < A; ++i) acc[i] += buffer[((c - 1) * A + i) * 128 + t];
  ptx::named_barrier_sync(2, threads);
}

template <class Shape, dequant::Conversion Path>
__device__ __forceinline__ void consumer_loop(const Params& p, const SharedRing<Shape>& ring, const StoreMap& store,
                                              int consumer) {
  const int t = threadIdx.x % 128, lane = t % 32;
  // Tile-local channel of fragment row 0: consumers split the channels, or (split K) share them.
  const int row0 = (Shape::split_k ? 0 : consumer * 64) + 16 * (t / 32) + lane / 4;
  const WordAddress<Shape::block_k> src(row0, lane);
  const bool trace_writer = p.trace != nullptr && t == 0 && consumer == 0;
  TileWalk walk(p);
  RingCursor cursor;
  int linear;
  TileIndex tile;
  float acc[Shape::accumulators];
  uint32_t frag[Shape::fragment_sets][Shape::k_steps][4];
  while (walk.next(linear, tile)) {
    if (trace_writer) p.trace[linear].start_ns = ptx::global_timer_ns();
    const int channel0 = tile.col * Shape::block_n + row0;
    ChannelQuant cq;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int64_t row = static_cast<int64_t>(tile.expert) * p.n + min(channel0 + 8 * i, p.n - 1);
      const uint32_t zero_point = p.zeros ? __ldg(p.zeros + row) : 0u;
      cq.zero[i] = dequant::effective_zero(p.signed_weights, zero_point);
      cq.magic_zero[i] = dequant::kMagicValue + cq.zero[i];
      cq.scale_row[i] = row * p.groups;
      cq.scale[i] = p.groups ? 1.0f : dequant::bf16_to_float(__ldg(p.scales + row));
    }
#pragma unroll
    for (int i = 0; i < Shape::accumulators; ++i) acc[i] = 0.0f;
    if constexpr (prefill_units<Shape, Path>) {
      const UnitRing<Shape> at(ring, src);
      const uint32_t pick = UnitRing<Shape>::held(dequant::pair_selector(lane % 4, p.signed_weights));
      if (p.groups)
        prefill_k_loop<Shape, true>(p, at, cursor, pick, cq, frag, acc);
      else
        prefill_k_loop<Shape, false>(p, at, cursor, pick, cq, frag, acc);
    } else if constexpr (decode_units<Shape, Path>) {
      const UnitRing<Shape> at(ring, src);
      const uint32_t pick = UnitRing<Shape>::held(dequant::pair_selector(lane % 4, p.signed_weights));
      if (p.groups)
        split_k_unit_loop<Shape, true>(p, at, cursor, pick, cq, consumer, frag, acc);
      else
        split_k_unit_loop<Shape, false>(p, at, cursor, pick, cq, consumer, frag, acc);
    } else {
      int previous_stage = -1, mine = 0;
      for (int first = 0, ks = 0; first < p.k_blocks; first += ring.blocks, ++ks) {
        if (Shape::split_k && ks % Shape::consumers != consumer) { // another consumer's stage
          cursor.advance(ring.stages);
          continue;
        }
        if constexpr (Shape::split_k) {
          const int blocks = stage_blocks_left<Shape>(p, first);
#pragma unroll // a constant count: each block's shared-memory offsets are immediates
          for (int j = 0; j < Shape::stage_blocks; ++j) {
            if (j >= blocks) break; // the last stage of a K tail
            k_block<Shape, Path>(p, ring, cursor, src, cq, j, first + j, frag[j % Shape::fragment_sets], acc);
            // One set: it is rewritten next block. Two: block j + 1 converts into the other set while
            // block j's wgmma run; the wait after block j + 1's issue frees block j's set.
            if constexpr (Shape::fragment_sets == 1) ptx::wgmma_wait_group<0>();
            else ptx::wgmma_wait_group<1>();
          }
          if constexpr (Shape::fragment_sets > 1) ptx::wgmma_wait_group<0>(); // the stage is read before it goes back
          if (lane == 0) ptx::mbarrier_arrive(ring.empty(cursor.stage));
          cursor.advance(ring.stages);
          continue;
        }
        // Alternating fragment sets (unrolled by hand) so that each is a fixed set of registers; a
        // stage is one K block here (128-channel tiles).
        if (mine++ % 2 == 0)
          k_block<Shape, Path>(p, ring, cursor, src, cq, 0, first, frag[0], acc);
        else
          k_block<Shape, Path>(p, ring, cursor, src, cq, 0, first, frag[Shape::fragment_sets - 1], acc);
        // This block's wgmma stay in flight; the previous block's are done: its stage goes back.
        ptx::wgmma_wait_group<1>();
        if (previous_stage >= 0 && lane == 0) ptx::mbarrier_arrive(ring.empty(previous_stage));
        previous_stage = cursor.stage;
        cursor.advance(ring.stages);
      }
      ptx::wgmma_wait_group<0>();
      if (previous_stage >= 0 && lane == 0) ptx::mbarrier_arrive(ring.empty(previous_stage));
    }
#pragma unroll
    for (int i = 0; i < Shape::accumulators; ++i) ptx::fence_operand(acc[i]);
    if constexpr (Shape::split_k) {
      reduce_split_k<Shape>(ring, acc, consumer);
      if (consumer != 0) continue; // consumer 0 stores the sum
    }
    const TokenRows rows = token_rows(p, tile, Shape::block_tokens);
    if constexpr (Shape::tma_store) {
      if (tile_stores_whole(rows, Shape::block_tokens, store.total_tokens))
        store_tile_tma<Shape>(p, ring, store, acc, rows, tile.col, consumer, cq);
      else // a ragged expert's last tile: its rows past the expert are the next expert's
        store_tile<Shape>(p, acc, rows, channel0, cq);
    } else {
      store_tile<Shape>(p, acc, rows, channel0, cq);
    }
    if (trace_writer) {
      TileTrace& record = p.trace[linear];
      record.linear = linear;
      record.sm = static_cast<int>(ptx::sm_id());
      record.end_ns = ptx::global_timer_ns();
    }
  }
}

template <int BlockTokens, int BlockN, int StageBlocks, dequant::Conversion Path, bool TmaStore>
__global__ void __launch_bounds__(TileShape<BlockTokens, BlockN, StageBlocks, TmaStore>::threads, 1)
    mixed_input_gemm_kernel(const __grid_constant__ TensorMaps maps, const Params p,
                            const __grid_constant__ StoreMap store) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Shape = TileShape<BlockTokens, BlockN, StageBlocks, TmaStore>;
  extern __shared__ uint8_t shared_raw[];
  const SharedRing<Shape> ring(shared_raw, p.stages);
  const int warpgroup = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    ptx::prefetch_tensor_map(&maps.x);
    ptx::prefetch_tensor_map(&maps.w);
    for (int s = 0; s < p.stages; ++s) {
      ptx::mbarrier_init(ring.full(s), 1);
      ptx::mbarrier_init(ring.empty(s), Shape::release_arrivals);
    }
    ptx::fence_barrier_init();
  }
  __syncthreads();
  if (warpgroup == 0) {
    // One thread issues the loads. With two consumers the registers go to them (up to 128
    // accumulators each); four consumers fit in the 96 that 640 threads get at launch.
    if constexpr (Shape::shares_registers) ptx::setmaxnreg_dec<40>();
    if (threadIdx.x == 0) producer_loop<Shape>(p, ring, maps);
  } else {
    if constexpr (Shape::shares_registers) ptx::setmaxnreg_inc<232>();
    consumer_loop<Shape, Path>(p, ring, store, warpgroup - 1);
    // The buffer stays until the last store has read it, and the store is done when the kernel is.
    if constexpr (Shape::tma_store)
      if (threadIdx.x % 128 == 0) ptx::bulk_wait_group<0>();
  }
#endif
}

} // namespace tilesim::kernels::mixed_input
