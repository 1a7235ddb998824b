// mixed_input_block_rate: what one K block costs the mixed-input kernel's consumers when its
// operands are already in L2, i.e. the compute side of a K step (wait, shared-memory loads,
// conversion, wgmma, release), measured apart from DRAM. The simulator's mixed_input_gemm model
// charges this per K step (sim/src/mixed_input_model.cpp); the dataset's shapes are not used.
//
// For each tile shape and conversion: one tile on each of a quarter of the SMs (N = SMs / 4 x
// tile_n, one token tile), run at two depths, 8 and 64 K blocks, with every operand L2-resident
// (W 17 MB at the deeper one; five warm-up launches), CUDA events around each launch, median of
// --reps. The 56 extra K blocks of the deeper run cost (t(K2) - t(K1)) / 56 per CTA; launch,
// first loads and the epilogue cancel. A quarter of the SMs keeps W in L2 at 64 blocks deep, and
// what is measured is each SM's own consumers, which do not depend on how many SMs run.
// The SM clock: a probe kernel (one CTA per SM) counts clock64 against %globaltimer for 0.5 ms
// right behind a batch of 500 launches, before the clock governor can move (it acts over
// milliseconds), to give cycles. On the H100 it reads 1995-2084 MHz, above the board's 1980 MHz
// maximum, so the profile's cycles are ns_per_block x 1980 MHz instead (kernels/mixed_input/NOTES.md).
// Output: one JSON object on stdout. --tiles 16,224 and --prmt-only restrict it to those tiles and to
// int8 with prmt, --stages N sets every tile's ring depth (ablations of the kernel:
// validation/data/h100/mixed_input/tried/ablation_v10/).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <string>
#include <utility>
#include <vector>

#include "kernels/mixed_input/mixed_input_testing.cuh"
#include "models/launch_order_names.h"

namespace tk = tilesim::kernels;
using tk::testing::check;

namespace {

// SM cycles per microsecond over about 0.5 ms of one CTA per SM; thread 0 of each CTA reports.
__global__ void clock_probe(double* mhz) {
  uint64_t t0, t1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  const long long c0 = clock64();
  do asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1));
  while (t1 - t0 < 500000);
  const long long c1 = clock64();
  if (threadIdx.x == 0) mhz[blockIdx.x] = double(c1 - c0) * 1e3 / double(t1 - t0);
}

struct Config {
  int tile_tokens;
  tk::ConversionPath conversion;
  tk::WeightType weight;
  int scale_group;
  int stages;
  int stage_blocks; // K blocks a ring stage carries
};

int block_k(int tile_n) { return tk::mixed_input_block_k(tile_n); }

float median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Median event time of `reps` launches of a problem K deep, after five warm-up launches.
float time_ms(const Config& c, int k, int ctas, int sms, int reps, double* clock_mhz) {
  tk::MixedInputProblem p;
  p.tokens_per_expert = {c.tile_tokens};
  p.tile_tokens = c.tile_tokens;
  p.tile_n = c.tile_tokens >= 128 ? 128 : 64;
  p.tile_k = c.stage_blocks * block_k(p.tile_n);
  p.n = ctas * p.tile_n;
  p.k = k;
  p.weight = c.weight;
  p.scale_group = c.scale_group;
  p.conversion = c.conversion;
  p.stages = c.stages;
  p.order = tilesim::parse_launch_order("row_major");
  tk::testing::MixedInputOperands ops(p, 7);
  tk::MixedInputGemm gemm(p, ops.buffers(), sms);
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int w = 0; w < 5; ++w) gemm.run(nullptr, nullptr);
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (warm-up)");
  std::vector<float> ms;
  for (int r = 0; r < reps; ++r) {
    check(cudaEventRecord(start), "cudaEventRecord");
    gemm.run(nullptr, nullptr);
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float t = 0;
    check(cudaEventElapsedTime(&t, start, stop), "cudaEventElapsedTime");
    ms.push_back(t);
  }
  if (clock_mhz) { // the clock under this load, the median over the SMs
    double* probe = nullptr;
    check(cudaMalloc(&probe, sms * sizeof(double)), "cudaMalloc(probe)");
    for (int r = 0; r < 500; ++r) gemm.run(nullptr, nullptr);
    clock_probe<<<sms, 32>>>(probe);
    check(cudaGetLastError(), "clock_probe launch");
    std::vector<double> host(sms);
    check(cudaMemcpy(host.data(), probe, sms * sizeof(double), cudaMemcpyDeviceToHost), "cudaMemcpy(probe)");
    cudaFree(probe);
    std::sort(host.begin(), host.end());
    *clock_mhz = host[sms / 2];
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return median(ms);
}

} // namespace

int main(int argc, char** argv) {
  int reps = 50;
  std::vector<int> only_tiles; // --tiles 16,224: those tile_m only (ablations); default every tile
  bool prmt_only = false;      // --prmt-only: int8, per-channel scales, prmt conversion only
  int stages = 0;              // --stages N: that ring depth for every tile (ablations); default each tile's own
  int stage_blocks = 0;        // --stage-blocks N: K blocks a stage carries on 64-token tiles (1, 2 or 4); default each tile's own
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--prmt-only")) prmt_only = true;
    else if (i + 1 < argc && !std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[++i]);
    else if (i + 1 < argc && !std::strcmp(argv[i], "--stages")) stages = std::atoi(argv[++i]);
    else if (i + 1 < argc && !std::strcmp(argv[i], "--stage-blocks")) stage_blocks = std::atoi(argv[++i]);
    else if (i + 1 < argc && !std::strcmp(argv[i], "--tiles"))
      for (char *c = argv[++i], *end = c; *c; c = end + (*end == ',')) {
        only_tiles.push_back(static_cast<int>(std::strtol(c, &end, 10)));
        if (end == c || (*end && *end != ',')) {
          std::fprintf(stderr, "mixed_input_block_rate: --tiles %s: use tile_m values separated by commas, e.g. 16,224\n",
                       argv[i]);
          return 1;
        }
      }
    else {
      std::fprintf(stderr, "mixed_input_block_rate: unknown option %s; use --reps N, --tiles M[,M...], --prmt-only, --stages N, "
                   "--stage-blocks N\n",
                   argv[i]);
      return 1;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "mixed_input_block_rate: no CUDA device; run it on an H100\n");
    return 1;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const int sms = prop.multiProcessorCount;
  const auto fast = tk::ConversionPath::prmt, naive = tk::ConversionPath::cvt;
  const auto i8 = tk::WeightType::int8, u8 = tk::WeightType::uint8;
  // The kernel's shapes at the ring depths and K a stage that the dataset and the benchmark use.
  std::vector<Config> configs;
  struct Tile {
    int tokens, stages, stage_blocks;
  };
  const Tile tiles[] = {{16, 12, 1}, {32, 8, 1}, {64, 4, 2}, {128, 5, 1}, {224, 5, 1}, {256, 4, 1}};
  for (int group : {0, 128})
    for (auto conversion : {fast, naive})
      for (const auto& [tile, tile_stages, tile_blocks] : tiles) { // int8, per-channel scales; uint8, group scales
        if (!only_tiles.empty() && std::find(only_tiles.begin(), only_tiles.end(), tile) == only_tiles.end()) continue;
        if (prmt_only && (group || conversion != fast)) continue;
        const int tile_n = tile >= 128 ? 128 : 64, blocks = tile == 64 && stage_blocks ? stage_blocks : tile_blocks;
        const int tile_k = blocks * block_k(tile_n);
        // Without --stages: the tile's own depth, or the deepest ring below it that shared memory holds.
        int depth = stages ? stages : tile_stages;
        while (!stages && depth > 2 && !tk::mixed_input_unsupported_reason(tile, tile_n, tile_k, depth).empty()) --depth;
        const std::string why = tk::mixed_input_unsupported_reason(tile, tile_n, tile_k, depth);
        if (!why.empty()) {
          std::fprintf(stderr, "mixed_input_block_rate: --stages %d --stage-blocks %d: %s\n", stages, stage_blocks,
                       why.c_str());
          return 1;
        }
        configs.push_back({tile, conversion, group ? u8 : i8, group, depth, blocks});
      }
  // The file says how it was made (validation/data's rule): the program and its arguments.
  std::string command = "mixed_input_block_rate";
  for (int i = 1; i < argc; ++i) command += std::string(" ") + argv[i];
  std::printf("{\n \"command\": \"%s\",", command.c_str());
  std::printf("\n \"gpu\": \"%s\",\n \"sms\": %d,\n \"ctas\": %d,\n \"reps\": %d,\n \"unit\": \"per CTA: one K block of the tile "
              "(block_k 128 on 64-channel tiles, 64 on 128-channel ones; tile_k: the K a ring stage carries), operands L2-resident\",\n \"configs\": [",
              prop.name, sms, sms / 4, reps);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    const Config& c = configs[i];
    const int tile_n = c.tile_tokens >= 128 ? 128 : 64, bk = block_k(tile_n), tile_k = c.stage_blocks * bk;
    // W = SMs / 4 x tile_n x K bytes: 17 MB at K2 on both tile widths, inside one L2 half (25 MB).
    const int k1 = 8 * bk, k2 = 64 * bk, ctas = sms / 4;
    double mhz = 0;
    const float t1 = time_ms(c, k1, ctas, sms, reps, nullptr);
    const float t2 = time_ms(c, k2, ctas, sms, reps, &mhz);
    const double ns = (t2 - t1) * 1e6 / ((k2 - k1) / bk);
    std::printf("%s\n  {\"tile_m\": %d, \"tile_n\": %d, \"block_k\": %d, \"tile_k\": %d, \"stages\": %d, \"weight\": "
                "\"%s\", \"scale_group\": %d, \"conversion\": \"%s\", \"k1\": %d, \"k2\": %d, \"ms_k1\": %.5f, "
                "\"ms_k2\": %.5f, \"ns_per_block\": %.1f, \"sm_clock_mhz\": %.0f, \"cycles_per_block\": %.0f}",
                i ? "," : "", c.tile_tokens, tile_n, bk, tile_k, c.stages, c.weight == i8 ? "int8" : "uint8", c.scale_group,
                c.conversion == fast ? "prmt" : "cvt", k1, k2, t1, t2, ns, mhz, ns * mhz * 1e-3);
    std::fflush(stdout);
  }
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%MZ", std::gmtime(&now));
  std::printf("\n ],\n \"date\": \"%s\"\n}\n", date);
  return 0;
}
