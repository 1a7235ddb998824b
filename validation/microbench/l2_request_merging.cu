// Does the L2 look a line up once per request, or once for requests that arrive together?
// The GEMMs say it may skip some: on dense 4096^3 persistent row_major the SMs request 41.9 M
// sectors by TMA (l1tex__m_xbar2l1tex_read_sectors_..._tma_ld, multicast counted once) while the L2
// counts 34.6 M read lookups from them (lts__t_sectors_srcunit_tex_op_read), although the 256-byte
// promotion adds lookups (data/h100/microbench/l2_counter_by_order.csv).
//
// Probe: every SM (one CTA each, released together by a grid-wide start flag) walks the same
// 8 MB region of 16 KB boxes (2-D TMA loads, 128 rows x 64 bf16, the kernels' own tensor map with
// its 256-byte L2 promotion), `in_flight` boxes in flight as the GEMM producer keeps its stages.
// CTA c loads box (i + c * lag) mod boxes at step i, so
//  - CTAs c and c + boxes / lag (when that divides) load the same box at the same step: lag 0 puts
//    all 132 in lockstep, lag 8 pairs, 16 fours, 32 eights, 64 sixteens, 128 thirty-threes;
//  - CTA c asks for a box `lag` steps after CTA c + 1 did (lags 1-6: a box takes an SM ~0.3 us
//    at the L2's rate, so the second request comes while the first may still be in flight).
// Every launch requests the same sectors; run under ncu (run_l2_request_merging.sh), the L2's
// lookups per requested sector show which requests are merged. The L2 is flushed before each.
// Output: one JSON object on stdout listing the launches in order (the ncu rows follow it).
#include "check_cuda.cuh"
#include "l2_evict.cuh"
#include "kernels/grouped_gemm.h"
#include "kernels/ptx_wrappers.cuh"
#include "kernels/tensor_maps.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr const char* kProgram = "l2_request_merging";
namespace ptx = tilesim::kernels::ptx;

constexpr int kCols = 4096;            // bf16 per row: 8 KB rows
constexpr int kRows = 8192;            // 64 MiB tensor
constexpr int kBoxRows = 128;          // a 128 x 64 box: 16 KB, 128 lines of 128 B
constexpr int kBoxBytes = kBoxRows * 128;
constexpr int kColBlocks = kCols / 64; // boxes side by side in one band of 128 rows
constexpr int kMaxInFlight = 8;

// Box j of the region: band j / kColBlocks, column block j % kColBlocks.
__device__ void load_box(const CUtensorMap* map, uint8_t* dst, int j, uint64_t* bar) {
  ptx::tma_load_2d(dst, map, (j % kColBlocks) * 64, (j / kColBlocks) * kBoxRows, bar);
}

__device__ uint8_t* aligned_1024(uint8_t* p) { return p + ((1024 - (ptx::smem_addr(p) & 1023)) & 1023); }

// `arrived` counts CTAs at the start line; all are resident (grid <= SMs, one CTA per SM by its
// shared memory), so spinning until every one has arrived cannot deadlock.
__global__ void shared_walk(const __grid_constant__ CUtensorMap map, int boxes, int steps, int lag, int in_flight,
                            unsigned* arrived, unsigned* sink) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t full[kMaxInFlight];
  uint8_t* ring = aligned_1024(smem_raw);
  if (threadIdx.x != 0) return;
  for (int s = 0; s < in_flight; ++s) ptx::mbarrier_init(&full[s], 1);
  ptx::fence_barrier_init();
  ptx::prefetch_tensor_map(&map);
  atomicAdd(arrived, 1u);
  while (atomicAdd(arrived, 0u) < gridDim.x) {
  }
  const int first = static_cast<int>((static_cast<long long>(blockIdx.x) * lag) % boxes);
  for (int i = 0; i < steps + in_flight; ++i) {
    const int s = i % in_flight;
    if (i >= in_flight) ptx::mbarrier_wait(&full[s], ((i / in_flight) - 1) & 1);
    if (i < steps) {
      ptx::mbarrier_arrive_expect_tx(&full[s], kBoxBytes);
      load_box(&map, ring + s * kBoxBytes, (first + i) % boxes, &full[s]);
    }
  }
  if (ring[threadIdx.x] == 0x5b) atomicAdd(sink, 1u); // keeps the loads observable
}

} // namespace

int main() {
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    std::fprintf(stderr, "%s: no CUDA device; run it on a GPU machine\n", kProgram);
    return 1;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const size_t tensor_bytes = static_cast<size_t>(kRows) * kCols * 2;
  const size_t evict_bytes = 4 * static_cast<size_t>(prop.l2CacheSize);
  void* tensor = nullptr;
  uint4* evict = nullptr;
  unsigned* counters = nullptr;
  CHECK_CUDA(cudaMalloc(&tensor, tensor_bytes));
  CHECK_CUDA(cudaMalloc(&evict, evict_bytes));
  CHECK_CUDA(cudaMalloc(&counters, 2 * sizeof(unsigned)));
  CHECK_CUDA(cudaMemset(tensor, 0x11, tensor_bytes));
  CHECK_CUDA(cudaMemset(evict, 0x22, evict_bytes));
  CUtensorMap map;
  try {
    map = tilesim::kernels::make_bf16_tensor_map_2d(tensor, kRows, kCols, kBoxRows, 64);
  } catch (const tilesim::kernels::KernelError& e) {
    std::fprintf(stderr, "%s: %s\n", kProgram, e.what());
    return 1;
  }
  const int smem = kMaxInFlight * kBoxBytes + 1024;
  CHECK_CUDA(cudaFuncSetAttribute(shared_walk, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));

  // 8 MB region (512 boxes): fits one L2 partition's half of the 50 MB either way.
  const int boxes = 512;
  const int steps = boxes; // each CTA reads the whole region once
  struct Launch {
    int lag, in_flight;
  };
  std::vector<Launch> launches;
  for (const int lag : {0, 8, 16, 32, 64, 128}) launches.push_back({lag, 4}); // lockstep groups
  for (const int in_flight : {1, 2, 4, 8})                                     // one CTA behind the next
    for (const int lag : {1, 2, 3, 4, 6, 12}) launches.push_back({lag, in_flight});
  std::printf("{\n \"gpu\": \"%s\", \"sms\": %d, \"box_bytes\": %d, \"boxes\": %d, \"steps_per_cta\": %d,\n"
              " \"requested_sectors_per_launch\": %lld,\n \"launches\": [",
              prop.name, sms, kBoxBytes, boxes, steps, static_cast<long long>(sms) * steps * (kBoxBytes / 32));
  for (size_t i = 0; i < launches.size(); ++i) {
    microbench::evict_l2<<<sms * 4, 256>>>(evict, evict_bytes / sizeof(uint4), evict);
    CHECK_CUDA(cudaMemset(counters, 0, sizeof(unsigned)));
    shared_walk<<<sms, 32, smem>>>(map, boxes, steps, launches[i].lag, launches[i].in_flight, counters, counters + 1);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    std::printf("%s\n  {\"lag_boxes\": %d, \"in_flight\": %d}", i ? "," : "", launches[i].lag, launches[i].in_flight);
  }
  std::printf("\n ]\n}\n");
  return 0;
}
