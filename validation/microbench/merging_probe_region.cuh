// The region the L2 request-merging probes (l2_request_merging.cu, l2_merging_pairs.cu) walk: an
// 8192 x 4096 bf16 tensor read as 128 x 64 boxes (16 KB, 128 lines of 128 B) through the kernels'
// own tensor map (128-byte swizzle, 256-byte L2 promotion); a buffer four times the L2 to evict it
// with before each walk; the walkers' start line; and the pieces the two-SM probes share.
#pragma once

#include "check_cuda.cuh"
#include "l2_evict.cuh"
#include "kernels/grouped_gemm/grouped_gemm.h"
#include "kernels/common/ptx_wrappers.cuh"
#include "kernels/common/tensor_maps.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace microbench {

constexpr int kProbeCols = 4096;  // bf16 per row: 8 KB rows
constexpr int kProbeRows = 8192;  // 64 MiB tensor
constexpr int kProbeBoxRows = 128;
constexpr int kProbeBoxBytes = kProbeBoxRows * 128;
constexpr int kProbeColBlocks = kProbeCols / 64; // boxes side by side in one band of 128 rows

// Box j of the region: band j / kProbeColBlocks, column block j % kProbeColBlocks.
__device__ inline void load_probe_box(const CUtensorMap* map, uint8_t* dst, int j, uint64_t* bar) {
  tilesim::kernels::ptx::tma_load_2d(dst, map, (j % kProbeColBlocks) * 64, (j / kProbeColBlocks) * kProbeBoxRows, bar);
}

__device__ inline uint8_t* aligned_1024(uint8_t* p) {
  return p + ((1024 - (tilesim::kernels::ptx::smem_addr(p) & 1023)) & 1023);
}

// `arrived` counts CTAs at the start line; all are resident (grid <= SMs, one CTA per SM by its
// shared memory), so spinning until every one has arrived cannot deadlock.
__device__ inline void wait_at_start_line(unsigned* arrived) {
  atomicAdd(arrived, 1u);
  while (atomicAdd(arrived, 0u) < gridDim.x) {
  }
}

// The two-SM probes (l2_merging_pairs.cu, l2_pending_hit.cu): one SM leads, one follows (or
// none: the leader alone), every other SM's CTA only passes the start line.
enum PairRole : int8_t { kIdle = 0, kLeader = 1, kFollower = 2 };

struct PairLaunch {
  int leader, follower; // SM ids; follower -1: the leader alone
  long long delay_ns;
};

// Thread 0 of a pair probe's CTA, which loads one box at a time: its barrier set up, every CTA past
// the start line; returns its SM's role.
__device__ inline PairRole start_pair_walker(const CUtensorMap* map, uint64_t* full, const int8_t* role_of_sm,
                                             unsigned* arrived) {
  namespace ptx = tilesim::kernels::ptx;
  const auto role = static_cast<PairRole>(role_of_sm[ptx::sm_id()]);
  ptx::mbarrier_init(full, 1);
  ptx::fence_barrier_init();
  ptx::prefetch_tensor_map(map);
  wait_at_start_line(arrived);
  return role;
}

// Writes the launch's role of every SM to `role_of_sm` on the device.
inline void upload_pair_roles(int8_t* role_of_sm, int sms, const PairLaunch& launch, const char* program) {
  std::vector<int8_t> role(sms, kIdle);
  role[launch.leader] = kLeader;
  if (launch.follower >= 0) role[launch.follower] = kFollower;
  check_cuda(cudaMemcpy(role_of_sm, role.data(), sms, cudaMemcpyHostToDevice), program, "cudaMemcpy(roles)");
}

struct ProbeRegion {
  CUtensorMap map;
  uint4* evict = nullptr;
  size_t evict_words = 0;
  unsigned* arrived = nullptr; // the start line
  unsigned* sink = nullptr;    // written only if the loads return what was never stored

  ProbeRegion(const cudaDeviceProp& prop, const char* program) {
    void* tensor = nullptr;
    const size_t tensor_bytes = static_cast<size_t>(kProbeRows) * kProbeCols * 2;
    const size_t evict_bytes = 4 * static_cast<size_t>(prop.l2CacheSize);
    check_cuda(cudaMalloc(&tensor, tensor_bytes), program, "cudaMalloc(tensor)");
    check_cuda(cudaMalloc(&evict, evict_bytes), program, "cudaMalloc(evict)");
    check_cuda(cudaMemset(tensor, 0x11, tensor_bytes), program, "cudaMemset(tensor)");
    check_cuda(cudaMemset(evict, 0x22, evict_bytes), program, "cudaMemset(evict)");
    check_cuda(cudaMalloc(&arrived, 2 * sizeof(unsigned)), program, "cudaMalloc(arrived)");
    sink = arrived + 1;
    evict_words = evict_bytes / sizeof(uint4);
    try {
      map = tilesim::kernels::make_bf16_tensor_map_2d(tensor, kProbeRows, kProbeCols, kProbeBoxRows, 64);
    } catch (const tilesim::kernels::KernelError& e) {
      std::fprintf(stderr, "%s: %s\n", program, e.what());
      std::exit(1);
    }
  }

  // Before each walk: a cold L2 and an empty start line.
  void prepare_walk(int sms, const char* program) const {
    evict_l2<<<sms * 4, 256>>>(evict, evict_words, evict);
    check_cuda(cudaMemset(arrived, 0, sizeof(unsigned)), program, "cudaMemset(arrived)");
  }
};

} // namespace microbench
