// MXFP8 quantisers for Hopper: bf16 [rows, cols] to FP8 elements (E4M3 or E5M2) with one E8M0
// scale per 32 consecutive elements (OCP MX v1.0), along rows (elements [rows, cols], scales
// [rows, cols / 32]) or down columns (the transposed layout a weight-gradient GEMM reads:
// elements [cols, rows], scales [cols, rows / 32]); and the dequantiser back to bf16. Usable from
// plain C++: no CUDA types beyond cudaStream_t.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "kernels/common/kernel_error.h"
#include "models/kernel_spec.h"

namespace tilesim::kernels {

// Empty when the kernel runs the shape, otherwise a message naming the field and the fix.
std::string mxfp8_unsupported_reason(const Mxfp8QuantizeShape& shape);

// Bound to one shape and one set of device buffers (x: rows * cols bf16; elements: rows * cols
// bytes; scales: rows * cols / 32 bytes; all 16-byte aligned). Construction validates and throws KernelError.
class Mxfp8Quantize {
public:
  Mxfp8Quantize(const Mxfp8QuantizeShape& shape, const void* x, void* elements, void* scales, int sm_count);
  void run(cudaStream_t stream) const;
  int grid_size() const { return grid_x_ * grid_y_; }
  const Mxfp8QuantizeShape& shape() const { return shape_; }

private:
  Mxfp8QuantizeShape shape_;
  const void* x_;
  void* elements_;
  void* scales_;
  int grid_x_ = 0, grid_y_ = 1;
};

// elements [lines, length] FP8 and scales [lines, length / 32] (either quantiser's output, its
// lines being rows or columns) to bf16 [lines, length].
void mxfp8_dequantize(Mxfp8Element element, const void* elements, const void* scales, void* out, std::int64_t lines,
                      std::int64_t length, int sm_count, cudaStream_t stream);

} // namespace tilesim::kernels
