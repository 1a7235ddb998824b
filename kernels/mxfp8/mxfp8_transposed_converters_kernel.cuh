// The transposed scheme on 128-token x 128-channel tiles with converter warpgroups (kernels/mxfp8/
// NOTES.md, "Converter warpgroups"): the 128 x 128 kernel (mxfp8_transposed_wide_kernel.cuh) waits on
// latency with two converting warps a scheduler, because its registers hold accumulators and
// fragments; here the conversion and the MMA are separate warpgroups, so three converting warps a
// scheduler hide each other's loads, and the MMA warpgroups hold only accumulators.
//
// One CTA = two MMA warpgroups + three converter warpgroups, 640 threads at 96 registers: ptxas compiles
// the whole kernel to the launch bound's count whatever setmaxnreg later grants, and a scheduler's
// quarter of the register file (16,384) holds five warps of 96 but not six (a producer warp or
// warpgroup) of more than 80, too few for a wgmma with 64 accumulators. So there is no producer: the
// TMA of each 128-deep K block (the tile's 128 W rows and 128 X rows) into the FP8 ring is issued by
// the converter warp that reads the stage last before it (a shared-memory count of its readers).
//   - Converters: per K block, the 384 threads convert the FP8 stage's 256 rows (W then X) with their
//     blocks' scales into a bf16 stage of the same 256 rows, written in the 128-byte-swizzled K-major
//     layout wgmma's descriptors read (two K halves of 64 bf16 a row), fence it into the async proxy,
//     and release both: the bf16 stage to the MMA warpgroups, the FP8 stage to its next K block's load.
//   - MMA warpgroup c: channels 64 c .. 64 c + 63 over all of K, eight wgmma m64n128k16 a stage with A
//     (its 64 W rows) and B (the 128 X rows) both from the bf16 stage; one group stays in flight, so the
//     bf16 stage of block g - 1 goes back to the converters once block g's group is issued.
// Two bf16 stages (64 KB each) and up to three FP8 stages (32 KB each) fill shared memory. Converter
// warps choose the one- or two-multiply path for themselves (they issue no wgmma); the MMA warpgroups
// have no per-warp branch.
#pragma once

#include "kernels/common/wgmma.cuh"
#include "kernels/mxfp8/mxfp8_transposed_kernel.cuh"

namespace tilesim::kernels::mxfp8_transposed {

struct ConverterShape {
  static constexpr int block_tokens = 128;
  static constexpr int channels = 128;
  static constexpr int mma_warpgroups = 2;
  static constexpr int converters = 3; // converter warpgroups
  static constexpr int threads = 128 * (mma_warpgroups + converters);
  static constexpr int converter_warps = 4 * converters;
  static constexpr int rows = channels + block_tokens; // W's rows, then X's, in each FP8 and bf16 stage
  static constexpr int w_bytes = channels * kBlockK;    // FP8, at the FP8 stage's start
  static constexpr int x_bytes = block_tokens * kBlockK; // FP8, after W's
  static constexpr int fp8_stage_bytes = w_bytes + x_bytes;
  static constexpr int bf16_half_bytes = rows * 128; // one K half: 64 bf16 a row, one swizzle row
  static constexpr int bf16_stage_bytes = 2 * bf16_half_bytes;
  static constexpr int bf16_stages = 2;
  static constexpr int row_step = 128 * converters / 8;                  // rows between a thread's units: 48
  static constexpr int units = (rows + row_step - 1) / row_step;         // 16-byte units a thread converts: 6
  static constexpr int full_units = rows / row_step;                     // every thread's: 5; the 6th: converter 0's
  static constexpr int accumulators = block_tokens / 2;
  static constexpr int shared_bytes(int stages) {
    return 1024 + bf16_stages * bf16_stage_bytes + stages * fp8_stage_bytes + 8 * (2 * stages + 2 * bf16_stages);
  }
};

// bf16 stages, then the FP8 stages (W's rows, then X's), each 1024-byte aligned (the swizzle atoms);
// then per FP8 stage its full barrier (TMA done) and its count of converter warps done reading it, and
// per bf16 stage its ready (converters done writing) and drained (MMA warpgroups done reading) barriers.
struct ConverterRing {
  uint8_t* base;
  int stages;
  __device__ ConverterRing(uint8_t* raw, int stages_)
      : base(reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023))),
        stages(stages_) {}
  __device__ uint8_t* bf16(int b) const { return base + b * ConverterShape::bf16_stage_bytes; }
  __device__ uint8_t* w(int s) const {
    return bf16(ConverterShape::bf16_stages) + s * ConverterShape::fp8_stage_bytes;
  }
  __device__ uint8_t* x(int s) const { return w(s) + ConverterShape::w_bytes; }
  __device__ uint64_t* full(int s) const { return reinterpret_cast<uint64_t*>(w(stages)) + s; }
  __device__ uint32_t* readers(int s) const { return reinterpret_cast<uint32_t*>(full(stages)) + 2 * s; }
  __device__ uint64_t* ready(int b) const { return full(2 * stages) + b; }
  __device__ uint64_t* drained(int b) const { return ready(ConverterShape::bf16_stages) + b; }
};

// A converter thread's units: of the 384 threads, T = 128 converter + t converts 16-byte unit u = (T / 8)
// % 8 (K 16 u .. 16 u + 15, MX block u / 2) of rows r + 48 i of the stage's 256, r = 8 (T / 64) + T % 8.
// Every one of them has the swizzle phase T % 8, so unit i is unit 0's addresses + 48 rows. A quarter
// warp takes one unit of eight consecutive rows: its 16-byte loads and its stores (chunks 2 (u % 4) + c
// of one K half) fall on eight different bank groups, where eight units of one row would store two
// chunks to the same banks of the two K halves.
struct ConverterUnits {
  static constexpr uint32_t step_bytes = ConverterShape::row_step * 128;
  int first_row;   // r
  uint32_t src;    // unit 0's bytes in the FP8 stage
  uint32_t dst[2]; // unit 0's two bf16 chunks in the bf16 stage
  uint32_t block;  // MX block of the units inside the stage
  bool has_last;   // this thread converts a unit in row 240 or later (converter 0)
  __device__ ConverterUnits(int converter, int t) {
    const int T = 128 * converter + t, u = (T / 8) % 8;
    first_row = 8 * (T / 64) + T % 8;
    block = u / 2;
    has_last = first_row + ConverterShape::full_units * ConverterShape::row_step < ConverterShape::rows;
    src = first_row * kBlockK + ((u ^ (first_row % 8)) << 4);
#pragma unroll
    for (int c = 0; c < 2; ++c) dst[c] = sw128_chunk(ConverterShape::bf16_half_bytes, first_row, u, c);
  }
  __device__ bool converts(int i) const { return i < ConverterShape::full_units || has_last; }
};

// Where a converter thread's scale words are for one tile: unit i's row's E8M0 bytes (a word a K block);
// W rows past n read row n - 1 (their channels are never stored), X rows past the tensor none (0).
struct ConverterScaleRows {
  const uint32_t* row[ConverterShape::units];
  __device__ ConverterScaleRows(const Params& p, const TileIndex& tile, const TokenRows& rows,
                                const ConverterUnits& units) {
#pragma unroll
    for (int i = 0; i < ConverterShape::units; ++i) {
      const int r = units.first_row + i * ConverterShape::row_step;
      row[i] = nullptr;
      if (!units.converts(i)) continue;
      if (r < ConverterShape::channels) {
        const int channel = min(tile.col * ConverterShape::channels + r, p.n - 1);
        row[i] = reinterpret_cast<const uint32_t*>(
            p.w_scales + (static_cast<int64_t>(tile.expert) * p.n + channel) * p.scale_cols);
      } else {
        const int token = rows.first + r - ConverterShape::channels;
        if (token < p.total_tokens)
          row[i] = reinterpret_cast<const uint32_t*>(p.x_scales + static_cast<int64_t>(token) * p.scale_cols);
      }
    }
  }
  __device__ void load(int kb, uint32_t (&words)[ConverterShape::units]) const {
#pragma unroll
    for (int i = 0; i < ConverterShape::units; ++i) words[i] = row[i] ? __ldg(row[i] + kb) : 0u;
  }
};

// The thread's units of one FP8 stage (already in registers) into the bf16 stage.
template <bool TwoSteps>
__device__ __forceinline__ void store_units(const uint4 (&raw)[ConverterShape::units],
                                            const uint32_t (&words)[ConverterShape::units],
                                            const ConverterUnits& units, uint32_t bf16_stage) {
#pragma unroll
  for (int i = 0; i < ConverterShape::units; ++i) {
    if (!units.converts(i)) continue;
    const mxfp8_dequant::BlockScale s = scale_of<TwoSteps>(words[i], units.block);
    const uint32_t dst = bf16_stage + i * ConverterUnits::step_bytes;
    ptx::st_shared_v4(dst + units.dst[0],
                      make_uint4(convert<TwoSteps>(raw[i].x, 0, s), convert<TwoSteps>(raw[i].x, 2, s),
                                 convert<TwoSteps>(raw[i].y, 0, s), convert<TwoSteps>(raw[i].y, 2, s)));
    ptx::st_shared_v4(dst + units.dst[1],
                      make_uint4(convert<TwoSteps>(raw[i].z, 0, s), convert<TwoSteps>(raw[i].z, 2, s),
                                 convert<TwoSteps>(raw[i].w, 0, s), convert<TwoSteps>(raw[i].w, 2, s)));
  }
}

// The CTA's K blocks in the order the converters use them (its tiles' walk, each tile's blocks), for the
// loads: a converter warp's leader keeps one `stages` blocks ahead of the block it converts.
struct BlockLoads {
  TileWalk walk;
  LoadRows rows{};
  int kb = 0;
  bool more = false;
  __device__ explicit BlockLoads(const Params& p) : walk(p.order, p.space) { next_tile(p); }
  __device__ void next_tile(const Params& p) {
    int linear;
    TileIndex tile;
    more = walk.next(linear, tile);
    if (more) rows = load_rows<ConverterShape>(p, tile);
    kb = 0;
  }
  // Loads the current block into stage s when `issue` (and the CTA has one), then moves to the next.
  __device__ void step(const Params& p, const ConverterRing& ring, const TensorMaps& maps, int s, bool issue) {
    if (!more) return;
    if (issue) load_block<ConverterShape>(ring, maps, s, kb, rows);
    if (++kb == p.k_blocks) next_tile(p);
  }
};

__device__ __forceinline__ void converter_loop(const Params& p, const ConverterRing& ring, const TensorMaps& maps,
                                               int converter) {
  using Shape = ConverterShape;
  const ConverterUnits units(converter, threadIdx.x % 128);
  const bool leader = threadIdx.x % 32 == 0;
  BlockLoads ahead(p); // block g + stages while this warp converts block g (blocks 0 .. stages - 1: loaded at the start)
  if (leader)
    for (int s = 0; s < ring.stages; ++s) ahead.step(p, ring, maps, s, false);
  TileWalk walk(p.order, p.space);
  RingCursor fp8, bf16; // the CTA's K block g, over all its tiles: FP8 stage g % stages, bf16 stage g % 2
  int linear;
  TileIndex tile;
  while (walk.next(linear, tile)) {
    const TokenRows rows = token_rows(p.token_offsets, tile, Shape::block_tokens);
    const ConverterScaleRows scale_rows(p, tile, rows, units);
    uint32_t words[Shape::units];
    scale_rows.load(0, words);
    for (int kb = 0; kb < p.k_blocks; ++kb) {
      uint32_t current[Shape::units], largest = 0;
#pragma unroll
      for (int i = 0; i < Shape::units; ++i) {
        current[i] = words[i];
        largest = max(largest, (current[i] >> (8 * units.block)) & 0xFF);
      }
      if (kb + 1 < p.k_blocks) scale_rows.load(kb + 1, words); // a block ahead
      const bool two_steps = __any_sync(0xFFFFFFFFu, largest > mxfp8_dequant::kSingleMultiplyMaxScale);
      ptx::mbarrier_wait(ring.full(fp8.stage), fp8.phase);
      const uint32_t src = ptx::smem_addr(ring.w(fp8.stage)) + units.src;
      uint4 raw[Shape::units];
#pragma unroll
      for (int i = 0; i < Shape::units; ++i)
        if (units.converts(i)) raw[i] = ptx::ld_shared_v4(src + i * ConverterUnits::step_bytes);
      ptx::mbarrier_wait(ring.drained(bf16.stage), bf16.phase ^ 1); // the MMA warpgroups are done with it
      const uint32_t dst = ptx::smem_addr(ring.bf16(bf16.stage));
      if (two_steps) store_units<true>(raw, current, units, dst);
      else store_units<false>(raw, current, units, dst);
      ptx::fence_proxy_async_shared(); // generic-proxy stores, read by wgmma (the async proxy)
      __syncwarp(); // every lane's reads of the FP8 stage and writes of the bf16 stage are done
      if (leader) {
        ptx::mbarrier_arrive(ring.ready(bf16.stage));
        __threadfence_block();
        const bool last = atomicAdd(ring.readers(fp8.stage), 1u) == Shape::converter_warps - 1;
        if (last) *ring.readers(fp8.stage) = 0; // no warp counts this stage again before the load it issues lands
        ahead.step(p, ring, maps, fp8.stage, last);
      }
      fp8.advance(ring.stages);
      bf16.advance(Shape::bf16_stages);
    }
  }
}

// Eight k16 steps of bf16 stage `b` for this MMA warpgroup, as one committed group. The descriptors'
// start address is their low word's 14-bit field in 16-byte units, and every stage lies inside shared
// memory (< 256 KB), so a 32-bit add of the low word moves them: K half kk / 4, + 32 bytes per k16 step
// inside its swizzle row.
__device__ __forceinline__ void issue_stage(float (&acc)[ConverterShape::accumulators], uint64_t w_desc, uint64_t x_desc,
                                            int b) {
  using Shape = ConverterShape;
  ptx::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < 8; ++kk) {
    const uint32_t step = b * (Shape::bf16_stage_bytes >> 4) + (kk / 4) * (Shape::bf16_half_bytes >> 4) + 2 * (kk % 4);
    ptx::wgmma_m64n128k16(acc, w_desc + step, x_desc + step);
  }
  ptx::wgmma_commit_group();
}

__device__ __forceinline__ void mma_loop(const Params& p, const ConverterRing& ring, int mma) {
  using Shape = ConverterShape;
  const int t = threadIdx.x % 128, lane = t % 32;
  const int row0 = 16 * (t / 32) + lane / 4; // warpgroup-local channel of accumulator row 0 (and + 8)
  const uint64_t w_desc = ptx::smem_descriptor_sw128(ring.bf16(0) + 64 * mma * 128);
  const uint64_t x_desc = ptx::smem_descriptor_sw128(ring.bf16(0) + Shape::channels * 128);
  const bool trace_writer = p.trace != nullptr && t == 0 && mma == 0;
  TileWalk walk(p.order, p.space);
  RingCursor bf16;
  int linear;
  TileIndex tile;
  float acc[Shape::accumulators];
  while (walk.next(linear, tile)) {
    if (trace_writer) p.trace[linear].start_ns = ptx::global_timer_ns();
    const TokenRows rows = token_rows(p.token_offsets, tile, Shape::block_tokens);
#pragma unroll
    for (int i = 0; i < Shape::accumulators; ++i) acc[i] = 0.0f;
    int previous = -1; // the bf16 stage of the group still in flight from the block before
    for (int kb = 0; kb < p.k_blocks; ++kb) {
      ptx::mbarrier_wait(ring.ready(bf16.stage), bf16.phase);
      issue_stage(acc, w_desc, x_desc, bf16.stage);
      if (previous >= 0) {
        ptx::wgmma_wait_group<1>(); // the block before's group has read its stage
        if (lane == 0) ptx::mbarrier_arrive(ring.drained(previous));
      }
      previous = bf16.stage;
      bf16.advance(Shape::bf16_stages);
    }
    ptx::wgmma_wait_group<0>();
    if (previous >= 0 && lane == 0) ptx::mbarrier_arrive(ring.drained(previous));
#pragma unroll
    for (int i = 0; i < Shape::accumulators; ++i) ptx::fence_operand(acc[i]);
    const float unit_scale[2] = {1.0f, 1.0f};
    store_transposed_tile<Shape::block_tokens>(p.y, p.n, acc, rows, tile.col * Shape::channels + 64 * mma + row0,
                                               unit_scale);
    if (trace_writer) {
      TileTrace& record = p.trace[linear];
      record.linear = linear;
      record.sm = static_cast<int>(ptx::sm_id());
      record.end_ns = ptx::global_timer_ns();
    }
  }
}

// Warps 0-7: the MMA warpgroups (wgmma's warpgroups are four warps from a multiple of four); 8-19: the
// converters.
__global__ void __launch_bounds__(ConverterShape::threads, 1)
    mxfp8_transposed_converters_kernel(const __grid_constant__ TensorMaps maps, const Params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  using Shape = ConverterShape;
  extern __shared__ uint8_t shared_raw[];
  const ConverterRing ring(shared_raw, p.stages);
  const int warpgroup = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    ptx::prefetch_tensor_map(&maps.x);
    ptx::prefetch_tensor_map(&maps.w);
    for (int s = 0; s < ring.stages; ++s) {
      ptx::mbarrier_init(ring.full(s), 1);
      *ring.readers(s) = 0;
    }
    for (int b = 0; b < Shape::bf16_stages; ++b) {
      ptx::mbarrier_init(ring.ready(b), 4 * Shape::converters);
      ptx::mbarrier_init(ring.drained(b), 4 * Shape::mma_warpgroups);
    }
    ptx::fence_barrier_init();
    BlockLoads first(p);
    for (int s = 0; s < ring.stages; ++s) first.step(p, ring, maps, s, true);
  }
  __syncthreads();
  if (warpgroup < Shape::mma_warpgroups) mma_loop(p, ring, warpgroup);
  else converter_loop(p, ring, maps, warpgroup - Shape::mma_warpgroups);
#endif
}

} // namespace tilesim::kernels::mxfp8_transposed
