// The block-scaled MXFP8 grouped GEMM, scheme (a): Y_e = X_e * W_e^T with FP8 E4M3 elements and
// one E8M0 scale per 32 K-elements of every row of X and of W, fp32 accumulation, bf16 out (sm_90a).
//
// The bf16 grouped GEMM's machinery (kernels/grouped_gemm/grouped_gemm_kernel.cuh) unchanged: the
// same persistent TileScheduler over tilesim::tile_at, clusters of two with the shared operand tile
// multicast, the same TMA ring and epilogue. A stage holds 128 K-elements of FP8 (one 128-byte
// swizzle row, four MX blocks), which is byte for byte the bf16 ring's 64-wide stage, so the ring
// is SharedRing<128> as is; after its barriers come the scales of each stage.
//
// Per MX block each consumer warpgroup runs two `wgmma m64n64k32 e4m3` (its 64 rows x two 64-column
// halves) into temporaries and promotes each: acc += (tmp * sa[row]) * sb[col] (kernels/mxfp8/
// NOTES.md: two FP32 instructions per element and block, the kernel's bottleneck; one half's wgmma
// and the other warpgroup's run meanwhile). Two more producer warps bring each stage's scales: the four bytes (blocks) of each of
// the tile's 128 rows of W, decoded into floats laid out so that each thread reads its 32 columns'
// scales with 8 vector loads, and the four bytes of each row of X, which each consumer thread
// decodes for the two rows it holds. They load with plain 4-byte loads through L1 (a row's 32-byte
// sector serves 8 stages); a TMA box row is at least 16 bytes, four stages' worth.
#pragma once

#include "kernels/common/wgmma_fp8.cuh"
#include "kernels/grouped_gemm/grouped_gemm_kernel.cuh"

namespace tilesim::kernels::mxfp8_gemm {

constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 128;    // FP8 elements (bytes) per stage and row
constexpr int kScaleBlock = 32; // OCP MX v1.0
constexpr int kBlocksPerStage = kBlockK / kScaleBlock;
constexpr int kRowScaleBytes = kBlockM * kBlocksPerStage; // X's raw scales per stage: 4 bytes a row
// Decoded column scales of one stage: per block, per lane group g = lane % 4, the 32 columns
// 8j + 2g + h (j < 16, h < 2) a thread of that group holds, padded from 32 to 36 floats so the four
// groups' 16-byte loads fall on distinct banks.
constexpr int kGroupFloats = 36;
constexpr int kExpandedFloats = kBlocksPerStage * 4 * kGroupFloats;

using Shape = TileShape<kBlockN>;
using Ring = SharedRing<kBlockN>;
static_assert(Shape::a_bytes == kBlockM * kBlockK && Shape::b_bytes == kBlockN * kBlockK,
              "an FP8 stage must be the bf16 ring's stage, byte for byte");
// Warps of the producer warpgroup: warp 0's first thread issues the TMA loads, warps 1 and 2 load
// the scales of W and of X.
constexpr int kWScaleWarp = 1, kXScaleWarp = 2;
constexpr int kScaleLanes = 64; // arrivals on a stage's "ready" barrier

struct Params {
  GroupedGemmParams gemm;
  const uint8_t* x_scales; // [x_rows, k / 32]
  const uint8_t* w_scales; // [w_rows, k / 32] (w_rows = experts * n)
  int x_rows, w_rows, scale_cols;
};

// The scale area after the ring: per stage X's raw row scales, W's decoded column scales and a
// "ready" barrier (both scale warps' lanes arrive once the stage's scales are in place).
struct ScaleArea {
  uint8_t* base;
  int stages;
  __device__ ScaleArea(const Ring& ring)
      : base(reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(ring.empty(ring.stages)) + 127) & ~uintptr_t(127))),
        stages(ring.stages) {}
  __device__ uint32_t* rows(int s) const { return reinterpret_cast<uint32_t*>(base + s * kRowScaleBytes); }
  __device__ float* expanded(int s) const {
    return reinterpret_cast<float*>(base + stages * kRowScaleBytes) + s * kExpandedFloats;
  }
  // The dequantize scheme keeps W's scales raw, one word per row, where promote's decoded ones go.
  __device__ uint32_t* w_rows(int s) const { return reinterpret_cast<uint32_t*>(expanded(s)); }
  __device__ uint64_t* ready(int s) const { return reinterpret_cast<uint64_t*>(expanded(stages)) + s; }
  static constexpr int bytes(int stages) { return 127 + stages * (kRowScaleBytes + kExpandedFloats * 4 + 8); }
};

inline int shared_bytes(int stages) { return Shape::shared_bytes(stages) + ScaleArea::bytes(stages); }

// E8M0 (OCP MX v1.0, 5.4.1): 2^(e - 127); 0 is 2^-127, an fp32 subnormal; 0xFF is NaN.
__device__ __forceinline__ float e8m0_to_float(uint32_t e) {
  const uint32_t bits = e == 0 ? 0x00200000u : e == 0xFF ? 0x7FFFFFFFu : e << 23;
  return __uint_as_float(bits);
}

__device__ __forceinline__ void producer_loop(const GroupedGemmParams& p, const Ring& ring, const TensorMaps& maps) {
  constexpr uint16_t both_ctas = 0b11;
  TileScheduler scheduler(p);
  const int rank = scheduler.rank;
  RingCursor cursor;
  ClusterTile work;
  while (scheduler.next(work)) {
    const int x_row = tile_rows(p, work.tile, kBlockM).first_token;
    const int w_row = work.tile.expert * p.n + work.tile.col * kBlockN;
    for (int kb = 0; kb < p.k_blocks; ++kb) {
      const int s = cursor.stage, k0 = kb * kBlockK;
      ptx::mbarrier_wait(ring.empty(s), cursor.phase ^ 1);
      ptx::mbarrier_arrive_expect_tx(ring.full(s), Shape::stage_bytes);
      if (work.sharing == Sharing::x_tile)
        ptx::tma_load_2d_multicast(ring.a(s) + rank * (Shape::a_bytes / 2), &maps.x_half, k0,
                                   x_row + rank * (kBlockM / 2), ring.full(s), both_ctas);
      else
        ptx::tma_load_2d(ring.a(s), &maps.x, k0, x_row, ring.full(s));
      if (work.sharing == Sharing::w_tile)
        ptx::tma_load_2d_multicast(ring.b(s) + rank * (Shape::b_bytes / 2), &maps.w_half, k0,
                                   w_row + rank * (kBlockN / 2), ring.full(s), both_ctas);
      else
        ptx::tma_load_2d(ring.b(s), &maps.w, k0, w_row, ring.full(s));
      cursor.advance(ring.stages);
    }
  }
}

// The scale warps: each lane takes 4 of the tile's 128 rows of W (warp kWScaleWarp: decoded into
// the consumers' column layout) or of X (kXScaleWarp: kept raw), one 4-byte load per row and stage
// (the stage's four blocks), kScaleLookahead stages ahead of the stage it writes, so that the L2's
// round trip under load stays off the consumers' path (7% faster than one stage at a time, NOTES.md).
// Rows past the tensor get scale 0; their outputs are never stored. A stage's scales are written
// once its previous contents are released.
constexpr int kScaleLookahead = 4;

// The lane's 4 rows of a tile's scales, a pointer each (rows past the tensor: none, scale 0).
struct ScaleSource {
  const uint32_t* rows[4];
  __device__ ScaleSource(const uint8_t* tile_first_row, int valid_rows, int scale_cols, int lane) {
#pragma unroll
    for (int c = 0; c < 4; ++c) {
      const int row = 4 * lane + c;
      rows[c] = row < valid_rows
                    ? reinterpret_cast<const uint32_t*>(tile_first_row + static_cast<int64_t>(row) * scale_cols)
                    : nullptr;
    }
  }
  __device__ void load(uint32_t (&words)[4], int kb) const { // stage kb's 4 bytes of each row
#pragma unroll
    for (int c = 0; c < 4; ++c) words[c] = rows[c] ? __ldg(rows[c] + kb) : 0u;
  }
};

template <bool DecodeW>
__device__ __forceinline__ void store_scales(const ScaleArea& scales, int s, const uint32_t (&words)[4], int lane,
                                             bool w_side) {
#pragma unroll
  for (int c = 0; c < 4; ++c) {
    const int row = 4 * lane + c;
    if (!w_side || !DecodeW) {
      (w_side ? scales.w_rows(s) : scales.rows(s))[row] = words[c];
      continue;
    }
    const int slot = (row % 8) / 2 * kGroupFloats + (row / 8) * 2 + row % 2;
#pragma unroll
    for (int b = 0; b < kBlocksPerStage; ++b)
      scales.expanded(s)[b * 4 * kGroupFloats + slot] = e8m0_to_float((words[c] >> (8 * b)) & 0xFF);
  }
}

// DecodeW: W's scales as promote's floats (true) or raw words per row (false, the dequantize scheme).
template <bool DecodeW>
__device__ __forceinline__ void scale_loop(const Params& p, const Ring& ring, const ScaleArea& scales, bool w_side) {
  const int lane = threadIdx.x % 32;
  TileScheduler scheduler(p.gemm);
  RingCursor cursor;
  ClusterTile work;
  while (scheduler.next(work)) {
    const int first = w_side ? work.tile.expert * p.gemm.n + work.tile.col * kBlockN
                             : tile_rows(p.gemm, work.tile, kBlockM).first_token;
    const ScaleSource source((w_side ? p.w_scales : p.x_scales) + static_cast<int64_t>(first) * p.scale_cols,
                             (w_side ? p.w_rows : p.x_rows) - first, p.scale_cols, lane);
    uint32_t words[kScaleLookahead][4];
#pragma unroll
    for (int d = 0; d < kScaleLookahead; ++d)
      if (d < p.gemm.k_blocks) source.load(words[d], d);
    for (int kb0 = 0; kb0 < p.gemm.k_blocks; kb0 += kScaleLookahead) {
#pragma unroll
      for (int d = 0; d < kScaleLookahead; ++d) { // unrolled: words[d] stays in registers
        const int kb = kb0 + d;
        if (kb < p.gemm.k_blocks) {
          ptx::mbarrier_wait(ring.empty(cursor.stage), cursor.phase ^ 1);
          store_scales<DecodeW>(scales, cursor.stage, words[d], lane, w_side);
          ptx::mbarrier_arrive(scales.ready(cursor.stage));
          cursor.advance(ring.stages);
          if (kb + kScaleLookahead < p.gemm.k_blocks) source.load(words[d], kb + kScaleLookahead);
        }
      }
    }
  }
}

// ld.shared.v4.f32 (PTX ISA 9.7.9.8 ld): four floats at a shared-memory address. The explicit state
// space keeps ptxas from emitting generic loads (LD instead of LDS) for the column scales.
__device__ __forceinline__ float4 ld_shared_f32x4(uint32_t addr) {
  float4 v;
  asm volatile("ld.shared.v4.f32 {%0, %1, %2, %3}, [%4];" : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w) : "r"(addr));
  return v;
}

// acc += (tmp * sa) * sb over one 64-column half of the thread's fragment (wgmma m64nN layout,
// PTX ISA 9.7.15.5.1.1: acc[4j + h] is row r0, column 8j + 2g + h; acc[4j + 2 + h] is row r0 + 8).
// tmp is the half's m64n64 product; column_scales the shared address of the thread's 32 column
// scales of this block (the half's 16 follow at Half * 64 bytes).
template <int Half>
__device__ __forceinline__ void promote(float (&acc)[64], float (&tmp)[32], float sa0, float sa1,
                                        uint32_t column_scales) {
#pragma unroll
  for (int q = 0; q < 4; ++q) { // columns of j = 2q and 2q + 1
    const float4 c = ld_shared_f32x4(column_scales + (Half * 4 + q) * 16);
    const float sb[4] = {c.x, c.y, c.z, c.w};
#pragma unroll
    for (int u = 0; u < 4; ++u) {
      const int j = 2 * q + u / 2, h = u % 2, i = 4 * j + h;
      acc[32 * Half + i] = fmaf(tmp[i] * sa0, sb[u], acc[32 * Half + i]);
      acc[32 * Half + i + 2] = fmaf(tmp[i + 2] * sa1, sb[u], acc[32 * Half + i + 2]);
    }
  }
}

// One 64 x 64 x 32 product into `tmp` (scale-d false: overwritten), as its own wgmma group.
__device__ __forceinline__ void issue_half(float (&tmp)[32], uint64_t desc_a, uint64_t desc_b) {
#pragma unroll
  for (int i = 0; i < 32; ++i) ptx::fence_operand(tmp[i]);
  ptx::wgmma_fence();
  ptx::wgmma_m64n64k32_e4m3(tmp, desc_a, desc_b);
  ptx::wgmma_commit_group();
}

template <int Pending> __device__ __forceinline__ void wait_half(float (&tmp)[32]) {
  ptx::wgmma_wait_group<Pending>();
#pragma unroll
  for (int i = 0; i < 32; ++i) ptx::fence_operand(tmp[i]);
}

// One stage: four MX blocks, each as two 64-column halves in flight one behind the other, so that a
// half's promotion overlaps the next half's wgmma (two 32-float temporaries: the 128-wide tile's
// 64 + 64 registers of accumulator and temporaries, as DeepGEMM's 128-wide tiles hold).
__device__ __forceinline__ void stage_product(float (&acc)[64], float (&lo)[32], float (&hi)[32], uint64_t desc_a,
                                              uint64_t desc_b, uint32_t rows0, uint32_t rows1,
                                              uint32_t column_scales) {
  // B's columns 64..127 start 64 rows of 128 bytes into the tile: +8192 bytes, in 16-byte units.
  constexpr uint64_t kHiColumns = 64 * kBlockK / 16;
  issue_half(lo, desc_a, desc_b);
  issue_half(hi, desc_a, desc_b + kHiColumns);
#pragma unroll
  for (int b = 0; b < kBlocksPerStage; ++b) { // +32 bytes (2 descriptor units) per block
    const float sa0 = e8m0_to_float((rows0 >> (8 * b)) & 0xFF), sa1 = e8m0_to_float((rows1 >> (8 * b)) & 0xFF);
    const uint32_t scales_b = column_scales + b * 4 * kGroupFloats * 4;
    wait_half<1>(lo);
    promote<0>(acc, lo, sa0, sa1, scales_b);
    if (b + 1 < kBlocksPerStage) {
      issue_half(lo, desc_a + 2 * (b + 1), desc_b + 2 * (b + 1));
      wait_half<1>(hi);
    } else {
      wait_half<0>(hi);
    }
    promote<1>(acc, hi, sa0, sa1, scales_b);
    if (b + 1 < kBlocksPerStage) issue_half(hi, desc_a + 2 * (b + 1), desc_b + kHiColumns + 2 * (b + 1));
  }
}

__device__ __forceinline__ void consumer_loop(const GroupedGemmParams& p, const Ring& ring, const ScaleArea& scales,
                                              const CUtensorMap* y_map, int consumer) {
  const int t = threadIdx.x % 128;
  const int group = t % 4;
  const int row = consumer * 64 + 16 * (t / 32) + (t % 32) / 4; // and row + 8
  const bool warp_leader = threadIdx.x % 32 == 0;
  const bool trace_writer = p.trace != nullptr && t == 0 && consumer == 0;
  TileScheduler scheduler(p);
  RingCursor cursor;
  ClusterTile work;
  float acc[64], lo[32], hi[32];
  while (scheduler.next(work)) {
    if (trace_writer && work.store) p.trace[work.linear].start_ns = ptx::global_timer_ns();
#pragma unroll
    for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
    for (int kb = 0; kb < p.k_blocks; ++kb) {
      const int s = cursor.stage;
      ptx::mbarrier_wait(ring.full(s), cursor.phase);
      ptx::mbarrier_wait(scales.ready(s), cursor.phase);
      stage_product(acc, lo, hi, ptx::smem_descriptor_sw128(ring.a(s) + consumer * 64 * kBlockK),
                    ptx::smem_descriptor_sw128(ring.b(s)),
                    ptx::ld_shared_u32(ptx::smem_addr(scales.rows(s) + row)),
                    ptx::ld_shared_u32(ptx::smem_addr(scales.rows(s) + row + 8)),
                    ptx::smem_addr(scales.expanded(s) + group * kGroupFloats));
      if (warp_leader) release_stage(ring, s);
      cursor.advance(ring.stages);
    }
    if (work.store) {
      const TileRows rows = tile_rows(p, work.tile, kBlockM);
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

// The promote scheme's consumers, as the kernel below takes them (the dequantize scheme's are in
// mxfp8_dequantize_kernel.cuh), and whether the scale warps decode W's scales into floats for them.
struct PromoteConsumers {
  static constexpr bool decode_w_scales = true;
  __device__ static void run(const Params& p, const Ring& ring, const ScaleArea& scales, const CUtensorMap* y_map,
                             int consumer) {
    consumer_loop(p.gemm, ring, scales, y_map, consumer);
  }
};

template <class Consumers>
__global__ void __launch_bounds__(Shape::threads, 1) mxfp8_gemm_kernel(const __grid_constant__ TensorMaps maps,
                                                                       const Params p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  extern __shared__ uint8_t shared_raw[];
  const Ring ring(shared_raw, p.gemm.stages);
  const ScaleArea scales(ring);
  const int warpgroup = threadIdx.x / 128, warp = threadIdx.x / 32;
  if (threadIdx.x == 0) {
    ptx::prefetch_tensor_map(&maps.x);
    ptx::prefetch_tensor_map(&maps.x_half);
    ptx::prefetch_tensor_map(&maps.w);
    ptx::prefetch_tensor_map(&maps.w_half);
    ptx::prefetch_tensor_map(&maps.y);
    for (int s = 0; s < p.gemm.stages; ++s) {
      ptx::mbarrier_init(ring.full(s), 1);
      ptx::mbarrier_init(ring.empty(s), Shape::release_arrivals);
      ptx::mbarrier_init(scales.ready(s), kScaleLanes);
    }
    ptx::fence_barrier_init();
  }
  ptx::cluster_arrive();
  ptx::cluster_wait();
  if (warpgroup == 0) {
    // 80 registers: the scale warps hold kScaleLookahead stages of words.
    ptx::setmaxnreg_dec<80>();
    if (threadIdx.x == 0) producer_loop(p.gemm, ring, maps);
    else if (warp == kWScaleWarp || warp == kXScaleWarp)
      scale_loop<Consumers::decode_w_scales>(p, ring, scales, warp == kWScaleWarp);
  } else {
    // 200: 128 x 80 + 256 x 200 fits the launch's 384 x 168 (setmaxnreg.inc waits until the
    // producers' released registers cover it: more than 208 would wait forever).
    ptx::setmaxnreg_inc<200>();
    Consumers::run(p, ring, scales, &maps.y, warpgroup - 1);
  }
  ptx::cluster_arrive();
  ptx::cluster_wait();
#endif
}

} // namespace tilesim::kernels::mxfp8_gemm
