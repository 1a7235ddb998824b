// The PTX the element-wise kernels use beyond kernels/common/ptx_wrappers.cuh, one instruction per
// wrapper, each with its PTX ISA section (ISA 9.0 numbering).
#pragma once

#include <cstdint>

#include "kernels/common/ptx_wrappers.cuh"

namespace tilesim::kernels {

enum class LoadHint { none, coherent, l2_256b };

// ld.global.v4.u32 etc. (9.7.9.8 ld, no .nc): an ordinary coherent load, as Triton emits for
// tl.load, where the compiler's own choice for const __restrict__ data is ld.global.nc.
template <int Bytes> __device__ __forceinline__ void ld_global(const void* p, void* v) {
  if constexpr (Bytes == 16) {
    uint4& r = *static_cast<uint4*>(v);
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w) : "l"(p));
  } else if constexpr (Bytes == 8) {
    uint2& r = *static_cast<uint2*>(v);
    asm volatile("ld.global.v2.u32 {%0, %1}, [%2];" : "=r"(r.x), "=r"(r.y) : "l"(p));
  } else if constexpr (Bytes == 4) {
    asm volatile("ld.global.u32 %0, [%1];" : "=r"(*static_cast<uint32_t*>(v)) : "l"(p));
  } else {
    static_assert(Bytes == 2, "a vector is 2, 4, 8 or 16 bytes");
    asm volatile("ld.global.u16 %0, [%1];" : "=h"(*static_cast<uint16_t*>(v)) : "l"(p));
  }
}

// ld.global.nc.L2::256B (9.7.9.8 ld, "L2::256B" prefetch size): a read-only load of Bytes (16, 8,
// 4 or 2) that has the L2 fetch the whole naturally aligned 256-byte block on a miss.
template <int Bytes> __device__ __forceinline__ void ld_global_nc_l2_256b(const void* p, void* v) {
  if constexpr (Bytes == 16) {
    uint4& r = *static_cast<uint4*>(v);
    asm volatile("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(r.x), "=r"(r.y), "=r"(r.z), "=r"(r.w)
                 : "l"(p));
  } else if constexpr (Bytes == 8) {
    uint2& r = *static_cast<uint2*>(v);
    asm volatile("ld.global.nc.L2::256B.v2.u32 {%0, %1}, [%2];" : "=r"(r.x), "=r"(r.y) : "l"(p));
  } else if constexpr (Bytes == 4) {
    asm volatile("ld.global.nc.L2::256B.u32 %0, [%1];" : "=r"(*static_cast<uint32_t*>(v)) : "l"(p));
  } else {
    static_assert(Bytes == 2, "a vector is 2, 4, 8 or 16 bytes");
    asm volatile("ld.global.nc.L2::256B.u16 %0, [%1];" : "=h"(*static_cast<uint16_t*>(v)) : "l"(p));
  }
}

// cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes (9.7.9.25.4.1 cp.async.bulk):
// `bytes` (a multiple of 16, both addresses 16-byte aligned) from global to this CTA's shared
// memory in one instruction, completion counted on `bar` in bytes.
__device__ __forceinline__ void bulk_copy_global_to_shared(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   ptx::smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(ptx::smem_addr(bar))
               : "memory");
}

} // namespace tilesim::kernels
