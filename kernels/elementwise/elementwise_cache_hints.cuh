// The 16-byte global loads and stores of the element-wise kernel under each MemoryHint (the vector-add
// sweep's: which cache policy, if any, moves a 1M add's time against Triton's kernel). One PTX
// instruction a wrapper; PTX ISA 9.0 sections: 9.7.9.8 ld, 9.7.9.9 st (the .L1::no_allocate and
// .L2::cache_hint qualifiers, the .cs cache operator), 9.7.9.17 createpolicy.
#pragma once

#include <cstdint>

#include "kernels/elementwise/elementwise.h"

namespace tilesim::kernels {

// createpolicy.fractional.L2::evict_first: every line the access touches is the first evicted.
__device__ __forceinline__ std::uint64_t l2_evict_first_policy() {
  std::uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
  return policy;
}

// ld.global.nc.L1::no_allocate.v4.b32: read-only path, the line is not kept in L1.
__device__ __forceinline__ uint4 ld_nc_l1_no_allocate(const void* p) {
  uint4 v;
  asm("ld.global.nc.L1::no_allocate.v4.b32 {%0, %1, %2, %3}, [%4];"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p));
  return v;
}

// ld.global.nc.L2::cache_hint.v4.b32 with an L2 policy from createpolicy.
__device__ __forceinline__ uint4 ld_nc_l2_hint(const void* p, std::uint64_t policy) {
  uint4 v;
  asm("ld.global.nc.L2::cache_hint.v4.b32 {%0, %1, %2, %3}, [%4], %5;"
      : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
      : "l"(p), "l"(policy));
  return v;
}

// st.global.L2::cache_hint.v4.b32 with an L2 policy from createpolicy.
__device__ __forceinline__ void st_l2_hint(void* p, uint4 v, std::uint64_t policy) {
  asm volatile("st.global.L2::cache_hint.v4.b32 [%0], {%1, %2, %3, %4}, %5;" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
               "r"(v.w), "l"(policy)
               : "memory");
}

// st.global.cs.v4.b32: cache streaming, likely to be accessed once (evict-first in L1 and L2).
__device__ __forceinline__ void st_cs(void* p, uint4 v) {
  asm volatile("st.global.cs.v4.b32 [%0], {%1, %2, %3, %4};" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// One 16-byte vector in and out under Hint; MemoryHint::none is plain C++ (ld.global.nc through
// the kernel's const __restrict__ pointers, st.global).
template <MemoryHint Hint, typename V> __device__ __forceinline__ V load_vector(const V* p, std::uint64_t policy) {
  static_assert(Hint == MemoryHint::none || sizeof(V) == 16, "cache hints take 16-byte vectors");
  if constexpr (Hint == MemoryHint::l1_no_allocate) {
    const uint4 v = ld_nc_l1_no_allocate(p);
    return *reinterpret_cast<const V*>(&v);
  } else if constexpr (Hint == MemoryHint::l2_evict_first) {
    const uint4 v = ld_nc_l2_hint(p, policy);
    return *reinterpret_cast<const V*>(&v);
  } else {
    return *p;
  }
}

template <MemoryHint Hint, typename V> __device__ __forceinline__ void store_vector(V* p, const V& v, std::uint64_t policy) {
  if constexpr (Hint == MemoryHint::l2_evict_first) {
    st_l2_hint(p, *reinterpret_cast<const uint4*>(&v), policy);
  } else if constexpr (Hint == MemoryHint::store_streaming) {
    st_cs(p, *reinterpret_cast<const uint4*>(&v));
  } else {
    *p = v;
  }
}

} // namespace tilesim::kernels
