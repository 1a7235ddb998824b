// The grouped GEMM kernel: Y_e = X_e * W_e^T, bf16 in, fp32 accumulate, bf16 out (sm_90a).
//
// One CTA = one producer warpgroup (a single thread issues TMA loads into a ring of `stages`
// shared-memory stages, full/empty mbarriers per stage) + two consumer warpgroups (each owns 64 of
// the tile's 128 rows and issues wgmma m64nBNk16 from shared memory).
//
// CTAs run in clusters of two; CTA blockIdx.x computes work items blockIdx.x, blockIdx.x +
// gridDim.x, ... (persistent: grid ~ SM count; non-persistent: grid = tile count rounded up to even,
// one item each), each mapped to a tile by tilesim::tile_at, so the simulator replays this walk.
// When the pair's two tiles share the W tile (same expert and column) each CTA loads half of it and
// multicasts to both; when they share the X tile, the same for X. This halves that operand's L2
// reads: at 128x256 a lone CTA pulls 48 KB per 64-deep k-block, about 9 TB/s from L2 at full
// tensor rate, more than the H100 L2 delivers (v1, no multicast, measured 653 TFLOP/s; NOTES.md).
// Epilogue: full tiles leave through shared memory and TMA stores that drain while the consumers
// start the next tile; tiles that cross an expert's last token are stored directly, row-masked.
// A fused epilogue (GemmEpilogue, a template parameter: the plain kernel compiles as before) adds
// the expert's bias row and applies ReLU or GELU to the fp32 accumulators before they are packed;
// each consumer copies the tile's bias row into shared memory as the tile starts.
#pragma once

#include <cuda.h>
#include <cuda_bf16.h>

#include <cstdint>

#include "kernels/grouped_gemm/grouped_gemm.h"
#include "kernels/common/activations.cuh"
#include "kernels/common/ptx_wrappers.cuh"
#include "kernels/common/ring_cursor.cuh"
#include "kernels/common/wgmma.cuh"
#include "models/launch_order.h"

namespace tilesim::kernels {

// Boxes of one stage: X 128 x 64 and W BN x 64, and halves of each for the multicast split.
struct TensorMaps {
  CUtensorMap x;
  CUtensorMap x_half;
  CUtensorMap w;
  CUtensorMap w_half;
  CUtensorMap y; // 64 x 64 boxes: one epilogue chunk
};

struct GroupedGemmParams {
  LaunchOrder order;
  TileSpace space;           // row_offsets: device prefix sums of tile rows per expert
  const int* token_offsets;  // device, experts + 1 prefix sums of tokens
  __nv_bfloat16* y;          // [total_tokens, n]
  const __nv_bfloat16* bias; // [experts, n] for a fused epilogue, else nullptr
  TileTrace* trace;          // device, one record per linear tile, or nullptr
  int n;
  int k_blocks;
  int stages;
};

constexpr int kClusterSize = 2;

// Compile-time shape of one instantiation. BLOCK_M and BLOCK_K are fixed by the design: two
// consumer warpgroups of 64 rows each, and 64 bf16 = 128 bytes = one 128B-swizzle row of K.
template <int BlockN> struct TileShape {
  static constexpr int block_m = 128;
  static constexpr int block_n = BlockN;
  static constexpr int block_k = 64;
  static constexpr int consumers = 2;
  static constexpr int threads = 128 * (consumers + 1);
  static constexpr int a_bytes = block_m * block_k * 2;
  static constexpr int b_bytes = block_n * block_k * 2;
  static constexpr int stage_bytes = a_bytes + b_bytes;
  static constexpr int accumulators = block_n / 2; // 64 x BlockN fp32 over 128 threads
  // A stage is free again once every consumer warp of both CTAs of the cluster is done with it.
  static constexpr int release_arrivals = consumers * 4 * kClusterSize;
  // Epilogue staging: per consumer two 64 x 64 bf16 chunks (8 KB each), double buffered.
  static constexpr int chunk_bytes = 64 * 64 * 2;
  static constexpr int epilogue_bytes = consumers * 2 * chunk_bytes;
  // Fused epilogues: per consumer the tile's bias row segment, BlockN bf16, after the barriers.
  static constexpr int bias_bytes = consumers * block_n * 2;
  static int shared_bytes(int stages, GemmEpilogue epilogue = GemmEpilogue::none) {
    return 1024 + stages * stage_bytes + epilogue_bytes + stages * 16 + (epilogue == GemmEpilogue::none ? 0 : bias_bytes);
  }
};

enum class Sharing : int { none, x_tile, w_tile };

struct ClusterTile {
  TileIndex tile;  // this CTA's tile
  int linear;      // its work-item index
  bool store;      // false for the odd last item's partner, which only keeps the pair in step
  Sharing sharing; // what the pair's two tiles have in common
};

// Owns the walk: the pair (2c, 2c + 1) of work items goes to cluster c, then + gridDim.x.
struct TileScheduler {
  LaunchOrder order;
  TileSpace space;
  int pair_first;
  int rank;
  int count;

  __device__ explicit TileScheduler(const GroupedGemmParams& params)
      : order(params.order), space(params.space), pair_first(static_cast<int>(blockIdx.x & ~1u)),
        rank(static_cast<int>(blockIdx.x & 1u)), count(tile_count(params.space)) {}

  __device__ bool next(ClusterTile& out) {
    if (pair_first >= count) return false;
    const TileIndex first = tile_at(order, space, pair_first);
    const TileIndex second = pair_first + 1 < count ? tile_at(order, space, pair_first + 1) : first;
    out.tile = rank ? second : first;
    out.linear = pair_first + rank;
    out.store = out.linear < count;
    const bool same_expert = first.expert == second.expert;
    out.sharing = same_expert && first.col == second.col         ? Sharing::w_tile
                  : same_expert && first.local_row == second.local_row ? Sharing::x_tile
                                                                       : Sharing::none;
    pair_first += static_cast<int>(gridDim.x);
    return true;
  }
};

// Shared-memory ring: stage s holds A (128 x 64) and, in a second array, B (BN x 64), each
// 1024-byte aligned as the 128B swizzle requires; then the epilogue chunks, then the barriers,
// then (fused epilogues) each consumer's bias row.
template <int BlockN> struct SharedRing {
  using Shape = TileShape<BlockN>;
  uint8_t* base;
  int stages;
  __device__ SharedRing(uint8_t* raw, int stages_)
      : base(reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023))),
        stages(stages_) {}
  __device__ uint8_t* a(int s) const { return base + s * Shape::a_bytes; }
  __device__ uint8_t* b(int s) const { return base + stages * Shape::a_bytes + s * Shape::b_bytes; }
  __device__ uint8_t* chunk(int consumer, int buffer) const {
    return base + stages * Shape::stage_bytes + (consumer * 2 + buffer) * Shape::chunk_bytes;
  }
  __device__ uint64_t* full(int s) const {
    return reinterpret_cast<uint64_t*>(base + stages * Shape::stage_bytes + Shape::epilogue_bytes) + s;
  }
  __device__ uint64_t* empty(int s) const { return full(stages) + s; }
  __device__ uint8_t* bias(int consumer) const {
    return reinterpret_cast<uint8_t*>(empty(stages)) + consumer * Shape::block_n * 2;
  }
};

struct TileRows {
  int first_token; // global row of the tile's first row
  int valid;       // rows of this tile that belong to the expert (<= block_m)
};

__device__ __forceinline__ TileRows tile_rows(const GroupedGemmParams& p, const TileIndex& t, int block_m) {
  const int first = __ldg(p.token_offsets + t.expert) + t.local_row * block_m;
  const int end = __ldg(p.token_offsets + t.expert + 1);
  return {first, min(block_m, end - first)};
}

template <int BlockN>
__device__ __forceinline__ void producer_loop(const GroupedGemmParams& p, const SharedRing<BlockN>& ring,
                                              const TensorMaps& maps) {
  using Shape = TileShape<BlockN>;
  constexpr uint16_t both_ctas = 0b11;
  TileScheduler scheduler(p);
  const int rank = scheduler.rank;
  RingCursor cursor;
  ClusterTile work;
  while (scheduler.next(work)) {
    // Rows past the expert's end load the next expert's tokens (or TMA zeros past the tensor);
    // the epilogue masks them. W is viewed as [experts * n, k]: the same holds for its n tail.
    const int x_row = tile_rows(p, work.tile, Shape::block_m).first_token;
    const int w_row = work.tile.expert * p.n + work.tile.col * BlockN;
    for (int kb = 0; kb < p.k_blocks; ++kb) {
      const int s = cursor.stage, k0 = kb * Shape::block_k;
      ptx::mbarrier_wait(ring.empty(s), cursor.phase ^ 1);
      ptx::mbarrier_arrive_expect_tx(ring.full(s), Shape::stage_bytes);
      if (work.sharing == Sharing::x_tile)
        ptx::tma_load_2d_multicast(ring.a(s) + rank * (Shape::a_bytes / 2), &maps.x_half, k0,
                                   x_row + rank * (Shape::block_m / 2), ring.full(s), both_ctas);
      else
        ptx::tma_load_2d(ring.a(s), &maps.x, k0, x_row, ring.full(s));
      if (work.sharing == Sharing::w_tile)
        ptx::tma_load_2d_multicast(ring.b(s) + rank * (Shape::b_bytes / 2), &maps.w_half, k0,
                                   w_row + rank * (BlockN / 2), ring.full(s), both_ctas);
      else
        ptx::tma_load_2d(ring.b(s), &maps.w, k0, w_row, ring.full(s));
      cursor.advance(ring.stages);
    }
  }
}

template <int BlockN>
__device__ __forceinline__ void wgmma_k_block(float (&acc)[BlockN / 2], uint64_t desc_a, uint64_t desc_b) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) { // 4 x k16 = BLOCK_K; +32 bytes per step inside the swizzle row
    if constexpr (BlockN == 256)
      ptx::wgmma_m64n256k16(acc, desc_a + 2 * kk, desc_b + 2 * kk);
    else
      ptx::wgmma_m64n128k16(acc, desc_a + 2 * kk, desc_b + 2 * kk);
  }
}

// The tile's bias row segment (BlockN bf16) goes into this consumer's shared buffer as the tile
// starts, by cp.async, so that no register waits for it and it has landed long before the
// epilogue, which reads it from shared memory. (First fused version: loads in the epilogue, +2-3.6%
// over the plain GEMM; second: those loads after an L1 prefetch at the tile's start, +1.8-2.6%:
// four dependent global round trips per tile, one per 64-column chunk, behind its barriers.)
// Columns past n are never stored: they get zeros and no load past the array (n % 8 == 0, so a
// pair is wholly inside or outside).
template <int BlockN, GemmEpilogue Epilogue>
__device__ __forceinline__ void load_bias(const GroupedGemmParams& p, const SharedRing<BlockN>& ring,
                                          const TileIndex& tile, int consumer) {
  if constexpr (Epilogue != GemmEpilogue::none) {
    const __nv_bfloat16* row = p.bias + static_cast<int64_t>(tile.expert) * p.n;
    for (int pair = threadIdx.x % 128; pair < BlockN / 2; pair += 128) {
      const int col = tile.col * BlockN + 2 * pair;
      ptx::cp_async_4(ring.bias(consumer) + 4 * pair, row + min(col, p.n - 2), col < p.n);
    }
    ptx::cp_async_commit_group();
  }
}

// This thread's bias copies have landed; the barrier that follows shows them to the warpgroup.
template <GemmEpilogue Epilogue> __device__ __forceinline__ void bias_landed() {
  if constexpr (Epilogue != GemmEpilogue::none) ptx::cp_async_wait_all();
}

// The bias of the tile's columns col and col + 1 (col even), from the consumer's shared copy.
template <int BlockN, GemmEpilogue Epilogue>
__device__ __forceinline__ float2 epilogue_bias(const SharedRing<BlockN>* ring, int consumer, int col) {
  if constexpr (Epilogue == GemmEpilogue::none) {
    return {0.0f, 0.0f};
  } else {
    const uint32_t pair = ptx::ld_shared_u32(ptx::smem_addr(ring->bias(consumer) + 2 * col));
    return {__uint_as_float(pair << 16), __uint_as_float(pair & 0xFFFF0000u)};
  }
}

// One accumulator through the epilogue: as is, or bias + activation.
template <GemmEpilogue Epilogue> __device__ __forceinline__ float epilogue_value(float acc, float bias) {
  if constexpr (Epilogue == GemmEpilogue::bias_relu) return relu(acc + bias);
  else if constexpr (Epilogue == GemmEpilogue::bias_gelu) return gelu_tanh(acc + bias);
  else return acc;
}

// Accumulator fragment layout of wgmma m64nN (PTX ISA 9.7.15.5.1.1, "Matrix D"): thread t of the
// warpgroup holds, for j in [0, N/8), rows 16*(t/32) + (t%32)/4 (+8) and columns 8j + 2*(t%4) (+1).
// `ring` holds the bias copy of a fused epilogue; the plain one needs none.
template <int BlockN, GemmEpilogue Epilogue>
__device__ __forceinline__ void store_tile(const GroupedGemmParams& p, const float (&acc)[BlockN / 2],
                                           const TileIndex& tile, TileRows rows, int consumer,
                                           const SharedRing<BlockN>* ring = nullptr) {
  const int t = threadIdx.x % 128;
  if constexpr (Epilogue != GemmEpilogue::none) {
    bias_landed<Epilogue>();
    ptx::named_barrier_sync(1 + consumer, 128);
  }
  const int r0 = consumer * 64 + 16 * (t / 32) + (t % 32) / 4;
  const int col0 = tile.col * BlockN + 2 * (t % 4);
  __nv_bfloat16* row0 = p.y + static_cast<int64_t>(rows.first_token + r0) * p.n;
  __nv_bfloat16* row1 = row0 + static_cast<int64_t>(8) * p.n;
  const bool write0 = r0 < rows.valid, write1 = r0 + 8 < rows.valid;
#pragma unroll
  for (int j = 0; j < BlockN / 8; ++j) {
    const int col = col0 + 8 * j; // n % 8 == 0 and col even: col < n implies col + 1 < n
    if (col < p.n) {
      const float2 b = epilogue_bias<BlockN, Epilogue>(ring, consumer, 8 * j + 2 * (t % 4));
      if (write0)
        *reinterpret_cast<__nv_bfloat162*>(row0 + col) = __floats2bfloat162_rn(
            epilogue_value<Epilogue>(acc[4 * j], b.x), epilogue_value<Epilogue>(acc[4 * j + 1], b.y));
      if (write1)
        *reinterpret_cast<__nv_bfloat162*>(row1 + col) = __floats2bfloat162_rn(
            epilogue_value<Epilogue>(acc[4 * j + 2], b.x), epilogue_value<Epilogue>(acc[4 * j + 3], b.y));
    }
  }
  // Every thread has read the bias before the next tile's copy overwrites it.
  if constexpr (Epilogue != GemmEpilogue::none) ptx::named_barrier_sync(1 + consumer, 128);
}

__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

// Epilogue for a tile whose 128 rows all belong to its expert: each consumer writes its 64 x BN
// block as 64 x 64 chunks into shared memory (128B-swizzled, as the TMA store map expects: 16-byte
// unit u of row r sits at u ^ (r % 8), which also keeps the warp's stores conflict-free), and one
// thread stores each chunk with TMA. Two chunk buffers per consumer: chunk c reuses the buffer of
// chunk c - 2 once that store has read it. The consumers go on to the next tile while the stores
// drain. (Direct 4-byte global stores cost ~10% of the whole run: measured with stores skipped.)
template <int BlockN, GemmEpilogue Epilogue>
__device__ __forceinline__ void store_tile_tma(const GroupedGemmParams& p, const SharedRing<BlockN>& ring,
                                               const CUtensorMap* y_map, const float (&acc)[BlockN / 2],
                                               const TileIndex& tile, TileRows rows, int consumer) {
  const int t = threadIdx.x % 128;
  const bool issuer = t == 0;
  const int r0 = 16 * (t / 32) + (t % 32) / 4; // and r0 + 8; both have row % 8 == (t % 32) / 4
  const int swizzle = (t % 32) / 4;
  const int y_row = rows.first_token + consumer * 64;
  bias_landed<Epilogue>(); // the first chunk's barrier shows every thread's copy to the warpgroup
#pragma unroll
  for (int c = 0; c < BlockN / 64; ++c) {
    uint8_t* buffer = ring.chunk(consumer, c % 2);
    if (issuer) ptx::bulk_wait_group_read<1>();
    ptx::named_barrier_sync(1 + consumer, 128);
#pragma unroll
    for (int u = 0; u < 8; ++u) {
      const int j = 8 * c + u;
      const int offset = ((u ^ swizzle) * 16) + 4 * (t % 4);
      const float2 b = epilogue_bias<BlockN, Epilogue>(&ring, consumer, 8 * j + 2 * (t % 4));
      *reinterpret_cast<uint32_t*>(buffer + r0 * 128 + offset) =
          pack_bf16x2(epilogue_value<Epilogue>(acc[4 * j], b.x), epilogue_value<Epilogue>(acc[4 * j + 1], b.y));
      *reinterpret_cast<uint32_t*>(buffer + (r0 + 8) * 128 + offset) =
          pack_bf16x2(epilogue_value<Epilogue>(acc[4 * j + 2], b.x), epilogue_value<Epilogue>(acc[4 * j + 3], b.y));
    }
    ptx::fence_proxy_async_shared();
    ptx::named_barrier_sync(1 + consumer, 128);
    const int col = tile.col * BlockN + c * 64;
    if (issuer && col < p.n) { // columns past n are clipped by TMA; a chunk wholly past n is skipped
      ptx::tma_store_2d(y_map, buffer, col, y_row);
      ptx::bulk_commit_group();
    }
  }
}

// A consumer warp gives a stage back to the producers of both CTAs (both may write into it).
template <int BlockN> __device__ __forceinline__ void release_stage(const SharedRing<BlockN>& ring, int s) {
  for (uint32_t cta = 0; cta < kClusterSize; ++cta)
    ptx::mbarrier_arrive_cluster(ptx::map_to_cluster_rank(ring.empty(s), cta));
}

template <int BlockN, GemmEpilogue Epilogue>
__device__ __forceinline__ void consumer_loop(const GroupedGemmParams& p, const SharedRing<BlockN>& ring,
                                              const CUtensorMap* y_map, int consumer) {
  using Shape = TileShape<BlockN>;
  const bool warp_leader = threadIdx.x % 32 == 0;
  const bool trace_writer = p.trace != nullptr && threadIdx.x % 128 == 0 && consumer == 0;
  TileScheduler scheduler(p);
  RingCursor cursor;
  ClusterTile work;
  float acc[Shape::accumulators];
  while (scheduler.next(work)) {
    // The start time goes straight to memory: a register held across the main loop would spill.
    const bool stamp = trace_writer && work.store;
    if (stamp) {
      p.trace[work.linear].start_ns = ptx::global_timer_ns();
      p.trace[work.linear].start_cycles = clock64();
    }
    load_bias<BlockN, Epilogue>(p, ring, work.tile, consumer);
#pragma unroll
    for (int i = 0; i < Shape::accumulators; ++i) acc[i] = 0.0f;
    int previous_stage = -1;
    for (int kb = 0; kb < p.k_blocks; ++kb) {
      ptx::mbarrier_wait(ring.full(cursor.stage), cursor.phase);
      if (stamp) {
        if (kb == 0) p.trace[work.linear].first_step_cycles = clock64();
        if (kb == p.k_blocks - 1) p.trace[work.linear].last_step_cycles = clock64();
      }
      ptx::wgmma_fence();
      wgmma_k_block<BlockN>(acc, ptx::smem_descriptor_sw128(ring.a(cursor.stage) + consumer * 64 * 128),
                            ptx::smem_descriptor_sw128(ring.b(cursor.stage)));
      ptx::wgmma_commit_group();
      // Keep this k-block's wgmma in flight; the previous one is done, so its stage goes back.
      ptx::wgmma_wait_group<1>();
      if (previous_stage >= 0 && warp_leader) release_stage(ring, previous_stage);
      previous_stage = cursor.stage;
      cursor.advance(ring.stages);
    }
    ptx::wgmma_wait_group<0>();
    if (warp_leader) release_stage(ring, previous_stage);
#pragma unroll
    for (int i = 0; i < Shape::accumulators; ++i) ptx::fence_operand(acc[i]);
    if (work.store) {
      // A tile that runs past its expert's last token is stored directly, row-masked, so that
      // the next expert's rows are never touched; full tiles go out through TMA.
      const TileRows rows = tile_rows(p, work.tile, Shape::block_m);
      if (rows.valid == Shape::block_m)
        store_tile_tma<BlockN, Epilogue>(p, ring, y_map, acc, work.tile, rows, consumer);
      else
        store_tile<BlockN, Epilogue>(p, acc, work.tile, rows, consumer, &ring);
      if (trace_writer) {
        TileTrace& record = p.trace[work.linear];
        record.linear = work.linear;
        record.sm = static_cast<int>(ptx::sm_id());
        record.end_ns = ptx::global_timer_ns();
        record.end_cycles = clock64();
      }
    }
  }
  if (threadIdx.x % 128 == 0) ptx::bulk_wait_group<0>(); // the chunks stay alive until stored
  // The odd last item's partner stores nothing and so never waited for its bias copy: it must land
  // before the CTA exits.
  bias_landed<Epilogue>();
}

template <int BlockN, GemmEpilogue Epilogue>
__global__ void __launch_bounds__(TileShape<BlockN>::threads, 1)
    grouped_gemm_kernel(const __grid_constant__ TensorMaps maps, const GroupedGemmParams p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ uint8_t shared_raw[];
  const SharedRing<BlockN> ring(shared_raw, p.stages);
  const int warpgroup = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    ptx::prefetch_tensor_map(&maps.x);
    ptx::prefetch_tensor_map(&maps.x_half);
    ptx::prefetch_tensor_map(&maps.w);
    ptx::prefetch_tensor_map(&maps.w_half);
    ptx::prefetch_tensor_map(&maps.y);
    for (int s = 0; s < p.stages; ++s) {
      ptx::mbarrier_init(ring.full(s), 1);
      ptx::mbarrier_init(ring.empty(s), TileShape<BlockN>::release_arrivals);
    }
    ptx::fence_barrier_init();
  }
  // Both CTAs' barriers exist before either multicasts into or arrives on the other's.
  ptx::cluster_arrive();
  ptx::cluster_wait();
  if (warpgroup == 0) {
    // Producer: one thread is enough to issue TMA; give the registers to the consumers.
    ptx::setmaxnreg_dec<40>();
    if (threadIdx.x == 0) producer_loop<BlockN>(p, ring, maps);
  } else {
    ptx::setmaxnreg_inc<232>();
    consumer_loop<BlockN, Epilogue>(p, ring, &maps.y, warpgroup - 1);
  }
  // Neither CTA leaves while its peer may still arrive on its barriers.
  ptx::cluster_arrive();
  ptx::cluster_wait();
#endif
}

} // namespace tilesim::kernels
