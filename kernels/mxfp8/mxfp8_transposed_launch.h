// Host side of the MXFP8 GEMM's transposed scheme (mxfp8_transposed_kernel.cuh): which tiles it is
// built for, and one problem's tensor maps, parameters and grid, launched by Mxfp8GroupedGemm.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "kernels/common/expert_tiles.h"
#include "kernels/mxfp8/mxfp8_gemm.h"
#include "kernels/mxfp8/mxfp8_transposed_kernel.cuh"

namespace tilesim::kernels::mxfp8_transposed {

// X as the GEMM kernel reads it: FP8 (transposed), the dequantiser's bf16 (xpass) or the f16 pass's (xpass_f16).
enum class XForm { fp8, bf16, f16 };

// Empty when the kernel is built for this tile and ring depth (x_form: which kernel), otherwise what to change.
std::string unsupported_reason(int tile_m, int tile_n, int tile_k, int stages, XForm x_form);

struct Launch {
  TensorMaps maps{};
  Params params{};
  int tile_tokens = 16;
  int tile_channels = 64;
  XForm x_form = XForm::fp8;
  int grid = 0;
};

// `space` from expert_tiles(tokens, tile_tokens, n, tile_channels); `device_offsets` its offsets on the device;
// `x` FP8, or for the xpass schemes bf16 or f16 [total_tokens, k] (x_scales then unused); `x_info`, `w_info`
// xpass_f16's row references (nullptr otherwise).
Launch make_launch(const Mxfp8GemmProblem& problem, const ExpertTiles& space, const int* device_offsets,
                   const void* x, const void* x_scales, const void* w, const void* w_scales, void* y, int sm_count,
                   const uint16_t* x_info = nullptr, const uint16_t* w_info = nullptr);

void run(const Launch& launch, cudaStream_t stream, TileTrace* trace);

} // namespace tilesim::kernels::mxfp8_transposed
