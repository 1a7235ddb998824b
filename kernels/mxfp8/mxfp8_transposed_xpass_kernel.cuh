// Scheme xpass (kernels/mxfp8/NOTES.md, "X dequantised once"): the 128 x 128 transposed tile of
// mxfp8_transposed_wide_kernel.cuh with X already in bf16. The consumer-converting kernel converts
// X's 128 tokens again for every 128 channels (16 times per expert at N 2048); here the committed
// dequantiser (mxfp8_dequantize, one pass over X: Mxfp8GroupedGemm::run enqueues it first) converts
// X once, and TMA brings each stage's bf16 X (two [128 tokens x 64] boxes, 128-byte swizzle: the
// layout the other kernel's consumers write) beside W's FP8 rows. The consumers convert only W, into
// register-A fragments, in the same two halves of four k16 steps, each converted while the group
// before it runs, from W's 16-byte units all loaded at the stage's start:
//   load W's 16 units -> wait group (g-1, first half) -> convert W's first half -> issue, commit
//   wait group (g-1, second half) -> release stage g-1 -> convert W's second half -> issue, commit
// No X conversion, no X stores, no barrier between the consumers; a stage goes back to the producer
// once both consumers' wgmma groups that read its X have completed (one stage later than W alone
// would allow), so the ring is 48 KB a stage (16 KB of W, 32 KB of X) and holds at most four.
#pragma once

#include "kernels/mxfp8/mxfp8_transposed_wide_kernel.cuh"

namespace tilesim::kernels::mxfp8_transposed {

struct XPassShape {
  static constexpr int block_tokens = WideShape::block_tokens;
  static constexpr int channels = WideShape::channels;
  static constexpr int consumers = WideShape::consumers;
  static constexpr int threads = WideShape::threads;
  static constexpr int w_bytes = channels * kBlockK;                      // FP8
  static constexpr int x_half_bytes = WideShape::x_half_bytes;            // bf16 [tokens x 64]: one TMA box
  static constexpr int x_bytes = 2 * x_half_bytes;                        // bf16
  static constexpr int stage_bytes = w_bytes + x_bytes;
  static constexpr int accumulators = WideShape::accumulators;
  static constexpr int consumer_w_bytes = WideShape::consumer_w_bytes;
  static constexpr int shared_bytes(int stages) { return 1024 + stages * (stage_bytes + 16); }
};

// W stages, then X's bf16 stages, each 1024-byte aligned (the swizzle atoms); then the barriers. Shape:
// XPassShape, or xpass_f16's narrower tiles (mxfp8_transposed_xpass_f16_kernel.cuh).
template <class Shape> struct XPassRingOf {
  uint8_t* base;
  int stages;
  __device__ XPassRingOf(uint8_t* raw, int stages_)
      : base(reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023))),
        stages(stages_) {}
  __device__ uint8_t* w(int s) const { return base + s * Shape::w_bytes; }
  __device__ uint8_t* x(int s) const { return base + stages * Shape::w_bytes + s * Shape::x_bytes; }
  __device__ uint64_t* full(int s) const { return reinterpret_cast<uint64_t*>(base + stages * Shape::stage_bytes) + s; }
  __device__ uint64_t* empty(int s) const { return full(stages) + s; }
};
using XPassRing = XPassRingOf<XPassShape>;

// maps.x: bf16 [tokens, k] in boxes of Shape::block_tokens x 64 (the stage's two K halves); maps.w: W's bytes in
// boxes of 128 x 128.
template <class Shape>
__device__ __forceinline__ void xpass_producer_loop(const Params& p, const XPassRingOf<Shape>& ring, const TensorMaps& maps) {
  producer_loop<Shape>(p, ring, [&](int s, int k0, int x_row, int w_row) {
    ptx::tma_load_2d(ring.x(s), &maps.x, k0, x_row, ring.full(s));
    ptx::tma_load_2d(ring.x(s) + Shape::x_half_bytes, &maps.x, k0 + 64, x_row, ring.full(s));
    ptx::tma_load_2d(ring.w(s), &maps.w, k0, w_row, ring.full(s));
  });
}

// A thread's two W rows' scale words (four MX blocks each) per stage.
struct WScaleRows {
  const uint32_t* row[2];
  __device__ WScaleRows(const Params& p, const TileIndex& tile, int channel0) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int channel = min(channel0 + 8 * i, p.n - 1);
      row[i] = reinterpret_cast<const uint32_t*>(p.w_scales + (static_cast<int64_t>(tile.expert) * p.n + channel) * p.scale_cols);
    }
  }
  __device__ void load(int kb, uint32_t (&words)[2]) const {
#pragma unroll
    for (int i = 0; i < 2; ++i) words[i] = __ldg(row[i] + kb);
  }
};

__device__ __forceinline__ bool needs_two_steps(const uint32_t (&words)[2]) {
  uint32_t largest = 0;
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int b = 0; b < 4; ++b) largest = max(largest, (words[i] >> (8 * b)) & 0xFF);
  return __any_sync(0xFFFFFFFFu, largest > mxfp8_dequant::kSingleMultiplyMaxScale);
}

// W's 16-byte units (kernels/mxfp8/NOTES.md, "xpass's W as 16-byte units"): a thread's two rows'
// 16-byte chunk of each k16 step, one ld.shared.v4 each (16 a stage instead of 32 word loads), all
// issued before the stage's first conversion. The lane's two words of a chunk are x or y and z or w
// (FragmentWords: the word (lane & 3) >> 1 of each 8-byte half).
using WUnits = uint4[8][2];

__device__ __forceinline__ void load_w_units(uint32_t w_rows, WUnits& units) {
#pragma unroll
  for (int kk = 0; kk < 8; ++kk)
#pragma unroll
    for (int i = 0; i < 2; ++i)
      units[kk][i] = ptx::ld_shared_v4((w_rows ^ (kk << 4)) + i * FragmentWords<kBlockK>::row8_bytes);
}

// `v` through an empty asm the compiler cannot see through, so that it stays in a register across the
// K loop: left to itself, ptxas rebuilt the stage-0 address from the special registers every stage.
__device__ __forceinline__ uint32_t held(uint32_t v) {
  asm volatile("" : "+r"(v));
  return v;
}

// The lane's prmt selector over a word pair {lo, hi}: its pair's byte (lane & 1) x 2, in hi (+ 4) where
// its word is the pair's second.
__device__ __forceinline__ uint32_t pair_pick(int lane) {
  return mxfp8_dequant::pair_selector(2 * (lane & 1) + 4 * ((lane & 2) >> 1));
}

// mxfp8_dequant::convert_pair_steps on the lane's pair of {lo, hi}: the word chosen in the placing prmt.
template <bool TwoSteps>
__device__ __forceinline__ uint32_t convert_picked(uint32_t lo, uint32_t hi, uint32_t pick,
                                                   const mxfp8_dequant::BlockScale& s) {
  const uint32_t scaled = dequant::mul_bf16x2(mxfp8_dequant::place_pair_of(lo, hi, pick), s.first);
  return TwoSteps ? dequant::mul_bf16x2(scaled, s.second) : scaled;
}

template <int First, bool TwoSteps>
__device__ __forceinline__ void convert_w_units(const WUnits& units, uint32_t pick, const uint32_t (&words)[2],
                                                uint32_t (&frag)[4][4]) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int kk = First + j;
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const mxfp8_dequant::BlockScale s = scale_of<TwoSteps>(words[i], kk / 2);
      frag[j][i] = convert_picked<TwoSteps>(units[kk][i].x, units[kk][i].y, pick, s);
      frag[j][2 + i] = convert_picked<TwoSteps>(units[kk][i].z, units[kk][i].w, pick, s);
    }
  }
}

template <int First>
__device__ __forceinline__ void convert_w_half_units(bool two_steps, const WUnits& units, uint32_t pick,
                                                     const uint32_t (&words)[2], uint32_t (&frag)[4][4]) {
  if (two_steps) convert_w_units<First, true>(units, pick, words, frag);
  else convert_w_units<First, false>(units, pick, words, frag);
}

// Each warp's arrival on stage s's `empty`: its W reads and its warpgroup's wgmma reads of X are done.
template <class Ring> __device__ __forceinline__ void release_stage(const Ring& ring, int s) {
  __syncwarp();
  if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(ring.empty(s));
}

// One stage of this consumer (see the header comment), every W load of the stage issued first, under
// the previous stage's groups. `previous` is the stage whose groups were the last issued (-1 at a
// tile's start, where none are in flight); every wgmma instruction stays outside the warp's branches,
// as in wide_stage.
__device__ __forceinline__ void xpass_stage(bool two_steps, uint32_t w_rows, const XPassRing& ring, int previous,
                                            uint32_t pick, const uint32_t (&words)[2], uint32_t x_desc_lo,
                                            uint32_t x_desc_hi, uint32_t (&first)[4][4], uint32_t (&second)[4][4],
                                            float (&acc)[XPassShape::accumulators]) {
  WUnits units;
  load_w_units(w_rows, units);
  ptx::wgmma_wait_group<1>();
  keep_fragments(first);
  convert_w_half_units<0>(two_steps, units, pick, words, first);
  issue_half<0>(acc, first, x_desc_lo, x_desc_hi);
  ptx::wgmma_wait_group<1>();
  keep_fragments(second);
  if (previous >= 0) release_stage(ring, previous);
  convert_w_half_units<4>(two_steps, units, pick, words, second);
  issue_half<4>(acc, second, x_desc_lo, x_desc_hi);
}

__device__ __forceinline__ void xpass_consumer_loop(const Params& p, const XPassRing& ring, int consumer) {
  using Shape = XPassShape;
  const int t = threadIdx.x % 128, lane = t % 32;
  const int row0 = 16 * (t / 32) + lane / 4; // consumer-local channel of fragment row 0 (and + 8)
  const FragmentWords<kBlockK> src(row0, lane);
  const uint64_t x_desc = ptx::smem_descriptor_sw128(ring.x(0));
  const uint32_t x_desc_hi = static_cast<uint32_t>(x_desc >> 32);
  // Stage 0's first 16-byte chunk of this thread's row0, as a 32-bit shared address kept across stages.
  const uint32_t w_rows0 = held(ptx::smem_addr(ring.w(0)) + consumer * Shape::consumer_w_bytes + (src.base & ~15u));
  const uint32_t pick = held(pair_pick(lane));
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
      const bool two_steps = needs_two_steps(current);
      ptx::mbarrier_wait(ring.full(s), cursor.phase);
      const uint32_t x_desc_lo = static_cast<uint32_t>(x_desc) + s * (Shape::x_bytes >> 4);
      xpass_stage(two_steps, w_rows0 + s * Shape::w_bytes, ring, previous, pick, current, x_desc_lo, x_desc_hi, first,
                  second, acc);
      previous = s;
      cursor.advance(ring.stages);
    }
    ptx::wgmma_wait_group<0>();
    keep_fragments(first);
    keep_fragments(second);
    if (previous >= 0) release_stage(ring, previous);
    store_wide_tile(p, acc, rows, channel0, linear, trace_writer);
  }
}

__global__ void __launch_bounds__(XPassShape::threads, 1)
    mxfp8_transposed_xpass_kernel(const __grid_constant__ TensorMaps maps, const Params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ uint8_t shared_raw[];
  const XPassRing ring(shared_raw, p.stages);
  const int warpgroup = threadIdx.x / 128;
  init_ring(ring, maps, 4 * XPassShape::consumers); // every consumer warp releases every stage
  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<40>();
    if (threadIdx.x == 0) xpass_producer_loop(p, ring, maps);
  } else {
    ptx::setmaxnreg_inc<232>();
    xpass_consumer_loop(p, ring, warpgroup - 1);
  }
#endif
}

} // namespace tilesim::kernels::mxfp8_transposed
