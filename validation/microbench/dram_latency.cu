// DRAM load latency as an SM sees it: one thread pointer-chases a random cycle of lines spread
// over a buffer far larger than the L2, right after the L2 has been flushed, so every load misses.
// Also reports the SM clock over the chase (clock64 against %globaltimer). Output: JSON.
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

constexpr const char* kProgram = "dram_latency";

constexpr std::size_t kStrideWords = 1056; // 4224 bytes: a new line, sector and DRAM page each step
constexpr int kSteps = 4096;

__global__ void chase(const unsigned* next, int steps, unsigned long long* out) {
  unsigned i = 0;
  unsigned long long g0, g1;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g0));
  const long long t0 = clock64();
  for (int s = 0; s < steps; ++s) i = __ldcg(next + static_cast<std::size_t>(i) * kStrideWords);
  const long long t1 = clock64();
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(g1));
  out[0] = static_cast<unsigned long long>(t1 - t0);
  out[1] = g1 - g0;
  out[2] = i;
}

} // namespace

int main() {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "dram_latency: no CUDA device; run it on a GPU machine\n");
    return 1;
  }
  const std::size_t slots = (std::size_t{1} << 30) / (kStrideWords * sizeof(unsigned)); // 1 GiB span
  std::vector<unsigned> order(slots);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin() + 1, order.end(), std::mt19937(11));
  std::vector<unsigned> host(slots * kStrideWords, 0);
  for (std::size_t i = 0; i < slots; ++i) host[order[i] * kStrideWords] = order[(i + 1) % slots];
  unsigned* next = nullptr;
  CHECK_CUDA(cudaMalloc(&next, host.size() * sizeof(unsigned)));
  CHECK_CUDA(cudaMemcpy(next, host.data(), host.size() * sizeof(unsigned), cudaMemcpyHostToDevice));
  const std::size_t evict_bytes = static_cast<std::size_t>(prop.l2CacheSize) * 4;
  uint4* evict_buffer = nullptr;
  unsigned long long* out = nullptr;
  CHECK_CUDA(cudaMalloc(&evict_buffer, evict_bytes));
  CHECK_CUDA(cudaMemset(evict_buffer, 1, evict_bytes));
  CHECK_CUDA(cudaMalloc(&out, 3 * sizeof(unsigned long long)));
  std::printf("{\n \"gpu\": \"%s\", \"span_bytes\": %zu, \"stride_bytes\": %zu, \"steps\": %d,\n \"runs\": [", prop.name,
              slots * kStrideWords * sizeof(unsigned), kStrideWords * sizeof(unsigned), kSteps);
  for (int run = 0; run < 5; ++run) {
    microbench::evict_l2<<<prop.multiProcessorCount * 4, 256>>>(evict_buffer, evict_bytes / sizeof(uint4), evict_buffer);
    chase<<<1, 1>>>(next, kSteps, out);
    CHECK_CUDA(cudaDeviceSynchronize());
    unsigned long long h[3];
    CHECK_CUDA(cudaMemcpy(h, out, sizeof(h), cudaMemcpyDeviceToHost));
    std::printf("%s\n  {\"cycles_per_load\": %.1f, \"ns_per_load\": %.1f, \"sm_clock_mhz\": %.0f}", run ? "," : "",
                static_cast<double>(h[0]) / kSteps, static_cast<double>(h[1]) / kSteps,
                static_cast<double>(h[0]) / static_cast<double>(h[1]) * 1000.0);
  }
  std::printf("\n ]\n}\n");
  return 0;
}
