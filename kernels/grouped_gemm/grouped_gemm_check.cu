// grouped_gemm_check: the grouped GEMM kernel against a plain fp32 reference on the GPU.
// Every case draws fresh uniform [-1, 1] inputs, poisons Y (0xFFFF, a bf16 NaN) before every run,
// and checks ||y - ref|| / ||ref|| < 1e-2 on the (sampled) rows, no poison left in the output and
// the guard rows after the output untouched. Exit 0 pass, 1 fail, 77 no CUDA device (CTest skip).
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/common/activations_check.h"
#include "kernels/common/check_kernels.cuh"
#include "kernels/grouped_gemm/grouped_gemm.h"
#include "models/launch_order_names.h"

namespace tk = tilesim::kernels;
using tk::testing::check;

namespace {

struct Config {
  int tile_n;
  int stages;
  bool persistent;
  tilesim::LaunchOrder order;
  tilesim::GemmEpilogue epilogue = tilesim::GemmEpilogue::none;
};

struct Case {
  std::string name;
  std::vector<int> tokens;
  int n, k;
  int sample_stride; // 1 = every row checked
  std::vector<Config> configs;
};

const char* kAllOrders[] = {"row_major", "column_major", "grouped_m:8", "grouped_n:8", "serpentine",
                            "morton",    "hilbert",      "expert_major:8", "interleaved"};

std::vector<Config> every_order_and_mode(const std::string& only_order) {
  std::vector<Config> configs;
  for (int tile_n : {128, 256})
    for (bool persistent : {true, false})
      for (const char* name : kAllOrders) {
        if (!only_order.empty() && only_order != name) continue;
        configs.push_back({tile_n, tile_n == 128 ? 6 : 4, persistent, tilesim::parse_launch_order(name)});
      }
  return configs;
}

Config one(int tile_n, int stages, bool persistent, const char* order,
           tilesim::GemmEpilogue epilogue = tilesim::GemmEpilogue::none) {
  return {tile_n, stages, persistent, tilesim::parse_launch_order(order), epilogue};
}

// Fused epilogues on both store paths (full tiles through TMA, tiles cut by an expert's end or
// by n stored directly), both tile widths and both modes.
std::vector<Config> fused_epilogues() {
  using tilesim::GemmEpilogue;
  return {one(256, 4, true, "grouped_m:8", GemmEpilogue::bias_relu), one(128, 6, false, "hilbert", GemmEpilogue::bias_gelu),
          one(256, 4, false, "row_major", GemmEpilogue::bias_gelu), one(128, 4, true, "interleaved", GemmEpilogue::bias_relu),
          one(256, 4, true, "hilbert", GemmEpilogue::bias_gelu)};
}

// The reference through the epilogue, in double: act(ref + bias[expert of the row][col]), the
// activations' formulas of kernels/common/activations.cuh (GELU's tanh exact here).
__global__ void epilogue_reference(const float* ref, const int* rows, int sampled, const int* token_offsets, int experts,
                                   const __nv_bfloat16* bias, int n, tilesim::GemmEpilogue epilogue, float* out) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < int64_t(sampled) * n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const int row = rows[i / n], col = static_cast<int>(i % n);
    int e = 0;
    while (e + 1 < experts && token_offsets[e + 1] <= row) ++e;
    const double v = double(ref[i]) + double(__bfloat162float(bias[int64_t(e) * n + col]));
    out[i] = float(epilogue == tilesim::GemmEpilogue::bias_relu ? tk::relu_reference(v) : tk::gelu_tanh_reference(v));
  }
}

// Runs every config of one case on one set of random inputs; returns the number of failures.
int run_case(const Case& c, int sm_count, uint64_t seed) {
  const int experts = static_cast<int>(c.tokens.size());
  std::vector<int> token_offsets(experts + 1, 0);
  for (int e = 0; e < experts; ++e) token_offsets[e + 1] = token_offsets[e] + c.tokens[e];
  const int total = token_offsets[experts];
  const int64_t guard_rows = 128;
  const int64_t x_elems = int64_t(total) * c.k, w_elems = int64_t(experts) * c.n * c.k;
  const int64_t y_elems = int64_t(total) * c.n, guard_elems = guard_rows * c.n;

  std::vector<int> rows; // sampled rows: a stride plus the first and last row of every expert
  for (int r = 0; r < total; r += c.sample_stride) rows.push_back(r);
  if (c.sample_stride > 1)
    for (int e = 0; e < experts; ++e)
      if (c.tokens[e] > 0) {
        rows.push_back(token_offsets[e]);
        rows.push_back(token_offsets[e + 1] - 1);
      }

  void *x = nullptr, *w = nullptr, *y = nullptr, *bias = nullptr;
  float *ref = nullptr, *ref_fused = nullptr;
  int *d_rows = nullptr, *d_offsets = nullptr;
  tk::testing::Comparison* d_cmp = nullptr;
  check(cudaMalloc(&x, std::max<int64_t>(x_elems, 1) * 2), "cudaMalloc(x)");
  check(cudaMalloc(&w, w_elems * 2), "cudaMalloc(w)");
  check(cudaMalloc(&y, (y_elems + guard_elems) * 2), "cudaMalloc(y)");
  check(cudaMalloc(&ref, std::max<size_t>(rows.size(), 1) * c.n * sizeof(float)), "cudaMalloc(ref)");
  check(cudaMalloc(&ref_fused, std::max<size_t>(rows.size(), 1) * c.n * sizeof(float)), "cudaMalloc(ref_fused)");
  check(cudaMalloc(&bias, int64_t(experts) * c.n * 2), "cudaMalloc(bias)");
  tk::testing::fill_uniform_host(bias, int64_t(experts) * c.n, seed * 2 + 3);
  check(cudaMalloc(&d_rows, std::max<size_t>(rows.size(), 1) * sizeof(int)), "cudaMalloc(rows)");
  check(cudaMalloc(&d_offsets, token_offsets.size() * sizeof(int)), "cudaMalloc(offsets)");
  check(cudaMalloc(&d_cmp, sizeof(tk::testing::Comparison)), "cudaMalloc(comparison)");
  check(cudaMemcpy(d_rows, rows.data(), rows.size() * sizeof(int), cudaMemcpyHostToDevice), "cudaMemcpy(rows)");
  check(cudaMemcpy(d_offsets, token_offsets.data(), token_offsets.size() * sizeof(int), cudaMemcpyHostToDevice),
        "cudaMemcpy(offsets)");
  tk::testing::fill_uniform_host(x, x_elems, seed * 2 + 1);
  tk::testing::fill_uniform_host(w, w_elems, seed * 2 + 2);
  if (!rows.empty()) {
    tk::testing::reference_rows<<<static_cast<int>(rows.size()), 256, c.k * sizeof(float)>>>(
        static_cast<const __nv_bfloat16*>(x), static_cast<const __nv_bfloat16*>(w), d_offsets, experts, d_rows, c.n,
        c.k, ref);
    check(cudaGetLastError(), "reference_rows launch");
  }

  int failures = 0;
  for (const Config& cfg : c.configs) {
    tk::GroupedGemmProblem problem;
    problem.experts = experts;
    problem.tokens_per_expert = c.tokens;
    problem.n = c.n;
    problem.k = c.k;
    problem.tile_n = cfg.tile_n;
    problem.stages = cfg.stages;
    problem.persistent = cfg.persistent;
    problem.order = cfg.order;
    problem.epilogue = cfg.epilogue;
    const bool fused = cfg.epilogue != tilesim::GemmEpilogue::none;
    char label[256];
    std::snprintf(label, sizeof label, "%-14s 128x%dx64 s%d %-14s %-10s%s", c.name.c_str(), cfg.tile_n, cfg.stages,
                  tilesim::to_string(cfg.order).c_str(), cfg.persistent ? "persistent" : "grid",
                  cfg.epilogue == tilesim::GemmEpilogue::bias_relu   ? " bias_relu"
                  : cfg.epilogue == tilesim::GemmEpilogue::bias_gelu ? " bias_gelu"
                                                                     : "");
    try {
      if (fused && !rows.empty()) {
        epilogue_reference<<<512, 256>>>(ref, d_rows, static_cast<int>(rows.size()), d_offsets, experts,
                                         static_cast<const __nv_bfloat16*>(bias), c.n, cfg.epilogue, ref_fused);
        check(cudaGetLastError(), "epilogue_reference launch");
      }
      tk::GroupedGemm gemm(problem, x, w, y, sm_count, fused ? bias : nullptr);
      check(cudaMemset(y, 0xFF, (y_elems + guard_elems) * 2), "cudaMemset(y poison)");
      check(cudaMemset(d_cmp, 0, sizeof(tk::testing::Comparison)), "cudaMemset(comparison)");
      gemm.run(nullptr, nullptr);
      check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after grouped_gemm");
      if (!rows.empty()) {
        tk::testing::compare_rows<<<512, 256>>>(static_cast<const __nv_bfloat16*>(y), fused ? ref_fused : ref, d_rows,
                                                static_cast<int>(rows.size()), c.n, d_cmp);
        check(cudaGetLastError(), "compare_rows launch");
      }
      tk::testing::count_poison<<<1024, 256>>>(static_cast<const uint16_t*>(y), y_elems, guard_elems, d_cmp);
      check(cudaGetLastError(), "count_poison launch");
      tk::testing::Comparison cmp{};
      check(cudaMemcpy(&cmp, d_cmp, sizeof cmp, cudaMemcpyDeviceToHost), "cudaMemcpy(comparison)");
      const double rel = cmp.ref_sq > 0 ? std::sqrt(cmp.diff_sq / cmp.ref_sq) : 0.0;
      const bool ok = rel < 1e-2 && std::isfinite(rel) && cmp.unwritten == 0 && cmp.guard_hits == 0;
      std::printf("%s %s rel_err=%.3e unwritten=%llu guard_changed=%llu tiles=%d grid=%d\n", ok ? "PASS" : "FAIL",
                  label, rel, cmp.unwritten, cmp.guard_hits, gemm.tile_count(), gemm.grid_size());
      failures += ok ? 0 : 1;
    } catch (const tk::KernelError& e) {
      std::printf("FAIL %s KernelError: %s\n", label, e.what());
      ++failures;
    }
  }
  cudaFree(x);
  cudaFree(w);
  cudaFree(y);
  cudaFree(ref);
  cudaFree(ref_fused);
  cudaFree(bias);
  cudaFree(d_rows);
  cudaFree(d_offsets);
  cudaFree(d_cmp);
  return failures;
}

// The per-tile trace: every work item recorded once, at its own index, on a real SM, end >= start,
// its cycle counts in order (start, first K step, last K step, end).
int check_trace(int sm_count) {
  int failures = 0;
  const std::vector<int> tokens = {300, 0, 129, 1024};
  int total = 0;
  for (int t : tokens) total += t;
  const int n = 1152, k = 256; // 13 tile rows x 9 tile columns: an odd count, so the last pair is half empty
  void *x = nullptr, *w = nullptr, *y = nullptr;
  check(cudaMalloc(&x, int64_t(total) * k * 2), "cudaMalloc(x)");
  check(cudaMalloc(&w, int64_t(tokens.size()) * n * k * 2), "cudaMalloc(w)");
  check(cudaMalloc(&y, int64_t(total) * n * 2), "cudaMalloc(y)");
  tk::testing::fill_uniform_host(x, int64_t(total) * k, 7);
  tk::testing::fill_uniform_host(w, int64_t(tokens.size()) * n * k, 8);
  for (bool persistent : {true, false}) {
    tk::GroupedGemmProblem problem;
    problem.experts = static_cast<int>(tokens.size());
    problem.tokens_per_expert = tokens;
    problem.n = n;
    problem.k = k;
    problem.tile_n = 128;
    problem.stages = 4;
    problem.persistent = persistent;
    problem.order = tilesim::parse_launch_order("hilbert");
    tk::GroupedGemm gemm(problem, x, w, y, sm_count);
    const int tiles = gemm.tile_count();
    tk::TileTrace* d_trace = nullptr;
    check(cudaMalloc(&d_trace, tiles * sizeof(tk::TileTrace)), "cudaMalloc(trace)");
    check(cudaMemset(d_trace, 0xFF, tiles * sizeof(tk::TileTrace)), "cudaMemset(trace)");
    gemm.run(nullptr, d_trace);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after traced run");
    std::vector<tk::TileTrace> trace(tiles);
    check(cudaMemcpy(trace.data(), d_trace, tiles * sizeof(tk::TileTrace), cudaMemcpyDeviceToHost),
          "cudaMemcpy(trace)");
    int bad = 0;
    for (int i = 0; i < tiles; ++i) {
      const tk::TileTrace& t = trace[i];
      if (t.linear != i || t.sm < 0 || t.sm >= sm_count || t.end_ns < t.start_ns || t.end_ns - t.start_ns > 1000000000ULL ||
          t.start_cycles < 0 || t.first_step_cycles < t.start_cycles || t.last_step_cycles < t.first_step_cycles ||
          t.end_cycles < t.last_step_cycles)
        ++bad;
    }
    std::printf("%s trace %-10s tiles=%d grid=%d bad_records=%d\n", bad == 0 ? "PASS" : "FAIL",
                persistent ? "persistent" : "grid", tiles, gemm.grid_size(), bad);
    failures += bad == 0 ? 0 : 1;
    cudaFree(d_trace);
  }
  cudaFree(x);
  cudaFree(w);
  cudaFree(y);
  return failures;
}

// The launcher must refuse what the kernel cannot do, naming the field.
int check_rejections() {
  int failures = 0;
  auto expect_error = [&](const char* what, tk::GroupedGemmProblem problem, const char* field) {
    try {
      tk::GroupedGemm gemm(problem, nullptr, nullptr, nullptr, 132);
      std::printf("FAIL reject %s: no KernelError\n", what);
      ++failures;
    } catch (const tk::KernelError& e) {
      const bool names_field = std::strstr(e.what(), field) != nullptr;
      std::printf("%s reject %s: %s\n", names_field ? "PASS" : "FAIL", what, e.what());
      failures += names_field ? 0 : 1;
    }
  };
  tk::GroupedGemmProblem base;
  base.experts = 1;
  base.tokens_per_expert = {256};
  base.n = 256;
  base.k = 256;
  auto p = base;
  p.k = 1001;
  expect_error("k % 8", p, "k = 1001");
  p = base;
  p.n = 100;
  expect_error("n % 8", p, "n = 100");
  p = base;
  p.tile_m = 64;
  expect_error("tile_m 64", p, "tile_m");
  p = base;
  p.stages = 5;
  expect_error("stages 5 at tile_n 256", p, "stages");
  p = base;
  p.tile_k = 32;
  expect_error("tile_k 32", p, "tile_k");
  p = base;
  p.epilogue = tilesim::GemmEpilogue::bias_relu;
  expect_error("fused epilogue without a bias", p, "bias");
  if (!tk::grouped_gemm_supported(128, 128, 64, 6) || tk::grouped_gemm_supported(128, 256, 64, 5)) {
    std::printf("FAIL grouped_gemm_supported table\n");
    ++failures;
  }
  return failures;
}

} // namespace

int main(int argc, char** argv) {
  bool quick = false;
  std::string only_order;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--quick"))
      quick = true;
    else if (!std::strcmp(argv[i], "--order") && i + 1 < argc)
      only_order = argv[++i];
    else {
      std::fprintf(stderr, "usage: grouped_gemm_check [--quick] [--order NAME]\n");
      return 2;
    }
  }
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device (%s)\n", err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
    return 77;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  if (prop.major != 9) {
    std::printf("SKIP: no CUDA device (the kernel needs sm_90a, device 0 is %s, sm_%d%d)\n", prop.name, prop.major,
                prop.minor);
    return 77;
  }
  std::printf("device: %s, %d SMs\n", prop.name, prop.multiProcessorCount);
  try {
    if (!only_order.empty()) tilesim::parse_launch_order(only_order);
  } catch (const std::invalid_argument& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 2;
  }

  std::vector<Case> cases;
  const auto all = every_order_and_mode(only_order);
  cases.push_back({"dense_1024", {1024}, 1024, 1024, 1, all});
  cases.push_back({"ragged", {0, 1, 127, 129, 300}, 1000, 520, 1, all});
  cases.push_back({"fused_dense", {1024}, 1024, 1024, 1, fused_epilogues()});
  cases.push_back({"fused_ragged", {0, 1, 127, 129, 300}, 1000, 520, 1, fused_epilogues()});
  cases.push_back({"zero_experts", {256, 0, 0, 128, 384, 0, 1, 513}, 512, 1024, 1, all});
  cases.push_back({"odd_tiles", {300}, 640, 192, 1, all}); // 15 or 9 tiles: the last cluster pair is half empty
  cases.push_back({"odd_tiles_fused", {300}, 640, 192, 1, fused_epilogues()}); // the half-empty pair copies no bias
  cases.push_back({"all_empty", {0, 0, 0}, 256, 256, 1, {one(256, 4, true, "row_major")}});
  cases.push_back({"stages",
                   {700},
                   776,
                   648,
                   1,
                   {one(128, 3, true, "row_major"), one(128, 4, true, "row_major"), one(128, 5, false, "hilbert"),
                    one(128, 6, true, "morton"), one(256, 3, true, "grouped_m:8"), one(256, 4, false, "row_major")}});
  if (!quick) {
    cases.push_back({"moe_e8x2048",
                     std::vector<int>(8, 2048),
                     4096,
                     7168,
                     97,
                     {one(256, 4, true, "grouped_m:8"), one(128, 6, false, "interleaved")}});
    cases.push_back({"moe_e128x128",
                     std::vector<int>(128, 128),
                     2048,
                     7168,
                     31,
                     {one(256, 4, true, "expert_major:8"), one(128, 6, true, "row_major")}});
    cases.push_back({"dense_8192", {8192}, 8192, 8192, 257, {one(256, 4, true, "grouped_m:8")}});
  }
  int failures = check_rejections() + check_trace(prop.multiProcessorCount);
  uint64_t seed = 1;
  for (const Case& c : cases) failures += run_case(c, prop.multiProcessorCount, seed++);
  std::printf("%s: %d failure(s)\n", failures == 0 ? "ALL PASS" : "FAILED", failures);
  return failures == 0 ? 0 : 1;
}
