// Microbenchmarks behind the memory side of the GPU profiles (issue 4: calibrate from
// microbenchmarks, not from the validation configurations):
//  - bandwidth of the TMA bulk-copy engine (cp.async.bulk global -> shared, completing on an
//    mbarrier) as a function of the footprint each pass re-reads: L2-resident footprints give the
//    L2 -> SM bandwidth the GEMM producers see, large ones the DRAM bandwidth, and the knee the L2
//    capacity as seen by a streaming reuse pattern;
//  - the SM clock while doing so (clock64 against %globaltimer), to express bandwidth per cycle;
//  - the hardware block scheduler's placement of a non-persistent grid (which SM runs blockIdx b).
// Output: one JSON object on stdout.
#include "check_cuda.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

constexpr const char* kProgram = "bulk_copy_bandwidth";

constexpr int kStages = 8;
constexpr int kChunkBytes = 16384;

// PTX ISA 9.7.13.15.11 mbarrier.init
__device__ void mbarrier_init(uint64_t* bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(count));
}
// PTX ISA 9.7.13.15.12 mbarrier.expect_tx via arrive.expect_tx
__device__ void mbarrier_arrive_expect_tx(uint64_t* bar, int bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(bytes)
               : "memory");
}
// PTX ISA 9.7.13.15.16 mbarrier.try_wait.parity
__device__ void mbarrier_wait(uint64_t* bar, int parity) {
  asm volatile(
      "{\n .reg .pred p;\n wait_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      " @!p bra wait_%=;\n}" ::"r"(static_cast<unsigned>(__cvta_generic_to_shared(bar))), "r"(parity)
      : "memory");
}
// PTX ISA 9.7.9.25.4.1 cp.async.bulk (global -> shared, completes on an mbarrier)
__device__ void bulk_copy(void* dst, const void* src, int bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   static_cast<unsigned>(__cvta_generic_to_shared(dst))),
               "l"(src), "r"(bytes), "r"(static_cast<unsigned>(__cvta_generic_to_shared(bar)))
               : "memory");
}

__device__ uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Each CTA streams `chunks` chunks; chunk i of CTA c reads offset ((c * chunks_per_cta_stride + i)
// * chunk) modulo the footprint, so all CTAs together sweep the footprint again and again.
__global__ void stream_kernel(const char* src, long long footprint, int chunks, unsigned long long* cycles_ns) {
  extern __shared__ __align__(128) char ring[];
  __shared__ uint64_t full[kStages];
  if (threadIdx.x != 0) return;
  for (int s = 0; s < kStages; ++s) mbarrier_init(&full[s], 1);
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  const long long slots = footprint / kChunkBytes;
  const long long first = static_cast<long long>(blockIdx.x) * (slots / gridDim.x + 1);
  const long long t0 = clock64();
  const uint64_t g0 = global_timer_ns();
  for (int i = 0; i < chunks + kStages; ++i) {
    const int s = i % kStages;
    if (i >= kStages) mbarrier_wait(&full[s], ((i / kStages) - 1) & 1);
    if (i < chunks) {
      mbarrier_arrive_expect_tx(&full[s], kChunkBytes);
      bulk_copy(ring + s * kChunkBytes, src + ((first + i) % slots) * kChunkBytes, kChunkBytes, &full[s]);
    }
  }
  if (blockIdx.x == 0) {
    cycles_ns[0] = clock64() - t0;
    cycles_ns[1] = global_timer_ns() - g0;
  }
}

__global__ void smid_kernel(int* smid_of_block) {
  if (threadIdx.x == 0) {
    unsigned sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    smid_of_block[blockIdx.x] = static_cast<int>(sm);
  }
  // Keep the block resident a while so later blocks must find other slots.
  const uint64_t start = global_timer_ns();
  while (global_timer_ns() - start < 20000) {
  }
}

} // namespace

int main() {
  int device_count = 0;
  if (cudaGetDeviceCount(&device_count) != cudaSuccess || device_count == 0) {
    std::fprintf(stderr, "bulk_copy_bandwidth: no CUDA device; run it on a GPU machine\n");
    return 1;
  }
  cudaDeviceProp prop{};
  CHECK_CUDA(cudaGetDeviceProperties(&prop, 0));
  const int sms = prop.multiProcessorCount;
  const long long max_footprint = 4LL << 30;
  char* src = nullptr;
  CHECK_CUDA(cudaMalloc(&src, max_footprint));
  CHECK_CUDA(cudaMemset(src, 0x5a, max_footprint));
  unsigned long long* timing = nullptr;
  CHECK_CUDA(cudaMalloc(&timing, 2 * sizeof(unsigned long long)));
  const int smem = kStages * kChunkBytes;
  CHECK_CUDA(cudaFuncSetAttribute(stream_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));

  std::printf("{\n \"gpu\": \"%s\", \"sms\": %d, \"l2_bytes\": %d, \"chunk_bytes\": %d, \"stages\": %d,\n \"bandwidth\": [", prop.name,
              sms, prop.l2CacheSize, kChunkBytes, kStages);
  const std::vector<long long> footprints_mb{4, 8, 16, 24, 32, 40, 48, 56, 64, 96, 128, 512, 4096};
  for (size_t f = 0; f < footprints_mb.size(); ++f) {
    const long long footprint = footprints_mb[f] << 20;
    // Enough chunks that each CTA runs ~1 ms and the footprint is swept several times.
    const int chunks = 4096;
    std::vector<float> ms;
    unsigned long long cyc_ns[2] = {0, 0};
    for (int rep = 0; rep < 7; ++rep) {
      stream_kernel<<<sms, 32, smem>>>(src, footprint, 64, timing); // warm the footprint
      CHECK_CUDA(cudaEventRecord(e0));
      stream_kernel<<<sms, 32, smem>>>(src, footprint, chunks, timing);
      CHECK_CUDA(cudaEventRecord(e1));
      CHECK_CUDA(cudaEventSynchronize(e1));
      CHECK_CUDA(cudaGetLastError());
      float t = 0;
      CHECK_CUDA(cudaEventElapsedTime(&t, e0, e1));
      ms.push_back(t);
      CHECK_CUDA(cudaMemcpy(cyc_ns, timing, sizeof(cyc_ns), cudaMemcpyDeviceToHost));
    }
    std::sort(ms.begin(), ms.end());
    const double median_s = ms[ms.size() / 2] * 1e-3;
    const double bytes = static_cast<double>(sms) * chunks * kChunkBytes;
    const double clock_mhz = cyc_ns[1] > 0 ? static_cast<double>(cyc_ns[0]) / cyc_ns[1] * 1000.0 : 0.0;
    std::printf("%s\n  {\"footprint_bytes\": %lld, \"bytes\": %.0f, \"median_s\": %.6e, \"bytes_per_s\": %.4e, "
                "\"sm_clock_mhz\": %.0f, \"bytes_per_sm_cycle\": %.1f}",
                f ? "," : "", footprint, bytes, median_s, bytes / median_s, clock_mhz,
                clock_mhz > 0 ? bytes / median_s / (clock_mhz * 1e6) : 0.0);
  }
  std::printf("\n ],\n");

  // Block scheduler: 4 waves of blocks that each need most of an SM's shared memory (one
  // resident per SM, as a GEMM CTA), each kept resident ~20 us.
  const int blocks = 4 * sms;
  const int smid_smem = static_cast<int>(prop.sharedMemPerBlockOptin);
  CHECK_CUDA(cudaFuncSetAttribute(smid_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smid_smem));
  int* smid = nullptr;
  CHECK_CUDA(cudaMalloc(&smid, blocks * sizeof(int)));
  smid_kernel<<<blocks, 32, smid_smem>>>(smid);
  CHECK_CUDA(cudaDeviceSynchronize());
  std::vector<int> host(blocks);
  CHECK_CUDA(cudaMemcpy(host.data(), smid, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  std::printf(" \"block_scheduler_smid_of_block\": [");
  for (int b = 0; b < blocks; ++b) std::printf("%s%d", b ? "," : "", host[b]);
  std::printf("]\n}\n");
  return 0;
}
