// xpass_f16's 256-channel tile (kernels/mxfp8/NOTES.md, "xpass_f16 at 256 channels"): the 128 x 128 tile's
// stage (mxfp8_transposed_xpass_f16_kernel.cuh) with each consumer warpgroup two m64 blocks of W (128
// channels) against the same X stage, so that a stage's 32 KB of X feeds twice the MMAs and the L2 bytes
// a tile's MMA asks fall from 48 KB per 128 x 128 to 32 KB (64 KB a stage of 256 x 128). A stage is four
// wgmma groups (block 0's first K half, block 1's, block 0's second, block 1's), each converted while the
// group before it runs, in two fragment sets used alternately:
//   load block 0's W words -> wait (g-1) -> convert b0 h0 into set 0 -> issue, commit -> load block 1's words
//   wait (g-1) -> release stage g-1 -> convert b1 h0 into set 1 -> issue, commit
//   wait (g-1) -> convert b0 h1 into set 0 -> issue, commit -> wait (g-1) -> convert b1 h1 into set 1 -> issue, commit
// A consumer thread holds 128 fp32 sums (two m64n128 accumulators).
#pragma once

#include "kernels/mxfp8/mxfp8_transposed_xpass_f16_kernel.cuh"

namespace tilesim::kernels::mxfp8_transposed {

struct XPassF16WideShape {
  using Block = XPassF16Shape<128>; // one m64 block's wgmma: N 128 tokens, X's two [128 x 64] f16 boxes
  static constexpr int block_tokens = Block::block_tokens;
  static constexpr int channels = 256;
  static constexpr int consumers = XPassShape::consumers;
  static constexpr int blocks = channels / (64 * consumers); // m64 blocks a consumer
  static constexpr int threads = XPassShape::threads;
  static constexpr int w_bytes = channels * kBlockK; // FP8: one TMA box of 256 rows
  static constexpr int x_half_bytes = Block::x_half_bytes;
  static constexpr int x_bytes = Block::x_bytes;
  static constexpr int stage_bytes = w_bytes + x_bytes;
  static constexpr int block_w_bytes = 64 * kBlockK;
  static constexpr int shared_bytes(int stages) { return 1024 + stages * (stage_bytes + 16); }
};
static_assert(XPassF16WideShape::blocks == 2 && XPassF16WideShape::stage_bytes == 64 * 1024, "two m64 blocks a consumer");

// One block's K half First: convert its W words into `frag`, issue its four k16 steps, commit.
template <int First>
__device__ __forceinline__ void wide_f16_group(const WWords& w, const uint32_t (&scale_words)[2], const RowRefs& refs,
                                               uint32_t (&frag)[4][4], float (&acc)[XPassF16WideShape::Block::accumulators],
                                               uint32_t x_desc_lo, uint32_t x_desc_hi) {
  convert_w_half_f16<First>(w, scale_words, refs, frag);
  issue_half_f16<XPassF16WideShape::Block, First>(acc, frag, x_desc_lo, x_desc_hi);
}

// One stage (see the header comment); every wgmma instruction outside the warp's branches.
__device__ __forceinline__ void xpass_f16_wide_stage(uint32_t w_rows, const XPassRingOf<XPassF16WideShape>& ring,
                                                     int previous, const uint32_t (&scale_words)[2][2],
                                                     const RowRefs (&refs)[2], uint32_t x_desc_lo, uint32_t x_desc_hi,
                                                     uint32_t (&set0)[4][4], uint32_t (&set1)[4][4],
                                                     float (&acc)[2][XPassF16WideShape::Block::accumulators]) {
  WWords w0, w1;
  load_w_words(w_rows, w0);
  ptx::wgmma_wait_group<1>();
  keep_fragments(set0);
  wide_f16_group<0>(w0, scale_words[0], refs[0], set0, acc[0], x_desc_lo, x_desc_hi);
  load_w_words(w_rows + XPassF16WideShape::block_w_bytes, w1); // under group 0: block 1's words live one group less
  ptx::wgmma_wait_group<1>();
  keep_fragments(set1);
  if (previous >= 0) release_stage(ring, previous);
  wide_f16_group<0>(w1, scale_words[1], refs[1], set1, acc[1], x_desc_lo, x_desc_hi);
  ptx::wgmma_wait_group<1>();
  keep_fragments(set0);
  wide_f16_group<4>(w0, scale_words[0], refs[0], set0, acc[0], x_desc_lo, x_desc_hi);
  ptx::wgmma_wait_group<1>();
  keep_fragments(set1);
  wide_f16_group<4>(w1, scale_words[1], refs[1], set1, acc[1], x_desc_lo, x_desc_hi);
}

__device__ __forceinline__ void xpass_f16_wide_consumer_loop(const Params& p, const XPassRingOf<XPassF16WideShape>& ring,
                                                             int consumer) {
  using Shape = XPassF16WideShape;
  const int t = threadIdx.x % 128, lane = t % 32;
  const int row0 = 16 * (t / 32) + lane / 4; // block-local channel of fragment row 0 (and + 8)
  const uint64_t x_desc = ptx::smem_descriptor_sw128(ring.x(0));
  const uint32_t x_desc_hi = static_cast<uint32_t>(x_desc >> 32);
  // Stage 0's word q of block 0's row0 first 16-byte group (TMA's 128-byte swizzle; block 1's rows are 64
  // rows on, the same swizzle phase).
  const uint32_t w_rows0 = held(ptx::smem_addr(ring.w(0)) + consumer * Shape::blocks * Shape::block_w_bytes +
                                row0 * kBlockK + ((row0 & 7) << 4) + 4 * (lane & 3));
  const bool trace_writer = p.trace != nullptr && t == 0 && consumer == 0;
  TileWalk walk(p.order, p.space);
  RingCursor cursor;
  int linear;
  TileIndex tile;
  float acc[2][Shape::Block::accumulators];
  uint32_t set0[4][4], set1[4][4];
  while (walk.next(linear, tile)) {
    if (trace_writer) p.trace[linear].start_ns = ptx::global_timer_ns();
    const TokenRows rows = token_rows(p.token_offsets, tile, Shape::block_tokens);
    const int channel0 = tile.col * Shape::channels + 128 * consumer + row0; // block b: + 64 b
    const WScaleRows scale_rows[2] = {WScaleRows(p, tile, channel0), WScaleRows(p, tile, channel0 + 64)};
    const RowRefs refs[2] = {RowRefs(p, tile, channel0), RowRefs(p, tile, channel0 + 64)};
#pragma unroll
    for (int b = 0; b < 2; ++b)
#pragma unroll
      for (int i = 0; i < Shape::Block::accumulators; ++i) acc[b][i] = 0.0f;
    uint32_t words[2][2], current[2][2];
    scale_rows[0].load(0, words[0]);
    scale_rows[1].load(0, words[1]);
    int previous = -1;
    for (int kb = 0; kb < p.k_blocks; ++kb) {
#pragma unroll
      for (int b = 0; b < 2; ++b) {
        current[b][0] = words[b][0];
        current[b][1] = words[b][1];
        if (kb + 1 < p.k_blocks) scale_rows[b].load(kb + 1, words[b]); // a block ahead
      }
      const int s = cursor.stage;
      ptx::mbarrier_wait(ring.full(s), cursor.phase);
      const uint32_t x_desc_lo = static_cast<uint32_t>(x_desc) + s * (Shape::x_bytes >> 4);
      xpass_f16_wide_stage(w_rows0 + s * Shape::w_bytes, ring, previous, current, refs, x_desc_lo, x_desc_hi, set0,
                           set1, acc);
      previous = s;
      cursor.advance(ring.stages);
    }
    ptx::wgmma_wait_group<0>();
    keep_fragments(set0);
    keep_fragments(set1);
    if (previous >= 0) release_stage(ring, previous);
    store_f16_tile<Shape::Block>(p, acc[0], rows, channel0, refs[0], linear, false);
    store_f16_tile<Shape::Block>(p, acc[1], rows, channel0 + 64, refs[1], linear, trace_writer);
  }
}

__global__ void __launch_bounds__(XPassF16WideShape::threads, 1)
    mxfp8_transposed_xpass_f16_wide_kernel(const __grid_constant__ TensorMaps maps, const Params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ uint8_t shared_raw[];
  const XPassRingOf<XPassF16WideShape> ring(shared_raw, p.stages);
  const int warpgroup = threadIdx.x / 128;
  init_ring(ring, maps, 4 * XPassF16WideShape::consumers); // every consumer warp releases every stage
  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<24>(); // 24 x 128 + 240 x 256 <= 64K registers: the consumers' 128 sums need the 240
    if (threadIdx.x == 0) xpass_producer_loop(p, ring, maps);
  } else {
    ptx::setmaxnreg_inc<240>();
    xpass_f16_wide_consumer_loop(p, ring, warpgroup - 1);
  }
#endif
}

} // namespace tilesim::kernels::mxfp8_transposed
