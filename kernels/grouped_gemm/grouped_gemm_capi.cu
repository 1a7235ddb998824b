// A C entry point to GroupedGemm for the Python benchmark (ctypes), so that our kernel and the
// torch baselines are timed by the same code, on the same tensors, interleaved run by run: the
// H100's clock drifts with temperature over a sweep (NOTES.md), and interleaving cancels that.
#include <cstdio>
#include <string>
#include <vector>

#include "kernels/grouped_gemm/grouped_gemm.h"
#include "models/launch_order_names.h"

namespace {
void write_error(char* error, int error_len, const char* what) {
  if (error && error_len > 0) std::snprintf(error, error_len, "%s", what);
}
} // namespace

extern "C" {

// Returns an opaque handle, or nullptr with the KernelError message in `error`.
void* tilesim_grouped_gemm_create(int experts, const int* tokens, int n, int k, int tile_n, int stages,
                                  int persistent, const char* order, const void* x, const void* w, void* y,
                                  int sm_count, char* error, int error_len) {
  try {
    tilesim::kernels::GroupedGemmProblem problem;
    problem.experts = experts;
    problem.tokens_per_expert.assign(tokens, tokens + experts);
    problem.n = n;
    problem.k = k;
    problem.tile_n = tile_n;
    problem.stages = stages;
    problem.persistent = persistent != 0;
    problem.order = tilesim::parse_launch_order(order);
    return new tilesim::kernels::GroupedGemm(problem, x, w, y, sm_count);
  } catch (const std::exception& e) {
    write_error(error, error_len, e.what());
    return nullptr;
  }
}

// Enqueues one run on `stream` (a cudaStream_t, e.g. torch.cuda.current_stream().cuda_stream).
int tilesim_grouped_gemm_run(void* handle, void* stream, char* error, int error_len) {
  try {
    static_cast<const tilesim::kernels::GroupedGemm*>(handle)->run(static_cast<cudaStream_t>(stream), nullptr);
    return 0;
  } catch (const std::exception& e) {
    write_error(error, error_len, e.what());
    return 1;
  }
}

void tilesim_grouped_gemm_destroy(void* handle) { delete static_cast<tilesim::kernels::GroupedGemm*>(handle); }
}
