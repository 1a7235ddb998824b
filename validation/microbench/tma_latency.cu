// Latency and single-SM throughput of the TMA unit, as the GEMM producer uses it:
//  - latency: one thread issues one 2-D tile load (cp.async.bulk.tensor, bf16, 128B swizzle, boxes
//    of 64/128/256 rows x 64 columns) and waits on its mbarrier; clock64 from before the
//    arrive.expect_tx to the completed wait. States: L2 hit (the same boxes were loaded by a first,
//    untimed pass) and DRAM miss (the L2 was evicted by reading 4x its size just before; each
//    sample a box not loaded since; the pages were touched after the eviction, so TLB misses are
//    not in the figure). A 16 KB 1-D cp.async.bulk in both states, for comparison.
//  - throughput: one thread keeps N boxes in flight (N = 1, 2, 4, 8) over an 8 MB L2-resident
//    region; bytes per SM cycle.
// Cycles are converted to ns with the SM clock measured in the same kernel (clock64 against
// %globaltimer). A wait that never completes gives up after ~0.2 s and is reported as an error.
// Output: one JSON object.
#include "check_cuda.cuh"
#include "l2_evict.cuh"
#include "report_text.h"
#include "kernels/grouped_gemm/grouped_gemm.h"
#include "kernels/common/ptx_wrappers.cuh"
#include "kernels/common/tensor_maps.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using microbench::format;
using microbench::median;

constexpr const char* kProgram = "tma_latency";
namespace ptx = tilesim::kernels::ptx;

constexpr int kCols = 4096;  // bf16 per row: 8 KB rows, a GEMM operand with K = 4096
constexpr int kRows = 32768; // 256 MiB tensor
constexpr long long kRowBytes = kCols * 2;
constexpr int kSamples = 64;          // timed samples per latency entry
constexpr int kSampleRowStride = 256; // sample i starts at row 256 i: no box is shared between samples
constexpr int kBulkBytes = 16384;
constexpr int kRegionRows = 1024; // throughput region: 1024 rows x 8 KB = 8 MB, L2-resident
constexpr int kThroughputLoads = 2048;

// mbarrier.test_wait.parity (PTX ISA 9.7.13.15.16): non-blocking, so polling sees completion at once.
__device__ __forceinline__ bool mbarrier_test_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
               : "=r"(done)
               : "r"(ptx::smem_addr(bar)), "r"(parity)
               : "memory");
  return done != 0;
}

// Polls until the phase completes; false after ~0.2 s (a load that will never complete).
__device__ bool wait_bounded(uint64_t* bar, uint32_t parity) {
  uint64_t start = 0;
  for (uint32_t spins = 1;; ++spins) {
    if (mbarrier_test_wait(bar, parity)) return true;
    if ((spins & 4095) == 0) {
      const uint64_t now = ptx::global_timer_ns();
      if (start == 0)
        start = now;
      else if (now - start > 200000000ull)
        return false;
    }
  }
}

// cp.async.bulk global -> shared (PTX ISA 9.7.9.25.4.1), completion counted on an mbarrier.
__device__ __forceinline__ void bulk_copy_1d(void* dst, const void* src, int bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
                   ptx::smem_addr(dst)),
               "l"(src), "r"(bytes), "r"(ptx::smem_addr(bar))
               : "memory");
}

__device__ uint8_t* aligned_1024(uint8_t* p) { return p + ((1024 - (ptx::smem_addr(p) & 1023)) & 1023); }

__device__ int sample_row(int i) { return i * kSampleRowStride; }
__device__ int sample_col(int i) { return (i * 17 % 32) * 64; } // bytes 0..4 KB of a row: see page touch

// out[0..count) cycles per load of the last pass; out[count], out[count + 1]: clock64 and
// %globaltimer over the whole kernel. one_d: a 16 KB 1-D copy from row sample_row(i) + 2.
__global__ void load_latency(const __grid_constant__ CUtensorMap map, const char* tensor, int bytes, bool one_d,
                             int count, int passes, bool touch_pages, unsigned long long* out, int* timed_out) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t bar;
  uint8_t* dst = aligned_1024(smem_raw);
  if (threadIdx.x != 0) return;
  ptx::mbarrier_init(&bar, 1);
  ptx::fence_barrier_init();
  if (!one_d) ptx::prefetch_tensor_map(&map);
  unsigned touched = 0; // a word at byte 8064 of the first and last rows of each sample: the same
  if (touch_pages)      // pages (TLB) but other 256-B L2 sectors than the samples read
    for (int i = 0; i < count; ++i)
      for (int r : {sample_row(i), sample_row(i) + kSampleRowStride - 1})
        touched += __ldcg(reinterpret_cast<const unsigned*>(tensor + r * kRowBytes + 8064));
  if (touched == 0x12345678u) out[0] = touched;
  const long long c_begin = clock64();
  const uint64_t g_begin = ptx::global_timer_ns();
  uint32_t phase = 0;
  for (int p = 0; p < passes; ++p)
    for (int i = 0; i < count; ++i) {
      const int row = sample_row(i), col = sample_col(i);
      const long long t0 = clock64();
      ptx::mbarrier_arrive_expect_tx(&bar, bytes);
      if (one_d)
        bulk_copy_1d(dst, tensor + (row + 2) * kRowBytes, bytes, &bar);
      else
        ptx::tma_load_2d(dst, &map, col, row, &bar);
      if (!wait_bounded(&bar, phase)) return void(*timed_out = 1);
      out[i] = clock64() - t0;
      phase ^= 1;
    }
  out[count] = clock64() - c_begin;
  out[count + 1] = ptx::global_timer_ns() - g_begin;
}

// One thread keeps `in_flight` boxes in flight: a warm pass over the region, then `loads` timed.
// out[0], out[1]: clock64 and %globaltimer over the timed pass.
__global__ void load_throughput(const __grid_constant__ CUtensorMap map, int box_rows, int in_flight, int loads,
                                unsigned long long* out, int* timed_out) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t bars[8];
  uint8_t* ring = aligned_1024(smem_raw);
  if (threadIdx.x != 0) return;
  for (int s = 0; s < in_flight; ++s) ptx::mbarrier_init(&bars[s], 1);
  ptx::fence_barrier_init();
  ptx::prefetch_tensor_map(&map);
  const int box_bytes = box_rows * 128, distinct = (kCols / 64) * (kRegionRows / box_rows);
  int use = 0; // loads issued so far; load u uses slot u % in_flight, its (u / in_flight)-th phase
  for (const int count : {distinct, loads}) {
    const long long c0 = clock64();
    const uint64_t g0 = ptx::global_timer_ns();
    for (int j = 0; j < count + in_flight; ++j) {
      if (j >= in_flight) {
        const int u = use + j - in_flight;
        if (!wait_bounded(&bars[u % in_flight], (u / in_flight) & 1)) return void(*timed_out = 1);
      }
      if (j < count) {
        const int u = use + j, slot = u % in_flight, box = u % distinct;
        ptx::mbarrier_arrive_expect_tx(&bars[slot], box_bytes);
        ptx::tma_load_2d(ring + slot * box_bytes, &map, (box % 64) * 64, (box / 64) * box_rows, &bars[slot]);
      }
    }
    use += count;
    out[0] = clock64() - c0;
    out[1] = ptx::global_timer_ns() - g0;
  }
}

// The project's one tensor-map maker, as the GEMM uses it (128B swizzle, 256-byte L2 promotion).
bool encode_box_map(CUtensorMap& map, void* base, int box_rows, std::string& error) {
  try {
    map = tilesim::kernels::make_bf16_tensor_map_2d(base, kRows, kCols, box_rows, 64);
    return true;
  } catch (const tilesim::kernels::KernelError& e) {
    error = e.what();
    return false;
  }
}

struct Device {
  char* tensor;
  uint4* evict_buffer;
  size_t evict_bytes;
  unsigned long long* out;
  int* timed_out;
  int sms;
};

// A failed call ends this entry with an error field; the next entry still tries (a sticky error
// such as an illegal instruction makes them all fail, each saying so).
#define TRY(call)                                                                                                      \
  do {                                                                                                                 \
    const cudaError_t err_ = (call);                                                                                   \
    if (err_ != cudaSuccess) return label + ", \"error\": \"" #call ": " + cudaGetErrorString(err_) + "\"}";           \
  } while (0)

std::string latency_entry(const Device& d, const CUtensorMap& map, const std::string& map_error, int box_rows,
                          bool one_d, bool dram) {
  const int bytes = one_d ? kBulkBytes : box_rows * 128;
  const std::string label = std::string("{\"kind\": \"") + (one_d ? "bulk_1d" : "tma_2d") +
                            "\", \"box\": " + (one_d ? "null" : "[" + std::to_string(box_rows) + ", 64]") +
                            ", \"bytes\": " + std::to_string(bytes) + ", \"state\": \"" +
                            (dram ? "dram_miss" : "l2_hit") + "\"";
  if (!one_d && !map_error.empty()) return label + ", \"error\": \"" + map_error + "\"}";
  TRY(cudaMemset(d.timed_out, 0, sizeof(int)));
  if (dram) microbench::evict_l2<<<d.sms * 4, 256>>>(d.evict_buffer, d.evict_bytes / sizeof(uint4), d.evict_buffer);
  // DRAM: sample 0 also pays for the descriptor and is dropped; L2: the first pass loads the boxes.
  const int count = kSamples + (dram ? 1 : 0);
  load_latency<<<1, 32, 32768 + 1024>>>(map, d.tensor, bytes, one_d, count, dram ? 1 : 2, dram, d.out, d.timed_out);
  TRY(cudaGetLastError());
  TRY(cudaDeviceSynchronize());
  std::vector<unsigned long long> h(count + 2);
  int timed_out = 0;
  TRY(cudaMemcpy(h.data(), d.out, h.size() * sizeof(h[0]), cudaMemcpyDeviceToHost));
  TRY(cudaMemcpy(&timed_out, d.timed_out, sizeof(int), cudaMemcpyDeviceToHost));
  if (timed_out) return label + ", \"error\": \"the mbarrier never completed (load timed out)\"}";
  const double mhz = static_cast<double>(h[count]) / static_cast<double>(h[count + 1]) * 1000.0;
  std::vector<double> cycles(h.begin() + (dram ? 1 : 0), h.begin() + count);
  std::string all;
  for (double c : cycles) all += (all.empty() ? "" : ", ") + std::to_string(static_cast<long long>(c));
  const double med = median(cycles);
  return label +
         format(", \"samples\": %zu, \"median_cycles\": %.0f, \"median_ns\": %.1f, \"min_cycles\": %.0f, "
                "\"max_cycles\": %.0f, \"sm_clock_mhz\": %.0f, \"cycles\": [",
                cycles.size(), med, med / mhz * 1000.0, *std::min_element(cycles.begin(), cycles.end()),
                *std::max_element(cycles.begin(), cycles.end()), mhz) +
         all + "]}";
}

std::string throughput_entry(const Device& d, const CUtensorMap& map, const std::string& map_error, int box_rows,
                             int in_flight) {
  const int box_bytes = box_rows * 128;
  const std::string label = "{\"box\": [" + std::to_string(box_rows) +
                            ", 64], \"bytes\": " + std::to_string(box_bytes) +
                            ", \"in_flight\": " + std::to_string(in_flight);
  if (!map_error.empty()) return label + ", \"error\": \"" + map_error + "\"}";
  std::vector<double> per_cycle, mhz;
  std::string runs;
  for (int r = 0; r < 5; ++r) {
    TRY(cudaMemset(d.timed_out, 0, sizeof(int)));
    load_throughput<<<1, 32, in_flight * box_bytes + 1024>>>(map, box_rows, in_flight, kThroughputLoads, d.out,
                                                             d.timed_out);
    TRY(cudaGetLastError());
    TRY(cudaDeviceSynchronize());
    unsigned long long h[2];
    int timed_out = 0;
    TRY(cudaMemcpy(h, d.out, sizeof h, cudaMemcpyDeviceToHost));
    TRY(cudaMemcpy(&timed_out, d.timed_out, sizeof(int), cudaMemcpyDeviceToHost));
    if (timed_out) return label + ", \"error\": \"the mbarrier never completed (load timed out)\"}";
    per_cycle.push_back(static_cast<double>(kThroughputLoads) * box_bytes / static_cast<double>(h[0]));
    mhz.push_back(static_cast<double>(h[0]) / static_cast<double>(h[1]) * 1000.0);
    runs += (r ? ", " : "") + std::to_string(per_cycle.back());
  }
  return label + format(", \"loads\": %d, \"bytes_per_cycle\": [%s], \"median_bytes_per_cycle\": %.2f, "
                        "\"median_gb_per_s\": %.1f, \"sm_clock_mhz\": %.0f}",
                        kThroughputLoads, runs.c_str(), median(per_cycle), median(per_cycle) * median(mhz) * 1e-3,
                        median(mhz));
}

} // namespace

int main() {
  cudaDeviceProp prop{};
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "tma_latency: no CUDA device; run it on a GPU machine\n");
    return 1;
  }
  Device d{nullptr, nullptr, static_cast<size_t>(prop.l2CacheSize) * 4, nullptr, nullptr, prop.multiProcessorCount};
  CHECK_CUDA(cudaMalloc(&d.tensor, kRowBytes * kRows));
  CHECK_CUDA(cudaMemset(d.tensor, 0x3c, kRowBytes * kRows));
  CHECK_CUDA(cudaMalloc(&d.evict_buffer, d.evict_bytes));
  CHECK_CUDA(cudaMemset(d.evict_buffer, 1, d.evict_bytes));
  CHECK_CUDA(cudaMalloc(&d.out, (kSamples + 8) * sizeof(unsigned long long)));
  CHECK_CUDA(cudaMalloc(&d.timed_out, sizeof(int)));
  // The opt-in limit covers static and dynamic shared memory together; the kernels' barriers are static.
  cudaFuncAttributes latency_attr{}, throughput_attr{};
  CHECK_CUDA(cudaFuncGetAttributes(&latency_attr, load_latency));
  CHECK_CUDA(cudaFuncGetAttributes(&throughput_attr, load_throughput));
  const int static_smem = static_cast<int>(std::max(latency_attr.sharedSizeBytes, throughput_attr.sharedSizeBytes));
  const int smem = static_cast<int>(prop.sharedMemPerBlockOptin) - static_smem;
  CHECK_CUDA(cudaFuncSetAttribute(load_latency, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  CHECK_CUDA(cudaFuncSetAttribute(load_throughput, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  std::printf("{\n \"gpu\": \"%s\", \"sms\": %d, \"tensor\": {\"rows\": %d, \"cols\": %d, \"dtype\": \"bf16\", "
              "\"swizzle\": \"128B\", \"l2_promotion\": \"256B\"}, \"evict_bytes\": %zu,\n \"latency\": [",
              prop.name, d.sms, kRows, kCols, d.evict_bytes);
  const int box_rows[3] = {64, 128, 256};
  CUtensorMap maps[3];
  std::string map_error[3];
  for (int b = 0; b < 3; ++b) encode_box_map(maps[b], d.tensor, box_rows[b], map_error[b]);
  bool first = true;
  for (int b = 0; b <= 3; ++b) // b == 3: the 1-D copy (its map argument is unused)
    for (const bool dram : {false, true}) {
      const int m = b < 3 ? b : 0;
      const std::string entry = latency_entry(d, maps[m], map_error[m], b < 3 ? box_rows[b] : 0, b == 3, dram);
      std::printf("%s\n  %s", first ? "" : ",", entry.c_str());
      std::fflush(stdout);
      first = false;
    }
  std::printf("\n ],\n \"throughput_one_sm\": [");
  first = true;
  for (int b = 0; b < 3; ++b)
    for (const int in_flight : {1, 2, 4, 8}) {
      if (in_flight * box_rows[b] * 128 + 1024 > smem) continue;
      const std::string entry = throughput_entry(d, maps[b], map_error[b], box_rows[b], in_flight);
      std::printf("%s\n  %s", first ? "" : ",", entry.c_str());
      std::fflush(stdout);
      first = false;
    }
  std::printf("\n ]\n}\n");
  return 0;
}
