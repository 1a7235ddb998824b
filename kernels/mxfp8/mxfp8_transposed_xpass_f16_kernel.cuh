// Scheme xpass_f16 (kernels/mxfp8/NOTES.md, "f16 with a reference exponent a row"): xpass's 128 x 128
// transposed tile (mxfp8_transposed_xpass_kernel.cuh: the same ring, producer, halves and release) with
// f16 wgmma instead of bf16. The pass (mxfp8_f16_pass_kernel.cuh) wrote X as f16 relative to each
// token's reference exponent, in permuted_k's order, and every row's reference; the consumers convert
// W into register A with one cvt.rn.f16x2.e4m3x2 and one mul.rn.f16x2 a pair (mxfp8_f16_dequant.h)
// where xpass spends seven instructions, and the epilogue multiplies each output by 2^(ref_x + ref_w -
// 268), the two rows' references. A lane reads one 32-bit word of each k16 step's 16-byte group of its
// two rows (16 word loads a stage, all issued at the stage's start): the group's word q = lane % 4 holds
// exactly the lane's two pairs in permuted_k's order. The tile's tokens (wgmma's N) are a template
// parameter: 128 as xpass's, or 16, 32 or 64 where an expert has that few tokens (decode), so that the
// MMA does no more than the tokens need, as the transposed kernel's narrow tiles (XPassF16Shape).
#pragma once

#include <cmath>

#include "kernels/mxfp8/mxfp8_f16_dequant.h"
#include "kernels/mxfp8/mxfp8_transposed_xpass_kernel.cuh"

namespace tilesim::kernels::mxfp8_transposed {

// The tile: 128 channels (two consumers of 64, as xpass's) x BlockTokens tokens; X's stage is two TMA boxes of
// [BlockTokens x 64] f16 (128 bytes a token: the 128-byte swizzle's rows), so a narrow tile's ring holds more
// stages of W.
template <int BlockTokens> struct XPassF16Shape {
  static_assert(BlockTokens == 16 || BlockTokens == 32 || BlockTokens == 64 || BlockTokens == 128,
                "wgmma N of 16, 32, 64 or 128 tokens");
  static constexpr int block_tokens = BlockTokens;
  static constexpr int channels = XPassShape::channels;
  static constexpr int consumers = XPassShape::consumers;
  static constexpr int threads = XPassShape::threads;
  static constexpr int w_bytes = XPassShape::w_bytes;
  static constexpr int x_half_bytes = BlockTokens * 64 * 2;
  static constexpr int x_bytes = 2 * x_half_bytes;
  static constexpr int stage_bytes = w_bytes + x_bytes;
  static constexpr int accumulators = BlockTokens / 2; // m64nBlockTokens: fp32 sums a thread
  static constexpr int consumer_w_bytes = XPassShape::consumer_w_bytes;
  static constexpr int shared_bytes(int stages) { return 1024 + stages * (stage_bytes + 16); }
};
static_assert(XPassF16Shape<128>::stage_bytes == XPassShape::stage_bytes, "the 128-token tile is xpass's");

// A thread's two W rows (channels channel0 and + 8): their references and the narrow multipliers' offsets.
struct RowRefs {
  uint32_t ref[2];
  uint32_t offset[2];
  bool wide; // some row of the warp is wide: its blocks take the general multiplier
  __device__ RowRefs(const Params& p, const TileIndex& tile, int channel0) {
    bool mine = false;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int channel = min(channel0 + 8 * i, p.n - 1);
      const uint32_t info = __ldg(p.w_info + static_cast<int64_t>(tile.expert) * p.n + channel);
      ref[i] = info & 0xFF;
      offset[i] = mxfp8_f16::narrow_offset(ref[i]);
      mine = mine || (info & mxfp8_f16::kWideFlag) != 0;
    }
    wide = __any_sync(0xFFFFFFFFu, mine);
  }
};

// The lane's word of each k16 step's group, of its two rows: [kk][row].
using WWords = uint32_t[8][2];

__device__ __forceinline__ void load_w_words(uint32_t w_rows, WWords& words) {
#pragma unroll
  for (int kk = 0; kk < 8; ++kk)
#pragma unroll
    for (int i = 0; i < 2; ++i)
      words[kk][i] = ptx::ld_shared_u32((w_rows ^ (kk << 4)) + i * FragmentWords<kBlockK>::row8_bytes);
}

// On a narrow warp, block `block`'s multiplier of a row in a prmt (the scale byte in both halves) and a
// multiply-add, one multiply a pair; on a wide one the general pair of multipliers (subnormal, zero or NaN).
template <int First, bool Wide>
__device__ __forceinline__ void convert_w_words(const WWords& w, const uint32_t (&scale_words)[2], const RowRefs& refs,
                                                uint32_t (&frag)[4][4]) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int kk = First + j, block = kk / 2;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      if constexpr (Wide) {
        const uint32_t s = (scale_words[i] >> (8 * block)) & 0xFF;
        mxfp8_f16::convert_word(w[kk][i], mxfp8_f16::wide_multipliers(s, refs.ref[i]), frag[j][i], frag[j][2 + i]);
      } else {
        const uint32_t m =
            mxfp8_f16::narrow_multiplier(__byte_perm(scale_words[i], 0, block | 0x4040 | block << 8), refs.offset[i]);
        mxfp8_f16::convert_word(w[kk][i], m, frag[j][i], frag[j][2 + i]);
      }
    }
  }
}

template <int First>
__device__ __forceinline__ void convert_w_half_f16(const WWords& w, const uint32_t (&scale_words)[2],
                                                   const RowRefs& refs, uint32_t (&frag)[4][4]) {
  if (refs.wide) convert_w_words<First, true>(w, scale_words, refs, frag);
  else convert_w_words<First, false>(w, scale_words, refs, frag);
}

// issue_half with f16 operands, N = the tile's tokens.
template <class Shape, int First>
__device__ __forceinline__ void issue_half_f16(float (&acc)[Shape::accumulators], uint32_t (&frag)[4][4],
                                               uint32_t x_desc_lo, uint32_t x_desc_hi) {
  ptx::wgmma_fence(); // the fragments were written by ordinary instructions
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int kk = First + j;
    ptx::wgmma_rs_f16<Shape::block_tokens>(
        acc, frag[j], (uint64_t(x_desc_hi) << 32) | (x_desc_lo + (kk / 4) * (Shape::x_half_bytes >> 4) + 2 * (kk % 4)));
  }
  ptx::wgmma_commit_group();
}

// One stage: xpass_stage's order with the f16 conversion; every wgmma instruction outside the warp's branch.
template <class Shape>
__device__ __forceinline__ void xpass_f16_stage(uint32_t w_rows, const XPassRingOf<Shape>& ring, int previous,
                                                const uint32_t (&scale_words)[2], const RowRefs& refs,
                                                uint32_t x_desc_lo, uint32_t x_desc_hi, uint32_t (&first)[4][4],
                                                uint32_t (&second)[4][4], float (&acc)[Shape::accumulators]) {
  WWords w;
  load_w_words(w_rows, w);
  ptx::wgmma_wait_group<1>();
  keep_fragments(first);
  convert_w_half_f16<0>(w, scale_words, refs, first);
  issue_half_f16<Shape, 0>(acc, first, x_desc_lo, x_desc_hi);
  ptx::wgmma_wait_group<1>();
  keep_fragments(second);
  if (previous >= 0) release_stage(ring, previous);
  convert_w_half_f16<4>(w, scale_words, refs, second);
  issue_half_f16<Shape, 4>(acc, second, x_desc_lo, x_desc_hi);
}

// The finished tile: each output times 2^(ref_x + ref_w - 268) (mxfp8_f16::kEpilogueOffset per operand),
// one multiply by a normal power of two where every exponent of the thread's outputs is one (the
// common case), ldexpf otherwise; then stored transposed as store_wide_tile does.
template <class Shape>
__device__ __forceinline__ void store_f16_tile(const Params& p, float (&acc)[Shape::accumulators], TokenRows rows,
                                               int channel0, const RowRefs& refs, int linear, bool trace_writer) {
  constexpr int kTokens = Shape::block_tokens;
#pragma unroll
  for (int i = 0; i < Shape::accumulators; ++i) ptx::fence_operand(acc[i]);
  const int t = threadIdx.x % 128;
  int ref_x[kTokens / 8][2];
  int lowest = 255, highest = 0;
#pragma unroll
  for (int j = 0; j < kTokens / 8; ++j)
#pragma unroll
    for (int c = 0; c < 2; ++c) {
      const int token = 8 * j + 2 * (t % 4) + c;
      ref_x[j][c] = token < rows.valid ? __ldg(p.x_info + rows.first + token) & 0xFF : mxfp8_f16::kEpilogueOffset;
      lowest = min(lowest, ref_x[j][c]);
      highest = max(highest, ref_x[j][c]);
    }
  const int ref_w[2] = {static_cast<int>(refs.ref[0]), static_cast<int>(refs.ref[1])};
  constexpr int kOffset = 2 * mxfp8_f16::kEpilogueOffset;
  const bool normal = lowest + min(ref_w[0], ref_w[1]) - kOffset >= -126 && highest + max(ref_w[0], ref_w[1]) - kOffset <= 127;
  const int channel[2] = {channel0, channel0 + 8};
#pragma unroll
  for (int j = 0; j < kTokens / 8; ++j)
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int token = 8 * j + 2 * (t % 4) + (c & 1), i = c >> 1;
      const int e = ref_x[j][c & 1] + ref_w[i] - kOffset;
      const float v = normal ? acc[4 * j + c] * __int_as_float((e + 127) << 23) : ldexpf(acc[4 * j + c], e);
      if (token < rows.valid && channel[i] < p.n)
        p.y[static_cast<int64_t>(rows.first + token) * p.n + channel[i]] = __float2bfloat16_rn(v);
    }
  if (trace_writer) {
    TileTrace& record = p.trace[linear];
    record.linear = linear;
    record.sm = static_cast<int>(ptx::sm_id());
    record.end_ns = ptx::global_timer_ns();
  }
}

template <class Shape>
__device__ __forceinline__ void xpass_f16_consumer_loop(const Params& p, const XPassRingOf<Shape>& ring, int consumer) {
  const int t = threadIdx.x % 128, lane = t % 32;
  const int row0 = 16 * (t / 32) + lane / 4; // consumer-local channel of fragment row 0 (and + 8)
  const uint64_t x_desc = ptx::smem_descriptor_sw128(ring.x(0));
  const uint32_t x_desc_hi = static_cast<uint32_t>(x_desc >> 32);
  // Stage 0's word q of row0's first 16-byte group (TMA's 128-byte swizzle: group kk at kk ^ (row % 8)), as a
  // 32-bit shared address kept across stages.
  const uint32_t w_rows0 = held(ptx::smem_addr(ring.w(0)) + consumer * Shape::consumer_w_bytes + row0 * kBlockK +
                                ((row0 & 7) << 4) + 4 * (lane & 3));
  const bool trace_writer = p.trace != nullptr && t == 0 && consumer == 0;
  TileWalk walk(p.order, p.space);
  RingCursor cursor;
  int linear;
  TileIndex tile;
  float acc[Shape::accumulators];
  uint32_t first[4][4], second[4][4];
  while (walk.next(linear, tile)) {
    if (trace_writer) p.trace[linear].start_ns = ptx::global_timer_ns();
    const TokenRows rows = token_rows(p.token_offsets, tile, Shape::block_tokens);
    const int channel0 = tile.col * Shape::channels + 64 * consumer + row0;
    const WScaleRows scale_rows(p, tile, channel0);
    const RowRefs refs(p, tile, channel0);
#pragma unroll
    for (int i = 0; i < Shape::accumulators; ++i) acc[i] = 0.0f;
    uint32_t words[2], current[2];
    scale_rows.load(0, words);
    int previous = -1;
    for (int kb = 0; kb < p.k_blocks; ++kb) {
      current[0] = words[0];
      current[1] = words[1];
      if (kb + 1 < p.k_blocks) scale_rows.load(kb + 1, words); // a block ahead
      const int s = cursor.stage;
      ptx::mbarrier_wait(ring.full(s), cursor.phase);
      const uint32_t x_desc_lo = static_cast<uint32_t>(x_desc) + s * (Shape::x_bytes >> 4);
      xpass_f16_stage<Shape>(w_rows0 + s * Shape::w_bytes, ring, previous, current, refs, x_desc_lo, x_desc_hi, first,
                             second, acc);
      previous = s;
      cursor.advance(ring.stages);
    }
    ptx::wgmma_wait_group<0>();
    keep_fragments(first);
    keep_fragments(second);
    if (previous >= 0) release_stage(ring, previous);
    store_f16_tile<Shape>(p, acc, rows, channel0, refs, linear, trace_writer);
  }
}

template <int BlockTokens>
__global__ void __launch_bounds__(XPassShape::threads, 1)
    mxfp8_transposed_xpass_f16_kernel(const __grid_constant__ TensorMaps maps, const Params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Shape = XPassF16Shape<BlockTokens>;
  extern __shared__ uint8_t shared_raw[];
  const XPassRingOf<Shape> ring(shared_raw, p.stages);
  const int warpgroup = threadIdx.x / 128;
  init_ring(ring, maps, 4 * XPassShape::consumers); // every consumer warp releases every stage
  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<40>();
    if (threadIdx.x == 0) xpass_producer_loop(p, ring, maps);
  } else {
    ptx::setmaxnreg_inc<232>();
    xpass_f16_consumer_loop<Shape>(p, ring, warpgroup - 1);
  }
#endif
}

} // namespace tilesim::kernels::mxfp8_transposed
