// The one place tensor maps (TMA descriptors) are made: 2-D bf16, 128-byte swizzle, zero fill.
#pragma once

#include <cuda.h>

#include <cstdint>

namespace tilesim::kernels {

// Row-major [rows, cols] bf16 at `base` (16-byte aligned, cols % 8 == 0), read in boxes of
// box_rows x box_cols (box_cols * 2 == 128 bytes for the 128B swizzle). Out-of-bounds reads are
// zero. Throws KernelError naming cuTensorMapEncodeTiled and its result on failure.
CUtensorMap make_bf16_tensor_map_2d(const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows,
                                    uint32_t box_cols);

} // namespace tilesim::kernels
