// Host launcher of scheme xpass_f16's pass: every row's reference, then X's conversion.
#include "kernels/mxfp8/mxfp8_f16_pass.h"

#include <algorithm>
#include <string>

#include "kernels/common/kernel_error.h"
#include "kernels/mxfp8/mxfp8_f16_pass_kernel.cuh"

namespace tilesim::kernels {

void mxfp8_f16_pass(const void* x, const void* x_scales, const void* w_scales, void* x_f16, std::uint16_t* x_info,
                    std::uint16_t* w_info, std::int64_t x_rows, std::int64_t w_rows, int k, int sm_count,
                    cudaStream_t stream) {
  using namespace mxfp8_f16;
  const PassParams p{static_cast<const uint4*>(x), static_cast<const uint32_t*>(x_scales),
                     static_cast<const uint32_t*>(w_scales), static_cast<uint4*>(x_f16), x_info, w_info, x_rows,
                     w_rows, k};
  const std::int64_t most = static_cast<std::int64_t>(sm_count) * 8; // CTAs: one grid-stride wave
  const auto ctas = [&](std::int64_t threads) {
    return static_cast<int>(std::min<std::int64_t>((threads + kPassThreads - 1) / kPassThreads, most));
  };
  if (x_rows + w_rows > 0) row_info_kernel<<<ctas(x_rows + w_rows), kPassThreads, 0, stream>>>(p);
  if (x_rows > 0) x_convert_kernel<<<ctas(2 * x_rows * (k / 16)), kPassThreads, 0, stream>>>(p);
  const cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) throw KernelError(std::string("mxfp8 f16 pass launch failed: ") + cudaGetErrorString(err));
}

} // namespace tilesim::kernels
