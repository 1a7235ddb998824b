// Host side of scheme xpass_f16's pass (mxfp8_f16_pass_kernel.cuh): every row's reference, then X converted to
// f16 with them, enqueued before the GEMM by Mxfp8GroupedGemm::run. Its own translation unit, so
// that the GEMM launcher's kernels compile as they did without it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace tilesim::kernels {

// x [x_rows, k] E4M3 (16-byte aligned), x_scales [x_rows, k / 32] and w_scales [w_rows, k / 32] E8M0 (4-byte
// aligned, k a multiple of 128); x_f16 [x_rows, k] f16 in permuted_k's order; x_info [x_rows], w_info [w_rows].
void mxfp8_f16_pass(const void* x, const void* x_scales, const void* w_scales, void* x_f16, std::uint16_t* x_info,
                    std::uint16_t* w_info, std::int64_t x_rows, std::int64_t w_rows, int k, int sm_count,
                    cudaStream_t stream);

} // namespace tilesim::kernels
