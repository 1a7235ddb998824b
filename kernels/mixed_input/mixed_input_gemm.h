// Mixed-input (grouped) GEMM for Hopper (sm_90a): Y_e = X_e * dequant(W_e)^T for every expert e.
//
//   X      [total_tokens, k] bf16 row-major, tokens stacked by expert (any count >= 0 per expert)
//   W      [experts, n, k]   int8 (symmetric) or uint8 (per-channel zero point), k contiguous
//   scales [experts, n] bf16 (scale_group 0) or [experts, n, k / 128] (scale_group 128)
//   zeros  [experts, n] uint8, uint8 weights only
//   Y      [total_tokens, n] bf16 row-major, fp32 accumulation
//   dequant(w) = (w - zero) * scale; with scale_group 128 the scaled weight is rounded to bf16
//   before the product (the scale must be applied inside the K loop), with per-channel scales
//   the fp32 sum is scaled once in the epilogue.
//
// A dense GEMM is experts = 1. Usable from plain C++: no CUDA types beyond cudaStream_t.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "kernels/common/kernel_error.h"
#include "kernels/common/tile_trace.h"
#include "models/launch_order.h"

namespace tilesim::kernels {

enum class WeightType : int { int8 = 0, uint8 = 1 };
enum class ConversionPath : int { prmt = 0, cvt = 1 }; // kernels/mixed_input/dequant.h

struct MixedInputProblem {
  int experts = 1;
  std::vector<int> tokens_per_expert; // size == experts
  int n = 0;                          // multiple of 8
  int k = 0;                          // multiple of 16 (W rows are 16-byte aligned for TMA)
  WeightType weight = WeightType::int8;
  int scale_group = 0;                // 0 (per channel) or 128
  ConversionPath conversion = ConversionPath::prmt;
  int tile_tokens = 16;               // tokens per tile: wgmma's N, 16 / 32 / 64 (tile_n 64) or 128 / 224 / 256 (tile_n 128)
  int tile_n = 64;                    // output channels per tile: 64 (consumers split K) or 128
  int tile_k = 0;                     // K a ring stage carries: 0 for the tile's K block (128 at tile_n 64, 64 at
                                      // 128); on 64-token tiles also 256 or 512 (2 or 4 K blocks a barrier)
  int stages = 8;
  bool persistent = true;             // grid ~ SM count, else one CTA per tile
  bool tma_store = false;             // 128-channel tiles: the epilogue through shared memory and a TMA store
                                      // (kernels/mixed_input/NOTES.md, v16)
  LaunchOrder order{};
};

// The device buffers of one problem; element counts let the launcher refuse wrong lengths.
struct MixedInputBuffers {
  const void* x = nullptr;
  const void* w = nullptr;
  const void* scales = nullptr;
  std::size_t scale_count = 0;
  const void* zeros = nullptr; // uint8 only
  std::size_t zero_count = 0;
  void* y = nullptr;
};

// Consumer warpgroups of the kernel for a tile: two of 64 channels each on 128-channel tiles; on
// 64-channel tiles they split K, four of them, or two at 64 tokens (whose stages and split-K sums
// leave shared memory for 8 stages with two consumers, 4 with four: kernels/mixed_input/NOTES.md).
constexpr int mixed_input_consumers(int tile_tokens, int tile_n) {
  return tile_n == 128 || tile_tokens == 64 ? 2 : 4;
}

// K of the kernel's K block (one conversion and wgmma round of a consumer): 128 on 64-channel
// tiles, 64 on 128-channel ones. A ring stage carries one, or on 64-token tiles 2 or 4 of them.
constexpr int mixed_input_block_k(int tile_n) { return tile_n == 64 ? 128 : 64; }

// Empty when the kernel is built for this tile shape, K per stage (tile_k), ring depth and
// epilogue (tma_store), else what to change.
std::string mixed_input_unsupported_reason(int tile_tokens, int tile_n, int tile_k, int stages, bool tma_store = false);

// Bound to one problem and one set of buffers: owns the tensor maps and the device tile space.
// Construction validates everything and throws KernelError naming the field and the fix.
class MixedInputGemm {
public:
  MixedInputGemm(const MixedInputProblem& problem, const MixedInputBuffers& buffers, int sm_count);
  ~MixedInputGemm();
  MixedInputGemm(const MixedInputGemm&) = delete;
  MixedInputGemm& operator=(const MixedInputGemm&) = delete;

  // Enqueues the kernel on `stream`. `trace` is a device array of tile_count() records or nullptr.
  void run(cudaStream_t stream, TileTrace* trace) const;

  int tile_count() const;
  int grid_size() const;
  int total_tokens() const;
  double flops() const; // 2 * total_tokens * n * k
  const MixedInputProblem& problem() const;

  static std::size_t scale_count(const MixedInputProblem& p); // expected elements of `scales`
  static std::size_t zero_count(const MixedInputProblem& p);  // expected elements of `zeros`

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace tilesim::kernels
