// The promote scheme's math alone: the MXFP8 GEMM's consumer stage (kernels/mxfp8/
// mxfp8_gemm_kernel.cuh, stage_product: FP8 wgmma per 32-wide K block into a temporary, then
// acc += tmp * sa * sb) run by its two consumer warpgroups over one 128 x 128 x 128 stage that stays
// in shared memory: no loads, no barriers, the kernel's register split (setmaxnreg). One CTA per SM
// on every SM, `kStages` stages each; SM cycles per stage from clock64, median over the SMs. This
// is the rate the simulator's mxfp8_gemm model charges per K step for the consumers' work
// (sim/src/mxfp8_gemm_model.cpp). Output: one JSON object on stdout.
#include "check_cuda.cuh"
#include "kernels/mxfp8/mxfp8_gemm_kernel.cuh"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr const char* kProgram = "mxfp8_promote_rate";
namespace mx = tilesim::kernels::mxfp8_gemm;
namespace ptx = tilesim::kernels::ptx;

constexpr int kStages = 4096;
constexpr int kOperandBytes = mx::kBlockM * mx::kBlockK + mx::kBlockN * mx::kBlockK;
constexpr int kSmemBytes = 1024 + kOperandBytes + mx::kRowScaleBytes + mx::kExpandedFloats * 4;

__device__ uint32_t hash(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  return x ^ (x >> 16);
}

__global__ void __launch_bounds__(mx::Shape::threads, 1) promote_rate(long long* cycles, float* sink) {
  extern __shared__ uint8_t raw[];
  uint8_t* base = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(raw) + 1023) & ~uintptr_t(1023));
  uint8_t* a = base;
  uint8_t* b = base + mx::kBlockM * mx::kBlockK;
  uint32_t* rows = reinterpret_cast<uint32_t*>(base + kOperandBytes);
  float* expanded = reinterpret_cast<float*>(base + kOperandBytes + mx::kRowScaleBytes);
  // Finite E4M3 codes (0x7F and 0xFF are NaN) and scales 2^-8..2^7, as a GEMM's data would be.
  for (int i = threadIdx.x; i < kOperandBytes; i += blockDim.x) {
    const uint32_t v = hash(i * 2654435761u + blockIdx.x) & 0xFF;
    base[i] = (v & 0x7F) == 0x7F ? v - 1 : v;
  }
  for (int i = threadIdx.x; i < mx::kBlockM; i += blockDim.x) rows[i] = 0x78808070u + (hash(i) & 0x07070707u);
  for (int i = threadIdx.x; i < mx::kExpandedFloats; i += blockDim.x) expanded[i] = mx::e8m0_to_float(120 + hash(i + 7) % 16);
  ptx::fence_proxy_async_shared(); // generic-proxy stores, read next by wgmma (async proxy)
  __syncthreads();
  const int warpgroup = threadIdx.x / 128;
  if (warpgroup == 0) {
    ptx::setmaxnreg_dec<80>();
    return;
  }
  ptx::setmaxnreg_inc<200>();
  const int consumer = warpgroup - 1, t = threadIdx.x % 128;
  const int row = consumer * 64 + 16 * (t / 32) + (t % 32) / 4;
  const uint64_t desc_a = ptx::smem_descriptor_sw128(a + consumer * 64 * mx::kBlockK);
  const uint64_t desc_b = ptx::smem_descriptor_sw128(b);
  const uint32_t column_scales = ptx::smem_addr(expanded + (t % 4) * mx::kGroupFloats);
  float acc[64], lo[32], hi[32];
  for (int i = 0; i < 64; ++i) acc[i] = 0.0f;
  asm volatile("bar.sync 1, 256;" ::: "memory"); // both consumers start together
  const long long start = clock64();
  for (int s = 0; s < kStages; ++s)
    mx::stage_product(acc, lo, hi, desc_a, desc_b, rows[row], rows[row + 8], column_scales);
  asm volatile("bar.sync 1, 256;" ::: "memory");
  const long long stop = clock64();
  float sum = 0.0f;
  for (int i = 0; i < 64; ++i) sum += acc[i];
  sink[blockIdx.x * 256 + threadIdx.x - 128] = sum;
  if (threadIdx.x == 128) cycles[blockIdx.x] = stop - start;
}

} // namespace

int main() {
  int sms = 0;
  microbench::check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), kProgram, "cudaDeviceGetAttribute");
  cudaDeviceProp prop{};
  microbench::check_cuda(cudaGetDeviceProperties(&prop, 0), kProgram, "cudaGetDeviceProperties");
  long long* cycles = nullptr;
  float* sink = nullptr;
  microbench::check_cuda(cudaMalloc(&cycles, sms * sizeof(long long)), kProgram, "cudaMalloc(cycles)");
  microbench::check_cuda(cudaMalloc(&sink, sms * 256 * sizeof(float)), kProgram, "cudaMalloc(sink)");
  microbench::check_cuda(cudaFuncSetAttribute(promote_rate, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes), kProgram,
                         "cudaFuncSetAttribute(promote_rate)");
  std::vector<double> runs;
  for (int run = 0; run < 4; ++run) { // the first warms up
    promote_rate<<<sms, mx::Shape::threads, kSmemBytes>>>(cycles, sink);
    microbench::check_cuda(cudaGetLastError(), kProgram, "promote_rate launch");
    microbench::check_cuda(cudaDeviceSynchronize(), kProgram, "promote_rate");
    std::vector<long long> host(sms);
    microbench::check_cuda(cudaMemcpy(host.data(), cycles, sms * sizeof(long long), cudaMemcpyDeviceToHost), kProgram, "cudaMemcpy(cycles)");
    std::sort(host.begin(), host.end());
    if (run > 0) runs.push_back(static_cast<double>(host[sms / 2]) / kStages);
  }
  std::sort(runs.begin(), runs.end());
  const double per_stage = runs[runs.size() / 2];
  const double element_blocks = double(mx::kBlockM) * mx::kBlockN * mx::kBlocksPerStage;
  std::printf("{\"gpu\": \"%s\", \"sms\": %d, \"stages_per_cta\": %d, \"stage\": \"128 x 128 x 128 (4 MX blocks)\",\n"
              " \"cycles_per_stage_runs\": [%.1f, %.1f, %.1f], \"cycles_per_stage\": %.1f,\n"
              " \"cycles_per_element_block\": %.6f, \"flop_per_sm_cycle\": %.1f}\n",
              prop.name, sms, kStages, runs[0], runs[1], runs[2], per_stage, per_stage / element_blocks,
              2.0 * element_blocks * 32 / per_stage);
  return 0;
}
