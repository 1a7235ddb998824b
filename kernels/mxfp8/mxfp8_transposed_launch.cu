// Host launcher of the MXFP8 GEMM's transposed schemes: picks the compiled instantiation for the
// tile's token and channel counts (and X's type: FP8, bf16 from the dequantiser's pass or f16 from xpass_f16's), raises
// its shared memory, sizes the grid, launches.
#include "kernels/mxfp8/mxfp8_transposed_launch.h"

#include "kernels/mxfp8/mxfp8_transposed_wide_kernel.cuh"
#include "kernels/mxfp8/mxfp8_transposed_xpass_f16_kernel.cuh"
#include "kernels/mxfp8/mxfp8_transposed_xpass_f16_wide_kernel.cuh"
#include "kernels/mxfp8/mxfp8_transposed_xpass_kernel.cuh"
#include "models/mxfp8_xpass_tiles.h"

#include <algorithm>
#include <cstdint>

#include "kernels/common/tensor_maps.h"

namespace tilesim::kernels::mxfp8_transposed {
namespace {

constexpr int kMaxSharedBytes = 227 * 1024; // the most shared memory a block may opt into on sm_90

void check_cuda(cudaError_t err, const char* call) {
  if (err != cudaSuccess) throw KernelError(std::string(call) + " failed: " + cudaGetErrorString(err));
}

// One compiled kernel: its tile shape and its __global__ function.
template <class TileShapeT, void (*Kernel)(TensorMaps, Params)> struct Instance {
  using Shape = TileShapeT;
  static void enable_shared_memory(int bytes) {
    static int enabled = 0; // raised once per instantiation, to the largest asked
    if (bytes <= enabled) return;
    check_cuda(cudaFuncSetAttribute(Kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
               "cudaFuncSetAttribute(mxfp8_transposed_kernel, MaxDynamicSharedMemorySize)");
    enabled = bytes;
  }
  static int resident_per_sm(int stages) {
    enable_shared_memory(Shape::shared_bytes(stages));
    int blocks = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, Kernel, Shape::threads, Shape::shared_bytes(stages)),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor(mxfp8_transposed_kernel)");
    return blocks;
  }
  static void launch(const TensorMaps& maps, const Params& p, int grid, cudaStream_t stream) {
    enable_shared_memory(Shape::shared_bytes(p.stages));
    Kernel<<<grid, Shape::threads, Shape::shared_bytes(p.stages), stream>>>(maps, p);
    check_cuda(cudaGetLastError(), "mxfp8_transposed_kernel launch");
  }
};

template <int T> using Narrow = Instance<TileShape<T>, mxfp8_transposed_kernel<T>>;
using Wide = Instance<WideShape, mxfp8_transposed_wide_kernel>;
using XPass = Instance<XPassShape, mxfp8_transposed_xpass_kernel>;
template <int T> using XPassF16 = Instance<XPassF16Shape<T>, mxfp8_transposed_xpass_f16_kernel<T>>;
using XPassF16Wide = Instance<XPassF16WideShape, mxfp8_transposed_xpass_f16_wide_kernel>;

template <class F> auto dispatch(int tile_tokens, int tile_channels, XForm x_form, F&& f) {
  if (x_form == XForm::bf16) return f(XPass{});
  if (x_form == XForm::f16) {
    if (tile_channels == XPassF16WideShape::channels) return f(XPassF16Wide{});
    switch (tile_tokens) {
    case 16: return f(XPassF16<16>{});
    case 32: return f(XPassF16<32>{});
    case 64: return f(XPassF16<64>{});
    default: return f(XPassF16<128>{});
    }
  }
  if (tile_channels == WideShape::channels) return f(Wide{});
  switch (tile_tokens) {
  case 16: return f(Narrow<16>{});
  case 32: return f(Narrow<32>{});
  case 64: return f(Narrow<64>{});
  default: return f(Narrow<128>{});
  }
}

int shared_bytes(int tile_tokens, int tile_channels, XForm x_form, int stages) {
  return dispatch(tile_tokens, tile_channels, x_form,
                  [&](auto instance) { return decltype(instance)::Shape::shared_bytes(stages); });
}

// Stages a CTA of this tile may run: a multiple of `step` from `step` up to what shared memory holds.
int most_stages(int tile_tokens, int tile_channels, int step, XForm x_form = XForm::fp8) {
  int most = step;
  while (shared_bytes(tile_tokens, tile_channels, x_form, most + step) <= kMaxSharedBytes) most += step;
  return most;
}

} // namespace

std::string unsupported_reason(int tile_m, int tile_n, int tile_k, int stages, XForm x_form) {
  if (x_form != XForm::fp8) {
    const std::string scheme = x_form == XForm::bf16 ? "xpass" : "xpass_f16", x_type = x_form == XForm::bf16 ? "bf16" : "f16";
    const bool built = xpass_tile_built(x_form == XForm::f16, tile_m, tile_n);
    if (x_form == XForm::f16 && !built)
      return "tile " + std::to_string(tile_m) + " x " + std::to_string(tile_n) +
             " is not supported by the xpass_f16 scheme; use tile_m 16, 32, 64 or 128 (wgmma's N) and tile_n 128 (two "
             "consumers of 64 channels), or 128 x 256 (two consumers of 128 channels)";
    if (x_form == XForm::bf16 && !built)
      return "tile " + std::to_string(tile_m) + " x " + std::to_string(tile_n) + " is not supported by the " + scheme +
             " scheme; use tile_m 128 and tile_n 128 (two consumers of 64 channels)";
    if (tile_k != kBlockK)
      return "tile_k = " + std::to_string(tile_k) + " is not supported; use 128 (four MX blocks, one 128-byte swizzle row)";
    const int most = most_stages(tile_m, tile_n, 1, x_form);
    if (stages < 2 || stages > most)
      return "stages = " + std::to_string(stages) + " is not supported by the " + scheme + " scheme; use 2.." +
             std::to_string(most) + " (a stage is " + std::to_string(tile_n / 8) + " KB of FP8 W and " + std::to_string(tile_m / 4) + " KB of " + x_type +
             " X)";
    return {};
  }
  if (tile_m != 16 && tile_m != 32 && tile_m != 64 && tile_m != 128)
    return "tile_m (tokens per tile) = " + std::to_string(tile_m) +
           " is not supported by the transposed scheme; use 16, 32, 64 or 128 (wgmma's N)";
  if (tile_n != kBlockN && !(tile_n == WideShape::channels && tile_m == WideShape::block_tokens))
    return "tile_n = " + std::to_string(tile_n) + " is not supported by the transposed scheme at tile_m " +
           std::to_string(tile_m) + "; use 64 (one m64 A operand), or 128 with 128 tokens (two consumers of 64 channels)";
  if (tile_k != kBlockK)
    return "tile_k = " + std::to_string(tile_k) + " is not supported; use 128 (four MX blocks, one 128-byte swizzle row)";
  if (tile_n == WideShape::channels) {
    const int most = most_stages(tile_m, tile_n, 1);
    if (stages < 2 || stages > most)
      return "stages = " + std::to_string(stages) + " is not supported for 128 x 128 tiles; use 2.." +
             std::to_string(most) + " (shared memory holds at most that many beside three bf16 copies of X)";
    return {};
  }
  // Stage s always serves consumer s % consumers, so that a stage's phases are one consumer's blocks in order.
  const int consumers = transposed_consumers(tile_m);
  if (stages % consumers != 0)
    return "stages = " + std::to_string(stages) + " is not supported for " + std::to_string(tile_m) +
           "-token tiles; use a multiple of " + std::to_string(consumers) +
           " (that many consumers split K, one stage each in turn)";
  const int most = most_stages(tile_m, tile_n, consumers);
  if (stages < consumers || shared_bytes(tile_m, tile_n, XForm::fp8, stages) > kMaxSharedBytes)
    return "stages = " + std::to_string(stages) + " is not supported for " + std::to_string(tile_m) +
           "-token tiles; use " + std::to_string(consumers) + ".." + std::to_string(most) +
           " (shared memory holds at most that many)";
  return {};
}

Launch make_launch(const Mxfp8GemmProblem& problem, const ExpertTiles& space, const int* device_offsets,
                   const void* x, const void* x_scales, const void* w, const void* w_scales, void* y, int sm_count,
                   const uint16_t* x_info, const uint16_t* w_info) {
  Launch l;
  l.tile_tokens = problem.tile_tokens;
  l.tile_channels = problem.tile_channels;
  l.x_form = problem.scheme == Mxfp8GemmScheme::xpass       ? XForm::bf16
             : problem.scheme == Mxfp8GemmScheme::xpass_f16 ? XForm::f16
                                                            : XForm::fp8;
  const int resident = dispatch(problem.tile_tokens, problem.tile_channels, l.x_form,
                                [&](auto instance) { return decltype(instance)::resident_per_sm(problem.stages); });
  if (resident < 1)
    throw KernelError("Mxfp8GemmProblem: no CTA with " + std::to_string(problem.stages) +
                      " stages fits on an SM; use fewer stages");
  l.grid = problem.persistent ? std::max(1, std::min(space.tiles, sm_count * resident)) : space.tiles;
  if (space.total_tokens > 0) {
    // xpass: x is the dequantiser's bf16 X, read in [tokens x 64] boxes (128 bytes a row, as the FP8 boxes);
    // xpass_f16's f16 X the same way (TMA copies 2-byte elements bit for bit, whatever their format).
    l.maps.x = l.x_form != XForm::fp8 ? make_bf16_tensor_map_2d(x, static_cast<uint64_t>(space.total_tokens), problem.k,
                                                  problem.tile_tokens, kBlockK / 2)
                        : make_byte_tensor_map_2d(x, static_cast<uint64_t>(space.total_tokens), problem.k,
                                                  problem.tile_tokens, kBlockK);
    l.maps.w = make_byte_tensor_map_2d(w, static_cast<uint64_t>(problem.experts) * problem.n, problem.k,
                                       problem.tile_channels, kBlockK);
  }
  Params& p = l.params;
  p.order = problem.order;
  p.space = TileSpace{device_offsets, problem.experts, space.offsets[problem.experts], space.tile_cols};
  p.token_offsets = device_offsets + problem.experts + 1;
  p.x_scales = static_cast<const uint8_t*>(x_scales);
  p.w_scales = static_cast<const uint8_t*>(w_scales);
  p.y = static_cast<__nv_bfloat16*>(y);
  p.trace = nullptr;
  p.total_tokens = space.total_tokens;
  p.n = problem.n;
  p.k_blocks = problem.k / kBlockK;
  p.scale_cols = problem.k / kScaleBlock;
  p.stages = problem.stages;
  p.x_info = x_info;
  p.w_info = w_info;
  return l;
}

void run(const Launch& launch, cudaStream_t stream, TileTrace* trace) {
  Params p = launch.params;
  p.trace = trace;
  dispatch(launch.tile_tokens, launch.tile_channels, launch.x_form,
           [&](auto instance) { decltype(instance)::launch(launch.maps, p, launch.grid, stream); });
}

} // namespace tilesim::kernels::mxfp8_transposed
