// DRAM read bandwidth of TMA 2-D box loads by box shape and walk order. The grouped GEMM streams
// expert weights W [rows, 7168] bf16 (a 14336-byte row stride) as 64 x 256 boxes, 256 runs of 128
// contiguous bytes each. It reaches ~2.97 TB/s on an H100, where the contiguous 1-D bulk copy
// (bulk_copy_bandwidth.cu) reaches 3.22 TB/s. This benchmark measures the box loads alone, with no
// consumer, to show how much of that gap the strided pattern explains.
// One CTA per SM. One thread issues cp.async.bulk.tensor.2d into a ring of S stages and waits on a
// stage's mbarrier before it reuses the stage. Each DRAM configuration reads its matrix once, after
// the L2 has been flushed. Elapsed time is the latest %globaltimer end minus the earliest start
// over the CTAs. Output: one JSON object on stdout.
// With the argument `active_sms` it runs a second set instead (issue 16, validation/NOTES.md, "The
// bias, decomposed"): the W stream with 33, 66, 99 and 132 CTAs (one per SM), to see how much more
// of DRAM one SM's stream takes when fewer SMs stream; and all 132 pausing between bands, the
// pauses staggered over the CTAs, as a persistent GEMM's CTAs pause for their epilogue and tile
// scheduler call, to see whether the streaming SMs take up what the pausing ones leave.
#include "check_cuda.cuh"
#include "kernels/common/ptx_wrappers.cuh"

#include <cuda.h>
#include <cudaTypedefs.h> // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace {

namespace ptx = tilesim::kernels::ptx;
constexpr const char* kProgram = "tma_box_stream_bandwidth";
constexpr int kMaxStages = 8;
constexpr int kRepeats = 5;
constexpr double kDatasheetBytesPerS = 3.35e12; // H100 SXM5 datasheet: 3.35 TB/s HBM3
constexpr long long kMatrixBytes = 4LL << 30;   // about 1.3 ms per pass at 3 TB/s
constexpr long long kFlushBytes = 200LL << 20;  // 4x the H100's 50 MB L2
// One box arrives within microseconds, so a wait of 1 s means the kernel hangs. The host gives up
// after 30 s.
constexpr uint64_t kDeviceWaitLimitNs = 1000000000ULL;
constexpr auto kHostWaitLimit = std::chrono::seconds(30);

// The boxes one configuration loads. Boxes are listed band-major: a band is box_rows rows, and its
// boxes run along K.
struct BoxWalk {
  int box_cols, box_rows, box_bytes; // box_cols counts bf16 elements along the contiguous K
  int boxes_per_band, bands, passes, stages;
  // true: CTA b loads whole bands b, b+grid, ..., walking K as one GEMM mainloop walks one tile.
  // false: CTA b loads boxes b, b+grid, ... of the list, so CTAs load neighbouring boxes at once.
  bool band_round_robin;
  // Every pause_every boxes the CTA issues nothing for pause_ns (the boxes in flight still land);
  // CTA b's first pause comes after pause_every * b / grid boxes, so the pauses are spread in time.
  int pause_every, pause_ns;
};

struct CtaTiming {
  unsigned long long start_ns, end_ns, cycles;
};

__device__ long long steps_of_cta(const BoxWalk& w) {
  const long long b = blockIdx.x, grid = gridDim.x;
  if (w.band_round_robin) return (b < w.bands ? (w.bands - b + grid - 1) / grid : 0) * w.boxes_per_band * w.passes;
  const long long total = static_cast<long long>(w.bands) * w.boxes_per_band * w.passes;
  return b < total ? (total - b + grid - 1) / grid : 0;
}

// Box (k index, band) that this CTA loads at step j.
__device__ int2 box_of_step(const BoxWalk& w, long long j) {
  const long long b = blockIdx.x, grid = gridDim.x, per_pass_list = static_cast<long long>(w.bands) * w.boxes_per_band;
  if (w.band_round_robin) {
    const long long per_pass = steps_of_cta(w) / w.passes, jj = j % per_pass;
    return make_int2(static_cast<int>(jj % w.boxes_per_band), static_cast<int>(b + (jj / w.boxes_per_band) * grid));
  }
  const long long i = (b + j * grid) % per_pass_list;
  return make_int2(static_cast<int>(i % w.boxes_per_band), static_cast<int>(i / w.boxes_per_band));
}

// Watchdog: the wait gives up after kDeviceWaitLimitNs, so a lost transaction reports an error and
// does not hang the run.
__device__ bool mbarrier_wait_bounded(uint64_t* bar, uint32_t parity) {
  const uint64_t deadline = ptx::global_timer_ns() + kDeviceWaitLimitNs;
  while (!ptx::mbarrier_try_wait(bar, parity))
    if (ptx::global_timer_ns() > deadline) return false;
  return true;
}

__global__ void __launch_bounds__(32, 1)
    box_stream_kernel(const __grid_constant__ CUtensorMap map, const BoxWalk w, CtaTiming* timing, unsigned* hung) {
  extern __shared__ char smem_raw[];
  __shared__ uint64_t full[kMaxStages];
  if (threadIdx.x != 0) return;
  // A 128-byte-swizzled box must land 1024-byte aligned; the host requests 1 KB of slack.
  char* ring = smem_raw + (1024 - ptx::smem_addr(smem_raw) % 1024) % 1024;
  for (int s = 0; s < w.stages; ++s) ptx::mbarrier_init(&full[s], 1);
  ptx::fence_barrier_init();
  ptx::prefetch_tensor_map(&map);
  const long long steps = steps_of_cta(w);
  const long long c0 = clock64();
  const uint64_t g0 = ptx::global_timer_ns();
  const long long pause_phase = w.pause_every > 0 ? w.pause_every * static_cast<long long>(blockIdx.x) / gridDim.x : 0;
  for (long long j = 0; j < steps + w.stages; ++j) {
    const int s = static_cast<int>(j % w.stages);
    if (j >= w.stages && !mbarrier_wait_bounded(&full[s], ((j / w.stages) - 1) & 1)) {
      atomicAdd(hung, 1u);
      return;
    }
    if (w.pause_every > 0 && j < steps && (j + w.pause_every - pause_phase) % w.pause_every == 0 && j > 0) {
      const uint64_t until = ptx::global_timer_ns() + w.pause_ns;
      while (ptx::global_timer_ns() < until) {
      }
    }
    if (j < steps) {
      const int2 box = box_of_step(w, j);
      ptx::mbarrier_arrive_expect_tx(&full[s], w.box_bytes);
      ptx::tma_load_2d(ring + s * w.box_bytes, &map, box.x * w.box_cols, box.y * w.box_rows, &full[s]);
    }
  }
  const uint64_t g1 = ptx::global_timer_ns();
  timing[blockIdx.x] = {g0, g1, static_cast<unsigned long long>(clock64() - c0)};
}

// Reads the whole buffer with L2-caching loads, so a later pass finds none of its own lines in L2.
__global__ void flush_l2(const uint4* buffer, std::size_t n, unsigned* sink) {
  unsigned x = 0;
  for (std::size_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
    x ^= __ldcg(buffer + i).x;
  if (x == 0x12345678u) *sink = x;
}

std::string format(const char* fmt, ...) {
  char buf[2048];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return buf;
}

void check(cudaError_t err, const char* call) {
  if (err != cudaSuccess) throw std::runtime_error(format("%s failed: %s", call, cudaGetErrorString(err)));
}

struct HostTimeout : std::runtime_error {
  using std::runtime_error::runtime_error;
};

void wait_bounded(cudaEvent_t done) {
  const auto deadline = std::chrono::steady_clock::now() + kHostWaitLimit;
  cudaError_t err;
  while ((err = cudaEventQuery(done)) == cudaErrorNotReady) {
    if (std::chrono::steady_clock::now() > deadline) throw HostTimeout("kernel still running after 30 s");
    std::this_thread::sleep_for(std::chrono::microseconds(50));
  }
  check(err, "cudaEventQuery");
}

// The driver entry point through the runtime (as kernels/common/tensor_maps.cu), so no -lcuda is needed.
CUtensorMap encode_bf16_map(void* base, long long rows, int cols, const BoxWalk& w, CUtensorMapSwizzle swizzle) {
  void* symbol = nullptr;
  cudaDriverEntryPointQueryResult query{};
  check(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &symbol, 12000, cudaEnableDefault, &query),
        "cudaGetDriverEntryPointByVersion(cuTensorMapEncodeTiled)");
  if (query != cudaDriverEntryPointSuccess || symbol == nullptr)
    throw std::runtime_error("cuTensorMapEncodeTiled not found");
  CUtensorMap map{};
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(cols) * 2};
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(w.box_cols), static_cast<cuuint32_t>(w.box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult res = reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(symbol)(
      &map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, base, dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (res != CUDA_SUCCESS)
    throw std::runtime_error(format("cuTensorMapEncodeTiled returned CUresult %d", static_cast<int>(res)));
  return map;
}

struct Config {
  const char* name;
  int cols, box_cols, box_rows, stages;
  bool swizzle_128b, band_round_robin;
  long long target_bytes; // matrix footprint, rounded down to whole bands (and bands to whole waves)
  int passes;             // > 1 only for the L2-resident run: no flush, warmed first
  const char* note;
  int ctas = 0; // CTAs streaming, one per SM; 0: every SM
  int pause_every = 0, pause_ns = 0;
};

struct Device {
  int sms = 0, smem_optin = 0;
  char* matrix = nullptr;
  uint4* flush = nullptr;
  unsigned* scratch = nullptr; // [0]: watchdog count, [1]: flush sink
  CtaTiming* timing = nullptr;
  cudaEvent_t e0{}, e1{}; // around the timed kernel: launch included, a cross-check of the in-kernel time
};

std::string run_config(const Config& c, const Device& d) {
  BoxWalk w{c.box_cols, c.box_rows, c.box_cols * c.box_rows * 2, c.cols / c.box_cols, 0, c.passes, c.stages,
            c.band_round_robin, c.pause_every, c.pause_ns};
  const int grid = c.ctas > 0 ? std::min(c.ctas, d.sms) : d.sms;
  const long long band_bytes = static_cast<long long>(c.box_rows) * c.cols * 2;
  long long bands = c.target_bytes / band_bytes;
  if (c.band_round_robin) bands -= bands % grid; // every CTA gets the same number of bands
  const int smem = c.stages * w.box_bytes + 1024;
  if (bands <= 0 || bands * c.box_rows > (1LL << 31) - 1 || c.stages > kMaxStages)
    throw std::runtime_error("matrix shape or stage count out of range");
  if (smem > d.smem_optin)
    throw std::runtime_error(format("needs %d B of shared memory, opt-in limit %d", smem, d.smem_optin));
  w.bands = static_cast<int>(bands);
  const long long rows = bands * c.box_rows;
  const CUtensorMap map = encode_bf16_map(d.matrix, rows, c.cols, w,
                                          c.swizzle_128b ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE);
  check(cudaFuncSetAttribute(box_stream_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
        "cudaFuncSetAttribute");
  const double bytes = static_cast<double>(bands) * w.boxes_per_band * w.box_bytes * c.passes;
  std::string out = format(
      "{\"name\": \"%s\", \"note\": \"%s\", \"matrix_rows\": %lld, \"matrix_cols\": %d, \"row_stride_bytes\": %d, "
      "\"box_cols\": %d, \"box_rows\": %d, \"box_bytes\": %d, \"swizzle\": \"%s\", \"stages\": %d, \"walk\": \"%s\", "
      "\"passes\": %d, \"l2_flushed_first\": %s, \"footprint_bytes\": %lld, \"bytes\": %.0f, \"ctas\": %d, "
      "\"pause_every_boxes\": %d, \"pause_ns\": %d,\n   \"repeats\": [",
      c.name, c.note, rows, c.cols, c.cols * 2, c.box_cols, c.box_rows, w.box_bytes, c.swizzle_128b ? "128B" : "none",
      c.stages, c.band_round_robin ? "band_round_robin_k_fastest" : "box_round_robin", c.passes,
      c.passes == 1 ? "true" : "false", rows * c.cols * 2, bytes, grid, c.pause_every, c.pause_ns);
  std::vector<double> elapsed;
  std::vector<CtaTiming> t(grid);
  for (int rep = 0; rep < kRepeats; ++rep) {
    if (c.passes == 1) {
      flush_l2<<<d.sms * 4, 256>>>(d.flush, kFlushBytes / sizeof(uint4), d.scratch + 1);
    } else { // warm the L2 with one pass over the footprint
      BoxWalk warm = w;
      warm.passes = 1;
      box_stream_kernel<<<grid, 32, smem>>>(map, warm, d.timing, d.scratch);
    }
    check(cudaGetLastError(), "flush/warm launch");
    check(cudaMemsetAsync(d.scratch, 0, sizeof(unsigned)), "cudaMemsetAsync");
    check(cudaMemsetAsync(d.timing, 0, d.sms * sizeof(CtaTiming)), "cudaMemsetAsync");
    check(cudaEventRecord(d.e0), "cudaEventRecord");
    box_stream_kernel<<<grid, 32, smem>>>(map, w, d.timing, d.scratch);
    check(cudaGetLastError(), "box_stream_kernel launch");
    check(cudaEventRecord(d.e1), "cudaEventRecord");
    wait_bounded(d.e1);
    unsigned hung = 0;
    check(cudaMemcpy(&hung, d.scratch, sizeof hung, cudaMemcpyDeviceToHost), "cudaMemcpy(watchdog)");
    if (hung) throw std::runtime_error(format("device watchdog: %u CTAs waited over 1 s for a box", hung));
    check(cudaMemcpy(t.data(), d.timing, grid * sizeof(CtaTiming), cudaMemcpyDeviceToHost), "cudaMemcpy(timing)");
    float event_ms = 0;
    check(cudaEventElapsedTime(&event_ms, d.e0, d.e1), "cudaEventElapsedTime");
    unsigned long long first = ~0ULL, last = 0;
    double cta_ns = 0, cycles = 0;
    for (const CtaTiming& x : t) {
      first = std::min(first, x.start_ns);
      last = std::max(last, x.end_ns);
      cta_ns += static_cast<double>(x.end_ns - x.start_ns);
      cycles += static_cast<double>(x.cycles);
    }
    const double ns = static_cast<double>(last - first);
    elapsed.push_back(ns);
    out += format("%s\n    {\"elapsed_ns\": %.0f, \"event_ns\": %.0f, \"mean_cta_ns\": %.0f, \"tb_per_s\": %.4f, "
                  "\"gb_per_s_per_sm\": %.2f, \"sm_clock_mhz\": %.0f}",
                  rep ? "," : "", ns, event_ms * 1e6, cta_ns / grid, bytes / ns * 1e-3, bytes / grid / (cta_ns / grid),
                  cta_ns > 0 ? cycles / cta_ns * 1e3 : 0.0);
  }
  std::sort(elapsed.begin(), elapsed.end());
  const double median_ns = elapsed[elapsed.size() / 2];
  return out + format("],\n   \"median_elapsed_ns\": %.0f, \"median_tb_per_s\": %.4f, \"ratio_to_datasheet\": %.4f}",
                      median_ns, bytes / median_ns * 1e-3, bytes / median_ns * 1e9 / kDatasheetBytesPerS);
}

} // namespace

int main(int argc, char** argv) {
  const bool active_sms = argc > 1 && std::string(argv[1]) == "active_sms";
  if (argc > 1 && !active_sms) {
    std::fprintf(stderr, "%s: unknown argument %s; give none, or active_sms\n", kProgram, argv[1]);
    return 2;
  }
  cudaDeviceProp prop{};
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0 ||
      cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "%s: no CUDA device; run it on a GPU machine\n", kProgram);
    return 1;
  }
  Device d;
  d.sms = prop.multiProcessorCount;
  d.smem_optin = static_cast<int>(prop.sharedMemPerBlockOptin);
  CHECK_CUDA(cudaEventCreate(&d.e0));
  CHECK_CUDA(cudaEventCreate(&d.e1));
  CHECK_CUDA(cudaMalloc(&d.matrix, kMatrixBytes));
  CHECK_CUDA(cudaMemset(d.matrix, 0x5a, kMatrixBytes));
  CHECK_CUDA(cudaMalloc(&d.flush, kFlushBytes));
  CHECK_CUDA(cudaMemset(d.flush, 1, kFlushBytes));
  CHECK_CUDA(cudaMalloc(&d.scratch, 2 * sizeof(unsigned)));
  CHECK_CUDA(cudaMalloc(&d.timing, d.sms * sizeof(CtaTiming)));
  int mem_khz = -1, bus_bits = -1;
  (void)cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, 0);
  (void)cudaDeviceGetAttribute(&bus_bits, cudaDevAttrGlobalMemoryBusWidth, 0);

  // Columns, box K x rows, stages, 128B swizzle, band walk, footprint, passes. 8 x 32 KB stages exceed the
  // shared memory, hence 6; 128B swizzle caps a box row at 128 B, hence the unswizzled k_major_wide.
  const int k = 7168;
  const long long all = kMatrixBytes, l2 = 16LL << 20;
  std::vector<Config> configs{
      {"w_stream", k, 64, 256, 4, true, true, all, 1, "the GEMM's W tile: 256 rows x 128 B, 14336 B apart"},
      {"w_stream_rows128", k, 64, 128, 4, true, true, all, 1, "16 KB boxes, the shape of the GEMM's X tile"},
      {"w_stream_rows128_stages8", k, 64, 128, 8, true, true, all, 1, "16 KB boxes, bytes in flight as w_stream"},
      {"w_stream_stages2", k, 64, 256, 2, true, true, all, 1, "w_stream, 2 stages"},
      {"w_stream_stages6", k, 64, 256, 6, true, true, all, 1, "w_stream, 6 stages (8 do not fit)"},
      {"w_stream_noswizzle", k, 64, 256, 4, false, true, all, 1, "w_stream without swizzle"},
      {"w_stream_box_round_robin", k, 64, 256, 4, true, false, all, 1, "CTAs load neighbouring boxes of a band"},
      {"contiguous_2d", 64, 64, 256, 4, true, true, all, 1, "[R, 64]: each box one contiguous 32 KB run"},
      {"k_major_wide", k, 256, 64, 4, false, true, all, 1, "64 rows x 512 B, unswizzled (128B swizzle: <= 128 B)"},
      {"l2_resident", k, 64, 256, 4, true, false, l2, 20, "w_stream boxes, 16 MB read 20 times from a warm L2"},
  };
  if (active_sms) {
    // w_stream's boxes (a band of 112 boxes is 3.5 MB, ~150 us of one SM's share of DRAM; 8 a CTA).
    const long long gb = all;
    const char* note_n = "w_stream, N CTAs streaming (one per SM), the other SMs idle";
    const char* note_p = "w_stream, every CTA pausing pause_ns after each 112-box band, the pauses staggered";
    configs = {
        {"sms132", k, 64, 256, 4, true, true, gb, 1, note_n, 132},
        {"sms99", k, 64, 256, 4, true, true, gb, 1, note_n, 99},
        {"sms66", k, 64, 256, 4, true, true, gb, 1, note_n, 66},
        {"sms33", k, 64, 256, 4, true, true, gb, 1, note_n, 33},
        {"sms132_pause15us", k, 64, 256, 4, true, true, gb, 1, note_p, 132, 112, 15000},
        {"sms132_pause40us", k, 64, 256, 4, true, true, gb, 1, note_p, 132, 112, 40000},
        {"sms132_again", k, 64, 256, 4, true, true, gb, 1, note_n, 132},
    };
  }
  std::string entries;
  bool host_timeout = false;
  for (const Config& c : configs) {
    std::string entry;
    try {
      entry = run_config(c, d);
    } catch (const std::exception& e) { // messages carry no quotes: CUDA error strings and ours
      host_timeout = dynamic_cast<const HostTimeout*>(&e) != nullptr;
      entry = format("{\"name\": \"%s\", \"error\": \"%s\"}", c.name, e.what());
    }
    entries += (entries.empty() ? "\n  " : ",\n  ") + entry;
    if (host_timeout) break; // the device is still busy; later configurations would only queue behind it
  }
  std::printf("{\n \"gpu\": \"%s\", \"sms\": %d, \"grid\": %d, \"threads_per_cta\": 32, \"l2_bytes\": %d,\n"
              " \"memory_clock_khz\": %d, \"memory_bus_width_bits\": %d, \"datasheet_bytes_per_s\": %.3e,\n"
              " \"flush_bytes\": %lld, \"l2_promotion\": \"256B\", \"repeats_per_config\": %d,\n"
              " \"elapsed_ns_is\": \"latest CTA %%globaltimer end minus earliest CTA start\",\n"
              " \"configs\": [%s\n ]\n}\n",
              prop.name, d.sms, d.sms, prop.l2CacheSize, mem_khz, bus_bits, kDatasheetBytesPerS, kFlushBytes, kRepeats,
              entries.c_str());
  std::fflush(stdout);
  if (host_timeout) std::_Exit(2); // skip teardown, which would wait for the hung kernel
  return 0;
}
