// Issue rate of the mixed-input kernel's weight conversions (kernels/mixed_input/dequant.h) on
// one SM: the same per-word sequence as the kernel's inner loop (sign flip, then one bf16 pair per
// word through the prmt magic-number path or the cvt/I2F path), on registers, with W warps per SM
// as the kernel runs them (4: one consumer warpgroup; 8: two; and 16/32 for the SM's ceiling).
// Each thread converts 16 words per trip (the kernel's 16 words per K block) and folds the pairs
// back into its words, so nothing is hoisted or dropped. Result: bf16 values converted per SM per
// SM cycle (clock64 over the slowest CTA; one CTA per SM). Output: one JSON object.
#include "check_cuda.cuh"
#include "kernels/mixed_input/dequant.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr const char* kProgram = "dequant_issue_rate";
constexpr int kTrips = 4096;
constexpr int kWords = 16;
namespace dq = tilesim::kernels::dequant;

template <dq::Conversion Path>
__global__ void convert_loop(uint32_t seed, bool is_signed, long long* cycles, uint32_t* sink) {
  uint32_t word[kWords];
#pragma unroll
  for (int i = 0; i < kWords; ++i) word[i] = seed * (threadIdx.x + 1) + 0x01010101u * i;
  const uint32_t flip = dq::flip_mask(is_signed);
  const float zero = dq::effective_zero(is_signed, seed & 0xFF), magic_zero = dq::kMagicValue + zero;
  const uint32_t byte = 2 * (threadIdx.x & 1);
  __syncthreads();
  const long long start = clock64();
  for (int trip = 0; trip < kTrips; ++trip) {
#pragma unroll
    for (int i = 0; i < kWords; ++i) word[i] = dq::convert_pair<Path>(word[i] ^ flip, byte, zero, magic_zero);
  }
  __syncthreads();
  const long long end = clock64();
  uint32_t fold = 0;
#pragma unroll
  for (int i = 0; i < kWords; ++i) fold ^= word[i];
  if (fold == 0x12345678u) sink[0] = fold; // never in practice; keeps the loop alive
  if (threadIdx.x == 0) cycles[blockIdx.x] = end - start;
}

template <dq::Conversion Path> double elements_per_cycle(int sms, int warps) {
  long long* cycles = nullptr;
  uint32_t* sink = nullptr;
  CHECK_CUDA(cudaMalloc(&cycles, sms * sizeof(long long)));
  CHECK_CUDA(cudaMalloc(&sink, sizeof(uint32_t)));
  std::vector<double> rates;
  for (int rep = 0; rep < 5; ++rep) {
    convert_loop<Path><<<sms, warps * 32>>>(0x9E3779B9u + rep, true, cycles, sink);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<long long> host(sms);
    CHECK_CUDA(cudaMemcpy(host.data(), cycles, sms * sizeof(long long), cudaMemcpyDeviceToHost));
    const long long slowest = *std::max_element(host.begin(), host.end());
    rates.push_back(double(warps) * 32 * kTrips * kWords * 2 / double(slowest)); // 2 values per word
  }
  std::sort(rates.begin(), rates.end());
  cudaFree(cycles);
  cudaFree(sink);
  return rates[rates.size() / 2];
}

} // namespace

int main() {
  const cudaDeviceProp prop = microbench::first_device(kProgram);
  std::printf("{\"program\": \"%s\", \"gpu\": \"%s\", \"sms\": %d, \"unit\": \"bf16 values converted per SM cycle "
              "(median of 5 launches, one CTA per SM, int8 with the sign flip)\",\n \"rates\": [",
              kProgram, prop.name, prop.multiProcessorCount);
  const int warp_counts[] = {4, 8, 16, 32};
  for (int i = 0; i < 4; ++i) {
    const int w = warp_counts[i];
    std::printf("%s\n  {\"warps_per_sm\": %d, \"prmt\": %.2f, \"cvt\": %.2f}", i ? "," : "", w,
                elements_per_cycle<dq::Conversion::prmt>(prop.multiProcessorCount, w),
                elements_per_cycle<dq::Conversion::cvt>(prop.multiProcessorCount, w));
  }
  std::printf("\n]}\n");
  return 0;
}
