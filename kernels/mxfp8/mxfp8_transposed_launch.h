// Host side of the MXFP8 GEMM's transposed scheme (mxfp8_transposed_kernel.cuh): which tiles it is
// built for, and one problem's tensor maps, parameters and grid, launched by Mxfp8GroupedGemm.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "kernels/common/expert_tiles.h"
#include "kernels/mxfp8/mxfp8_gemm.h"
#include "kernels/mxfp8/mxfp8_transposed_kernel.cuh"

namespace tilesim::kernels::mxfp8_transposed {

// Empty when the kernel is built for this tile and ring depth (x_bf16: the xpass scheme's), otherwise what to change.
std::string unsupported_reason(int tile_m, int tile_n, int tile_k, int stages, bool x_bf16);

struct Launch {
  TensorMaps maps{};
  Params params{};
  int tile_tokens = 16;
  int tile_channels = 64;
  bool x_bf16 = false; // the xpass scheme: X is the dequantiser's bf16 copy
  int grid = 0;
};

// `space` from expert_tiles(tokens, tile_tokens, n, tile_channels); `device_offsets` its offsets on the device;
// `x` FP8, or for the xpass scheme bf16 [total_tokens, k] (x_scales then unused).
Launch make_launch(const Mxfp8GemmProblem& problem, const ExpertTiles& space, const int* device_offsets,
                   const void* x, const void* x_scales, const void* w, const void* w_scales, void* y, int sm_count);

void run(const Launch& launch, cudaStream_t stream, TileTrace* trace);

} // namespace tilesim::kernels::mxfp8_transposed
