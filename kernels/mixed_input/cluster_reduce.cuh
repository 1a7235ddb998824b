// The cluster K split of the 64-token, 128-channel decode tile: the two CTAs of a cluster each run
// half of K, and CTA 1 hands its partial sums to CTA 0 through distributed shared memory (PTX ISA
// 9.7.9.22 mapa, st.shared::cluster; 9.7.13.15 mbarrier across the cluster), which adds them and
// stores the tile. Two barriers in each CTA's shared memory: `full` in CTA 0 (CTA 1's 256 consumer
// threads arrive once their sums are written) and `empty` in CTA 1 (CTA 0's arrive once they have
// read them, so that CTA 1's next tile cannot overwrite sums still being added). Both arrive with
// .release.cluster and wait with .acquire.cluster: once per tile, so the fence it costs is cheap
// here, unlike on the ring's per-stage releases (kernels/grouped_gemm NOTES, v2a).
#pragma once

#include <cstdint>

#include "kernels/common/ptx_wrappers.cuh"

namespace tilesim::kernels::mixed_input::cluster {

__device__ __forceinline__ void store_remote(uint32_t addr, float v) {
  asm volatile("st.shared::cluster.f32 [%0], %1;" ::"r"(addr), "f"(v) : "memory");
}

__device__ __forceinline__ void arrive_remote_release(uint32_t bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void wait_acquire(uint64_t* bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done)
    asm volatile("{\n .reg .pred p;\n"
                 " mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(ptx::smem_addr(bar)), "r"(parity)
                 : "memory");
}

// barrier.cluster without .aligned (9.7.13.3): the producer warp's lanes reach it apart (lane 0
// after its loads), and every thread of both CTAs arrives. Orders the barriers' initialisation
// before the partner's first remote arrive, and at the end keeps each CTA's shared memory alive
// until its partner has stopped writing and arriving into it.
__device__ __forceinline__ void sync() {
  asm volatile("barrier.cluster.arrive.release;\n barrier.cluster.wait.acquire;" ::: "memory");
}

// Adds CTA 1's accumulators into CTA 0's for the `tile`-th tile this cluster runs (its parity
// picks the barriers' phase). buffer: [consumers][A][128] floats in each CTA's shared memory (CTA
// 0's is the one written). True in CTA 0, which then holds the tile's sum and stores it.
template <int A>
__device__ __forceinline__ bool add_partner_sums(float (&acc)[A], float* buffer, uint64_t* full, uint64_t* empty,
                                                 uint32_t rank, int consumer, int tile) {
  const int t = threadIdx.x % 128;
  float* slot = buffer + consumer * A * 128 + t;
  const uint32_t parity = tile & 1;
  if (rank != 0) {
    wait_acquire(empty, parity ^ 1); // the first tile passes: the phase before the first
    const uint32_t remote = ptx::map_to_cluster_rank(slot, 0);
#pragma unroll
    for (int i = 0; i < A; ++i) store_remote(remote + i * 128 * 4, acc[i]);
    arrive_remote_release(ptx::map_to_cluster_rank(full, 0));
    return false;
  }
  wait_acquire(full, parity);
#pragma unroll
  for (int i = 0; i < A; ++i) acc[i] += slot[i * 128];
  arrive_remote_release(ptx::map_to_cluster_rank(empty, 1));
  return true;
}

} // namespace tilesim::kernels::mixed_input::cluster
