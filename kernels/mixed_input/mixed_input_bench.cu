// mixed_input_bench: the mixed-input GEMM against its baselines on the issue's shapes, timed
// interleaved run by run in one process (the H100's clock drifts with temperature over minutes,
// so back-to-back blocks of runs would favour whichever ran first):
//   ours (prmt conversion), ours with the naive cvt conversion (same tile), cuBLAS bf16
//   (cublasGemmEx TN, what torch.matmul(x, w.t()) calls) on bf16 weights of the same shape, and for
//   the grouped shape our bf16 grouped GEMM (kernels/grouped_gemm) on bf16 weights.
// Every candidate's output is checked against an fp32 reference of X * dequant(W)^T first
// (poisoned output, fresh random data); a failed check is reported and the shape's figures are
// marked invalid. Each round times every candidate twice: from a cold L2 with the call already
// queued behind a lead kernel (queued_cold_timing.cuh: the GPU's time, the figures the records
// compare), and with bare CUDA events around the call, as this bench did before (the host's
// launch latency included, L2 as the previous candidate left it). 5 warm-up rounds, median of
// --reps rounds. Writes --out (JSON) and prints a table.
#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kernels/grouped_gemm/grouped_gemm.h"
#include "kernels/mixed_input/mixed_input_testing.cuh"
#include "kernels/mixed_input/queued_cold_timing.cuh"
#include "models/launch_order_names.h"

namespace tk = tilesim::kernels;
using tk::testing::check;

namespace {

void check_cublas(cublasStatus_t s, const char* call) {
  if (s != CUBLAS_STATUS_SUCCESS) {
    std::fprintf(stderr, "%s failed: cuBLAS status %d\n", call, int(s));
    std::exit(2);
  }
}

struct Shape {
  std::string name;
  std::vector<int> tokens;
  int n, k;
  std::vector<int> tile_tokens; // candidate tiles for ours
  std::vector<int> stages;      // candidate ring depths (each with every K per stage the tile supports)
  bool grouped_bf16_baseline;
};

double median(std::vector<float> ms) {
  std::sort(ms.begin(), ms.end());
  return ms.empty() ? 0.0 : ms[ms.size() / 2];
}

struct Candidate {
  std::string name;
  std::function<void()> run;
  std::vector<float> ms;             // queued behind the lead kernel, cold L2
  std::vector<float> ms_around_call; // bare events around the call (launch latency included)
  int queued = 0;                    // timings whose call was queued before the start event fired
  double median() const { return ::median(ms); }
};

// Round by round: every candidate queued and cold, then every candidate with bare events in the
// same order as before (each after the previous candidate), so the old figures keep their method.
void time_interleaved(std::vector<Candidate>& cands, int reps, const tk::testing::QueuedColdTimer& timer) {
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  for (int w = 0; w < 5; ++w)
    for (auto& c : cands) c.run();
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize (warm-up)");
  for (int r = 0; r < reps; ++r) {
    for (auto& c : cands) {
      const tk::testing::QueuedTime t = timer.time(c.run);
      c.ms.push_back(t.ms);
      c.queued += t.queued;
    }
    for (auto& c : cands) {
      check(cudaEventRecord(start), "cudaEventRecord");
      c.run();
      check(cudaEventRecord(stop), "cudaEventRecord");
      check(cudaEventSynchronize(stop), "cudaEventSynchronize");
      float ms = 0;
      check(cudaEventElapsedTime(&ms, start, stop), "cudaEventElapsedTime");
      c.ms_around_call.push_back(ms);
    }
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
}

std::string config_name(const tk::MixedInputProblem& p) {
  return std::to_string(p.tile_tokens) + "x" + std::to_string(p.tile_n) + "x" + std::to_string(p.tile_k) +
         "/s" + std::to_string(p.stages) + (p.tma_store ? "/tma" : "") +
         (p.order.kind == tilesim::LaunchOrderKind::row_major ? "/row_major" : "") + "/" +
         (p.conversion == tk::ConversionPath::prmt ? "prmt" : "cvt");
}

nlohmann::json run_shape(const Shape& s, tk::WeightType weight, int scale_group, int sms, int reps, cublasHandle_t blas,
                         const tk::testing::QueuedColdTimer& timer, uint64_t seed) {
  tk::MixedInputProblem base;
  base.experts = static_cast<int>(s.tokens.size());
  base.tokens_per_expert = s.tokens;
  base.n = s.n;
  base.k = s.k;
  base.weight = weight;
  base.scale_group = scale_group;
  base.order = tilesim::parse_launch_order("grouped_m:8");
  tk::testing::MixedInputOperands ops(base, seed);
  const int total = ops.total;
  const double flops = 2.0 * total * double(s.n) * s.k;
  const double weight_bytes = double(base.experts) * s.n * s.k;
  const int check_stride = total <= 64 ? 1 : 37;

  nlohmann::json rec{{"shape", s.name}, {"experts", base.experts}, {"tokens_per_expert", s.tokens.front()},
                     {"total_tokens", total}, {"n", s.n}, {"k", s.k},
                     {"weight", weight == tk::WeightType::int8 ? "int8" : "uint8"}, {"scale_group", scale_group}};
  std::vector<std::unique_ptr<tk::MixedInputGemm>> gemms;
  std::vector<Candidate> cands;
  nlohmann::json checks = nlohmann::json::object();
  bool all_ok = true;
  for (int tile : s.tile_tokens)
    for (int stages : s.stages)
      for (int stage_blocks : {1, 2, 4}) // K blocks a ring stage carries: more than one on 64-token tiles only
        // 128-channel tiles with either epilogue, each in grouped_m:8 and in row-major order (1% apart
        // in v15's runs, validation/data/h100/mixed_input/tried/pairs_v15/).
        for (int variant = 0; variant < (tile >= 128 ? 4 : 1); ++variant)
        for (auto conversion : {tk::ConversionPath::prmt, tk::ConversionPath::cvt}) {
          tk::MixedInputProblem p = base;
          p.tile_tokens = tile;
          p.tile_n = tile >= 128 ? 128 : 64;
          p.tile_k = stage_blocks * tk::mixed_input_block_k(p.tile_n);
          p.stages = stages;
          p.tma_store = variant % 2 == 1;
          if (variant >= 2) p.order = tilesim::parse_launch_order("row_major");
          p.conversion = conversion;
          if (!tk::mixed_input_unsupported_reason(p.tile_tokens, p.tile_n, p.tile_k, p.stages, p.tma_store).empty())
            continue;
          gemms.push_back(std::make_unique<tk::MixedInputGemm>(p, ops.buffers(), sms));
          tk::MixedInputGemm* g = gemms.back().get();
          ops.poison();
          g->run(nullptr, nullptr);
          check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after mixed_input_gemm");
          const tk::testing::CheckResult r = tk::testing::check_output(ops, p, check_stride);
          checks[config_name(p)] = {{"rel_err", r.rel_err}, {"unwritten", r.unwritten}, {"guard_changed", r.guard_changed},
                                    {"ok", r.ok()}};
          all_ok = all_ok && r.ok();
          cands.push_back({config_name(p), [g] { g->run(nullptr, nullptr); }, {}});
        }

  // bf16 baselines on bf16 weights of the same shape (X is shared).
  void* w_bf16 = nullptr;
  void* y_bf16 = nullptr;
  check(cudaMalloc(&w_bf16, size_t(weight_bytes) * 2), "cudaMalloc(w bf16)");
  check(cudaMalloc(&y_bf16, size_t(total) * s.n * 2), "cudaMalloc(y bf16)");
  tk::testing::fill_uniform_host(w_bf16, int64_t(weight_bytes), seed * 7 + 5);
  const float alpha = 1.0f, beta = 0.0f;
  cands.push_back({"cublas_bf16", [&] {
                     // Y[total, n] = X[total, k] * W0[n, k]^T: column-major Y^T = W0 * X^T (TN). The
                     // grouped shape's dense equivalent multiplies every token by expert 0's weights.
                     check_cublas(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, s.n, total, s.k, &alpha, w_bf16,
                                               CUDA_R_16BF, s.k, ops.x, CUDA_R_16BF, s.k, &beta, y_bf16, CUDA_R_16BF,
                                               s.n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT),
                                  "cublasGemmEx");
                   },
                   {}});
  std::vector<std::unique_ptr<tk::GroupedGemm>> bf16_gemms;
  if (s.grouped_bf16_baseline)
    for (int tile_n : {128, 256}) {
      tk::GroupedGemmProblem g;
      g.experts = base.experts;
      g.tokens_per_expert = s.tokens;
      g.n = s.n;
      g.k = s.k;
      g.tile_n = tile_n;
      g.stages = tile_n == 128 ? 6 : 4;
      g.order = base.order;
      bf16_gemms.push_back(std::make_unique<tk::GroupedGemm>(g, ops.x, w_bf16, y_bf16, sms));
      tk::GroupedGemm* gg = bf16_gemms.back().get();
      cands.push_back({"our_bf16_grouped_128x" + std::to_string(tile_n), [gg] { gg->run(nullptr, nullptr); }, {}});
    }
  time_interleaved(cands, reps, timer);

  nlohmann::json timings = nlohmann::json::object();
  double best_prmt = 1e30, best_cvt_same = 0, cublas = 0, bf16_grouped = 1e30;
  std::string best_name;
  for (const auto& c : cands) {
    const double ms = c.median();
    timings[c.name] = {{"median_ms", ms}, {"tflops", flops / (ms * 1e-3) / 1e12},
                       {"weight_tb_per_s", (c.name.rfind("cublas", 0) == 0 || c.name.rfind("our_bf16", 0) == 0
                                                ? 2 * weight_bytes
                                                : weight_bytes) / (ms * 1e-3) / 1e12},
                       {"queued_runs", c.queued}, {"runs", c.ms.size()},
                       {"median_ms_events_around_call", median(c.ms_around_call)}};
    if (c.name.size() > 5 && c.name.compare(c.name.size() - 5, 5, "/prmt") == 0 && ms < best_prmt) {
      best_prmt = ms;
      best_name = c.name;
    }
    if (c.name == "cublas_bf16") cublas = ms;
    if (c.name.rfind("our_bf16", 0) == 0) bf16_grouped = std::min(bf16_grouped, ms);
  }
  const std::string cvt_name = best_name.substr(0, best_name.size() - 4) + "cvt";
  double old_ours = 0, old_cvt = 0, old_cublas = 0, old_bf16_grouped = 1e30;
  for (const auto& c : cands) {
    const double old = median(c.ms_around_call);
    if (c.name == cvt_name) {
      best_cvt_same = c.median();
      old_cvt = old;
    }
    if (c.name == best_name) old_ours = old;
    if (c.name == "cublas_bf16") old_cublas = old;
    if (c.name.rfind("our_bf16", 0) == 0) old_bf16_grouped = std::min(old_bf16_grouped, old);
  }
  rec["output_checks"] = checks;
  rec["all_outputs_ok"] = all_ok;
  rec["timings"] = timings;
  rec["ours_config"] = best_name;
  rec["ours_ms"] = best_prmt;
  rec["ours_cvt_ms"] = best_cvt_same;
  rec["cublas_bf16_ms"] = cublas;
  rec["speedup_vs_cublas_bf16"] = cublas / best_prmt;
  rec["prmt_speedup_vs_cvt"] = best_cvt_same / best_prmt;
  if (s.grouped_bf16_baseline) {
    rec["our_bf16_grouped_best_ms"] = bf16_grouped;
    rec["speedup_vs_our_bf16_grouped"] = bf16_grouped / best_prmt;
  }
  // The same candidates by the previous method, for comparison with the earlier records.
  nlohmann::json old{{"ours_ms", old_ours}, {"ours_cvt_ms", old_cvt}, {"cublas_bf16_ms", old_cublas},
                     {"speedup_vs_cublas_bf16", old_cublas / old_ours}};
  if (s.grouped_bf16_baseline) {
    old["our_bf16_grouped_best_ms"] = old_bf16_grouped;
    old["speedup_vs_our_bf16_grouped"] = old_bf16_grouped / old_ours;
  }
  rec["events_around_call"] = old;
  std::printf("%-22s %-5s g%-3d ours %-18s %8.4f ms (%6.1f TFLOP/s, %4.2f TB/s W) | cvt %8.4f ms (prmt %.2fx) | "
              "cuBLAS bf16 %8.4f ms -> %.2fx%s | outputs %s\n",
              s.name.c_str(), weight == tk::WeightType::int8 ? "int8" : "uint8", scale_group, best_name.c_str(),
              best_prmt, flops / (best_prmt * 1e-3) / 1e12, weight_bytes / (best_prmt * 1e-3) / 1e12, best_cvt_same,
              best_cvt_same / best_prmt, cublas, cublas / best_prmt,
              s.grouped_bf16_baseline
                  ? (" | our bf16 grouped " + std::to_string(bf16_grouped) + " ms -> " +
                     std::to_string(bf16_grouped / best_prmt) + "x")
                        .c_str()
                  : "",
              all_ok ? "ok" : "FAILED");
  std::printf("%-22s events around the call: ours %8.4f ms, cuBLAS bf16 %8.4f ms -> %.2fx%s\n", "", old_ours,
              old_cublas, old_cublas / old_ours,
              s.grouped_bf16_baseline
                  ? (", our bf16 grouped " + std::to_string(old_bf16_grouped) + " ms -> " +
                     std::to_string(old_bf16_grouped / old_ours) + "x")
                        .c_str()
                  : "");
  std::fflush(stdout);
  bf16_gemms.clear();
  cudaFree(w_bf16);
  cudaFree(y_bf16);
  return rec;
}

} // namespace

int main(int argc, char** argv) {
  std::string out = "bench_mixed_input.json", command, driver = "unknown", only;
  int reps = 30;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--out")) out = argv[i + 1];
    else if (!std::strcmp(argv[i], "--reps")) reps = std::atoi(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--command")) command = argv[i + 1];
    else if (!std::strcmp(argv[i], "--driver")) driver = argv[i + 1];
    else if (!std::strcmp(argv[i], "--only")) only = argv[i + 1];
    else {
      std::fprintf(stderr, "mixed_input_bench: unknown option %s; use --out, --reps, --command, --driver, --only\n",
                   argv[i]);
      return 1;
    }
  }
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "mixed_input_bench: no CUDA device; run it on an H100\n");
    return 1;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  cublasHandle_t blas;
  check_cublas(cublasCreate(&blas), "cublasCreate");
  // 100 us: many times the host's ~5-15 us to enqueue the start event and one call; each record's
  // queued_runs shows whether it sufficed.
  constexpr uint64_t kLeadHoldNs = 100000;
  const tk::testing::QueuedColdTimer timer(0, kLeadHoldNs);
  const std::vector<Shape> shapes = {
      {"decode_m1", {1}, 8192, 8192, {16}, {8, 12, 16}, false},
      {"decode_m8", {8}, 8192, 8192, {16}, {8, 12, 16}, false},
      {"decode_m16", {16}, 8192, 8192, {16}, {8, 12, 16}, false},
      {"decode_m32", {32}, 8192, 8192, {32}, {8, 12}, false},
      {"decode_m64", {64}, 8192, 8192, {32, 64}, {4, 8}, false},
      {"grouped_e64x16", std::vector<int>(64, 16), 2048, 7168, {16}, {8, 12}, true},
      {"prefill_3456", {3456}, 4096, 2048, {128, 224, 256}, {4, 5, 6}, false},
  };
  nlohmann::json records = nlohmann::json::array();
  uint64_t seed = 1;
  for (const Shape& s : shapes) {
    if (!only.empty() && s.name.find(only) == std::string::npos) continue;
    records.push_back(run_shape(s, tk::WeightType::int8, 0, prop.multiProcessorCount, reps, blas, timer, ++seed));
    if (s.name == "decode_m16" || s.name == "prefill_3456")
      records.push_back(run_shape(s, tk::WeightType::uint8, 128, prop.multiProcessorCount, reps, blas, timer, ++seed));
  }
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  int cuda_driver = 0;
  cudaDriverGetVersion(&cuda_driver);
  const nlohmann::json doc{
      {"command", command},
      {"gpu", prop.name},
      {"driver", driver},
      {"cuda_driver_api", cuda_driver},
      {"date", date},
      {"timing", "GPU execution time from a cold L2: before each timed call a lead kernel reads twice the L2's "
                 "size and holds the GPU for " + std::to_string(kLeadHoldNs / 1000) +
                     " us, so the start event, the call and the stop event are queued behind it and the host's "
                     "launch latency is not timed (timings.*.queued_runs: calls whose start event was still pending "
                     "when their launch returned); CUDA events around the call. Candidates interleaved run by run, "
                     "5 warm-up rounds, median of " + std::to_string(reps) +
                     " rounds. events_around_call and timings.*.median_ms_events_around_call: the same candidates "
                     "in the same rounds timed as this bench did before (bare events around each call, launch "
                     "latency included, L2 as the previous candidate left it). Uniform [-1,1] bf16 X, random weight bytes, scales "
                     "0.5/128..1.5/128. 'ours' is the fastest prmt candidate of the shape (same run); its cvt twin "
                     "has the same tile and ring. cuBLAS: cublasGemmEx bf16 TN, fp32 compute, default algo."},
      {"records", records}};
  std::FILE* f = std::fopen(out.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "mixed_input_bench: cannot write %s\n", out.c_str());
    return 1;
  }
  std::fprintf(f, "%s\n", doc.dump(1).c_str());
  std::fclose(f);
  cublasDestroy(blas);
  return 0;
}
