// wgmma.mma_async wrapper for FP8 operands (E4M3 x E4M3, fp32 accumulate), beside the bf16 ones of
// wgmma.cuh. K is 32 per instruction: one MX scale block (OCP MX v1.0), so the block-scaled GEMM of
// kernels/mxfp8/ gets each block's product on its own and scales it on the CUDA cores.
#pragma once

#include <cstdint>

namespace tilesim::kernels::ptx {

// wgmma.mma_async m64n64k32 .f32.e4m3.e4m3 (PTX ISA 9.7.15.5.2): D[64x64] = A[64x32] * B[32x64],
// scale-d false, so D is overwritten, not accumulated (the caller promotes it into its own
// accumulator). FP8 operands take no transpose immediates: A and B are K-major in shared memory
// (descriptors, 128B swizzle: one k32 step is +32 bytes inside the swizzle row). Each thread of the
// warpgroup receives 32 floats in the layout of the bf16 instructions' accumulators. Two of these
// cover a 128-wide tile with two 32-float temporaries, so that one half's product is promoted while
// the other's wgmma runs.
__device__ __forceinline__ void wgmma_m64n64k32_e4m3(float (&d)[32], uint64_t desc_a, uint64_t desc_b) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, 0, 0;\n"
               " wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 {"
               "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,"
               "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
               "}, %32, %33, p, 1, 1;\n}"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                 "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                 "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                 "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
               : "l"(desc_a), "l"(desc_b));
}

} // namespace tilesim::kernels::ptx
