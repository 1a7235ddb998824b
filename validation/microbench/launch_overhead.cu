// What launching costs, for models/gpus/*.json "launch":
//  (a) kernel launch: 2000 back-to-back launches of an empty kernel on one stream, timed with
//      cudaEvents (us per launch; also the host's enqueue time per launch); and the GPU-side gap
//      between consecutive kernels of a stream: each of 1000 launches records the earliest
//      %globaltimer at any CTA's start and the latest at any CTA's end; gap = next start - this end.
//      Kernels that spin 5 us let the host run ahead, so the queue, not the host, sets the gap.
//      Also the mean start-to-start period, which a coarse %globaltimer step cannot blur.
//  (b) CTA launch: a grid of SMs x 64 CTAs of 128 threads that only record clock64, %globaltimer
//      and %smid at their start; per SM, the interval between consecutive CTA starts (all, and
//      after the first wave of resident CTAs: the block scheduler refilling a freed slot), and with
//      one CTA resident per SM (maximum dynamic shared memory) the gap from a CTA's last
//      instruction to the next CTA's first on that SM. clock64 is per SM, so only same-SM
//      differences are taken; ns come from the SM clock measured separately (clock64 vs %globaltimer).
// Output: one JSON object.
#include "check_cuda.cuh"
#include "report_text.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using microbench::format;

constexpr const char* kProgram = "launch_overhead";

constexpr int kEmptyLaunches = 2000;
constexpr int kTimedLaunches = 1000;
constexpr int kCtasPerSm = 64;
constexpr int kRepeats = 5;

__device__ __forceinline__ unsigned long long global_timer_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void empty_kernel() {}

__global__ void timed_kernel(unsigned long long* start, unsigned long long* end, int launch, unsigned spin_ns) {
  if (threadIdx.x != 0) return;
  const unsigned long long t0 = global_timer_ns();
  atomicMin(&start[launch], t0);
  while (global_timer_ns() - t0 < spin_ns) {
  }
  atomicMax(&end[launch], global_timer_ns());
}

// SM clock over ~1 ms of spinning, and the smallest step of %globaltimer seen (its resolution).
__global__ void clock_kernel(unsigned long long* out) {
  const long long c0 = clock64();
  const unsigned long long g0 = global_timer_ns();
  unsigned long long last = g0, now = g0, step = ~0ull;
  while (now - g0 < 1000000) {
    now = global_timer_ns();
    if (now != last) step = now - last < step ? now - last : step, last = now;
  }
  out[0] = clock64() - c0;
  out[1] = now - g0;
  out[2] = step;
}

struct CtaRecord {
  long long start_cycle, end_cycle;
  unsigned long long start_ns;
  unsigned smid, unused;
};

__global__ void cta_start_kernel(CtaRecord* records) {
  extern __shared__ char reserve[]; // only sized, never touched: sets how many CTAs fit on an SM
  if (threadIdx.x != 0) return;
  const long long c0 = clock64();
  const unsigned long long g0 = global_timer_ns();
  unsigned sm;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
  records[blockIdx.x] = {c0, clock64(), g0, sm, 0};
}


template <class T> double median(std::vector<T> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return static_cast<double>(v[v.size() / 2]);
}

std::string empty_launches(cudaStream_t stream) {
  cudaEvent_t e0, e1;
  CHECK_CUDA(cudaEventCreate(&e0));
  CHECK_CUDA(cudaEventCreate(&e1));
  for (int i = 0; i < 100; ++i) empty_kernel<<<1, 32, 0, stream>>>(); // warm-up
  CHECK_CUDA(cudaStreamSynchronize(stream));
  std::vector<double> gpu_us, host_us;
  std::string runs;
  for (int r = 0; r < kRepeats; ++r) {
    const auto h0 = std::chrono::steady_clock::now();
    CHECK_CUDA(cudaEventRecord(e0, stream));
    for (int i = 0; i < kEmptyLaunches; ++i) empty_kernel<<<1, 32, 0, stream>>>();
    CHECK_CUDA(cudaEventRecord(e1, stream));
    const auto h1 = std::chrono::steady_clock::now();
    CHECK_CUDA(cudaEventSynchronize(e1));
    CHECK_CUDA(cudaGetLastError());
    float ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&ms, e0, e1));
    gpu_us.push_back(ms * 1000.0 / kEmptyLaunches);
    host_us.push_back(std::chrono::duration<double, std::micro>(h1 - h0).count() / kEmptyLaunches);
    runs += format("%s{\"us_per_launch\": %.3f, \"host_enqueue_us_per_launch\": %.3f}", r ? ", " : "", gpu_us.back(),
                   host_us.back());
  }
  return format("{\"launches\": %d, \"runs\": [%s], \"median_us_per_launch\": %.3f, "
                "\"median_host_enqueue_us_per_launch\": %.3f}",
                kEmptyLaunches, runs.c_str(), median(gpu_us), median(host_us));
}

std::string kernel_gaps(cudaStream_t stream, int blocks, unsigned spin_ns) {
  unsigned long long *start = nullptr, *end = nullptr;
  CHECK_CUDA(cudaMalloc(&start, kTimedLaunches * sizeof(unsigned long long)));
  CHECK_CUDA(cudaMalloc(&end, kTimedLaunches * sizeof(unsigned long long)));
  std::vector<unsigned long long> s(kTimedLaunches), e(kTimedLaunches);
  std::vector<double> medians, spans, periods;
  std::string runs;
  for (int r = 0; r <= kRepeats; ++r) { // r == 0: warm-up
    CHECK_CUDA(cudaMemsetAsync(start, 0xff, kTimedLaunches * sizeof(unsigned long long), stream));
    CHECK_CUDA(cudaMemsetAsync(end, 0, kTimedLaunches * sizeof(unsigned long long), stream));
    for (int i = 0; i < kTimedLaunches; ++i) timed_kernel<<<blocks, 128, 0, stream>>>(start, end, i, spin_ns);
    CHECK_CUDA(cudaStreamSynchronize(stream));
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaMemcpy(s.data(), start, s.size() * sizeof(s[0]), cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaMemcpy(e.data(), end, e.size() * sizeof(e[0]), cudaMemcpyDeviceToHost));
    if (r == 0) continue;
    std::vector<long long> gaps, span;
    for (int i = 0; i + 1 < kTimedLaunches; ++i) gaps.push_back(static_cast<long long>(s[i + 1] - e[i]));
    for (int i = 0; i < kTimedLaunches; ++i) span.push_back(static_cast<long long>(e[i] - s[i]));
    medians.push_back(median(gaps));
    spans.push_back(median(span));
    // First start to last start over all launches: immune to a coarse %globaltimer step.
    periods.push_back(static_cast<double>(s[kTimedLaunches - 1] - s[0]) / (kTimedLaunches - 1));
    runs += (r > 1 ? ", " : "") + std::to_string(static_cast<long long>(medians.back()));
  }
  CHECK_CUDA(cudaFree(start));
  CHECK_CUDA(cudaFree(end));
  return format(
      "{\"blocks\": %d, \"threads\": 128, \"spin_ns\": %u, \"launches\": %d, \"median_gap_ns_per_run\": [%s], "
      "\"median_gap_ns\": %.0f, \"median_kernel_span_ns\": %.0f, \"mean_start_to_start_ns\": %.1f}",
      blocks, spin_ns, kTimedLaunches, runs.c_str(), median(medians), median(spans), median(periods));
}

std::string cta_launches(int sms, int smem, double mhz) {
  CHECK_CUDA(cudaFuncSetAttribute(cta_start_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int resident = 0;
  CHECK_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, cta_start_kernel, 128, smem));
  const int ctas = sms * kCtasPerSm;
  CtaRecord* records = nullptr;
  CHECK_CUDA(cudaMalloc(&records, ctas * sizeof(CtaRecord)));
  std::vector<CtaRecord> h(ctas);
  std::vector<double> all, steady, gap, gpu_ns;
  std::string runs;
  for (int r = 0; r <= kRepeats; ++r) { // r == 0: warm-up
    cta_start_kernel<<<ctas, 128, smem>>>(records);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    if (r == 0) continue;
    CHECK_CUDA(cudaMemcpy(h.data(), records, ctas * sizeof(CtaRecord), cudaMemcpyDeviceToHost));
    std::sort(h.begin(), h.end(), [](const CtaRecord& a, const CtaRecord& b) {
      return a.smid != b.smid ? a.smid < b.smid : a.start_cycle < b.start_cycle;
    });
    std::vector<long long> intervals, steady_intervals, gaps;
    for (int i = 0, first_on_sm = 0; i + 1 < ctas; ++i) {
      if (h[i].smid != h[i + 1].smid) {
        first_on_sm = i + 1;
        continue;
      }
      intervals.push_back(h[i + 1].start_cycle - h[i].start_cycle);
      if (i + 1 - first_on_sm >= resident) steady_intervals.push_back(h[i + 1].start_cycle - h[i].start_cycle);
      gaps.push_back(h[i + 1].start_cycle - h[i].end_cycle);
    }
    const auto [lo, hi] = std::minmax_element(
        h.begin(), h.end(), [](const CtaRecord& a, const CtaRecord& b) { return a.start_ns < b.start_ns; });
    all.push_back(median(intervals));
    steady.push_back(median(steady_intervals));
    gap.push_back(median(gaps));
    gpu_ns.push_back(static_cast<double>(hi->start_ns - lo->start_ns) / (ctas - 1));
    runs += format("%s{\"median_interval_cycles\": %.0f, \"median_steady_interval_cycles\": %.0f, "
                   "\"median_end_to_next_start_cycles\": %.0f, \"gpu_ns_per_cta\": %.3f}",
                   r > 1 ? ", " : "", all.back(), steady.back(), gap.back(), gpu_ns.back());
  }
  CHECK_CUDA(cudaFree(records));
  const double to_ns = 1000.0 / mhz;
  return format(
      "{\"ctas\": %d, \"threads\": 128, \"dynamic_smem_bytes\": %d, \"resident_ctas_per_sm\": %d, \"runs\": [%s], "
      "\"median_interval_cycles\": %.0f, \"median_interval_ns\": %.1f, \"median_steady_interval_cycles\": %.0f, "
      "\"median_steady_interval_ns\": %.1f, \"median_end_to_next_start_cycles\": %.0f, "
      "\"median_end_to_next_start_ns\": %.1f, \"median_gpu_ns_per_cta\": %.3f}",
      ctas, smem, resident, runs.c_str(), median(all), median(all) * to_ns, median(steady), median(steady) * to_ns,
      median(gap), median(gap) * to_ns, median(gpu_ns));
}

} // namespace

int main() {
  cudaDeviceProp prop{};
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "launch_overhead: no CUDA device; run it on a GPU machine\n");
    return 1;
  }
  const int sms = prop.multiProcessorCount;
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  unsigned long long* clock_out = nullptr;
  CHECK_CUDA(cudaMalloc(&clock_out, 3 * sizeof(unsigned long long)));
  unsigned long long clk[3];
  for (int r = 0; r < 2; ++r) { // the second run, after the clock has ramped
    clock_kernel<<<1, 32>>>(clock_out);
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(clk, clock_out, sizeof clk, cudaMemcpyDeviceToHost));
  }
  const double mhz = static_cast<double>(clk[0]) / static_cast<double>(clk[1]) * 1000.0;
  std::printf("{\n \"gpu\": \"%s\", \"sms\": %d, \"sm_clock_mhz\": %.0f, \"globaltimer_min_step_ns\": %llu,\n",
              prop.name, sms, mhz, clk[2]);
  std::printf(" \"empty_kernel_launch\": %s,\n \"kernel_gap\": [", empty_launches(stream).c_str());
  std::fflush(stdout);
  bool first = true;
  for (const int blocks : {1, sms})
    for (const unsigned spin_ns : {0u, 5000u}) {
      std::printf("%s\n  %s", first ? "" : ",", kernel_gaps(stream, blocks, spin_ns).c_str());
      std::fflush(stdout);
      first = false;
    }
  std::printf("\n ],\n \"cta_launch\": [\n  %s,\n", cta_launches(sms, 0, mhz).c_str());
  std::fflush(stdout);
  std::printf("  %s\n ]\n}\n", cta_launches(sms, static_cast<int>(prop.sharedMemPerBlockOptin), mhz).c_str());
  return 0;
}
