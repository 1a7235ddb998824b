// Host launchers of the MXFP8 quantisers and dequantiser: validate the shape and the buffers, pick
// the instantiation for (axis, scale rule, element) and size the grid once.
#include "kernels/mxfp8/mxfp8.h"

#include <algorithm>

#include "kernels/mxfp8/mxfp8_kernel.cuh"

namespace tilesim::kernels {
namespace {

using namespace mxfp8;

void check_cuda(cudaError_t err, const char* call) {
  if (err != cudaSuccess) throw KernelError(std::string(call) + " failed: " + cudaGetErrorString(err));
}

constexpr int kRowwiseThreads = 256;

using QuantizeLaunch = void (*)(const Mxfp8QuantizeShape&, const void*, void*, void*, dim3, cudaStream_t);

// The rowwise kernel's grid is one wave of what fits at once: its resident CTAs per SM.
int rowwise_ctas_per_sm(const Mxfp8QuantizeShape& s) {
  const bool e4m3 = s.element == Mxfp8Element::e4m3, floor = s.scale_rule == Mxfp8ScaleRule::floor;
  const void* kernel =
      floor ? (e4m3 ? reinterpret_cast<const void*>(&quantize_rowwise_kernel<Mxfp8ScaleRule::floor, Mxfp8Element::e4m3>)
                    : reinterpret_cast<const void*>(&quantize_rowwise_kernel<Mxfp8ScaleRule::floor, Mxfp8Element::e5m2>))
            : (e4m3 ? reinterpret_cast<const void*>(&quantize_rowwise_kernel<Mxfp8ScaleRule::round_up, Mxfp8Element::e4m3>)
                    : reinterpret_cast<const void*>(&quantize_rowwise_kernel<Mxfp8ScaleRule::round_up, Mxfp8Element::e5m2>));
  int resident = 0;
  check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, kRowwiseThreads, 0),
             "cudaOccupancyMaxActiveBlocksPerMultiprocessor(quantize_rowwise_kernel)");
  return std::max(resident, 1);
}

template <Mxfp8ScaleRule Rule, Mxfp8Element E> QuantizeLaunch launcher(Mxfp8Axis axis) {
  if (axis == Mxfp8Axis::rowwise)
    return [](const Mxfp8QuantizeShape& s, const void* x, void* elements, void* scales, dim3 grid, cudaStream_t stream) {
      quantize_rowwise_kernel<Rule, E><<<grid, kRowwiseThreads, 0, stream>>>(
          static_cast<const uint4*>(x), static_cast<uint2*>(elements), static_cast<std::uint8_t*>(scales),
          s.elements() / 8);
    };
  return [](const Mxfp8QuantizeShape& s, const void* x, void* elements, void* scales, dim3 grid, cudaStream_t stream) {
    quantize_colwise_kernel<Rule, E><<<grid, kColwiseThreads, 0, stream>>>(
        static_cast<const __nv_bfloat16*>(x), static_cast<std::uint8_t*>(elements), static_cast<std::uint8_t*>(scales),
        s.rows, s.cols);
  };
}

QuantizeLaunch find_launcher(const Mxfp8QuantizeShape& s) {
  const bool e4m3 = s.element == Mxfp8Element::e4m3;
  if (s.scale_rule == Mxfp8ScaleRule::floor)
    return e4m3 ? launcher<Mxfp8ScaleRule::floor, Mxfp8Element::e4m3>(s.axis)
                : launcher<Mxfp8ScaleRule::floor, Mxfp8Element::e5m2>(s.axis);
  return e4m3 ? launcher<Mxfp8ScaleRule::round_up, Mxfp8Element::e4m3>(s.axis)
              : launcher<Mxfp8ScaleRule::round_up, Mxfp8Element::e5m2>(s.axis);
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

} // namespace

std::string mxfp8_unsupported_reason(const Mxfp8QuantizeShape& s) {
  if (s.rows < 1 || s.cols < 1)
    return "rows = " + std::to_string(s.rows) + ", cols = " + std::to_string(s.cols) + " must both be >= 1";
  if (s.axis == Mxfp8Axis::rowwise && s.cols % kBlock != 0)
    return "cols = " + std::to_string(s.cols) + " is not a multiple of 32 (the MX block); pad it";
  if (s.axis == Mxfp8Axis::colwise && (s.rows % kBlock != 0 || s.cols % 8 != 0))
    return "colwise needs rows a multiple of 32 (the MX block) and cols of 8 (16-byte loads); got " +
           std::to_string(s.rows) + " x " + std::to_string(s.cols);
  if (s.axis == Mxfp8Axis::colwise && (s.cols + kTileCols - 1) / kTileCols > 65535)
    return "cols = " + std::to_string(s.cols) + " needs more than 65535 column tiles of 128 (the grid's y); quantise in parts";
  return {};
}

Mxfp8Quantize::Mxfp8Quantize(const Mxfp8QuantizeShape& shape, const void* x, void* elements, void* scales, int sm_count)
    : shape_(shape), x_(x), elements_(elements), scales_(scales) {
  const std::string reason = mxfp8_unsupported_reason(shape);
  if (!reason.empty()) throw KernelError("Mxfp8QuantizeShape: " + reason);
  if (x == nullptr || elements == nullptr || scales == nullptr)
    throw KernelError("Mxfp8Quantize: x, elements and scales must be device pointers, got a null");
  if (!aligned16(x) || !aligned16(elements))
    throw KernelError("Mxfp8Quantize: x and elements must be 16-byte aligned (cudaMalloc's are)");
  if (sm_count < 1) throw KernelError("Mxfp8Quantize: sm_count = " + std::to_string(sm_count) + " must be >= 1");
  if (shape.axis == Mxfp8Axis::rowwise) {
    const std::int64_t steps = (shape.elements() / 8 + kRowwiseThreads * kRowwiseUnroll - 1) / (kRowwiseThreads * kRowwiseUnroll);
    grid_x_ = static_cast<int>(std::min<std::int64_t>(steps, static_cast<std::int64_t>(sm_count) * rowwise_ctas_per_sm(shape)));
  } else {
    grid_x_ = static_cast<int>((shape.rows + kTileRows - 1) / kTileRows);
    grid_y_ = static_cast<int>((shape.cols + kTileCols - 1) / kTileCols);
  }
}

void Mxfp8Quantize::run(cudaStream_t stream) const {
  find_launcher(shape_)(shape_, x_, elements_, scales_, dim3(grid_x_, grid_y_), stream);
  check_cuda(cudaGetLastError(), "mxfp8 quantize kernel launch");
}

void mxfp8_dequantize(Mxfp8Element element, const void* elements, const void* scales, void* out, std::int64_t lines,
                      std::int64_t length, int sm_count, cudaStream_t stream) {
  if (length % kBlock != 0 || lines < 1)
    throw KernelError("mxfp8_dequantize: length = " + std::to_string(length) + " must be a multiple of 32, lines >= 1");
  if (!aligned16(out) || reinterpret_cast<std::uintptr_t>(elements) % 8 != 0)
    throw KernelError("mxfp8_dequantize: out must be 16-byte and elements 8-byte aligned");
  const std::int64_t vectors = lines * length / 8;
  const int grid = static_cast<int>(std::min<std::int64_t>((vectors + 255) / 256, static_cast<std::int64_t>(sm_count) * 8));
  const auto* e = static_cast<const uint2*>(elements);
  const auto* s = static_cast<const std::uint8_t*>(scales);
  if (element == Mxfp8Element::e4m3)
    dequantize_kernel<Mxfp8Element::e4m3><<<grid, 256, 0, stream>>>(e, s, static_cast<uint4*>(out), vectors);
  else
    dequantize_kernel<Mxfp8Element::e5m2><<<grid, 256, 0, stream>>>(e, s, static_cast<uint4*>(out), vectors);
  check_cuda(cudaGetLastError(), "mxfp8 dequantize kernel launch");
}

} // namespace tilesim::kernels
