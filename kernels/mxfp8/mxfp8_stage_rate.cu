// mxfp8_stage_rate: what one 128-deep K stage costs each CTA of the MXFP8 GEMM as committed, in
// every scheme and tile, when its operands are already in L2: the compute side of a K step (the
// waits, the scale loads, the conversion or promotion, the wgmma, the barriers and the release), apart
// from DRAM. The simulator's mxfp8_gemm model charges this per K step (sim/src/mxfp8_gemm_model.cpp);
// no dataset shape is used.
//
// Per variant, by default (--ctas few): one tile row of tokens and a few SMs' worth of tile columns (16 CTAs
// of 128 x 128 for promote, dequantize (clusters of two), transposed 128 x 128, xpass and xpass_f16 (its 16-token
// tile too), 8 of xpass_f16's 128 x 256; 33 of tile_tokens x 64 for transposed), run at two depths, 8 and 64
// stages, with every operand L2-resident (W at most 17 MB at the deeper one; five warm-up launches), CUDA events
// around each launch, median of --reps. The extra stages of the deeper run (56) cost (t(K2) - t(K1)) / 56 per
// CTA; the launch, the first loads and the epilogue cancel. --ctas chip instead runs one tile on every SM (rows x
// columns of tiles, 12 x 11 on 132 SMs, so W and X stay L2-resident at depth: the deeper run has at most 64
// stages and at most 24 MiB of W and X read, `l2_bytes_k2`): the same stage with the whole chip's clock and L2
// paths busy, as in a GEMM, but no DRAM (kernels/mxfp8/NOTES.md, "The stage with the whole chip busy"); the
// profiles' mxfp8_stage_ns come from these runs since the eighth call. Launches of the same problems are then
// counted with CUPTI's range profiler (--counted of them at each depth; --counted 0 skips it and leaves the
// cycle fields out): sm__cycles_elapsed.max, the SM cycles the launch spans, gives cycles_per_stage the same
// way ((c(K2) - c(K1)) over the extra stages, medians), whatever clock the launch ran at, and
// sm__cycles_elapsed.avg.per_second the clock, the metric tilesim-measure records for every dataset
// configuration and the simulator replays at. The profile keeps the time (mxfp8_stage_ns), which the
// model charges at the clock it replays at: charged as these cycles instead, the MXFP8 dataset's
// promote and dequantize configurations went 7-26% slow (kernels/mxfp8/NOTES.md, "The stage in
// cycles"). Output: one JSON object on stdout.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>
#include <string>
#include <vector>

#include "kernels/common/check_kernels.cuh"
#include "kernels/mxfp8/mxfp8_gemm.h"
#include "models/launch_order_names.h"
#include "validation/measure/range_counters.h"

namespace tk = tilesim::kernels;
using tk::testing::check;

namespace {

constexpr int kStageK = 128;
constexpr const char* kCycles = "sm__cycles_elapsed.max";
constexpr const char* kClock = "sm__cycles_elapsed.avg.per_second";

// Random E4M3 bytes (the NaN codes s.1111.111 moved one down) and E8M0 scales 2^-7..2^7: every
// block takes the kernels' one-multiply path, as quantised activations and weights do.
__global__ void fill_operand(uint8_t* elements, std::size_t count, uint8_t* scales, std::size_t scale_count,
                             uint32_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    uint32_t h = static_cast<uint32_t>(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    const uint8_t b = static_cast<uint8_t>(h);
    elements[i] = (b & 0x7F) == 0x7F ? static_cast<uint8_t>(b - 1) : b;
    if (i < scale_count) scales[i] = static_cast<uint8_t>(120 + (h >> 8) % 15);
  }
}

struct Variant {
  const char* scheme;
  tk::Mxfp8GemmScheme value;
  int tile_m, tile_n, stages;
};

struct Operand {
  uint8_t* elements = nullptr;
  uint8_t* scales = nullptr;
  Operand(std::size_t rows, int k, uint32_t seed) {
    const std::size_t count = rows * k, scale_count = rows * (k / 32);
    check(cudaMalloc(&elements, count), "cudaMalloc(elements)");
    check(cudaMalloc(&scales, scale_count), "cudaMalloc(scales)");
    fill_operand<<<264, 256>>>(elements, count, scales, scale_count, seed);
    check(cudaGetLastError(), "fill_operand launch");
  }
  ~Operand() {
    cudaFree(elements);
    cudaFree(scales);
  }
};

template <class T> T median(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Timing {
  float ms = 0;         // median event time
  int grid = 0;         // CTAs the launch runs
  double cycles = 0;    // median SM cycles the launch spans (CUPTI)
  double clock_mhz = 0; // median SM clock over those launches (CUPTI)
};

// Median event time of `reps` launches of the variant K deep over `rows` x `cols` tiles, then the
// median cycles and clock of `counted` launches under CUPTI's range profiler.
Timing time_launches(const Variant& v, int k, int rows, int cols, int sms, int reps, int counted) {
  tk::Mxfp8GemmProblem p;
  p.tokens_per_expert = {rows * v.tile_m};
  p.n = cols * v.tile_n;
  p.k = k;
  p.stages = v.stages;
  p.scheme = v.value;
  p.tile_tokens = v.tile_m;
  p.tile_channels = v.tile_n;
  p.order = tilesim::parse_launch_order("row_major");
  const Operand x(static_cast<std::size_t>(rows) * v.tile_m, k, 1), w(static_cast<std::size_t>(p.n), k, 2);
  void* y = nullptr;
  check(cudaMalloc(&y, static_cast<std::size_t>(rows) * v.tile_m * p.n * 2), "cudaMalloc(Y)");
  std::vector<float> ms;
  Timing out;
  {
    tk::Mxfp8GroupedGemm gemm(p, x.elements, x.scales, w.elements, w.scales, y, sms);
    out.grid = gemm.grid_size();
    cudaEvent_t start, stop;
    check(cudaEventCreate(&start), "cudaEventCreate");
    check(cudaEventCreate(&stop), "cudaEventCreate");
    for (int r = 0; r < 5; ++r) gemm.run(nullptr, nullptr);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (warm-up)");
    for (int r = 0; r < reps; ++r) { // the GEMM alone: xpass's pass over X ran in the warm-up
      check(cudaEventRecord(start), "cudaEventRecord");
      gemm.run_gemm(nullptr, nullptr);
      check(cudaEventRecord(stop), "cudaEventRecord");
      check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float t = 0;
      check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
      ms.push_back(t);
    }
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    if (counted > 0) { // --counted 0: event times only (a base/variant comparison of the stage's time)
      tilesim::measure::RangeCounterProfiler profiler({kCycles, kClock}, counted);
      const auto samples = profiler.measure({[] {}, [&] { gemm.run_gemm(nullptr, nullptr); }});
      std::vector<double> cycles, hz;
      for (const auto& launch : samples.launches) {
        cycles.push_back(launch.at(kCycles));
        hz.push_back(launch.at(kClock));
      }
      out.cycles = median(cycles);
      out.clock_mhz = median(hz) * 1e-6;
    }
  }
  cudaFree(y);
  out.ms = median(ms);
  return out;
}

} // namespace

// W's and X's bytes (elements and E8M0 scales) the GEMM reads in one K stage of rows x cols tiles:
// xpass and xpass_f16 read their pass's 16-bit X and no X scales.
double stage_bytes(const Variant& v, int rows, int cols) {
  const bool wide_x = v.value == tk::Mxfp8GemmScheme::xpass || v.value == tk::Mxfp8GemmScheme::xpass_f16;
  const double w = double(cols) * v.tile_n * kStageK * (1 + 1.0 / 32);
  const double x = double(rows) * v.tile_m * kStageK * (wide_x ? 2 : 1 + 1.0 / 32);
  return w + x;
}

int main(int argc, char** argv) {
  int reps = 50, counted = 11;
  bool chip = false;
  for (int i = 1; i < argc; i += 2) {
    const int value = i + 1 < argc ? std::atoi(argv[i + 1]) : 0;
    if (!std::strcmp(argv[i], "--ctas") && i + 1 < argc &&
        (!std::strcmp(argv[i + 1], "few") || !std::strcmp(argv[i + 1], "chip")))
      chip = !std::strcmp(argv[i + 1], "chip");
    else if (!std::strcmp(argv[i], "--reps") && value > 0)
      reps = value;
    else if (!std::strcmp(argv[i], "--counted") && i + 1 < argc && (value > 0 || !std::strcmp(argv[i + 1], "0")))
      counted = value;
    else {
      std::fprintf(stderr,
                   "mxfp8_stage_rate: bad option %s; use --reps N (N >= 1), --counted N (N >= 0) and --ctas few|chip\n",
                   argv[i]);
      return 1;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "mxfp8_stage_rate: no CUDA device; run it on an H100\n");
    return 1;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const int sms = prop.multiProcessorCount;
  using S = tk::Mxfp8GemmScheme;
  // The kernels' tiles at the ring depths the dataset and the benchmark use.
  const Variant variants[] = {
      {"promote", S::promote, 128, 128, 4},       {"promote", S::promote, 128, 128, 5},
      {"dequantize", S::dequantize, 128, 128, 3}, {"transposed", S::transposed, 16, 64, 12},
      {"transposed", S::transposed, 16, 64, 16},  {"transposed", S::transposed, 32, 64, 12},
      {"transposed", S::transposed, 64, 64, 10},  {"transposed", S::transposed, 128, 64, 4},
      {"transposed", S::transposed, 128, 128, 4}, {"xpass", S::xpass, 128, 128, 4},
      {"xpass", S::xpass, 128, 128, 3},           {"xpass_f16", S::xpass_f16, 128, 128, 4},
      {"xpass_f16", S::xpass_f16, 128, 128, 3},   {"xpass_f16", S::xpass_f16, 16, 128, 8},
      {"xpass_f16", S::xpass_f16, 16, 128, 11},  {"xpass_f16", S::xpass_f16, 128, 256, 3},
  };
  std::printf(
      "{\n \"gpu\": \"%s\",\n \"sms\": %d,\n \"ctas_mode\": \"%s\",\n \"reps\": %d,\n \"counted\": %d,\n \"unit\": "
      "\"per CTA: one 128-deep K stage of the tile, operands L2-resident; cycles and clock from CUPTI (%s, %s)\",\n"
      " \"configs\": [",
      prop.name, sms, chip ? "chip" : "few", reps, counted, kCycles, kClock);
  bool first = true;
  try {
    for (const Variant& v : variants) {
      // few: W at most 17 MB at the deeper run. chip: one tile an SM, as near square as the SM count divides.
      int cols = v.tile_n == 64 ? sms / 4 : 2048 / v.tile_n, rows = 1;
      if (chip) {
        for (cols = static_cast<int>(std::sqrt(double(sms))); sms % cols != 0; --cols) {}
        rows = sms / cols;
      }
      const int k2_stages = chip ? std::min(64, static_cast<int>(24.0 * (1 << 20) / stage_bytes(v, rows, cols))) : 64;
      const int k1 = 8 * kStageK, k2 = k2_stages * kStageK;
      const int ctas = rows * cols;
      const Timing t1 = time_launches(v, k1, rows, cols, sms, reps, counted);
      const Timing t2 = time_launches(v, k2, rows, cols, sms, reps, counted);
      const int extra = (k2 - k1) / kStageK;
      const double ns = (t2.ms - t1.ms) * 1e6 / extra;
      std::printf(
          "%s\n  {\"scheme\": \"%s\", \"tile_m\": %d, \"tile_n\": %d, \"tile_k\": %d, \"stages\": %d, \"ctas\": %d, "
          "\"rows\": %d, \"grid\": %d, \"k1\": %d, \"k2\": %d, \"l2_bytes_k2\": %.0f, \"ms_k1\": %.5f, "
          "\"ms_k2\": %.5f, \"ns_per_stage\": %.1f",
          first ? "" : ",", v.scheme, v.tile_m, v.tile_n, kStageK, v.stages, ctas, rows, t2.grid, k1, k2,
          stage_bytes(v, rows, cols) * k2_stages, t1.ms, t2.ms, ns);
      if (counted > 0)
        std::printf(", \"cycles_k1\": %.0f, \"cycles_k2\": %.0f, \"clock_mhz_k1\": %.0f, \"clock_mhz_k2\": %.0f, "
                    "\"cycles_per_stage\": %.1f",
                    t1.cycles, t2.cycles, t1.clock_mhz, t2.clock_mhz, (t2.cycles - t1.cycles) / extra);
      std::printf("}");
      first = false;
      std::fflush(stdout);
    }
  } catch (const std::exception& e) { // CUPTI refused (profiling not permitted, another profiler attached)
    std::fprintf(stderr, "mxfp8_stage_rate: counting the launches' cycles failed: %s\n", e.what());
    return 1;
  }
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%MZ", std::gmtime(&now));
  std::printf("\n ],\n \"date\": \"%s\"\n}\n", date);
  return 0;
}
