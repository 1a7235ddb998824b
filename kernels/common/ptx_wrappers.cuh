// One-instruction PTX wrappers used by the grouped GEMM kernel (sm_90a).
// Each wrapper names the PTX ISA section (PTX ISA 8.x / 9.0 numbering) of the instruction it emits.
#pragma once

#include <cstdint>
#include <cuda.h> // CUtensorMap

namespace tilesim::kernels::ptx {

// Shared-memory address as the 32-bit value PTX's .shared::cta state space expects.
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// ld.shared.b32 (9.7.9.8 ld): one 32-bit word at a shared-memory address (smem_addr form). The
// explicit state space keeps the compiler from falling back to generic 64-bit loads.
__device__ __forceinline__ uint32_t ld_shared_u32(uint32_t addr) {
  uint32_t v;
  asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr));
  return v;
}

// ld.shared.v4.b32 / st.shared.v4.b32 (9.7.9.8 ld, 9.7.9.9 st): 16 bytes at a shared-memory address.
__device__ __forceinline__ uint4 ld_shared_v4(uint32_t addr) {
  uint4 v;
  asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "r"(addr));
  return v;
}

__device__ __forceinline__ void st_shared_v4(uint32_t addr, uint4 v) {
  asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w)
               : "memory");
}

// --- mbarrier (PTX ISA 9.7.13.15 "Parallel Synchronization and Communication: mbarrier") ---

// mbarrier.init: arrival count the phase waits for.
__device__ __forceinline__ void mbarrier_init(uint64_t* bar, uint32_t arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(arrivals)
               : "memory");
}

// fence.mbarrier_init (9.7.13.4 membar/fence): makes the inits visible to the async proxy (TMA).
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// mbarrier.arrive.expect_tx: one arrival plus the bytes the TMA loads of this phase will deliver.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;" ::"r"(
                   smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

// mbarrier.arrive: one plain arrival (a consumer warp releasing a ring stage).
__device__ __forceinline__ void mbarrier_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar))
               : "memory");
}

// mapa (9.7.9.22): the address of the same shared-memory variable in CTA `rank` of the cluster.
__device__ __forceinline__ uint32_t map_to_cluster_rank(const void* p, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr(p)), "r"(rank));
  return remote;
}

// mbarrier.arrive on a barrier of any CTA of the cluster (address from map_to_cluster_rank).
// Default (.release.cta) semantics, as CUTLASS's ClusterBarrier::arrive(cta_id): the consumer only
// read the stage through wgmma (already waited for), so nothing needs publishing at cluster scope.
// Spelling out .release.cluster made ptxas put MEMBAR.ALL.GPU before every arrive and cost 40%
// of the throughput (measured, NOTES.md v2a).
__device__ __forceinline__ void mbarrier_arrive_cluster(uint32_t cluster_bar) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(cluster_bar) : "memory");
}

// mbarrier.try_wait.parity: true once the phase with the given parity has completed.
__device__ __forceinline__ bool mbarrier_try_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile("{\n .reg .pred p;\n"
               " mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n"
               " selp.u32 %0, 1, 0, p;\n}"
               : "=r"(done)
               : "r"(smem_addr(bar)), "r"(parity)
               : "memory");
  return done != 0;
}

__device__ __forceinline__ void mbarrier_wait(uint64_t* bar, uint32_t parity) {
  while (!mbarrier_try_wait(bar, parity)) {
  }
}

// mbarrier_wait and mbarrier_arrive on a barrier given as its 32-bit shared address, for a loop
// that keeps the address in a register instead of converting a generic pointer each time.
__device__ __forceinline__ void mbarrier_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  do
    asm volatile("{\n .reg .pred p;\n"
                 " mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(bar), "r"(parity)
                 : "memory");
  while (done == 0);
}

__device__ __forceinline__ void mbarrier_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

// --- TMA (9.7.9.25 cp.async.bulk.tensor) ---

// 2-D tiled tensor load global -> shared, completion counted on `bar` in bytes.
// c0 is the innermost (contiguous) coordinate, c1 the row.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1,
                                            uint64_t* bar) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_addr(dst)),
               "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar))
               : "memory");
}

// The same load multicast to the CTAs of the cluster named in cta_mask: the tile lands at the same
// shared-memory offset in each, and each CTA's mbarrier at `bar`'s offset counts the bytes.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, int c0, int c1,
                                                      uint64_t* bar, uint16_t cta_mask) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(smem_addr(dst)),
               "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "h"(cta_mask)
               : "memory");
}

// 2-D tiled tensor store shared -> global (bulk-group completion); out-of-bounds parts are not written.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, const void* src, int c0, int c1) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(c0), "r"(c1), "r"(smem_addr(src))
               : "memory");
}

// stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 (9.7.14.5.16 stmatrix): the warp's four 8 x 8 b16
// matrices, thread t holding row t / 4, columns 2 (t % 4) and + 1 of each (an mma/wgmma accumulator
// pair), stored transposed: lane 8 m + i gives the address of 16-byte row i of stored matrix m,
// which holds column i of fragment matrix m.
__device__ __forceinline__ void stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(r0), "r"(r1),
               "r"(r2), "r"(r3)
               : "memory");
}

// cp.async.bulk.commit_group (9.7.9.25.x): closes the group of bulk stores issued so far.
__device__ __forceinline__ void bulk_commit_group() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// cp.async.bulk.wait_group.read: at most `Pending` groups may still be reading shared memory.
template <int Pending> __device__ __forceinline__ void bulk_wait_group_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(Pending) : "memory");
}

// cp.async.bulk.wait_group: at most `Pending` groups may still be in flight at all.
template <int Pending> __device__ __forceinline__ void bulk_wait_group() {
  asm volatile("cp.async.bulk.wait_group %0;" ::"n"(Pending) : "memory");
}

// fence.proxy.async.shared::cta (9.7.13.4): ordinary shared-memory stores become visible to the
// async proxy (TMA) that reads them next.
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// bar.sync (9.7.13.1 bar/barrier): named barrier `id` for `threads` threads (one warpgroup here).
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// cp.async.ca.shared.global (PTX ISA, cp.async, sm_80+): copies 4 bytes from global to shared
// memory without a register; with `present` false it reads nothing and writes zeros (src-size 0).
__device__ __forceinline__ void cp_async_4(void* dst, const void* src, bool present) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(src)),
               "r"(present ? 4 : 0)
               : "memory");
}

// cp.async.commit_group: closes the group of this thread's cp.async copies issued so far.
__device__ __forceinline__ void cp_async_commit_group() { asm volatile("cp.async.commit_group;" ::: "memory"); }

// cp.async.wait_all: this thread's cp.async copies have landed (visible to other threads after a barrier).
__device__ __forceinline__ void cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

// prefetch.tensormap (9.7.9.26 prefetch): pull the descriptor into the cache before the first load.
__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

// --- wgmma helpers (9.7.15 "Asynchronous Warpgroup Level Matrix Multiply-Accumulate") ---

// wgmma.fence (9.7.15.5.1): orders register accesses to the accumulators before wgmma reads them.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

// wgmma.commit_group (9.7.15.5.3): closes the group of wgmma issued so far.
__device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
}

// wgmma.wait_group (9.7.15.5.4): waits until at most `Pending` groups are in flight.
template <int Pending> __device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(Pending) : "memory");
}

// Keeps the compiler from moving accumulator reads/writes across the asynchronous wgmma
// (the same trick as CUTLASS's warpgroup_fence_operand); emits no instruction.
__device__ __forceinline__ void fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }

// Shared-memory matrix descriptor (9.7.15.5.1.2 "Matrix Descriptor Format") for a K-major tile
// written by TMA with 128-byte swizzle: rows of 128 bytes, 8-row core groups 1024 bytes apart
// (stride byte offset), leading byte offset unused for swizzled K-major, swizzle mode 1 = 128B.
__device__ __forceinline__ uint64_t smem_descriptor_sw128(const void* tile) {
  const uint64_t addr = smem_addr(tile);
  uint64_t desc = (addr & 0x3FFFF) >> 4;
  desc |= uint64_t(16 >> 4) << 16;
  desc |= uint64_t(1024 >> 4) << 32;
  desc |= uint64_t(1) << 62;
  return desc;
}

// --- register budget (9.7.19.5 setmaxnreg) ---
template <int Regs> __device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(Regs));
}
template <int Regs> __device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(Regs));
}

// --- cluster (9.7.13.3 barrier.cluster) ---
// All threads of all CTAs of the cluster: orders the barrier inits before remote use, and keeps
// a CTA's shared memory alive until its peer has stopped multicasting into it or arriving on it.
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
__device__ __forceinline__ void cluster_wait() {
  asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// --- special registers (10 "Special Registers": %smid, %globaltimer) ---
__device__ __forceinline__ uint32_t sm_id() {
  uint32_t id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}
__device__ __forceinline__ uint32_t cluster_cta_rank() {
  uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}
__device__ __forceinline__ uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

} // namespace tilesim::kernels::ptx
