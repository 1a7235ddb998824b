// grouped_gemm_bench: times the grouped GEMM over the benchmark shapes and a sweep of tile shape,
// ring depth, launch order and grid mode. CUDA events around every run, warm-up first, median of
// --reps runs; inputs rotate over several buffer sets when one set would fit in L2.
// Writes all results as JSON (--out) for kernels/grouped_gemm/bench_baselines.py and prints a summary table.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/check_kernels.cuh"
#include "kernels/grouped_gemm/grouped_gemm.h"
#include "models/launch_order_names.h"

namespace tk = tilesim::kernels;
using tk::testing::check;

namespace {

struct Shape {
  std::string name;
  std::vector<int> tokens;
  int n, k;
};

struct Config {
  int tile_n, stages;
  bool persistent;
  std::string order;
};

struct Result {
  Config config;
  double median_ms;
  double tflops;
};

std::vector<Shape> benchmark_shapes() {
  return {
      {"dense_8192", {8192}, 8192, 8192},
      {"moe_e8x2048", std::vector<int>(8, 2048), 4096, 7168},
      {"moe_e64x512", std::vector<int>(64, 512), 2048, 7168},
      {"moe_e128x128", std::vector<int>(128, 128), 2048, 7168},
      // Skewed routing: a few hot experts, a long tail, one idle expert, counts off the tile grid.
      {"skewed_e16", {5000, 3000, 2000, 1500, 1200, 900, 700, 500, 400, 300, 200, 150, 100, 50, 10, 0}, 4096, 7168},
  };
}

std::vector<Config> sweep(bool quick) {
  const char* orders[] = {"row_major", "column_major", "grouped_m:8", "grouped_n:8", "serpentine",
                          "morton",    "hilbert",      "expert_major:8", "interleaved"};
  std::vector<Config> configs;
  for (int tile_n : {256, 128})
    for (bool persistent : {true, false})
      for (const char* order : orders) {
        if (quick && std::strcmp(order, "row_major") && std::strcmp(order, "grouped_m:8")) continue;
        configs.push_back({tile_n, tile_n == 256 ? 4 : 6, persistent, order});
      }
  if (!quick)
    for (const char* order : {"grouped_m:4", "grouped_m:16", "expert_major:4", "grouped_n:4"})
      for (bool persistent : {true, false}) configs.push_back({256, 4, persistent, order});
  configs.push_back({256, 3, true, "grouped_m:8"});
  configs.push_back({128, 4, true, "grouped_m:8"});
  configs.push_back({128, 5, true, "grouped_m:8"});
  return configs;
}

std::string config_name(const Config& c) {
  return "128x" + std::to_string(c.tile_n) + "x64/s" + std::to_string(c.stages) + "/" + c.order + "/" +
         (c.persistent ? "persistent" : "grid");
}

struct Buffers {
  void* x = nullptr;
  void* w = nullptr;
  void* y = nullptr;
};

double median(std::vector<float> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

struct ShapeResults {
  std::vector<Result> sweep;
  Result confirmed; // the sweep's best config timed again, twice the runs: the number reported
};

Result time_config(const Shape& s, const Config& c, const std::vector<Buffers>& buffers, int sm_count, int reps,
                   int warmup, cudaEvent_t start, cudaEvent_t stop) {
  tk::GroupedGemmProblem problem;
  problem.experts = static_cast<int>(s.tokens.size());
  problem.tokens_per_expert = s.tokens;
  problem.n = s.n;
  problem.k = s.k;
  problem.tile_n = c.tile_n;
  problem.stages = c.stages;
  problem.persistent = c.persistent;
  problem.order = tilesim::parse_launch_order(c.order);
  const int sets = static_cast<int>(buffers.size());
  std::vector<std::unique_ptr<tk::GroupedGemm>> gemms;
  for (const Buffers& b : buffers) gemms.push_back(std::make_unique<tk::GroupedGemm>(problem, b.x, b.w, b.y, sm_count));
  for (int i = 0; i < warmup; ++i) gemms[i % sets]->run(nullptr, nullptr);
  std::vector<float> ms(reps);
  for (int i = 0; i < reps; ++i) {
    check(cudaEventRecord(start), "cudaEventRecord");
    gemms[i % sets]->run(nullptr, nullptr);
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    check(cudaEventElapsedTime(&ms[i], start, stop), "cudaEventElapsedTime");
  }
  const double med = median(ms);
  return {c, med, gemms[0]->flops() / (med * 1e-3) / 1e12};
}

ShapeResults bench_shape(const Shape& s, const std::vector<Config>& configs, int sm_count, int l2_bytes, int reps,
                         int warmup) {
  const int experts = static_cast<int>(s.tokens.size());
  int64_t total = 0;
  for (int t : s.tokens) total += t;
  const int64_t x_bytes = total * s.k * 2, w_bytes = int64_t(experts) * s.n * s.k * 2, y_bytes = total * s.n * 2;
  // Enough buffer sets that the sets together exceed twice the L2, so no run starts on warm inputs.
  const int sets = static_cast<int>(std::clamp<int64_t>((2LL * l2_bytes) / (x_bytes + w_bytes) + 1, 1, 8));
  std::vector<Buffers> buffers(sets);
  for (int i = 0; i < sets; ++i) {
    check(cudaMalloc(&buffers[i].x, x_bytes), "cudaMalloc(x)");
    check(cudaMalloc(&buffers[i].w, w_bytes), "cudaMalloc(w)");
    check(cudaMalloc(&buffers[i].y, y_bytes), "cudaMalloc(y)");
    tk::testing::fill_uniform_host(buffers[i].x, x_bytes / 2, 100 + 2 * i);
    tk::testing::fill_uniform_host(buffers[i].w, w_bytes / 2, 101 + 2 * i);
  }
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  ShapeResults out;
  for (const Config& c : configs) {
    out.sweep.push_back(time_config(s, c, buffers, sm_count, reps, warmup, start, stop));
    std::printf("  %-14s %-44s %8.4f ms %7.1f TFLOP/s\n", s.name.c_str(), config_name(c).c_str(),
                out.sweep.back().median_ms, out.sweep.back().tflops);
    std::fflush(stdout);
  }
  const auto best = std::max_element(out.sweep.begin(), out.sweep.end(),
                                     [](const Result& a, const Result& b) { return a.tflops < b.tflops; });
  out.confirmed = time_config(s, best->config, buffers, sm_count, 2 * reps, warmup, start, stop);
  check(cudaEventDestroy(start), "cudaEventDestroy");
  check(cudaEventDestroy(stop), "cudaEventDestroy");
  for (Buffers& b : buffers) {
    cudaFree(b.x);
    cudaFree(b.w);
    cudaFree(b.y);
  }
  return out;
}

std::string tokens_json(const std::vector<int>& tokens) {
  std::string out = "[";
  for (size_t i = 0; i < tokens.size(); ++i) out += (i ? "," : "") + std::to_string(tokens[i]);
  return out + "]";
}

} // namespace

int main(int argc, char** argv) {
  std::string out_path = "bench_ours.json", only;
  int reps = 30, warmup = 5;
  bool quick = false;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--out") && i + 1 < argc)
      out_path = argv[++i];
    else if (!std::strcmp(argv[i], "--shape") && i + 1 < argc)
      only = argv[++i];
    else if (!std::strcmp(argv[i], "--reps") && i + 1 < argc)
      reps = std::max(1, std::atoi(argv[++i]));
    else if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else {
      std::fprintf(stderr, "usage: grouped_gemm_bench [--out FILE] [--shape NAME] [--reps N] [--quick]\n");
      return 2;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device\n");
    return 77;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  std::printf("device: %s, %d SMs, L2 %d bytes\n", prop.name, prop.multiProcessorCount, prop.l2CacheSize);
  FILE* out = std::fopen(out_path.c_str(), "w");
  if (!out) {
    std::fprintf(stderr, "cannot write %s\n", out_path.c_str());
    return 2;
  }
  std::fprintf(out, "{\"gpu\": \"%s\", \"sm_count\": %d, \"reps\": %d, \"shapes\": [\n", prop.name,
               prop.multiProcessorCount, reps);
  bool first_shape = true;
  try {
    for (const Shape& s : benchmark_shapes()) {
      if (!only.empty() && only != s.name) continue;
      const ShapeResults r = bench_shape(s, sweep(quick), prop.multiProcessorCount, prop.l2CacheSize, reps, warmup);
      const auto json_result = [](const Result& x) {
        char buf[512];
        std::snprintf(buf, sizeof buf,
                      "{\"config\": \"%s\", \"tile_n\": %d, \"stages\": %d, \"order\": \"%s\", "
                      "\"persistent\": %s, \"median_ms\": %.5f, \"tflops\": %.2f}",
                      config_name(x.config).c_str(), x.config.tile_n, x.config.stages, x.config.order.c_str(),
                      x.config.persistent ? "true" : "false", x.median_ms, x.tflops);
        return std::string(buf);
      };
      std::fprintf(out, "%s {\"shape\": \"%s\", \"tokens_per_expert\": %s, \"n\": %d, \"k\": %d,\n  \"confirmed\": %s,\n  \"results\": [\n",
                   first_shape ? "" : ",", s.name.c_str(), tokens_json(s.tokens).c_str(), s.n, s.k,
                   json_result(r.confirmed).c_str());
      first_shape = false;
      for (size_t i = 0; i < r.sweep.size(); ++i)
        std::fprintf(out, "  %s%s\n", json_result(r.sweep[i]).c_str(), i + 1 < r.sweep.size() ? "," : "");
      std::fprintf(out, "]}\n");
      std::printf("BEST %-14s %-44s %7.1f TFLOP/s (confirmation run of %d: %.1f)\n", s.name.c_str(),
                  config_name(r.confirmed.config).c_str(),
                  std::max_element(r.sweep.begin(), r.sweep.end(),
                                   [](const Result& a, const Result& b) { return a.tflops < b.tflops; })->tflops,
                  2 * reps, r.confirmed.tflops);
    }
  } catch (const tk::KernelError& e) {
    std::fprintf(stderr, "KernelError: %s\n", e.what());
    return 1;
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "grouped_gemm_bench: %s\n", e.what());
    return 2;
  }
  std::fprintf(out, "]}\n");
  std::fclose(out);
  return 0;
}
