// The decode kernel's load path alone, over load-path structures (issue 14; timing experiment, not
// a product): the same producer / consumer ring as kernels/mixed_input/mixed_input_kernel.cuh with
// consumers that only wait for each stage and release it (the `idle` ablation), but with the
// structure a parameter: W box rows x K bytes, channels per work unit, K blocks a stage, stages,
// CTAs per SM, K split across CTAs, and how work reaches CTAs (round-robin units as the kernel,
// contiguous even shares of all K blocks over every SM, or chunks taken from an atomic counter).
// Decode shape: W int8 [8192, 8192] (64 MiB), X bf16 [M, 8192] loaded beside it as the kernel does
// (block_k / 64 boxes of M x 64, 128-byte swizzle). Timed as mixed_input_bench times (a lead kernel
// that flushes the L2 and holds the GPU while the call is queued: queued_cold_timing.cuh),
// interleaved with cuBLAS bf16 on bf16 weights of the same shape; medians. The same structures also
// stream a 4 GiB W (no X) from a flushed L2: the steady state at those boxes, as
// validation/microbench/tma_box_stream_bandwidth.cu measures it. One JSON object on stdout.
#include <cublas_v2.h>
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/common/ptx_wrappers.cuh"
#include "kernels/mixed_input/queued_cold_timing.cuh"

namespace ptx = tilesim::kernels::ptx;
using tilesim::kernels::testing::check;

namespace {

constexpr int kMaxStages = 32;
constexpr int kMaxConsumers = 4;
enum Walk : int { round_robin = 0, even_share = 1, dynamic = 2 };

struct Config {
  const char* name;
  int tile_n;       // channels per work unit (rows of W)
  int box_rows;     // W box rows (tile_n / box_rows boxes per K block)
  int box_k;        // W box K bytes: 64 / 128 (swizzled by that span) or 256 (unswizzled)
  int stages;       // ring depth
  int stage_blocks; // K blocks a stage
  int ctas_per_sm;  // grid = SMs x this (round_robin: at most the units)
  int k_split;      // round_robin: units = tiles x k_split, each 1 / k_split of K
  int walk;         // Walk
  int chunk_blocks; // dynamic: K blocks a chunk
  int consumers;    // consumer warps; stage s serves consumer s % consumers
  bool x;           // X boxes beside W
};

struct Params {
  int m, n_rows, k_blocks, tiles, units;
  int tile_n, box_rows, box_k, stages, stage_blocks, k_split, walk, chunk_blocks, consumers;
  int x_boxes, w_block_bytes, x_block_bytes;
  unsigned* counter; // dynamic: this launch's chunk counter
  unsigned long long* timing; // [grid][2]: start, end (%globaltimer)
};

struct Chunk {
  int row0, kb0, kb1;
};

// The producer's next run of K blocks: a tile's rows and a K range.
struct WorkSource {
  const Params& p;
  int next_unit;
  long long share0, share1, pos; // even_share: this CTA's [share0, share1) of tiles x k_blocks
  __device__ explicit WorkSource(const Params& p_) : p(p_), next_unit(blockIdx.x), share0(0), share1(0), pos(0) {
    const long long total = static_cast<long long>(p.tiles) * p.k_blocks;
    share0 = total * blockIdx.x / gridDim.x;
    share1 = total * (blockIdx.x + 1) / gridDim.x;
    pos = share0;
  }
  __device__ bool next(Chunk& c) {
    if (p.walk == round_robin) {
      if (next_unit >= p.units) return false;
      const int tile = next_unit / p.k_split, part = next_unit % p.k_split;
      c = {tile * p.tile_n, p.k_blocks * part / p.k_split, p.k_blocks * (part + 1) / p.k_split};
      next_unit += gridDim.x;
      return true;
    }
    if (p.walk == even_share) {
      if (pos >= share1) return false;
      const int tile = static_cast<int>(pos / p.k_blocks), kb = static_cast<int>(pos % p.k_blocks);
      const long long end = min(share1, static_cast<long long>(tile + 1) * p.k_blocks);
      c = {tile * p.tile_n, kb, kb + static_cast<int>(end - pos)};
      pos = end;
      return true;
    }
    const int parts = p.k_blocks / p.chunk_blocks;
    const unsigned id = atomicAdd(p.counter, 1u);
    if (id >= static_cast<unsigned>(p.tiles * parts)) return false;
    const int tile = static_cast<int>(id) % p.tiles, part = static_cast<int>(id) / p.tiles; // K-major: CTAs march along K
    c = {tile * p.tile_n, part * p.chunk_blocks, (part + 1) * p.chunk_blocks};
    return true;
  }
};

__global__ void load_path_kernel(const __grid_constant__ CUtensorMap wmap, const __grid_constant__ CUtensorMap xmap,
                                 const Params p) {
  extern __shared__ uint8_t raw[];
  __shared__ uint64_t full[kMaxStages], empty[kMaxStages];
  __shared__ int last[kMaxStages]; // 1: the producer's end marker, not a stage of loads
  uint8_t* ring = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  const int stage_bytes = p.stage_blocks * (p.w_block_bytes + p.x_block_bytes);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    p.timing[2 * blockIdx.x] = ptx::global_timer_ns();
    ptx::prefetch_tensor_map(&wmap);
    ptx::prefetch_tensor_map(&xmap);
    for (int s = 0; s < p.stages; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], 1);
    }
    ptx::fence_barrier_init();
  }
  __syncthreads();
  if (warp == 0) {
    if (lane == 0) {
      WorkSource work(p);
      Chunk c;
      int s = 0, phase = 0;
      auto claim = [&](int is_last) { // waits for stage s to be free, marks it
        ptx::mbarrier_wait(&empty[s], phase ^ 1);
        last[s] = is_last;
      };
      auto advance = [&] {
        if (++s == p.stages) s = 0, phase ^= 1;
      };
      while (work.next(c))
        for (int kb = c.kb0; kb < c.kb1; kb += p.stage_blocks) {
          const int blocks = min(p.stage_blocks, c.kb1 - kb);
          claim(0);
          ptx::mbarrier_arrive_expect_tx(&full[s], blocks * (p.w_block_bytes + p.x_block_bytes));
          uint8_t* stage = ring + s * stage_bytes;
          for (int j = 0; j < blocks; ++j) {
            const int k0 = (kb + j) * p.box_k;
            uint8_t* w = stage + j * p.w_block_bytes;
            for (int r = 0; r < p.tile_n; r += p.box_rows)
              ptx::tma_load_2d(w + r * p.box_k, &wmap, k0, c.row0 + r, &full[s]);
            uint8_t* x = stage + p.stage_blocks * p.w_block_bytes + j * p.x_block_bytes;
            for (int b = 0; b < p.x_boxes; ++b) ptx::tma_load_2d(x + b * p.m * 128, &xmap, k0 + 64 * b, 0, &full[s]);
          }
          advance();
        }
      for (int i = 0; i < p.consumers; ++i) { // one end marker per consumer, on the stages it serves next
        claim(1);
        ptx::mbarrier_arrive(&full[s]);
        advance();
      }
    }
  } else if (lane == 0) {
    const int me = warp - 1;
    for (int g = me;; g += p.consumers) { // stage g % stages of lap g / stages
      const int s = g % p.stages;
      ptx::mbarrier_wait(&full[s], (g / p.stages) & 1);
      const bool end = last[s] != 0;
      ptx::mbarrier_arrive(&empty[s]);
      if (end) break;
    }
  }
  __syncwarp(); // the other lanes wait here for their lane 0, so each warp meets the barrier converged
  __syncthreads();
  if (threadIdx.x == 0) p.timing[2 * blockIdx.x + 1] = ptx::global_timer_ns();
}

CUtensorMap encode(CUtensorMapDataType type, int elem_bytes, const void* base, uint64_t rows, uint64_t cols,
                   uint32_t box_rows, uint32_t box_cols, CUtensorMapSwizzle swizzle) {
  void* symbol = nullptr;
  cudaDriverEntryPointQueryResult q{};
  check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &symbol, 12000, cudaEnableDefault, &q),
        "cudaGetDriverEntryPointByVersion");
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols * elem_bytes};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t es[2] = {1, 1};
  const CUresult r = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(symbol)(
      &map, type, 2, const_cast<void*>(base), dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    std::fprintf(stderr, "load_path_sweep: cuTensorMapEncodeTiled returned %d (box %u x %u)\n", int(r), box_rows,
                 box_cols);
    std::exit(2);
  }
  return map;
}

CUtensorMapSwizzle swizzle_of(int box_k) {
  return box_k == 64 ? CU_TENSOR_MAP_SWIZZLE_64B : box_k == 128 ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE;
}

struct Launch {
  CUtensorMap wmap, xmap;
  Params p;
  int grid, threads, smem;
  std::string error;
};

Launch prepare(const Config& c, int m, const void* w, uint64_t w_rows, const void* x, int sms, unsigned* counters,
               unsigned long long* timing) {
  Launch l{};
  const int K = 8192;
  Params& p = l.p;
  p.m = c.x ? m : 0;
  p.n_rows = static_cast<int>(w_rows);
  p.k_blocks = K / c.box_k;
  p.tiles = static_cast<int>(w_rows / c.tile_n);
  p.units = p.tiles * c.k_split;
  p.tile_n = c.tile_n, p.box_rows = c.box_rows, p.box_k = c.box_k, p.stages = c.stages;
  p.stage_blocks = c.stage_blocks, p.k_split = c.k_split, p.walk = c.walk, p.chunk_blocks = c.chunk_blocks;
  p.consumers = c.consumers;
  p.x_boxes = c.x ? c.box_k / 64 : 0;
  p.w_block_bytes = c.tile_n * c.box_k;
  p.x_block_bytes = p.m * c.box_k * 2;
  p.counter = counters;
  p.timing = timing;
  l.smem = 1024 + c.stages * c.stage_blocks * (p.w_block_bytes + p.x_block_bytes);
  l.threads = 32 * (1 + c.consumers);
  if (c.stages > kMaxStages || c.consumers > kMaxConsumers || c.stages % c.consumers || c.tile_n % c.box_rows ||
      (c.walk == dynamic && (p.k_blocks % c.chunk_blocks || c.chunk_blocks % c.stage_blocks)))
    l.error = "bad structure";
  int resident = 0;
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, load_path_kernel, l.threads, l.smem), "occupancy");
  if (resident < c.ctas_per_sm) l.error = "only " + std::to_string(resident) + " CTAs fit an SM";
  l.grid = sms * c.ctas_per_sm;
  if (c.walk == round_robin) l.grid = std::min(l.grid, p.units);
  l.wmap = encode(CU_TENSOR_MAP_DATA_TYPE_UINT8, 1, w, w_rows, K, c.box_rows, c.box_k, swizzle_of(c.box_k));
  l.xmap = encode(CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, x, std::max(m, 1), K, std::max(m, 1), 64,
                  CU_TENSOR_MAP_SWIZZLE_128B);
  return l;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

struct Stats {
  std::vector<double> event_ms, kernel_ns, first_end_ns, last_start_ns;
  int queued = 0;
};

// Kernel span (latest end - earliest start), and the earliest CTA end / latest start from it.
void read_timing(const unsigned long long* dev, int grid, Stats& s) {
  std::vector<unsigned long long> t(2 * grid);
  check(cudaMemcpy(t.data(), dev, t.size() * 8, cudaMemcpyDeviceToHost), "cudaMemcpy(timing)");
  unsigned long long s0 = ~0ull, s1 = 0, e0 = ~0ull, e1 = 0;
  for (int b = 0; b < grid; ++b) {
    s0 = std::min(s0, t[2 * b]), s1 = std::max(s1, t[2 * b]);
    e0 = std::min(e0, t[2 * b + 1]), e1 = std::max(e1, t[2 * b + 1]);
  }
  s.kernel_ns.push_back(double(e1 - s0));
  s.first_end_ns.push_back(double(e0 - s0));
  s.last_start_ns.push_back(double(s1 - s0));
}

std::string config_json(const Config& c) {
  char b[512];
  std::snprintf(b, sizeof b,
                "\"name\": \"%s\", \"tile_n\": %d, \"box_rows\": %d, \"box_k\": %d, \"stages\": %d, \"stage_blocks\": %d, "
                "\"ctas_per_sm\": %d, \"k_split\": %d, \"walk\": \"%s\", \"chunk_blocks\": %d, \"consumers\": %d, \"x\": %s",
                c.name, c.tile_n, c.box_rows, c.box_k, c.stages, c.stage_blocks, c.ctas_per_sm, c.k_split,
                c.walk == round_robin ? "round_robin" : c.walk == even_share ? "even_share" : "dynamic", c.chunk_blocks,
                c.consumers, c.x ? "true" : "false");
  return b;
}

} // namespace

int main(int argc, char** argv) {
  int reps = argc > 1 ? std::atoi(argv[1]) : 30;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "load_path_sweep: no CUDA device; run it on a GPU machine\n");
    return 1;
  }
  const int sms = prop.multiProcessorCount, N = 8192, K = 8192;
  const uint64_t big_rows = (4ull << 30) / K;
  uint8_t *w = nullptr, *big = nullptr;
  __nv_bfloat16 *x = nullptr, *wb = nullptr, *y = nullptr;
  unsigned* counters = nullptr;
  unsigned long long* timing = nullptr;
  check(cudaMalloc(&w, size_t(N) * K), "cudaMalloc(w)");
  check(cudaMalloc(&big, big_rows * K), "cudaMalloc(big)");
  check(cudaMalloc(&x, size_t(64) * K * 2), "cudaMalloc(x)");
  check(cudaMalloc(&wb, size_t(N) * K * 2), "cudaMalloc(w bf16)");
  check(cudaMalloc(&y, size_t(64) * N * 2), "cudaMalloc(y)");
  const int kCounters = 1 << 16;
  check(cudaMalloc(&counters, kCounters * 4), "cudaMalloc(counters)");
  check(cudaMalloc(&timing, size_t(2) * 8 * sms * 16), "cudaMalloc(timing)");
  check(cudaMemset(w, 0x5a, size_t(N) * K), "memset");
  check(cudaMemset(big, 0x5a, big_rows * K), "memset");
  check(cudaMemset(x, 0x3c, size_t(64) * K * 2), "memset");
  check(cudaMemset(wb, 0x3c, size_t(N) * K * 2), "memset");
  check(cudaMemset(counters, 0, kCounters * 4), "memset");
  cudaFuncAttributes attributes{}; // the dynamic limit: the opt-in maximum less the kernel's static barriers
  check(cudaFuncGetAttributes(&attributes, load_path_kernel), "cudaFuncGetAttributes");
  check(cudaFuncSetAttribute(load_path_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             static_cast<int>(prop.sharedMemPerBlockOptin - attributes.sharedSizeBytes)),
        "cudaFuncSetAttribute");
  cublasHandle_t blas;
  if (cublasCreate(&blas) != CUBLAS_STATUS_SUCCESS) return 2;
  const tilesim::kernels::testing::QueuedColdTimer timer(0, 100000);
  int next_counter = 0;

  // name, tile_n, box_rows, box_k, stages, stage_blocks, ctas/SM, k_split, walk, chunk, consumers, x
  const std::vector<Config> m16{
      {"v13", 64, 64, 128, 16, 1, 1, 1, round_robin, 0, 4, true},
      {"v13_s8", 64, 64, 128, 8, 1, 1, 1, round_robin, 0, 4, true},
      {"v13_s4", 64, 64, 128, 4, 1, 1, 1, round_robin, 0, 4, true},
      {"v13_no_x", 64, 64, 128, 16, 1, 1, 1, round_robin, 0, 4, false},
      {"v13_stage2", 64, 64, 128, 8, 2, 1, 1, round_robin, 0, 4, true},
      {"rows32_box128", 64, 32, 128, 16, 1, 1, 1, round_robin, 0, 4, true},
      {"box64x256", 64, 64, 256, 8, 1, 1, 1, round_robin, 0, 4, true},
      {"box64x64", 64, 64, 64, 32, 1, 1, 1, round_robin, 0, 4, true},
      {"even_share_132", 64, 64, 128, 16, 1, 1, 1, even_share, 0, 4, true},
      {"tile32_2cta_s12", 32, 32, 128, 12, 1, 2, 1, round_robin, 0, 4, true},
      {"tile32_2cta_s8", 32, 32, 128, 8, 1, 2, 1, round_robin, 0, 4, true},
      {"tile128_ksplit2", 128, 128, 128, 8, 1, 1, 2, round_robin, 0, 4, true},
      {"tile128_ksplit2_box64", 128, 64, 128, 8, 1, 1, 2, round_robin, 0, 4, true},
      {"tile256_ksplit4", 256, 256, 128, 4, 1, 1, 4, round_robin, 0, 4, true},
      {"dynamic_c8", 64, 64, 128, 16, 1, 1, 1, dynamic, 8, 4, true},
      {"dynamic_c16", 64, 64, 128, 16, 1, 1, 1, dynamic, 16, 4, true},
      {"dynamic_c4", 64, 64, 128, 16, 1, 1, 1, dynamic, 4, 4, true},
      {"dynamic_c8_tile128", 128, 128, 128, 8, 1, 1, 1, dynamic, 8, 4, true},
  };
  const std::vector<Config> m64{
      {"v13", 64, 64, 128, 8, 1, 1, 1, round_robin, 0, 2, true},
      {"v13_s4", 64, 64, 128, 4, 1, 1, 1, round_robin, 0, 2, true},
      {"v13_no_x", 64, 64, 128, 8, 1, 1, 1, round_robin, 0, 2, false},
      {"v13_stage2_s4", 64, 64, 128, 4, 2, 1, 1, round_robin, 0, 2, true},
      {"even_share_132", 64, 64, 128, 8, 1, 1, 1, even_share, 0, 2, true},
      {"tile32_2cta_s4", 32, 32, 128, 4, 1, 2, 1, round_robin, 0, 2, true},
      {"tile128_ksplit2_s6", 128, 128, 128, 6, 1, 1, 2, round_robin, 0, 2, true},
      {"tile128_ksplit2_s4", 128, 128, 128, 4, 1, 1, 2, round_robin, 0, 2, true},
      {"tile256_ksplit4_s4", 256, 256, 128, 4, 1, 1, 4, round_robin, 0, 2, true},
      {"dynamic_c8", 64, 64, 128, 8, 1, 1, 1, dynamic, 8, 2, true},
      {"dynamic_c16", 64, 64, 128, 8, 1, 1, 1, dynamic, 16, 2, true},
      {"dynamic_c8_tile128_s6", 128, 128, 128, 6, 1, 1, 1, dynamic, 8, 2, true},
  };
  // The steady state at the same boxes: 4 GiB, no X, every SM (tma_box_stream_bandwidth's method).
  const std::vector<Config> stream{
      {"stream_box64x128_s16", 64, 64, 128, 16, 1, 1, 1, round_robin, 0, 4, false},
      {"stream_box64x128_s8", 64, 64, 128, 8, 1, 1, 1, round_robin, 0, 4, false},
      {"stream_box32x128_2cta", 32, 32, 128, 16, 1, 2, 1, round_robin, 0, 4, false}, // 64 KB: fits twice
      {"stream_box128x128_s8", 128, 128, 128, 8, 1, 1, 1, round_robin, 0, 4, false},
      {"stream_box256x128_s4", 256, 256, 128, 4, 1, 1, 1, round_robin, 0, 4, false},
      {"stream_box64x256_s8", 64, 64, 256, 8, 1, 1, 1, round_robin, 0, 4, false},
      {"stream_box64x64_s32", 64, 64, 64, 32, 1, 1, 1, round_robin, 0, 4, false},
  };

  std::string out = "{\n \"gpu\": \"" + std::string(prop.name) + "\", \"sms\": " + std::to_string(sms) +
                    ", \"reps\": " + std::to_string(reps) + ",\n \"decode\": [";
  bool first_entry = true;
  for (const int m : {16, 64}) {
    const std::vector<Config>& cs = m == 16 ? m16 : m64;
    std::vector<Launch> ls;
    for (const Config& c : cs) ls.push_back(prepare(c, m, w, N, x, sms, counters, timing));
    std::vector<Stats> st(cs.size() + 1);
    const float alpha = 1, beta = 0;
    auto blas_call = [&] {
      cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, N, m, K, &alpha, wb, CUDA_R_16BF, K, x, CUDA_R_16BF, K, &beta, y,
                   CUDA_R_16BF, N, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT);
    };
    auto launch = [&](Launch& l) {
      l.p.counter = counters + next_counter++; // a fresh zeroed counter per launch (a few hundred launches)
      if (next_counter == kCounters) std::exit(3);
      load_path_kernel<<<l.grid, l.threads, l.smem>>>(l.wmap, l.xmap, l.p);
    };
    for (int warm = 0; warm < 3; ++warm) {
      blas_call();
      for (Launch& l : ls)
        if (l.error.empty()) launch(l);
    }
    check(cudaDeviceSynchronize(), "warm-up");
    for (int r = 0; r < reps; ++r) {
      auto t = timer.time(blas_call);
      st[0].event_ms.push_back(t.ms), st[0].queued += t.queued;
      for (size_t i = 0; i < ls.size(); ++i) {
        if (!ls[i].error.empty()) continue;
        t = timer.time([&] { launch(ls[i]); });
        check(cudaGetLastError(), "load_path_kernel");
        st[i + 1].event_ms.push_back(t.ms), st[i + 1].queued += t.queued;
        read_timing(timing, ls[i].grid, st[i + 1]);
      }
    }
    const double blas_ms = median(st[0].event_ms);
    char b[1024];
    std::snprintf(b, sizeof b, "%s\n  {\"m\": %d, \"name\": \"cublas_bf16\", \"median_event_us\": %.2f, \"queued\": %d}",
                  first_entry ? "" : ",", m, blas_ms * 1e3, st[0].queued);
    out += b, first_entry = false;
    std::fprintf(stderr, "M=%d cublas %.2f us\n", m, blas_ms * 1e3);
    for (size_t i = 0; i < cs.size(); ++i) {
      const Stats& s = st[i + 1];
      if (!ls[i].error.empty()) {
        out += ",\n  {\"m\": " + std::to_string(m) + ", " + config_json(cs[i]) + ", \"error\": \"" + ls[i].error + "\"}";
        continue;
      }
      const double ev = median(s.event_ms) * 1e3, kn = median(s.kernel_ns) / 1e3;
      std::snprintf(b, sizeof b,
                    ",\n  {\"m\": %d, %s, \"grid\": %d, \"smem\": %d, \"median_event_us\": %.2f, \"speedup_vs_cublas\": "
                    "%.3f, \"median_kernel_us\": %.2f, \"median_first_cta_end_us\": %.2f, \"median_last_cta_start_us\": "
                    "%.2f, \"w_tb_per_s_kernel\": %.3f, \"queued\": %d}",
                    m, config_json(cs[i]).c_str(), ls[i].grid, ls[i].smem, ev, blas_ms * 1e3 / ev, kn,
                    median(s.first_end_ns) / 1e3, median(s.last_start_ns) / 1e3, double(N) * K / (kn * 1e-6) / 1e12,
                    s.queued);
      out += b;
      std::fprintf(stderr, "M=%d %-24s event %.2f us (%.3fx cuBLAS) kernel %.2f us, CTA ends %.2f..%.2f\n", m,
                   cs[i].name, ev, blas_ms * 1e3 / ev, kn, median(s.first_end_ns) / 1e3, kn);
    }
  }
  out += "\n ],\n \"stream_4gib\": [";
  first_entry = true;
  for (const Config& c : stream) {
    Launch l = prepare(c, 0, big, big_rows, x, sms, counters, timing);
    std::string entry = "{" + config_json(c);
    if (!l.error.empty()) {
      entry += ", \"error\": \"" + l.error + "\"}";
    } else {
      Stats s;
      for (int r = 0; r < 5; ++r) {
        auto t = timer.time([&] { load_path_kernel<<<l.grid, l.threads, l.smem>>>(l.wmap, l.xmap, l.p); });
        check(cudaGetLastError(), "load_path_kernel (stream)");
        read_timing(timing, l.grid, s);
      }
      const double kn = median(s.kernel_ns);
      char b[256];
      std::snprintf(b, sizeof b, ", \"grid\": %d, \"bytes\": %llu, \"median_kernel_us\": %.1f, \"tb_per_s\": %.4f}",
                    l.grid, (unsigned long long)(big_rows * K), kn / 1e3, double(big_rows * K) / kn * 1e-3);
      entry += b;
      std::fprintf(stderr, "%-24s %.4f TB/s\n", c.name, double(big_rows * K) / kn * 1e-3);
    }
    out += (first_entry ? "\n  " : ",\n  ") + entry, first_entry = false;
  }
  out += "\n ]\n}\n";
  std::printf("%s", out.c_str());
  return 0;
}
