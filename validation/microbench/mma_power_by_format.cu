// Board power and SM clock under a sustained tensor-core load, per operand format, at the GPU's
// own power limit (clocks and limits left as found). Every SM runs one CTA of two warpgroups
// issuing wgmma from shared memory flat out (the loop of wgmma_throughput.cu, 4 stages of operands
// copied from a global buffer of N(0,1) values in the format, fixed seed), in ~50 ms launches back
// to back for `phase_s` seconds per format, BF16 and E4M3 alternating for `rounds` rounds. A host
// thread samples NVML every 10 ms: the energy counter (board energy since the driver loaded), the
// power reading, the SM clock it reports, the clock event reasons and the temperature. The SM clock
// each launch actually ran at is clock64 against %globaltimer of its slowest CTA. A phase's
// first `settle_s` seconds are left out (the clock settles to the limit within it).
//
// Why: at a board power limit the clock falls until the power fits (models/power_limit.h); a format
// whose MMAs draw more power per SM cycle sustains a lower clock at the same limit. With both
// formats at the limit and P − P₀ ∝ a·f³, the dynamic power per cycle of E4M3 against BF16 is
// a_fp8 / a_bf16 = (f_bf16 / f_fp8)³, whatever P₀ is.
//
// Usage: mma_power_by_format [phase_s [rounds [settle_s]]]   (defaults 8, 2, 2). Output: one JSON
// object on stdout; progress on stderr.
#include "check_cuda.cuh"
#include "report_text.h"
#include "wgmma_ops.cuh"
#include "kernels/common/ptx_wrappers.cuh"

#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace {

using namespace microbench; // format, median, the wgmma ops and their ptx namespace
constexpr const char* kProgram = "mma_power_by_format";

constexpr int kWarpgroups = 2;
constexpr int kOperandBytes = kRingBytes; // the ring of wgmma_ops.cuh, 4 stages
constexpr int kSmemBytes = kOperandBytes + 1024; // + room to align to the 1024-B swizzle atom
constexpr double kLaunchSeconds = 0.05;
constexpr double kNominalClockHz = 1.7e9; // only sizes the launches

struct CtaTiming {
  unsigned long long cycles, start_ns, end_ns;
};

// The wgmma_throughput loop (pipelined: wait_group 1), its operands copied from `operands`.
template <class Op>
__global__ void __launch_bounds__(128 * kWarpgroups, 1)
    mma_loop(const uint4* operands, int k_blocks, int write_accumulators, float* sink, CtaTiming* timing) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = smem_raw + ((1024 - (ptx::smem_addr(smem_raw) & 1023)) & 1023);
  for (int i = threadIdx.x; i < kOperandBytes / 16; i += blockDim.x) reinterpret_cast<uint4*>(smem)[i] = operands[i];
  ptx::fence_proxy_async_shared(); // generic-proxy stores -> visible to wgmma's async-proxy reads
  __syncthreads();
  const long long c0 = clock64();
  const uint64_t g0 = ptx::global_timer_ns();
  const int warpgroup = threadIdx.x / 128;
  float acc[Op::regs];
#pragma unroll
  for (int i = 0; i < Op::regs; ++i) acc[i] = 0;
  wgmma_k_blocks<Op, 1>(smem, warpgroup, k_blocks, acc);
#pragma unroll
  for (int i = 0; i < Op::regs; ++i) keep(acc[i]);
  __syncthreads();
  if (threadIdx.x == 0)
    timing[blockIdx.x] = {static_cast<unsigned long long>(clock64() - c0), g0, ptx::global_timer_ns()};
  if (write_accumulators) // never set: the stores only make the accumulators live
    for (int i = 0; i < Op::regs; ++i) sink[(blockIdx.x * blockDim.x + threadIdx.x) * Op::regs + i] = acc[i];
}

// --- NVML, opened at run time: the driver's libnvidia-ml.so.1 (the toolkit's nvml.h is not always installed) ---
// Declarations as in nvml.h (NVML API Reference): every call returns 0 (NVML_SUCCESS) on success.
using NvmlDevice = struct NvmlDeviceOpaque*;
struct Nvml {
  int (*init)();
  int (*handle_by_index)(unsigned, NvmlDevice*);
  int (*total_energy_mj)(NvmlDevice, unsigned long long*); // nvmlDeviceGetTotalEnergyConsumption
  int (*power_mw)(NvmlDevice, unsigned*);                  // nvmlDeviceGetPowerUsage
  int (*enforced_limit_mw)(NvmlDevice, unsigned*);         // nvmlDeviceGetEnforcedPowerLimit
  int (*clock_mhz)(NvmlDevice, int, unsigned*);            // nvmlDeviceGetClockInfo
  int (*event_reasons)(NvmlDevice, unsigned long long*);   // nvmlDeviceGetCurrentClocksThrottleReasons
  int (*temperature_c)(NvmlDevice, int, unsigned*);        // nvmlDeviceGetTemperature
  NvmlDevice device = nullptr;
};
constexpr int kNvmlClockSm = 1;             // NVML_CLOCK_SM
constexpr int kNvmlTemperatureGpu = 0;      // NVML_TEMPERATURE_GPU
constexpr unsigned long long kSwPowerCap = 0x4; // nvmlClocksEventReasonSwPowerCap

template <class F> void resolve(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(dlsym(lib, name));
  if (!f) {
    std::fprintf(stderr, "%s: libnvidia-ml.so.1 has no %s; run it with a newer NVIDIA driver\n", kProgram,
                 name);
    std::exit(1);
  }
}

Nvml open_nvml() {
  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!lib) {
    std::fprintf(stderr, "%s: cannot open libnvidia-ml.so.1 (%s); run it where the NVIDIA driver is installed\n",
                 kProgram, dlerror());
    std::exit(1);
  }
  Nvml n{};
  resolve(lib, "nvmlInit_v2", n.init);
  resolve(lib, "nvmlDeviceGetHandleByIndex_v2", n.handle_by_index);
  resolve(lib, "nvmlDeviceGetTotalEnergyConsumption", n.total_energy_mj);
  resolve(lib, "nvmlDeviceGetPowerUsage", n.power_mw);
  resolve(lib, "nvmlDeviceGetEnforcedPowerLimit", n.enforced_limit_mw);
  resolve(lib, "nvmlDeviceGetClockInfo", n.clock_mhz);
  resolve(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", n.event_reasons);
  resolve(lib, "nvmlDeviceGetTemperature", n.temperature_c);
  if (n.init() != 0 || n.handle_by_index(0, &n.device) != 0) {
    std::fprintf(stderr, "%s: NVML could not open GPU 0; run it on a GPU machine\n", kProgram);
    std::exit(1);
  }
  return n;
}

struct Sample {
  double t_s; // since the program's start
  unsigned long long energy_mj, reasons;
  unsigned power_mw, clock_mhz, temperature_c;
};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Samples NVML every 10 ms until stopped.
class PowerSampler {
public:
  PowerSampler(const Nvml& nvml, Clock::time_point t0) : nvml_(nvml), t0_(t0), thread_([this] { loop(); }) {}
  ~PowerSampler() {
    stop_ = true;
    thread_.join();
  }
  std::vector<Sample> between(double from_s, double to_s) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<Sample> out;
    for (const Sample& s : samples_)
      if (s.t_s >= from_s && s.t_s <= to_s) out.push_back(s);
    return out;
  }

private:
  void loop() {
    while (!stop_) {
      Sample s{seconds_since(t0_), 0, 0, 0, 0, 0};
      nvml_.total_energy_mj(nvml_.device, &s.energy_mj);
      nvml_.power_mw(nvml_.device, &s.power_mw);
      nvml_.clock_mhz(nvml_.device, kNvmlClockSm, &s.clock_mhz);
      nvml_.event_reasons(nvml_.device, &s.reasons);
      nvml_.temperature_c(nvml_.device, kNvmlTemperatureGpu, &s.temperature_c);
      {
        std::lock_guard<std::mutex> lock(mutex_);
        samples_.push_back(s);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  const Nvml& nvml_;
  Clock::time_point t0_;
  std::mutex mutex_;
  std::vector<Sample> samples_;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// --- operands: N(0,1) values in each format, fixed seed ---
std::vector<uint8_t> bf16_operands(uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<uint8_t> bytes(kOperandBytes);
  for (size_t i = 0; i < bytes.size(); i += 2) {
    const __nv_bfloat16 v = __float2bfloat16(normal(rng));
    std::memcpy(&bytes[i], &v, 2);
  }
  return bytes;
}
std::vector<uint8_t> e4m3_operands(uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> normal(0.f, 1.f);
  std::vector<uint8_t> bytes(kOperandBytes);
  for (uint8_t& b : bytes) b = __nv_fp8_e4m3(normal(rng)).__x;
  return bytes;
}

struct Format {
  const char* name;
  const char* instruction;
  double flop_per_k_block_per_sm; // 2 warpgroups x 4 wgmma
  void (*launch)(const uint4*, int, float*, CtaTiming*);
  std::vector<uint8_t> host_operands;
  uint4* operands = nullptr;
  int k_blocks = 0;
};

template <class Op> void launch(const uint4* operands, int k_blocks, float* sink, CtaTiming* timing) {
  static const int sms = [] {
    CHECK_CUDA(cudaFuncSetAttribute(mma_loop<Op>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
    int count = 0;
    CHECK_CUDA(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, 0));
    return count;
  }();
  mma_loop<Op><<<sms, 128 * kWarpgroups, kSmemBytes>>>(operands, k_blocks, 0, sink, timing);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
}

template <class Op> Format make_format(const char* name, std::vector<uint8_t> operands) {
  Format f{name, Op::instruction, 2.0 * 64 * Op::n * Op::k * 4 * kWarpgroups, launch<Op>, std::move(operands)};
  return f;
}

struct LaunchRecord {
  double start_s, end_s, clock_mhz, flop_per_sm_cycle, tflops;
};

// One format's phase: launches back to back for phase_s; a record per launch.
std::vector<LaunchRecord> run_phase(Format& f, double phase_s, int sms, float* sink, CtaTiming* timing,
                                    Clock::time_point t0) {
  std::vector<LaunchRecord> records;
  std::vector<CtaTiming> host(sms);
  const double start = seconds_since(t0);
  while (seconds_since(t0) - start < phase_s) {
    const double s = seconds_since(t0);
    f.launch(f.operands, f.k_blocks, sink, timing);
    const double e = seconds_since(t0);
    CHECK_CUDA(cudaMemcpy(host.data(), timing, sms * sizeof(CtaTiming), cudaMemcpyDeviceToHost));
    const auto slowest =
        *std::max_element(host.begin(), host.end(), [](auto& a, auto& b) { return a.cycles < b.cycles; });
    unsigned long long first = ~0ull, last = 0;
    for (const auto& t : host) first = std::min(first, t.start_ns), last = std::max(last, t.end_ns);
    const double flop = f.flop_per_k_block_per_sm * f.k_blocks * sms;
    records.push_back({s, e, static_cast<double>(slowest.cycles) / (slowest.end_ns - slowest.start_ns) * 1e3,
                       f.flop_per_k_block_per_sm * f.k_blocks / slowest.cycles, flop / (last - first) * 1e-3});
  }
  return records;
}

// A phase's steady window, summarised as one JSON object; `out` gets its headline numbers.
struct PhaseSummary {
  double power_w, clock_mhz, tflops, pj_per_flop, sw_power_cap_fraction;
};
std::string summarise(const Format& f, int round, const std::vector<LaunchRecord>& launches, double settle_s,
                      PowerSampler& sampler, PhaseSummary& out) {
  const double from = launches.front().start_s + settle_s, to = launches.back().end_s;
  std::vector<double> clocks, per_cycle, tflops;
  for (const LaunchRecord& l : launches)
    if (l.start_s >= from) clocks.push_back(l.clock_mhz), per_cycle.push_back(l.flop_per_sm_cycle), tflops.push_back(l.tflops);
  const std::vector<Sample> s = sampler.between(from, to);
  if (s.size() < 2 || clocks.empty()) {
    std::fprintf(stderr, "%s: phase %s too short for its settle time; give a longer phase_s\n", kProgram, f.name);
    std::exit(1);
  }
  std::vector<double> power, nvml_clock, temperature;
  int capped = 0;
  for (const Sample& x : s) {
    power.push_back(x.power_mw * 1e-3), nvml_clock.push_back(x.clock_mhz), temperature.push_back(x.temperature_c);
    capped += (x.reasons & kSwPowerCap) != 0;
  }
  const double energy_w = (s.back().energy_mj - s.front().energy_mj) * 1e-3 / (s.back().t_s - s.front().t_s);
  out = {energy_w, median(clocks), median(tflops), energy_w / (median(tflops) * 1e12) * 1e12,
         static_cast<double>(capped) / s.size()};
  return format("{\"format\": \"%s\", \"round\": %d, \"window_s\": %.2f, \"launches\": %zu, \"nvml_samples\": %zu, "
                "\"board_power_w_from_energy\": %.1f, \"median_power_reading_w\": %.1f, \"median_sm_clock_mhz\": %.0f, "
                "\"min_sm_clock_mhz\": %.0f, \"max_sm_clock_mhz\": %.0f, \"median_nvml_sm_clock_mhz\": %.0f, "
                "\"median_flop_per_sm_cycle\": %.1f, \"median_tflops\": %.1f, \"pj_per_flop\": %.4f, "
                "\"sw_power_cap_fraction\": %.3f, \"median_temperature_c\": %.0f}",
                f.name, round, to - from, clocks.size(), s.size(), energy_w, median(power), median(clocks),
                *std::min_element(clocks.begin(), clocks.end()), *std::max_element(clocks.begin(), clocks.end()),
                median(nvml_clock), median(per_cycle), median(tflops), out.pj_per_flop, out.sw_power_cap_fraction,
                median(temperature));
}


// The two formats' operands on the GPU and their launch length: ~50 ms a launch at the nominal
// rate (4096 / 8192 dense FLOP per SM cycle, H100 SXM datasheet).
std::vector<Format> prepare_formats() {
  std::vector<Format> formats;
  formats.push_back(make_format<Bf16N256>("bf16", bf16_operands(1)));
  formats.push_back(make_format<E4m3N256>("e4m3", e4m3_operands(1)));
  for (Format& f : formats) {
    CHECK_CUDA(cudaMalloc(&f.operands, kOperandBytes));
    CHECK_CUDA(cudaMemcpy(f.operands, f.host_operands.data(), kOperandBytes, cudaMemcpyHostToDevice));
    const double nominal = std::string(f.name) == "bf16" ? 4096 : 8192;
    f.k_blocks = static_cast<int>(kLaunchSeconds * kNominalClockHz * nominal / f.flop_per_k_block_per_sm);
  }
  return formats;
}

// Each headline number's median over one format's rounds.
PhaseSummary median_over_rounds(const std::vector<PhaseSummary>& rounds) {
  auto med = [&](double PhaseSummary::*field) {
    std::vector<double> v;
    for (const PhaseSummary& s : rounds) v.push_back(s.*field);
    return median(v);
  };
  return {med(&PhaseSummary::power_w), med(&PhaseSummary::clock_mhz), med(&PhaseSummary::tflops),
          med(&PhaseSummary::pj_per_flop), med(&PhaseSummary::sw_power_cap_fraction)};
}

std::string totals_json(const PhaseSummary& s) {
  return format("{\"power_w\": %.1f, \"sm_clock_mhz\": %.0f, \"tflops\": %.1f, \"pj_per_flop\": %.4f, "
                "\"sw_power_cap_fraction\": %.3f}",
                s.power_w, s.clock_mhz, s.tflops, s.pj_per_flop, s.sw_power_cap_fraction);
}

} // namespace

int main(int argc, char** argv) {
  const double phase_s = argc > 1 ? std::atof(argv[1]) : 8.0;
  const int rounds = argc > 2 ? std::atoi(argv[2]) : 2;
  const double settle_s = argc > 3 ? std::atof(argv[3]) : 2.0;
  if (phase_s <= settle_s || phase_s > 120 || rounds < 1 || rounds > 10 || settle_s < 0) {
    std::fprintf(stderr, "%s: phase_s must exceed settle_s and be at most 120, rounds 1..10; e.g. 8 2 2\n", kProgram);
    return 2;
  }
  const cudaDeviceProp prop = first_device(kProgram);
  if (prop.major != 9) {
    std::fprintf(stderr, "%s: needs a Hopper GPU (sm_90a wgmma), found %s (sm_%d%d)\n", kProgram, prop.name,
                 prop.major, prop.minor);
    return 1;
  }
  const int sms = prop.multiProcessorCount;
  Nvml nvml = open_nvml();
  unsigned limit_mw = 0;
  nvml.enforced_limit_mw(nvml.device, &limit_mw);
  std::vector<Format> formats = prepare_formats();
  float* sink = nullptr;
  CtaTiming* timing = nullptr;
  CHECK_CUDA(cudaMalloc(&sink, static_cast<size_t>(sms) * 128 * kWarpgroups * 128 * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&timing, sms * sizeof(CtaTiming)));

  const Clock::time_point t0 = Clock::now();
  PowerSampler sampler(nvml, t0);
  std::this_thread::sleep_for(std::chrono::seconds(2)); // idle reference
  const std::vector<Sample> idle = sampler.between(0, seconds_since(t0));
  std::string phases;
  std::vector<std::vector<PhaseSummary>> by_format(formats.size());
  for (int r = 0; r < rounds; ++r)
    for (size_t i = 0; i < formats.size(); ++i) {
      std::fprintf(stderr, "%s: round %d, %s, %.0f s\n", kProgram, r, formats[i].name, phase_s);
      const std::vector<LaunchRecord> launches = run_phase(formats[i], phase_s, sms, sink, timing, t0);
      PhaseSummary summary{};
      phases += (phases.empty() ? "\n  " : ",\n  ") + summarise(formats[i], r, launches, settle_s, sampler, summary);
      by_format[i].push_back(summary);
    }

  // E4M3 against BF16; at equal power P - P0 = a f^3 gives a_e4m3 / a_bf16 = (f_bf16 / f_e4m3)^3.
  const PhaseSummary bf16 = median_over_rounds(by_format[0]), e4m3 = median_over_rounds(by_format[1]);
  const double clock_ratio = bf16.clock_mhz / e4m3.clock_mhz;
  std::printf("{\n \"gpu\": \"%s\", \"sms\": %d, \"enforced_power_limit_w\": %.1f, \"idle_power_reading_w\": %.1f,\n"
              " \"phase_s\": %.1f, \"settle_s\": %.1f, \"rounds\": %d, \"warpgroups\": %d, \"stages\": %d,\n"
              " \"instructions\": [\"%s\", \"%s\"], \"operands\": \"N(0,1) values in the format, mt19937 seed 1\",\n"
              " \"phases\": [%s\n ],\n \"bf16\": %s,\n \"e4m3\": %s,\n"
              " \"e4m3_over_bf16\": {\"clock\": %.4f, \"power\": %.4f, \"tflops\": %.4f, \"energy_per_flop\": %.4f, "
              "\"dynamic_power_per_cycle_at_equal_power\": %.4f}\n}\n",
              prop.name, sms, limit_mw * 1e-3, idle.empty() ? 0 : idle.back().power_mw * 1e-3, phase_s, settle_s,
              rounds, kWarpgroups, kRingStages, formats[0].instruction, formats[1].instruction, phases.c_str(),
              totals_json(bf16).c_str(), totals_json(e4m3).c_str(), 1 / clock_ratio, e4m3.power_w / bf16.power_w,
              e4m3.tflops / bf16.tflops, e4m3.pj_per_flop / bf16.pj_per_flop, clock_ratio * clock_ratio * clock_ratio);
  for (Format& f : formats) cudaFree(f.operands);
  cudaFree(sink);
  cudaFree(timing);
  return 0;
}
