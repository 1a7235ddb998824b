// Do all GPCs run a CTA's work equally fast? The persistent GEMMs' traces say no: their CTAs drift
// apart by GPC, the same GPCs ahead in every shape (validation/NOTES.md). Every SM runs one CTA
// at once, all released together, doing a fixed amount of one kind of work, and records its own
// start and end (%globaltimer):
//  - fma: dependent FMA chains on the CUDA cores (the SM clock alone);
//  - l2: reading a 16 MB L2-resident buffer with L2-only loads (the path from the GPC to the L2);
//  - dram: reading a 2 GB buffer once, each SM its own slice (the path to DRAM).
// Prints, per kind and repeat, every SM's elapsed nanoseconds as JSON; grouping by GPC is left to
// the reader (sm.gpc in the profile).
#include "check_cuda.cuh"
#include "kernels/common/ptx_wrappers.cuh"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr const char* kProgram = "gpc_speed";
constexpr int kThreads = 512;
constexpr int kSharedBytes = 200 * 1024; // one CTA per SM
enum Kind : int { kFma = 0, kL2 = 1, kDram = 2 };
constexpr const char* kKindNames[] = {"fma", "l2", "dram"};

__global__ void timed_work(int kind, const uint4* buffer, size_t words, int passes, unsigned* arrived,
                           unsigned long long* elapsed_ns, int* sm_of_block, float* sink) {
  extern __shared__ uint8_t keep_resident[];
  __shared__ uint64_t start;
  if (threadIdx.x == 0) {
    atomicAdd(arrived, 1u);
    while (atomicAdd(arrived, 0u) < gridDim.x) {
    }
    start = tilesim::kernels::ptx::global_timer_ns();
  }
  __syncthreads();
  float acc = threadIdx.x;
  if (kind == kFma) {
    float a = 1.0001f, b = 0.9999f;
    for (int i = 0; i < passes * 4096; ++i) {
      acc = fmaf(acc, a, b);
      a = fmaf(a, b, 1e-7f);
    }
  } else {
    // L2: every SM walks the whole (L2-resident) buffer; DRAM: each SM its own slice, once.
    const size_t begin = kind == kL2 ? 0 : words / gridDim.x * blockIdx.x;
    const size_t count = kind == kL2 ? words : words / gridDim.x;
    // Each SM starts its walk at its own place, far from the others', so that no two SMs of a GPC
    // read a line close together in time (the L2 request coalescer would merge them).
    const size_t offset = count / gridDim.x * blockIdx.x;
    unsigned x = 0;
    for (int p = 0; p < passes; ++p)
      for (size_t i = threadIdx.x; i < count; i += blockDim.x) {
        const size_t j = i + offset;
        x ^= __ldcg(buffer + begin + (j < count ? j : j - count)).x;
      }
    acc += static_cast<float>(x);
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    elapsed_ns[blockIdx.x] = tilesim::kernels::ptx::global_timer_ns() - start;
    sm_of_block[blockIdx.x] = static_cast<int>(tilesim::kernels::ptx::sm_id());
    keep_resident[0] = 1;
  }
  if (acc == 12345.678f) sink[0] = acc;
}

} // namespace

int main() {
  const cudaDeviceProp prop = microbench::first_device(kProgram);
  const int sms = prop.multiProcessorCount;
  const size_t dram_bytes = size_t{2} << 30, l2_bytes = size_t{16} << 20;
  uint4* buffer = nullptr;
  unsigned* arrived = nullptr;
  unsigned long long* elapsed = nullptr;
  int* sm_of_block = nullptr;
  float* sink = nullptr;
  CHECK_CUDA(cudaMalloc(&buffer, dram_bytes));
  CHECK_CUDA(cudaMemset(buffer, 0x11, dram_bytes));
  CHECK_CUDA(cudaMalloc(&arrived, sizeof(unsigned)));
  CHECK_CUDA(cudaMalloc(&elapsed, sms * sizeof(unsigned long long)));
  CHECK_CUDA(cudaMalloc(&sm_of_block, sms * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&sink, sizeof(float)));
  CHECK_CUDA(cudaFuncSetAttribute(timed_work, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
  std::printf("{\n \"gpu\": \"%s\", \"sms\": %d, \"threads_per_cta\": %d,\n \"runs\": [", prop.name, sms, kThreads);
  bool first = true;
  for (const int kind : {kFma, kL2, kDram}) {
    const size_t bytes = kind == kDram ? dram_bytes : l2_bytes;
    const int passes = kind == kFma ? 64 : kind == kL2 ? 4 : 1;
    for (int repeat = 0; repeat < 6; ++repeat) { // the first of each kind warms up, and is kept
      CHECK_CUDA(cudaMemset(arrived, 0, sizeof(unsigned)));
      timed_work<<<sms, kThreads, kSharedBytes>>>(kind, buffer, bytes / sizeof(uint4), passes, arrived, elapsed, sm_of_block, sink);
      CHECK_CUDA(cudaGetLastError());
      CHECK_CUDA(cudaDeviceSynchronize());
      std::vector<unsigned long long> ns(sms);
      std::vector<int> sm(sms);
      CHECK_CUDA(cudaMemcpy(ns.data(), elapsed, sms * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
      CHECK_CUDA(cudaMemcpy(sm.data(), sm_of_block, sms * sizeof(int), cudaMemcpyDeviceToHost));
      std::vector<unsigned long long> by_sm(sms, 0);
      for (int b = 0; b < sms; ++b) by_sm[sm[b]] = ns[b];
      std::printf("%s\n  {\"kind\": \"%s\", \"repeat\": %d, \"elapsed_ns_by_sm\": [", first ? "" : ",", kKindNames[kind], repeat);
      for (int s = 0; s < sms; ++s) std::printf("%s%llu", s ? ", " : "", by_sm[s]);
      std::printf("]}");
      first = false;
    }
  }
  std::printf("\n ]\n}\n");
  return 0;
}
