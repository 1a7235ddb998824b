// Grouped BF16 GEMM for Hopper (sm_90a): Y_e = X_e * W_e^T for every expert e.
//
//   X [total_tokens, k] bf16 row-major, tokens stacked by expert (tokens_per_expert, any count >= 0)
//   W [experts, n, k]   bf16, k contiguous
//   Y [total_tokens, n] bf16 row-major, fp32 accumulation
//
// A dense GEMM is experts = 1. Usable from plain C++: no CUDA types beyond cudaStream_t.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/common/kernel_error.h"
#include "kernels/common/tile_trace.h"
#include "models/kernel_spec.h"
#include "models/launch_order.h"

namespace tilesim::kernels {

struct GroupedGemmProblem {
  int experts = 1;
  std::vector<int> tokens_per_expert; // size == experts
  int n = 0;                          // multiple of 8
  int k = 0;                          // multiple of 8
  int tile_m = 128;
  int tile_n = 256;
  int tile_k = 64;
  int stages = 4;
  bool persistent = true; // grid ~ SM count (clusters of 2 that fit), else one CTA per tile
  LaunchOrder order{};
  // none: Y = X * W^T; bias_relu / bias_gelu: Y = act(X * W^T + bias[e]) with bias [experts, n] bf16.
  GemmEpilogue epilogue = GemmEpilogue::none;
};

// True for the tile shapes and ring depths this kernel is built for:
// tile_m 128, tile_k 64, tile_n 128 (stages 3..6) or 256 (stages 3..4, shared memory bound).
bool grouped_gemm_supported(int tile_m, int tile_n, int tile_k, int stages);

// Empty when supported, otherwise a message naming the offending field and the allowed values.
std::string grouped_gemm_unsupported_reason(int tile_m, int tile_n, int tile_k, int stages);

// Bound to one problem and one set of device buffers: owns the tensor maps and the device
// row_offsets of the tile space. Construction validates everything and throws KernelError.
class GroupedGemm {
public:
  // `bias` ([experts, n] bf16) is needed by a fused epilogue and must be null without one.
  GroupedGemm(const GroupedGemmProblem& problem, const void* x, const void* w, void* y, int sm_count,
              const void* bias = nullptr);
  ~GroupedGemm();
  GroupedGemm(const GroupedGemm&) = delete;
  GroupedGemm& operator=(const GroupedGemm&) = delete;

  // Enqueues the kernel on `stream`. `trace` is a device array of tile_count() records or nullptr.
  void run(cudaStream_t stream, TileTrace* trace) const;

  int tile_count() const;
  int grid_size() const;
  int total_tokens() const;
  double flops() const; // 2 * total_tokens * n * k
  const GroupedGemmProblem& problem() const;

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tilesim::kernels
