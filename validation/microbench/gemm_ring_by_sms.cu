// Is the grouped GEMM's K step bound by the whole L2 or by each SM? (issue 16, validation/NOTES.md,
// "The L2 probe".) The kernel itself (kernels/grouped_gemm), dense, grouped_m:8, clusters of two,
// persistent, with its grid cut to 2, 66 or 132 SMs: a shared L2 server that binds at 132 SMs lets 2
// or 66 SMs run their K steps at the wgmma rate; a limit of each SM's own (its read port, its stage
// ring's loaded latency, its consumers' loop) keeps the step above it at every count. (The run of
// 2026-11-25 11:56 UTC also cut it to 110 SMs and traced ns only.)
//
// Operands of 4096 x 4096 x K (K = 1024, 2048: 16 and 32 MB) stay in the 50 MB L2 after the first
// launch; 8192 x 8192 x 8192 is the dataset's calibration configuration, fed partly from DRAM.
// Every configuration runs launches back to back for at least `phase_ms` (CUDA events around each,
// the SM clock over each from stamp_sms before and after it; the medians are reported). The last
// launch of the phase records every tile's SM, start and end, in ns and in the SM's own cycles, with
// the cycle counts after its first and last K step's stage landed (kernels/common/tile_trace.h): the
// K step in cycles from one tile, one launch and one clock.
// Before timing, the output is poisoned (0xffff bf16 NaN) and 256 sampled elements of the first
// launch are checked against a double-precision product of the same inputs.
//
// Usage: gemm_ring_by_sms [phase_ms]   (default 250). Output: one JSON object on stdout.
#include "check_cuda.cuh"
#include "kernels/common/ptx_wrappers.cuh"
#include "kernels/grouped_gemm/grouped_gemm.h"
#include "models/launch_order_names.h"

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr const char *kProgram = "gemm_ring_by_sms";
constexpr int kChecked = 256;       // sampled output elements checked per configuration
constexpr double kTolerance = 2e-2; // bf16 output of an fp32 sum of bf16 products, |ref| ~ sqrt(K) / 3

// Each SM's cycle counter and the global timer, one CTA per SM (its shared memory keeps a second
// CTA off), written at stamps[smid]. One launch before and one after a GEMM launch give each SM's
// clock over it: the SMs share one clock, and an SM that idles may stop counting, so the fastest
// SM's ratio is the clock (NVML's reported SM clock stays at the boost clock while the power cap
// lowers the real one: validation/data/h100/nvidia_smi_during_dataset.csv). On 2 SMs it read
// 2040-2100 MHz, 11-14% above the tiles' own cycles over their ns (1833-1870 MHz,
// validation/data/h100/microbench/gemm_ring_cycles/): where most SMs idle, read the tiles' clock.
struct Stamp {
  long long cycles;
  unsigned long long ns;
};
constexpr int kStampSharedBytes = 120 * 1024;

__global__ void stamp_sms(Stamp *stamps) {
  if (threadIdx.x != 0) return;
  const unsigned long long ns = tilesim::kernels::ptx::global_timer_ns();
  stamps[tilesim::kernels::ptx::sm_id()] = {clock64(), ns};
}

// Uniform in [-1, 1), from a fixed-seed 64-bit LCG.
std::vector<__nv_bfloat16> random_bf16(std::size_t n, uint64_t seed) {
  std::vector<__nv_bfloat16> v(n);
  for (auto &x : v) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    x = __float2bfloat16(static_cast<float>((seed >> 40) * (2.0 / 16777216.0) - 1.0));
  }
  return v;
}

struct Problem {
  int m, n, k, tile_n, stages;
};
struct Config {
  Problem p;
  int sms;
};

struct Buffers {
  __nv_bfloat16 *x = nullptr, *w = nullptr, *y = nullptr;
  tilesim::kernels::TileTrace *trace = nullptr;
  Stamp *stamps = nullptr; // before | after, one per SM
  int sms = 0;
  std::vector<__nv_bfloat16> hx, hw; // host copies, for the check
};

// Max |error| over kChecked sampled elements of Y = X W^T against a double-precision reference.
double check_output(const Problem &p, const Buffers &b) {
  std::vector<__nv_bfloat16> y(static_cast<std::size_t>(p.m) * p.n);
  CHECK_CUDA(cudaMemcpy(y.data(), b.y, y.size() * sizeof(__nv_bfloat16), cudaMemcpyDeviceToHost));
  double worst = 0;
  uint64_t seed = 7;
  for (int s = 0; s < kChecked; ++s) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    const int r = static_cast<int>((seed >> 33) % p.m), c = static_cast<int>((seed >> 13) % p.n);
    double ref = 0;
    for (int kk = 0; kk < p.k; ++kk)
      ref += static_cast<double>(__bfloat162float(b.hx[static_cast<std::size_t>(r) * p.k + kk])) *
             __bfloat162float(b.hw[static_cast<std::size_t>(c) * p.k + kk]);
    const double got = __bfloat162float(y[static_cast<std::size_t>(r) * p.n + c]);
    const double err =
        std::isfinite(got) ? std::fabs(got - ref) / std::max(1.0, std::fabs(ref)) : 1e30; // NaN: unwritten
    worst = std::max(worst, err);
  }
  return worst;
}

void run(const Config &c, Buffers &b, double phase_ms, bool first) {
  using namespace tilesim::kernels;
  GroupedGemmProblem problem;
  problem.experts = 1;
  problem.tokens_per_expert = {c.p.m};
  problem.n = c.p.n;
  problem.k = c.p.k;
  problem.tile_n = c.p.tile_n;
  problem.stages = c.p.stages;
  problem.persistent = true;
  problem.order = tilesim::parse_launch_order("grouped_m:8");
  const GroupedGemm gemm(problem, b.x, b.w, b.y, c.sms);
  const int tiles = gemm.tile_count();

  CHECK_CUDA(cudaMemset(b.y, 0xff, static_cast<std::size_t>(c.p.m) * c.p.n * sizeof(__nv_bfloat16)));
  gemm.run(nullptr, b.trace);
  CHECK_CUDA(cudaDeviceSynchronize());
  const double error = check_output(c.p, b);
  for (int i = 0; i < 3; ++i) gemm.run(nullptr, b.trace); // warm-up: the operands into L2, the clock settled

  cudaEvent_t ev[2];
  CHECK_CUDA(cudaEventCreate(&ev[0]));
  CHECK_CUDA(cudaEventCreate(&ev[1]));
  std::vector<float> ms;
  std::vector<double> mhz;
  std::vector<Stamp> before(b.sms), after(b.sms);
  const auto start = std::chrono::steady_clock::now();
  while (std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count() < phase_ms) {
    CHECK_CUDA(cudaMemsetAsync(b.trace, 0xff, tiles * sizeof(TileTrace)));
    CHECK_CUDA(cudaMemsetAsync(b.stamps, 0, 2 * b.sms * sizeof(Stamp)));
    stamp_sms<<<b.sms, 32, kStampSharedBytes>>>(b.stamps);
    CHECK_CUDA(cudaEventRecord(ev[0]));
    gemm.run(nullptr, b.trace);
    CHECK_CUDA(cudaEventRecord(ev[1]));
    stamp_sms<<<b.sms, 32, kStampSharedBytes>>>(b.stamps + b.sms);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaEventSynchronize(ev[1]));
    CHECK_CUDA(cudaDeviceSynchronize());
    float t = 0;
    CHECK_CUDA(cudaEventElapsedTime(&t, ev[0], ev[1]));
    ms.push_back(t);
    CHECK_CUDA(cudaMemcpy(before.data(), b.stamps, b.sms * sizeof(Stamp), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(after.data(), b.stamps + b.sms, b.sms * sizeof(Stamp), cudaMemcpyDeviceToHost));
    double fastest = 0;
    for (int sm = 0; sm < b.sms; ++sm)
      if (after[sm].ns > before[sm].ns && before[sm].ns > 0)
        fastest = std::max(fastest, 1e3 * static_cast<double>(after[sm].cycles - before[sm].cycles) /
                                        static_cast<double>(after[sm].ns - before[sm].ns));
    mhz.push_back(fastest);
  }
  CHECK_CUDA(cudaEventDestroy(ev[0]));
  CHECK_CUDA(cudaEventDestroy(ev[1]));
  std::vector<TileTrace> trace(tiles);
  CHECK_CUDA(cudaMemcpy(trace.data(), b.trace, tiles * sizeof(TileTrace), cudaMemcpyDeviceToHost));
  unsigned long long t0 = ~0ULL;
  int bad = 0;
  for (const TileTrace &t : trace) {
    if (t.linear < 0 || t.end_ns < t.start_ns || t.start_cycles < 0 || t.first_step_cycles < t.start_cycles ||
        t.last_step_cycles < t.first_step_cycles || t.end_cycles < t.last_step_cycles)
      ++bad;
    else
      t0 = std::min(t0, t.start_ns);
  }
  std::vector<float> sorted = ms;
  std::sort(sorted.begin(), sorted.end());
  std::sort(mhz.begin(), mhz.end());
  std::printf("%s\n  {\"m\": %d, \"n\": %d, \"k\": %d, \"tile\": [128, %d, 64], \"stages\": %d, \"sms_given\": %d, "
              "\"grid\": %d, \"tiles\": %d, \"max_rel_error\": %.3e, \"check\": \"%s\", \"bad_trace_records\": %d, "
              "\"launches\": %zu, "
              "\"median_ms\": %.5f, \"p10_ms\": %.5f, \"p90_ms\": %.5f, \"sm_clock_mhz\": %.0f,\n   \"trace\": [",
              first ? "" : ",", c.p.m, c.p.n, c.p.k, c.p.tile_n, c.p.stages, c.sms, gemm.grid_size(), tiles, error,
              error <= kTolerance && bad == 0 ? "pass" : "fail", bad, ms.size(), sorted[sorted.size() / 2],
              sorted[sorted.size() / 10], sorted[sorted.size() * 9 / 10], mhz[mhz.size() / 2]);
  for (int i = 0; i < tiles; ++i)
    std::printf("%s[%d, %d, %llu, %llu, %lld, %lld, %lld]", i ? ", " : "", trace[i].linear, trace[i].sm,
                trace[i].start_ns - t0, trace[i].end_ns - t0, trace[i].first_step_cycles - trace[i].start_cycles,
                trace[i].last_step_cycles - trace[i].start_cycles, trace[i].end_cycles - trace[i].start_cycles);
  std::printf("]}");
  std::fflush(stdout);
  std::fprintf(stderr, "%s: %dx%dx%d 128x%d on %d SMs: %.4f ms, %.0f MHz, error %.2e, %zu launches\n", kProgram, c.p.m,
               c.p.n, c.p.k, c.p.tile_n, c.sms, sorted[sorted.size() / 2], mhz[mhz.size() / 2], error, ms.size());
}

} // namespace

int main(int argc, char **argv) {
  const cudaDeviceProp prop = microbench::first_device(kProgram);
  const double phase_ms = argc > 1 ? std::atof(argv[1]) : 250.0;
  if (!(phase_ms >= 10.0)) {
    std::fprintf(stderr, "%s: phase_ms must be at least 10 (got %s)\n", kProgram, argc > 1 ? argv[1] : "");
    return 1;
  }
  std::vector<Config> configs;
  const int all = prop.multiProcessorCount;
  // 128x128 (6 stages) and 128x256 (4 stages) on 2, 66 and every SM: operands in L2 (4096 x 4096, K
  // = 1024 and 2048) and the calibration configuration 8192^3, fed partly from DRAM.
  for (const auto [tile_n, stages] : {std::pair{128, 6}, std::pair{256, 4}})
    for (const int sms : {2, 66, all}) {
      for (const int k : {1024, 2048}) configs.push_back({{4096, 4096, k, tile_n, stages}, sms});
      configs.push_back({{8192, 8192, 8192, tile_n, stages}, sms});
    }

  int max_m = 0, max_n = 0, max_k = 0;
  for (const Config &c : configs)
    max_m = std::max(max_m, c.p.m), max_n = std::max(max_n, c.p.n), max_k = std::max(max_k, c.p.k);
  Buffers b;
  // One X and W for every problem: a problem of K columns reads the buffers' first rows x K elements
  // as its [rows, K] matrices (the check indexes them so too).
  b.hx = random_bf16(static_cast<std::size_t>(max_m) * max_k, 1);
  b.hw = random_bf16(static_cast<std::size_t>(max_n) * max_k, 2);
  CHECK_CUDA(cudaMalloc(&b.x, b.hx.size() * sizeof(__nv_bfloat16)));
  CHECK_CUDA(cudaMalloc(&b.w, b.hw.size() * sizeof(__nv_bfloat16)));
  CHECK_CUDA(cudaMalloc(&b.y, static_cast<std::size_t>(max_m) * max_n * sizeof(__nv_bfloat16)));
  CHECK_CUDA(cudaMalloc(&b.trace,
                        static_cast<std::size_t>(max_m / 128) * (max_n / 128) * sizeof(tilesim::kernels::TileTrace)));
  CHECK_CUDA(cudaMemcpy(b.x, b.hx.data(), b.hx.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(b.w, b.hw.data(), b.hw.size() * sizeof(__nv_bfloat16), cudaMemcpyHostToDevice));

  b.sms = all;
  CHECK_CUDA(cudaMalloc(&b.stamps, 2 * all * sizeof(Stamp)));
  CHECK_CUDA(cudaFuncSetAttribute(stamp_sms, cudaFuncAttributeMaxDynamicSharedMemorySize, kStampSharedBytes));
  std::printf("{\n \"gpu\": \"%s\", \"sms\": %d, \"order\": \"grouped_m:8\", \"cluster\": 2, \"persistent\": true,\n"
              " \"trace_is\": \"the phase's last launch: [work item, SM, start ns, end ns] from the first start, then the "
              "SM's cycles from the tile's start to its first K step's stage landing, to its last one's, and to its "
              "end\",\n"
              " \"configs\": [",
              prop.name, all);
  try {
    for (std::size_t i = 0; i < configs.size(); ++i) run(configs[i], b, phase_ms, i == 0);
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
    return 1;
  }
  std::printf("\n ]\n}\n");
  return 0;
}
