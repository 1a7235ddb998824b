// Scheme xpass (kernels/mxfp8/NOTES.md, "X dequantised once"): the 128 x 128 transposed tile of
// mxfp8_transposed_wide_kernel.cuh with X already in bf16. The consumer-converting kernel converts
// X's 128 tokens again for every 128 channels (16 times per expert at N 2048); here the committed
// dequantiser (mxfp8_dequantize, one pass over X: Mxfp8GroupedGemm::run enqueues it first) converts
// X once, and TMA brings each stage's bf16 X (two [128 tokens x 64] boxes, 128-byte swizzle: the
// layout the other kernel's consumers write) beside W's FP8 rows. The consumers convert only W, into
// register-A fragments, in the same two halves of four k16 steps, each converted while the group
// before it runs:
//   wait group (g-1, first half) -> convert W's first half -> issue, commit
//   wait group (g-1, second half) -> release stage g-1 -> convert W's second half -> issue, commit
// No X conversion, no X stores, no barrier between the consumers. W and X come in two rings sized
// apart, each with its own producer thread: an X stage (32 KB) goes back once both consumers' wgmma
// groups that read it have completed (one stage late), a W stage (16 KB) as soon as both consumers
// have converted it, so the W ring takes the shared memory the X ring leaves (6 W stages beside 4 X
// stages, 8 beside 3) and keeps DRAM's W stream that many stages ahead.
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
  static constexpr int accumulators = WideShape::accumulators;
  static constexpr int consumer_w_bytes = WideShape::consumer_w_bytes;
  static constexpr int max_shared_bytes = 227 * 1024; // the most a block may opt into on sm_90
  static constexpr int most_x_stages = 8, most_w_stages = 16; // the barrier block's slots
  static constexpr int barrier_bytes = 1024;                 // four slot arrays, padded to a swizzle atom
  // `stages` is the X ring's depth (the spec's); the W ring holds what shared memory leaves, 2..16.
  __host__ __device__ static constexpr int w_stages(int stages) {
    const int left = (max_shared_bytes - 1024 - barrier_bytes - stages * x_bytes) / w_bytes;
    return left < 2 ? 2 : (left > most_w_stages ? most_w_stages : left);
  }
  __host__ __device__ static constexpr int shared_bytes(int stages) {
    return stages > most_x_stages ? max_shared_bytes + 1 // refused by the launcher's stage check
                                  : 1024 + barrier_bytes + stages * x_bytes + w_stages(stages) * w_bytes;
  }
};

// One ring's view for producer_loop: its depth, barriers and the bytes a stage's loads bring.
template <int StageBytes> struct XPassRingView {
  static constexpr int block_tokens = XPassShape::block_tokens;
  static constexpr int channels = XPassShape::channels;
  static constexpr int stage_bytes = StageBytes;
  int stages;
  uint64_t* full_bars;
  uint64_t* empty_bars;
  __device__ uint64_t* full(int s) const { return full_bars + s; }
  __device__ uint64_t* empty(int s) const { return empty_bars + s; }
};

// From the 1024-byte aligned base: the barrier block (X's full and empty slots, W's full and empty slots, at
// fixed offsets, so that a consumer finds them all from one shared address), then X's bf16 stages, then W's,
// each stage 1024-byte aligned (the swizzle atoms).
struct XPassRing {
  static constexpr int x_full = 0, x_empty = 8 * XPassShape::most_x_stages, w_full = 2 * x_empty,
                       w_empty = w_full + 8 * XPassShape::most_w_stages;
  uint8_t* base;
  int x_stages, w_stages;
  __device__ XPassRing(uint8_t* raw, int stages)
      : base(reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023))),
        x_stages(stages), w_stages(XPassShape::w_stages(stages)) {}
  __device__ uint64_t* bar(int offset, int s) const { return reinterpret_cast<uint64_t*>(base + offset) + s; }
  __device__ uint8_t* x(int s) const { return base + XPassShape::barrier_bytes + s * XPassShape::x_bytes; }
  __device__ uint8_t* w(int s) const { return x(x_stages) + s * XPassShape::w_bytes; }
  __device__ XPassRingView<XPassShape::x_bytes> xs() const { return {x_stages, bar(x_full, 0), bar(x_empty, 0)}; }
  __device__ XPassRingView<XPassShape::w_bytes> ws() const { return {w_stages, bar(w_full, 0), bar(w_empty, 0)}; }
};

__device__ __forceinline__ void init_xpass_ring(const XPassRing& ring, const TensorMaps& maps) {
  if (threadIdx.x == 0) {
    ptx::prefetch_tensor_map(&maps.x);
    ptx::prefetch_tensor_map(&maps.w);
    // every consumer warp releases every stage of both rings
    for (int s = 0; s < ring.x_stages; ++s) {
      ptx::mbarrier_init(ring.bar(XPassRing::x_full, s), 1);
      ptx::mbarrier_init(ring.bar(XPassRing::x_empty, s), 4 * XPassShape::consumers);
    }
    for (int s = 0; s < ring.w_stages; ++s) {
      ptx::mbarrier_init(ring.bar(XPassRing::w_full, s), 1);
      ptx::mbarrier_init(ring.bar(XPassRing::w_empty, s), 4 * XPassShape::consumers);
    }
    ptx::fence_barrier_init();
  }
  __syncthreads();
}

// Two producer threads in two warps, each walking the tiles over its own ring. maps.x: bf16 [tokens, k]
// in boxes of 128 tokens x 64 (the stage's two K halves); maps.w: W's bytes in boxes of 128 x 128.
__device__ __forceinline__ void xpass_producer_loop(const Params& p, const XPassRing& ring, const TensorMaps& maps) {
  if (threadIdx.x == 0) {
    const auto xs = ring.xs();
    producer_loop<decltype(xs)>(p, xs, [&](int s, int k0, int x_row, int) {
      ptx::tma_load_2d(ring.x(s), &maps.x, k0, x_row, xs.full(s));
      ptx::tma_load_2d(ring.x(s) + XPassShape::x_half_bytes, &maps.x, k0 + 64, x_row, xs.full(s));
    });
  } else if (threadIdx.x == 32) {
    const auto ws = ring.ws();
    producer_loop<decltype(ws)>(p, ws, [&](int s, int k0, int, int w_row) {
      ptx::tma_load_2d(ring.w(s), &maps.w, k0, w_row, ws.full(s));
    });
  }
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

// W's k16 steps First .. First + 3 into `frag`, one or two multiplies as the warp chose.
template <int First>
__device__ __forceinline__ void convert_w_half_xpass(bool two_steps, uint32_t w_stage, const FragmentWords<kBlockK>& src,
                                                     const uint32_t (&words)[2], uint32_t (&frag)[4][4]) {
  mxfp8_dequant::BlockScale ws[2][4];
  if (two_steps) {
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int b = 0; b < 4; ++b) ws[i][b] = scale_of<true>(words[i], b);
    convert_w_steps<First, 4, true>(w_stage, src, ws, frag);
  } else {
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int b = 0; b < 4; ++b) ws[i][b] = scale_of<false>(words[i], b);
    convert_w_steps<First, 4, false>(w_stage, src, ws, frag);
  }
}

// Each warp's arrival on a stage's `empty` (W: its conversion's reads are done; X: its warpgroup's
// wgmma reads are).
__device__ __forceinline__ void release_stage(uint32_t empty) {
  __syncwarp();
  if (threadIdx.x % 32 == 0) ptx::mbarrier_arrive(empty);
}

// One stage of this consumer (see the header comment): W stage `sw` at shared address `w_stage`, X stage
// `sx` (waited on only once W's first half is converted); `bars` is the shared address of the ring's
// barrier block. `previous` is the X stage whose groups were the last issued (-1 at a tile's start, where
// none are in flight); every wgmma instruction stays outside the warp's branches, as in wide_stage.
__device__ __forceinline__ void xpass_stage(bool two_steps, uint32_t bars, uint32_t w_stage, int sw, int sx,
                                            uint32_t x_phase, int previous, const FragmentWords<kBlockK>& src,
                                            const uint32_t (&words)[2], uint32_t x_desc_lo, uint32_t x_desc_hi,
                                            uint32_t (&first)[4][4], uint32_t (&second)[4][4],
                                            float (&acc)[XPassShape::accumulators]) {
  ptx::wgmma_wait_group<1>(); // the previous stage's first group has read `first`
  keep_fragments(first);
  convert_w_half_xpass<0>(two_steps, w_stage, src, words, first);
  ptx::mbarrier_wait(bars + XPassRing::x_full + 8 * sx, x_phase);
  issue_half<0>(acc, first, x_desc_lo, x_desc_hi);
  ptx::wgmma_wait_group<1>(); // the previous stage's second group has read `second` and its X
  keep_fragments(second);
  if (previous >= 0) release_stage(bars + XPassRing::x_empty + 8 * previous);
  convert_w_half_xpass<4>(two_steps, w_stage, src, words, second);
  release_stage(bars + XPassRing::w_empty + 8 * sw);
  issue_half<4>(acc, second, x_desc_lo, x_desc_hi);
}

__device__ __forceinline__ void xpass_consumer_loop(const Params& p, const XPassRing& ring, int consumer) {
  using Shape = XPassShape;
  const int t = threadIdx.x % 128, lane = t % 32;
  const int row0 = 16 * (t / 32) + lane / 4; // consumer-local channel of fragment row 0 (and + 8)
  const FragmentWords<kBlockK> src(row0, lane);
  const uint64_t x_desc = ptx::smem_descriptor_sw128(ring.x(0));
  const uint32_t x_desc_hi = static_cast<uint32_t>(x_desc >> 32);
  const uint32_t bars = ptx::smem_addr(ring.base);
  const uint32_t w0 = ptx::smem_addr(ring.w(0)) + consumer * Shape::consumer_w_bytes;
  const bool trace_writer = p.trace != nullptr && t == 0 && consumer == 0;
  TileWalk walk(p.order, p.space);
  RingCursor x_cursor, w_cursor;
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
      const int sx = x_cursor.stage, sw = w_cursor.stage;
      const bool two_steps = needs_two_steps(current);
      ptx::mbarrier_wait(bars + XPassRing::w_full + 8 * sw, w_cursor.phase);
      const uint32_t x_desc_lo = static_cast<uint32_t>(x_desc) + sx * (Shape::x_bytes >> 4);
      xpass_stage(two_steps, bars, w0 + sw * Shape::w_bytes, sw, sx, x_cursor.phase, previous, src, current, x_desc_lo,
                  x_desc_hi, first, second, acc);
      previous = sx;
      x_cursor.advance(ring.x_stages);
      w_cursor.advance(ring.w_stages);
    }
    ptx::wgmma_wait_group<0>();
    keep_fragments(first);
    keep_fragments(second);
    if (previous >= 0) release_stage(bars + XPassRing::x_empty + 8 * previous);
    store_wide_tile(p, acc, rows, channel0, linear, trace_writer);
  }
}

__global__ void __launch_bounds__(XPassShape::threads, 1)
    mxfp8_transposed_xpass_kernel(const __grid_constant__ TensorMaps maps, const Params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ uint8_t shared_raw[];
  const XPassRing ring(shared_raw, p.stages);
  const int warpgroup = threadIdx.x / 128;
  init_xpass_ring(ring, maps);
  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<40>();
    xpass_producer_loop(p, ring, maps);
  } else {
    ptx::setmaxnreg_inc<232>();
    xpass_consumer_loop(p, ring, warpgroup - 1);
  }
#endif
}

} // namespace tilesim::kernels::mxfp8_transposed
