// The block-scaled MXFP8 grouped GEMM, scheme (b), exact dequantisation (kernels/mxfp8/NOTES.md):
// the operands arrive as FP8 (half the bytes of bf16), are converted with their blocks' scales into
// bf16 (mxfp8_dequant.h: exact), and multiply on the bf16 tensor cores.
//
// Everything but the consumers is scheme (a)'s (mxfp8_gemm_kernel.cuh): the persistent scheduler,
// clusters of two with multicast, the FP8 TMA ring of 128-deep stages, the scale warps (here
// keeping W's scales raw, one word per row), the epilogue. As in the mixed-input kernel
// (kernels/mixed_input/), X is wgmma's register A operand: each consumer warpgroup converts its 64
// rows of the stage's X tile straight into A fragments. W's tile must reach wgmma from shared
// memory: the two consumers convert 64 of its rows each into a bf16 copy (two 128-byte-swizzled K
// halves, the layout the bf16 grouped GEMM's TMA gives its B), double-buffered so that a stage's
// conversion overlaps the previous stage's wgmma. Once a stage's bytes and scales are in
// registers, its FP8 slot goes back to the producers, before any of its MMA.
//
// Per stage and consumer: wait for the wgmma two stages back (its fragments and bf16 W buffer are
// this stage's), convert, meet the other consumer (its reads of this buffer are done too), store
// the bf16 W rows, fence them into the async proxy, meet again, issue 8 wgmma m64n128k16.
#pragma once

#include "kernels/common/fragment_source.cuh"
#include "kernels/common/wgmma_rs.cuh"
#include "kernels/mxfp8/mxfp8_dequant.h"
#include "kernels/mxfp8/mxfp8_gemm_kernel.cuh"

namespace tilesim::kernels::mxfp8_gemm {

constexpr int kBf16HalfBytes = kBlockN * 64 * 2; // one K half of W's bf16 tile: [128 rows x 64], 16 KB
constexpr int kBf16TileBytes = 2 * kBf16HalfBytes;
constexpr int kBf16Buffers = 2;
constexpr int kConsumerBarrier = 3; // named barrier of both consumers (the epilogue uses 1 and 2)
constexpr int kDequantizeStages = 3; // 3 x 32 KB FP8 stages + 2 x 32 KB bf16 tiles + epilogue: 207 KB

inline int dequantize_shared_bytes(int stages) { return shared_bytes(stages) + 1023 + kBf16Buffers * kBf16TileBytes; }

// The four 16-byte units of W's stage tile a consumer thread converts: rows consumer * 64 + t / 8
// + 16 j (j < 4), all in unit u = t % 8 (K 16u..16u + 15, MX block u / 2). A quarter warp reads one
// row's eight units (TMA's 128-byte swizzle puts unit u of row r at u ^ (r % 8)): no bank conflict.
struct WUnits {
  uint32_t row[4];   // tile-local rows
  uint32_t src[4];   // byte offsets in the FP8 stage
  uint32_t dst[4][2]; // byte offsets in a bf16 tile of the unit's two 8-value chunks
  uint32_t block;    // MX block of the unit inside the stage
  __device__ WUnits(int consumer, int t) : block((t % 8) / 2) {
    const int u = t % 8, phase = (t / 8) % 8;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      row[j] = consumer * 64 + t / 8 + 16 * j;
      src[j] = row[j] * kBlockK + ((u ^ phase) << 4);
#pragma unroll
      for (int c = 0; c < 2; ++c) // bf16 chunk 2 (u % 4) + c of K half u / 4, swizzled as TMA would
        dst[j][c] = (u / 4) * kBf16HalfBytes + row[j] * 128 + (((2 * (u % 4) + c) ^ phase) << 4);
    }
  }
};

// wgmma reads its register A operand asynchronously, which the compiler does not know: touching a
// fragment set here, once the wgmma that read it are waited for, keeps its registers from being
// reused for anything else while they run (as ptx::fence_operand does for accumulators).
__device__ __forceinline__ void fence_fragments(uint32_t (&frag)[8][4]) {
#pragma unroll
  for (int kk = 0; kk < 8; ++kk)
#pragma unroll
    for (int r = 0; r < 4; ++r) asm volatile("" : "+r"(frag[kk][r])::"memory");
}

template <bool TwoSteps>
__device__ __forceinline__ uint32_t convert(uint32_t word, uint32_t b, const mxfp8_dequant::BlockScale& s) {
  return mxfp8_dequant::convert_pair_steps<TwoSteps>(word, b, s);
}

// One stage's conversions: X's rows into the A fragments, W's units into registers (bf16, stored
// after the consumers meet). TwoSteps: some scale of the warp's is above 2^7 (mxfp8_dequant.h).
// convert_x false: the warp's 16 rows are all past the tile's tokens (decode tiles hold 16 of 128),
// whose outputs are never stored: their fragments keep whatever they held.
template <bool TwoSteps>
__device__ __forceinline__ void convert_stage(uint32_t x_stage, uint32_t w_stage, const FragmentSource<kBlockK>& src,
                                              const WUnits& units, const mxfp8_dequant::BlockScale (&xs)[2][4],
                                              const mxfp8_dequant::BlockScale (&ws)[4], bool convert_x,
                                              uint32_t (&frag)[8][4], uint4 (&w_out)[4][2]) {
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint4 raw = ptx::ld_shared_v4(w_stage + units.src[j]);
    w_out[j][0] = make_uint4(convert<TwoSteps>(raw.x, 0, ws[j]), convert<TwoSteps>(raw.x, 2, ws[j]),
                             convert<TwoSteps>(raw.y, 0, ws[j]), convert<TwoSteps>(raw.y, 2, ws[j]));
    w_out[j][1] = make_uint4(convert<TwoSteps>(raw.z, 0, ws[j]), convert<TwoSteps>(raw.z, 2, ws[j]),
                             convert<TwoSteps>(raw.w, 0, ws[j]), convert<TwoSteps>(raw.w, 2, ws[j]));
  }
  if (!convert_x) return;
#pragma unroll
  for (int kk = 0; kk < 8; ++kk) // k16 step kk lies in MX block kk / 2
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int i = 0; i < 2; ++i)
        frag[kk][2 * h + i] =
            convert<TwoSteps>(ptx::ld_shared_u32(x_stage + src.offset[kk][h] + i * src.row8_bytes), src.byte, xs[i][kk / 2]);
}

// One stage (see the header comment); Set picks the fragment registers and the bf16 W buffer.
template <int Set>
__device__ __forceinline__ void dequantize_stage(const Ring& ring, const ScaleArea& scales, uint8_t* bf16_tiles,
                                                 const RingCursor& cursor, const FragmentSource<kBlockK>& src,
                                                 const WUnits& units, int x_row, bool convert_x,
                                                 uint32_t (&frag)[2][8][4], float (&acc)[64]) {
  const int s = cursor.stage;
  ptx::wgmma_wait_group<1>(); // the wgmma two stages back, which read frag[Set] and this buffer, are done
  fence_fragments(frag[Set]);
  ptx::mbarrier_wait(ring.full(s), cursor.phase);
  ptx::mbarrier_wait(scales.ready(s), cursor.phase);
  const uint32_t x_words[2] = {ptx::ld_shared_u32(ptx::smem_addr(scales.rows(s) + x_row)),
                               ptx::ld_shared_u32(ptx::smem_addr(scales.rows(s) + x_row + 8))};
  mxfp8_dequant::BlockScale xs[2][4], ws[4];
  uint32_t largest = 0;
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int b = 0; b < kBlocksPerStage; ++b) {
      const uint32_t e = (x_words[i] >> (8 * b)) & 0xFF;
      largest = max(largest, e);
      xs[i][b] = mxfp8_dequant::block_scale(e);
    }
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const uint32_t e = (ptx::ld_shared_u32(ptx::smem_addr(scales.w_rows(s) + units.row[j])) >> (8 * units.block)) & 0xFF;
    largest = max(largest, e);
    ws[j] = mxfp8_dequant::block_scale(e);
  }
  uint4 w_out[4][2];
  const uint32_t x_stage = ptx::smem_addr(ring.a(s)), w_stage = ptx::smem_addr(ring.b(s));
  if (__any_sync(0xFFFFFFFFu, largest > mxfp8_dequant::kSingleMultiplyMaxScale))
    convert_stage<true>(x_stage, w_stage, src, units, xs, ws, convert_x, frag[Set], w_out);
  else
    convert_stage<false>(x_stage, w_stage, src, units, xs, ws, convert_x, frag[Set], w_out);
  __syncwarp(); // every lane's reads of the FP8 stage are done: it goes back to both CTAs' producers
  if (threadIdx.x % 32 == 0) release_stage(ring, s);
  ptx::named_barrier_sync(kConsumerBarrier, 256); // the other consumer's wgmma on this buffer are done too
  const uint32_t tile = ptx::smem_addr(bf16_tiles + Set * kBf16TileBytes);
#pragma unroll
  for (int j = 0; j < 4; ++j)
#pragma unroll
    for (int c = 0; c < 2; ++c) ptx::st_shared_v4(tile + units.dst[j][c], w_out[j][c]);
  ptx::fence_proxy_async_shared(); // generic-proxy stores, read by wgmma (the async proxy)
  ptx::named_barrier_sync(kConsumerBarrier, 256);
  ptx::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < 8; ++kk) // K half kk / 4, + 32 bytes per k16 step inside its swizzle row
    ptx::wgmma_m64n128k16_rs(acc, frag[Set][kk],
                             ptx::smem_descriptor_sw128(bf16_tiles + Set * kBf16TileBytes + (kk / 4) * kBf16HalfBytes) +
                                 2 * (kk % 4));
  ptx::wgmma_commit_group();
}

__device__ __forceinline__ void dequantize_consumer_loop(const GroupedGemmParams& p, const Ring& ring,
                                                         const ScaleArea& scales, const CUtensorMap* y_map,
                                                         int consumer) {
  const int t = threadIdx.x % 128;
  const int x_row = consumer * 64 + 16 * (t / 32) + (t % 32) / 4; // and x_row + 8
  const FragmentSource<kBlockK> src(x_row, t % 32);
  const WUnits units(consumer, t);
  uint8_t* bf16_tiles = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(scales.ready(scales.stages)) + 1023) & ~uintptr_t(1023));
  const bool trace_writer = p.trace != nullptr && t == 0 && consumer == 0;
  TileScheduler scheduler(p);
  RingCursor cursor;
  ClusterTile work;
  float acc[64];
  uint32_t frag[2][8][4];
  while (scheduler.next(work)) {
    if (trace_writer && work.store) p.trace[work.linear].start_ns = ptx::global_timer_ns();
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
    const TileRows rows = tile_rows(p, work.tile, kBlockM);
    const bool convert_x = consumer * 64 + 16 * (t / 32) < rows.valid; // the warp holds a token of the tile
    for (int kb = 0; kb < p.k_blocks; kb += 2) { // unrolled by two: each fragment set a fixed set of registers
      dequantize_stage<0>(ring, scales, bf16_tiles, cursor, src, units, x_row, convert_x, frag, acc);
      cursor.advance(ring.stages);
      if (kb + 1 < p.k_blocks) {
        dequantize_stage<1>(ring, scales, bf16_tiles, cursor, src, units, x_row, convert_x, frag, acc);
        cursor.advance(ring.stages);
      }
    }
    ptx::wgmma_wait_group<0>();
    fence_fragments(frag[0]);
    fence_fragments(frag[1]);
#pragma unroll
    for (int i = 0; i < 64; ++i) ptx::fence_operand(acc[i]);
    if (work.store) {
      if (rows.valid == kBlockM)
        store_tile_tma<kBlockN, GemmEpilogue::none>(p, ring, y_map, acc, work.tile, rows, consumer);
      else
        store_tile<kBlockN, GemmEpilogue::none>(p, acc, work.tile, rows, consumer);
      if (trace_writer) {
        TileTrace& record = p.trace[work.linear];
        record.linear = work.linear;
        record.sm = static_cast<int>(ptx::sm_id());
        record.end_ns = ptx::global_timer_ns();
      }
    }
  }
  if (t == 0) ptx::bulk_wait_group<0>();
}

struct DequantizeConsumers {
  static constexpr bool decode_w_scales = false;
  __device__ static void run(const Params& p, const Ring& ring, const ScaleArea& scales, const CUtensorMap* y_map,
                             int consumer) {
    dequantize_consumer_loop(p.gemm, ring, scales, y_map, consumer);
  }
};

} // namespace tilesim::kernels::mxfp8_gemm
