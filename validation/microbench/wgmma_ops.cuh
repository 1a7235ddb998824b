// wgmma.mma_async from shared-memory descriptors, one struct per instruction shape and dtype, for the
// microbenchmarks that run the tensor cores flat out (wgmma_throughput, mma_power_by_format). Each
// struct names its instruction, its N and K, and its accumulator registers per thread (N/2 for m64nN).
#pragma once

#include "kernels/common/ptx_wrappers.cuh"
#include "kernels/common/wgmma.cuh"

#include <cstdint>

namespace microbench {

namespace ptx = tilesim::kernels::ptx;

// Accumulator operand lists for the inline asm (N/2 registers per thread for m64nN).
#define REGS_0_63                                                                                                      \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, "     \
  "%24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, "     \
  "%46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
#define REGS_64_111                                                                                                    \
  ", %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, "   \
  "%86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, "   \
  "%107, %108, %109, %110, %111"
#define REGS_112_127 ", %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define OPERANDS_64 "{" REGS_0_63 "}, %64, %65"
#define OPERANDS_112 "{" REGS_0_63 REGS_64_111 "}, %112, %113"
#define OPERANDS_128 "{" REGS_0_63 REGS_64_111 REGS_112_127 "}, %128, %129"
#define ACC8(c, i) c(d[i]), c(d[i + 1]), c(d[i + 2]), c(d[i + 3]), c(d[i + 4]), c(d[i + 5]), c(d[i + 6]), c(d[i + 7])
#define ACC32(c, i) ACC8(c, i), ACC8(c, i + 8), ACC8(c, i + 16), ACC8(c, i + 24)
#define ACC_64(c) ACC32(c, 0), ACC32(c, 32)
#define ACC_112(c) ACC_64(c), ACC32(c, 64), ACC8(c, 96), ACC8(c, 104)
#define ACC_128(c) ACC_64(c), ACC32(c, 64), ACC32(c, 96)

// One wgmma.mma_async (PTX ISA 9.7.15.5.2) with A and B from descriptors and scale-d = true.
// `tail` is what follows scale-d: imm-scale-a/b for fp8 and tf32, nothing for integers (which have
// neither; their widest shape is n224). Only bf16/f16 take the transpose immediates.
#define WGMMA_OP(Name, N, K, AccT, Constraint, Regs, Types, Tail)                                                      \
  struct Name {                                                                                                        \
    using Acc = AccT;                                                                                                  \
    static constexpr int n = N, k = K, regs = Regs;                                                                    \
    static constexpr const char* instruction = "wgmma.mma_async.sync.aligned.m64n" #N "k" #K Types;                    \
    __device__ static void mma(AccT (&d)[Regs], uint64_t a, uint64_t b) {                                              \
      asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n wgmma.mma_async.sync.aligned.m64n" #N "k" #K Types      \
                   " " OPERANDS_##Regs ", p" Tail ";\n}"                                                               \
                   : ACC_##Regs(Constraint)                                                                            \
                   : "l"(a), "l"(b));                                                                                  \
    }                                                                                                                  \
  };

// bf16 goes through the GEMM kernel's own wrappers (kernels/common/wgmma.cuh): the instruction it issues.
struct Bf16N256 {
  using Acc = float;
  static constexpr int n = 256, k = 16, regs = 128;
  static constexpr const char* instruction = "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16";
  __device__ static void mma(float (&d)[128], uint64_t a, uint64_t b) { ptx::wgmma_m64n256k16(d, a, b); }
};
struct Bf16N128 {
  using Acc = float;
  static constexpr int n = 128, k = 16, regs = 64;
  static constexpr const char* instruction = "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16";
  __device__ static void mma(float (&d)[64], uint64_t a, uint64_t b) { ptx::wgmma_m64n128k16(d, a, b); }
};
WGMMA_OP(E4m3N256, 256, 32, float, "+f", 128, ".f32.e4m3.e4m3", ", 1, 1")
WGMMA_OP(E4m3N128, 128, 32, float, "+f", 64, ".f32.e4m3.e4m3", ", 1, 1")
WGMMA_OP(Tf32N256, 256, 8, float, "+f", 128, ".f32.tf32.tf32", ", 1, 1")
WGMMA_OP(Tf32N128, 128, 8, float, "+f", 64, ".f32.tf32.tf32", ", 1, 1")
WGMMA_OP(S8N224, 224, 32, int, "+r", 112, ".s32.s8.s8", "")
WGMMA_OP(S8N128, 128, 32, int, "+r", 64, ".s32.s8.s8", "")

// No instruction: keeps the compiler from moving accumulator accesses across the async wgmma.
__device__ __forceinline__ void keep(float& r) { asm volatile("" : "+f"(r)::"memory"); }
__device__ __forceinline__ void keep(int& r) { asm volatile("" : "+r"(r)::"memory"); }

// The shared-memory ring the loop reads: 4 stages, each the A tiles of two warpgroups (64 rows x
// 128 B, K-major, 128B-swizzled) and a B tile of up to 256 rows x 128 B, as the grouped GEMM's.
constexpr int kRingStages = 4;
constexpr int kRingATileBytes = 64 * 128;
constexpr int kRingBOffset = 2 * kRingATileBytes;
constexpr int kRingStageBytes = kRingBOffset + 256 * 128;
constexpr int kRingBytes = kRingStages * kRingStageBytes;

// The tensor cores flat out, shaped like the grouped GEMM's consumer: per K block (one 128-byte K
// row of the stage) 4 wgmma, one commit group, then wait_group Pending (1: pipelined as the GEMM,
// 0: serial); the last group is waited for before returning. `smem` is 1024-byte aligned.
template <class Op, int Pending>
__device__ __forceinline__ void wgmma_k_blocks(const uint8_t* smem, int warpgroup, int k_blocks,
                                               typename Op::Acc (&acc)[Op::regs]) {
  for (int kb = 0; kb < k_blocks; ++kb) {
    const uint8_t* stage = smem + (kb % kRingStages) * kRingStageBytes;
    const uint64_t desc_a = ptx::smem_descriptor_sw128(stage + warpgroup * kRingATileBytes);
    const uint64_t desc_b = ptx::smem_descriptor_sw128(stage + kRingBOffset);
    ptx::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) Op::mma(acc, desc_a + 2 * kk, desc_b + 2 * kk); // +32 B of K each
    ptx::wgmma_commit_group();
    ptx::wgmma_wait_group<Pending>();
  }
  ptx::wgmma_wait_group<0>();
}

} // namespace microbench
