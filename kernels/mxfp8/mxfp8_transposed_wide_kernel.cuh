// The transposed scheme on 128-token x 128-channel tiles (kernels/mxfp8/NOTES.md, "E = 128 x 128"):
// for experts with a full tile of tokens, where the 64-channel kernel (mxfp8_transposed_kernel.cuh)
// converts every X stage once per 64 channels, twice as many values as its W.
//
// One CTA = the producer warpgroup (TMA of the tile's 128 W rows and 128 X rows per stage, as the
// 64-channel kernel's) + two consumer warpgroups, consumer c owning channels 64 c .. 64 c + 63 over
// all of K (no split-K sums). Per stage each consumer converts half of X's tokens into a bf16 copy
// shared by both (one conversion of X per 128 channels) and its own W rows into register-A
// fragments; a 256-thread barrier says both halves of X are stored. The stage's eight k16 steps go
// to the tensor core in two groups of four, each converted while the group before it runs:
//   wait group (g-1, first half) -> convert W's first half -> barrier -> issue, commit
//   wait group (g-1, second half) -> convert W's second half -> issue, commit
// so conversion and MMA overlap within a consumer, not only across consumers. The bf16 copies of X
// rotate through three buffers: a consumer overwrites copy g % 3 after the barrier of stage g - 1,
// which the other consumer reaches only once its stage g - 2 groups (the last to read that copy)
// have completed. Each warp releases the FP8 stage when its conversions have read it.
#pragma once

#include "kernels/mxfp8/mxfp8_transposed_kernel.cuh"

namespace tilesim::kernels::mxfp8_transposed {

struct WideShape {
  static constexpr int block_tokens = 128;
  static constexpr int channels = 128;
  static constexpr int consumers = 2;
  static constexpr int threads = 128 * (consumers + 1);
  static constexpr int x_copies = 3;
  static constexpr int w_bytes = channels * kBlockK;            // FP8
  static constexpr int x_bytes = block_tokens * kBlockK;        // FP8
  static constexpr int x_half_bytes = block_tokens * 64 * 2;    // bf16 [tokens x 64]: one swizzle row a token
  static constexpr int x_bf16_bytes = 2 * x_half_bytes;
  static constexpr int stage_bytes = w_bytes + x_bytes;
  static constexpr int units = block_tokens * kBlockK / 16 / (128 * consumers); // X's 16-byte units a thread converts
  static constexpr int accumulators = block_tokens / 2;
  static constexpr int consumer_w_bytes = 64 * kBlockK; // a consumer's 64 W rows inside the stage
  static constexpr int shared_bytes(int stages) { return 1024 + x_copies * x_bf16_bytes + stages * (stage_bytes + 16); }
};

// Keeps `frag`'s registers from being reused before the wgmma group that reads them has completed
// (the wait just before); emits no instruction.
template <int Steps> __device__ __forceinline__ void keep_fragments(uint32_t (&frag)[Steps][4]) {
#pragma unroll
  for (int j = 0; j < Steps; ++j)
#pragma unroll
    for (int r = 0; r < 4; ++r) asm volatile("" : "+r"(frag[j][r])::"memory");
}

// Issues k16 steps First .. First + 3 of the stage against bf16 X copy `x_desc` and commits them as one group.
template <int First>
__device__ __forceinline__ void issue_half(float (&acc)[WideShape::accumulators], uint32_t (&frag)[4][4],
                                           uint32_t x_desc_lo, uint32_t x_desc_hi) {
  ptx::wgmma_fence(); // the fragments were written by ordinary instructions
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int kk = First + j; // K half kk / 4, + 32 bytes per k16 step inside its swizzle row (as k_block)
    ptx::wgmma_rs<WideShape::block_tokens>(
        acc, frag[j], (uint64_t(x_desc_hi) << 32) | (x_desc_lo + (kk / 4) * (WideShape::x_half_bytes >> 4) + 2 * (kk % 4)));
  }
  ptx::wgmma_commit_group();
}

// W's k16 steps First .. First + 3 into `frag` on this warp's path: two multiplies where a scale byte
// of its stage is above kSingleMultiplyMaxScale, else one.
template <int First>
__device__ __forceinline__ void convert_w_half(bool two_steps, uint32_t w_stage, const FragmentWords<kBlockK>& src,
                                               const BlockScaleWords<WideShape>& words, const XUnits<WideShape>& units,
                                               const BlockScales<WideShape, false>& one, uint32_t (&frag)[4][4]) {
  if (two_steps) {
    const BlockScales<WideShape, true> scales(words, units.block);
    convert_w_steps<First, 4, true>(w_stage, src, scales.w, frag);
  } else {
    convert_w_steps<First, 4, false>(w_stage, src, one.w, frag);
  }
}

// One stage of this consumer (see the header comment); `x_desc_lo` is the descriptor of X copy g % 3.
// `two_steps` is this warp's own choice; every wgmma instruction (fence, issue, commit, wait) stays
// outside its branches, so that the four warps of the warpgroup execute the same ones, as PTX's
// .aligned asks of them, whichever path each takes.
__device__ __forceinline__ void wide_stage(bool two_steps, uint32_t x_stage, uint32_t x_bf16, uint32_t w_stage,
                                           uint64_t* empty, const XUnits<WideShape>& units,
                                           const FragmentWords<kBlockK>& src, const BlockScaleWords<WideShape>& words,
                                           uint32_t x_desc_lo, uint32_t x_desc_hi, uint32_t (&first)[4][4],
                                           uint32_t (&second)[4][4], float (&acc)[WideShape::accumulators]) {
  const BlockScales<WideShape, false> one(words, units.block);
  if (two_steps) {
    const BlockScales<WideShape, true> scales(words, units.block);
    convert_x_units<WideShape, true>(x_stage, x_bf16, units, scales.x);
  } else {
    convert_x_units<WideShape, false>(x_stage, x_bf16, units, one.x);
  }
  ptx::wgmma_wait_group<1>(); // the previous stage's first group has read `first`
  keep_fragments(first);
  convert_w_half<0>(two_steps, w_stage, src, words, units, one, first);
  ptx::named_barrier_sync(3, 256); // both consumers' halves of X are stored
  issue_half<0>(acc, first, x_desc_lo, x_desc_hi);
  ptx::wgmma_wait_group<1>(); // the previous stage's second group has read `second`
  keep_fragments(second);
  convert_w_half<4>(two_steps, w_stage, src, words, units, one, second);
  __syncwarp();
  if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(empty); // this warp's reads of the FP8 stage are done
  issue_half<4>(acc, second, x_desc_lo, x_desc_hi);
}

// A finished 128 x 128 tile (its wgmma groups completed): this consumer's 64 channels stored transposed
// and, by its trace writer, the tile's trace record closed.
__device__ __forceinline__ void store_wide_tile(const Params& p, float (&acc)[WideShape::accumulators], TokenRows rows,
                                                int channel0, int linear, bool trace_writer) {
#pragma unroll
  for (int i = 0; i < WideShape::accumulators; ++i) ptx::fence_operand(acc[i]);
  const float unit_scale[2] = {1.0f, 1.0f};
  store_transposed_tile<WideShape::block_tokens>(p.y, p.n, acc, rows, channel0, unit_scale);
  if (trace_writer) {
    TileTrace& record = p.trace[linear];
    record.linear = linear;
    record.sm = static_cast<int>(ptx::sm_id());
    record.end_ns = ptx::global_timer_ns();
  }
}

__device__ __forceinline__ void wide_consumer_loop(const Params& p, const SharedRing<WideShape>& ring, int consumer) {
  using Shape = WideShape;
  const int t = threadIdx.x % 128, lane = t % 32;
  const int row0 = 16 * (t / 32) + lane / 4; // consumer-local channel of fragment row 0 (and + 8)
  const FragmentWords<kBlockK> src(row0, lane);
  const XUnits<Shape> units(t, 64 * consumer); // this consumer's half of the tokens
  const uint64_t x_desc = ptx::smem_descriptor_sw128(ring.x_bf16(0));
  const uint32_t x_desc_hi = static_cast<uint32_t>(x_desc >> 32);
  const bool trace_writer = p.trace != nullptr && t == 0 && consumer == 0;
  TileWalk walk(p.order, p.space);
  RingCursor cursor;
  int copy = 0; // the CTA's K block g, counted over all its tiles, uses bf16 X copy g % 3
  int linear;
  TileIndex tile;
  float acc[Shape::accumulators];
  uint32_t first[4][4], second[4][4];
  while (walk.next(linear, tile)) {
    if (trace_writer) p.trace[linear].start_ns = ptx::global_timer_ns();
    const TokenRows rows = token_rows(p.token_offsets, tile, Shape::block_tokens);
    const int channel0 = tile.col * Shape::channels + 64 * consumer + row0;
    const ScaleRows<Shape> scale_rows(p, tile, rows, channel0, units);
#pragma unroll
    for (int i = 0; i < Shape::accumulators; ++i) acc[i] = 0.0f;
    BlockScaleWords<Shape> words = scale_rows.load(0);
    for (int kb = 0; kb < p.k_blocks; ++kb) {
      const BlockScaleWords<Shape> current = words;
      if (kb + 1 < p.k_blocks) words = scale_rows.load(kb + 1); // a block ahead
      const int s = cursor.stage;
      const uint32_t largest = largest_scale(current, units);
      ptx::mbarrier_wait(ring.full(s), cursor.phase);
      const uint32_t x_stage = ptx::smem_addr(ring.x(s)), x_bf16 = ptx::smem_addr(ring.x_bf16(copy)),
                     w_stage = ptx::smem_addr(ring.w(s)) + consumer * Shape::consumer_w_bytes;
      const uint32_t x_desc_lo = static_cast<uint32_t>(x_desc) + copy * (Shape::x_bf16_bytes >> 4);
      wide_stage(__any_sync(0xFFFFFFFFu, largest > mxfp8_dequant::kSingleMultiplyMaxScale), x_stage, x_bf16, w_stage,
                 ring.empty(s), units, src, current, x_desc_lo, x_desc_hi, first, second, acc);
      cursor.advance(ring.stages);
      copy = copy == Shape::x_copies - 1 ? 0 : copy + 1;
    }
    ptx::wgmma_wait_group<0>();
    keep_fragments(first);
    keep_fragments(second);
    store_wide_tile(p, acc, rows, channel0, linear, trace_writer);
  }
}

__global__ void __launch_bounds__(WideShape::threads, 1)
    mxfp8_transposed_wide_kernel(const __grid_constant__ TensorMaps maps, const Params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ uint8_t shared_raw[];
  const SharedRing<WideShape> ring(shared_raw, p.stages);
  const int warpgroup = threadIdx.x / 128;
  init_ring(ring, maps, 4 * WideShape::consumers); // every consumer warp reads every stage
  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<40>();
    if (threadIdx.x == 0) producer_loop<WideShape>(p, ring, maps);
  } else {
    ptx::setmaxnreg_inc<232>();
    wide_consumer_loop(p, ring, warpgroup - 1);
  }
#endif
}

} // namespace tilesim::kernels::mxfp8_transposed
