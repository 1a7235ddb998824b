// Block-scaled MXFP8 grouped GEMM for Hopper (sm_90a): Y_e = X_e * W_e^T for every expert e, with
// FP8 E4M3 elements and one E8M0 scale per 32 consecutive K-elements (OCP MX v1.0), fp32
// accumulation, bf16 out, in one of the schemes of kernels/mxfp8/NOTES.md: (a) promote, FP8 wgmma per
// MX block with the scales applied to each block's product on the CUDA cores; (b) dequantize, both
// operands converted exactly to bf16 with their scales, then bf16 wgmma; transposed, (b) computing
// Y^T = W * X^T with W converted as wgmma's register A and the few tokens of decode tiles as its N;
// xpass, X dequantised to bf16 once by the dequantiser (one pass, enqueued by run()), then the transposed
// 128 x 128 tile reading it by TMA and converting only W; xpass_f16, the same with f16 operands relative to
// a reference exponent a row (the pass converts X and finds every row's reference; NOTES.md).
//
//   X [total_tokens, k] e4m3, X scales [total_tokens, k / 32] e8m0 (the rowwise quantiser's output)
//   W [experts, n, k]   e4m3, W scales [experts * n, k / 32] e8m0 (W's rows quantised along k)
//   Y [total_tokens, n] bf16
//
// The same tile walk as the bf16 grouped GEMM (tilesim::tile_at, every launch order, persistent or
// one CTA per tile, clusters of two). Usable from plain C++: no CUDA types beyond cudaStream_t.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <string>
#include <vector>

#include "kernels/common/kernel_error.h"
#include "kernels/common/tile_trace.h"
#include "models/launch_order.h"

namespace tilesim::kernels {

enum class Mxfp8GemmScheme : int { promote = 0, dequantize = 1, transposed = 2, xpass = 3, xpass_f16 = 4 };

struct Mxfp8GemmProblem {
  int experts = 1;
  std::vector<int> tokens_per_expert; // size == experts
  int n = 0;                          // multiple of 8
  int k = 0;                          // multiple of 128: whole stages of four MX blocks
  int stages = 4;                     // promote 3..5, dequantize 3, transposed a multiple of its consumers, xpass(_f16) 2..4
                                      // (xpass_f16 at 16, 32, 64 tokens: 2..11, 2..9, 2..7)
  int tile_tokens = 16;               // transposed only: tokens per tile (wgmma's N), 16, 32, 64 or 128 (xpass: 128,
                                      // xpass_f16: 16, 32, 64 or 128)
  int tile_channels = 64;             // transposed only: channels per tile, 64, or 128 with 128 tokens (xpass: 128,
                                      // xpass_f16: 128, or 256 with 128 tokens)
  Mxfp8GemmScheme scheme = Mxfp8GemmScheme::promote;
  bool persistent = true;
  LaunchOrder order{};
};

// Empty when the kernel runs this tile and ring depth, otherwise a message naming the field and the fix.
std::string mxfp8_gemm_unsupported_reason(int tile_m, int tile_n, int tile_k, int stages,
                                          Mxfp8GemmScheme scheme = Mxfp8GemmScheme::promote);
// Empty when the kernel takes this k, otherwise why not and what to use.
std::string mxfp8_gemm_k_reason(int k);

class Mxfp8GroupedGemm {
public:
  // Device buffers as above: X, W, Y 16-byte aligned, scales 4-byte. Validates everything; throws KernelError.
  // xpass allocates its bf16 copy of X (total_tokens x k x 2 bytes) here; xpass_f16 its f16 copy and the
  // rows' references (2 bytes a row of X and of W).
  Mxfp8GroupedGemm(const Mxfp8GemmProblem& problem, const void* x, const void* x_scales, const void* w,
                   const void* w_scales, void* y, int sm_count);
  ~Mxfp8GroupedGemm();
  Mxfp8GroupedGemm(const Mxfp8GroupedGemm&) = delete;
  Mxfp8GroupedGemm& operator=(const Mxfp8GroupedGemm&) = delete;

  // Enqueues the kernel on `stream` (xpass: the dequantiser's pass over X, then the GEMM; xpass_f16: its pass
  // over X and W's scales, then the GEMM). `trace` is a
  // device array of tile_count() records or nullptr.
  void run(cudaStream_t stream, TileTrace* trace) const;
  // The GEMM kernel alone: for xpass(_f16) on the X of the last run() (its stage rate, apart from the pass).
  void run_gemm(cudaStream_t stream, TileTrace* trace) const;

  int tile_count() const;
  int grid_size() const;
  int total_tokens() const;
  double flops() const; // 2 * total_tokens * n * k

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tilesim::kernels
