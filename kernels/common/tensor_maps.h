// The one place tensor maps (TMA descriptors) are made: 2-D, swizzled, zero fill.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace tilesim::kernels {

// Row-major [rows, cols] bf16 at `base` (16-byte aligned, cols % 8 == 0), read in boxes of
// box_rows x box_cols (box_cols * 2 == 128 bytes for the 128B swizzle). Out-of-bounds reads are
// zero. Throws KernelError naming cuTensorMapEncodeTiled and its result on failure.
CUtensorMap make_bf16_tensor_map_2d(const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows,
                                    uint32_t box_cols);

// Row-major [rows, cols] bytes (int8 / uint8 weights) at `base` (16-byte aligned, cols % 16 == 0),
// boxes of box_rows x box_cols bytes, box_cols 64 or 128, with the swizzle of that span: a row of
// the box is exactly one swizzle span, and the swizzle keeps the mixed-input kernel's fragment
// loads conflict-free (kernels/mixed_input/mixed_input_kernel.cuh). Out-of-bounds reads are zero.
CUtensorMap make_byte_tensor_map_2d(const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows,
                                    uint32_t box_cols);

} // namespace tilesim::kernels
