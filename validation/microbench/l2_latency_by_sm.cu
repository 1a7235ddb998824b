// Mean L2 hit latency seen by each SM. SM `ref` pointer-chases a 1 MiB buffer into L2, then each
// SM in turn chases the same buffer and reports its mean cycles per dependent load. Written to
// find which L2 partition each SM is attached to: it found instead two fixed latency classes of
// SMs (by TPC), the same whichever SM loaded the lines (validation/NOTES.md). Output: JSON.
#include "check_cuda.cuh"
#include "l2_evict.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <vector>

namespace {

constexpr const char* kProgram = "l2_latency_by_sm";

constexpr int kLines = 8192;     // 1 MiB of 128-byte lines: far below either partition's size
constexpr int kWordsPerLine = 32;

__device__ unsigned smid() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
  return s;
}

// One block per SM (the launch asks for most of shared memory); only the block on `sm` works.
__global__ void chase_on_sm(const unsigned* next, int sm, int steps, unsigned long long* cycles, unsigned* sink) {
  extern __shared__ char reserve[];
  if (threadIdx.x != 0 || smid() != static_cast<unsigned>(sm)) return;
  unsigned i = 0;
  const long long t0 = clock64();
  for (int s = 0; s < steps; ++s) i = __ldcg(next + i * kWordsPerLine);
  const long long t1 = clock64();
  cycles[0] = static_cast<unsigned long long>(t1 - t0);
  sink[0] = i + reserve[0];
}

} // namespace

int main(int argc, char** argv) {
  const int ref = argc > 1 ? std::atoi(argv[1]) : 0;
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "l2_latency_by_sm: no CUDA device; run it on a GPU machine\n");
    return 1;
  }
  const int sms = prop.multiProcessorCount;
  std::vector<unsigned> host(static_cast<size_t>(kLines) * kWordsPerLine, 0);
  std::vector<unsigned> order(kLines);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin() + 1, order.end(), std::mt19937(7));
  for (int i = 0; i < kLines; ++i) host[static_cast<size_t>(order[i]) * kWordsPerLine] = order[(i + 1) % kLines];
  unsigned *next = nullptr, *sink = nullptr;
  unsigned long long* cycles = nullptr;
  CHECK_CUDA(cudaMalloc(&next, host.size() * sizeof(unsigned)));
  CHECK_CUDA(cudaMemcpy(next, host.data(), host.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMalloc(&sink, 64));
  CHECK_CUDA(cudaMalloc(&cycles, sizeof(unsigned long long)));
  const size_t evict_bytes = static_cast<size_t>(prop.l2CacheSize) * 4;
  uint4* evict_buffer = nullptr;
  CHECK_CUDA(cudaMalloc(&evict_buffer, evict_bytes));
  CHECK_CUDA(cudaMemset(evict_buffer, 1, evict_bytes));
  const int smem = static_cast<int>(prop.sharedMemPerBlockOptin);
  CHECK_CUDA(cudaFuncSetAttribute(chase_on_sm, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));

  std::printf("{\n \"gpu\": \"%s\", \"reference_sm\": %d, \"lines\": %d,\n \"mean_cycles_per_load\": [", prop.name, ref, kLines);
  for (int sm = 0; sm < sms; ++sm) {
    microbench::evict_l2<<<sms * 4, 256>>>(evict_buffer, evict_bytes / sizeof(uint4), reinterpret_cast<uint4*>(sink));
    chase_on_sm<<<sms, 32, smem>>>(next, ref, kLines, cycles, sink); // ref brings every line into L2
    chase_on_sm<<<sms, 32, smem>>>(next, sm, kLines, cycles, sink);
    CHECK_CUDA(cudaDeviceSynchronize());
    unsigned long long c = 0;
    CHECK_CUDA(cudaMemcpy(&c, cycles, sizeof(c), cudaMemcpyDeviceToHost));
    std::printf("%s%.1f", sm ? ", " : "", static_cast<double>(c) / kLines);
  }
  std::printf("]\n}\n");
  return 0;
}
