// Sustained tensor-core rate per SM on Hopper, per dtype, for a loop shaped like the grouped GEMM's
// consumers: one CTA per SM, 1 or 2 warpgroups each issuing wgmma.mma_async with A and B from
// shared memory (128B-swizzled K-major descriptors), 4 wgmma per commit group (one 128-byte K row),
// then wait_group 1 (pipelined, as the GEMM) or 0 (serial). The result is FLOP per SM per SM cycle:
// total FLOP / (SMs x cycles of the slowest CTA, clock64), next to the datasheet's dense figure.
// Each configuration runs in a child process (this program with --config i), so an instruction the
// GPU rejects becomes an error entry and the others still run. Output: one JSON object.
#include "check_cuda.cuh"
#include "report_text.h"
#include "kernels/common/ptx_wrappers.cuh"
#include "wgmma_ops.cuh"

#include <cuda_runtime.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using microbench::format;
using microbench::median;
using namespace microbench; // the wgmma ops and their ptx namespace (wgmma_ops.cuh)

constexpr const char* kProgram = "wgmma_throughput";

constexpr int kKBlocks = 8192; // ~2-5 ms per launch at the nominal rate
constexpr int kRepeats = 5;
constexpr int kStages = kRingStages;
constexpr int kSmemBytes = kRingBytes + 1024; // + room to align to the 1024-B swizzle atom

struct CtaTiming {
  unsigned long long cycles, start_ns, end_ns;
  unsigned smid, unused;
};

template <class Op, int Pending>
__global__ void __launch_bounds__(256, 1)
    wgmma_loop(int k_blocks, int write_accumulators, typename Op::Acc* sink, CtaTiming* timing) {
  extern __shared__ uint8_t smem_raw[];
  uint8_t* smem = smem_raw + ((1024 - (ptx::smem_addr(smem_raw) & 1023)) & 1023);
  // Finite operands for every dtype (each byte 0..63: no NaN/Inf in bf16, e4m3 or tf32), varied
  // bits so that the power draw (and the clock) is not that of an all-zero multiply.
  for (int i = threadIdx.x; i < kRingBytes / 4; i += blockDim.x)
    reinterpret_cast<uint32_t*>(smem)[i] = (static_cast<uint32_t>(i) * 2654435761u) & 0x3F3F3F3Fu;
  ptx::fence_proxy_async_shared(); // generic-proxy stores -> visible to wgmma's async-proxy reads
  __syncthreads();
  const long long c0 = clock64();
  const uint64_t g0 = ptx::global_timer_ns();
  const int warpgroup = threadIdx.x / 128;
  typename Op::Acc acc[Op::regs];
#pragma unroll
  for (int i = 0; i < Op::regs; ++i) acc[i] = 0;
  wgmma_k_blocks<Op, Pending>(smem, warpgroup, k_blocks, acc);
#pragma unroll
  for (int i = 0; i < Op::regs; ++i) keep(acc[i]);
  __syncthreads();
  if (threadIdx.x == 0)
    timing[blockIdx.x] = {static_cast<unsigned long long>(clock64() - c0), g0, ptx::global_timer_ns(), ptx::sm_id(), 0};
  if (write_accumulators) // never set: the stores only make the accumulators live
    for (int i = 0; i < Op::regs; ++i) sink[(blockIdx.x * blockDim.x + threadIdx.x) * Op::regs + i] = acc[i];
}

using Launcher = void (*)(int grid, int threads, int k_blocks, void* sink, CtaTiming* timing);

template <class Op, int Pending> void launch(int grid, int threads, int k_blocks, void* sink, CtaTiming* timing) {
  CHECK_CUDA(cudaFuncSetAttribute(wgmma_loop<Op, Pending>, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes));
  wgmma_loop<Op, Pending><<<grid, threads, kSmemBytes>>>(k_blocks, 0, static_cast<typename Op::Acc*>(sink), timing);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaDeviceSynchronize());
}

struct Config {
  const char* dtype;
  const char* instruction;
  int n, k, nominal, warpgroups, wait_group;
  Launcher launch;
};

// Nominal dense FLOP/cycle/SM: H100 SXM datasheet rate / (132 SMs x 1830 MHz boost).
template <class Op> void add(std::vector<Config>& list, const char* dtype, int nominal) {
  for (int wait_group : {1, 0})
    for (int warpgroups : {2, 1})
      list.push_back({dtype, Op::instruction, Op::n, Op::k, nominal, warpgroups, wait_group,
                      wait_group ? launch<Op, 1> : launch<Op, 0>});
}

std::vector<Config> configs() {
  std::vector<Config> list;
  add<Bf16N256>(list, "bf16", 4096);
  add<Bf16N128>(list, "bf16", 4096);
  add<E4m3N256>(list, "e4m3", 8192);
  add<E4m3N128>(list, "e4m3", 8192);
  add<Tf32N256>(list, "tf32", 2048);
  add<Tf32N128>(list, "tf32", 2048);
  add<S8N224>(list, "s8", 8192);
  add<S8N128>(list, "s8", 8192);
  return list;
}


cudaDeviceProp device_or_exit() {
  cudaDeviceProp prop{};
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0 || cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "%s: no CUDA device; run it on a GPU machine\n", kProgram);
    std::exit(1);
  }
  return prop;
}

// Child: one configuration, one JSON object on one line.
void run_config(const Config& c) {
  const cudaDeviceProp prop = device_or_exit();
  const int sms = prop.multiProcessorCount;
  if (prop.sharedMemPerBlockOptin < static_cast<size_t>(kSmemBytes)) {
    std::fprintf(stderr, "%s: needs %d bytes of shared memory per block, device allows %zu\n", kProgram, kSmemBytes,
                 prop.sharedMemPerBlockOptin);
    std::exit(1);
  }
  const int threads = 128 * c.warpgroups;
  void* sink = nullptr;
  CtaTiming* timing = nullptr;
  CHECK_CUDA(cudaMalloc(&sink, static_cast<size_t>(sms) * threads * 128 * 4));
  CHECK_CUDA(cudaMalloc(&timing, sms * sizeof(CtaTiming)));
  c.launch(sms, threads, kKBlocks / 8, sink, timing); // warm-up (clock ramp, module load)
  const double flop = 2.0 * 64 * c.n * c.k * 4 * kKBlocks * c.warpgroups * sms;
  std::vector<double> per_cycle, mhz, tflops_clock, tflops_wall;
  std::vector<CtaTiming> host(sms);
  std::string runs;
  int distinct_sms = 0;
  for (int r = 0; r < kRepeats; ++r) {
    c.launch(sms, threads, kKBlocks, sink, timing);
    CHECK_CUDA(cudaMemcpy(host.data(), timing, sms * sizeof(CtaTiming), cudaMemcpyDeviceToHost));
    const auto slowest =
        *std::max_element(host.begin(), host.end(), [](auto& a, auto& b) { return a.cycles < b.cycles; });
    unsigned long long first = ~0ull, last = 0;
    std::vector<unsigned> smids;
    for (const auto& t : host)
      first = std::min(first, t.start_ns), last = std::max(last, t.end_ns), smids.push_back(t.smid);
    std::sort(smids.begin(), smids.end());
    distinct_sms = static_cast<int>(std::unique(smids.begin(), smids.end()) - smids.begin());
    per_cycle.push_back(flop / (static_cast<double>(sms) * slowest.cycles));
    mhz.push_back(static_cast<double>(slowest.cycles) / (slowest.end_ns - slowest.start_ns) * 1000.0);
    tflops_clock.push_back(per_cycle.back() * sms * mhz.back() * 1e-6);
    tflops_wall.push_back(flop / static_cast<double>(last - first) * 1e-3);
    runs += format("%s{\"flop_per_sm_cycle\": %.1f, \"sm_clock_mhz\": %.0f, \"tflops_at_clock\": %.1f, "
                   "\"tflops_wall\": %.1f}",
                   r ? ", " : "", per_cycle.back(), mhz.back(), tflops_clock.back(), tflops_wall.back());
  }
  std::printf("{\"dtype\": \"%s\", \"instruction\": \"%s\", \"n\": %d, \"k\": %d, \"warpgroups\": %d, "
              "\"wait_group\": %d, \"wgmma_per_commit\": 4, \"k_blocks\": %d, \"ctas\": %d, \"distinct_sms\": %d, "
              "\"runs\": [%s], \"median_flop_per_sm_cycle\": %.1f, \"median_sm_clock_mhz\": %.0f, "
              "\"median_tflops_at_clock\": %.1f, \"median_tflops_wall\": %.1f, \"nominal_flop_per_sm_cycle\": %d, "
              "\"ratio_to_nominal\": %.3f}\n",
              c.dtype, c.instruction, c.n, c.k, c.warpgroups, c.wait_group, kKBlocks, sms, distinct_sms, runs.c_str(),
              median(per_cycle), median(mhz), median(tflops_clock), median(tflops_wall), c.nominal,
              median(per_cycle) / c.nominal);
}

// Parent: runs `self args` and returns its stdout, or an error text in `error`.
std::string run_child(const std::string& self, const std::string& args, std::string& error) {
  std::string out;
  FILE* pipe = popen(("'" + self + "' " + args).c_str(), "r");
  if (!pipe) return error = "popen failed", out;
  char buf[4096];
  while (std::fgets(buf, sizeof buf, pipe)) out += buf;
  const int status = pclose(pipe);
  if (WIFSIGNALED(status))
    error = "child killed by signal " + std::to_string(WTERMSIG(status));
  else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    error = "child exited with status " + std::to_string(WEXITSTATUS(status)) + " (its stderr says why)";
  else if (out.empty())
    error = "child printed nothing";
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

} // namespace

int main(int argc, char** argv) {
  const std::vector<Config> list = configs();
  if (argc == 3 && std::strcmp(argv[1], "--config") == 0) {
    const int i = std::atoi(argv[2]);
    if (i < 0 || i >= static_cast<int>(list.size())) return 2;
    run_config(list[i]);
    return 0;
  }
  if (argc == 2 && std::strcmp(argv[1], "--info") == 0) {
    const cudaDeviceProp prop = device_or_exit();
    std::printf("\"gpu\": \"%s\", \"sms\": %d", prop.name, prop.multiProcessorCount);
    return 0;
  }
  // The parent never touches CUDA, so a child's failure cannot poison the others.
  char self[4096] = {0};
  const ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
  const std::string exe = len > 0 ? std::string(self, len) : std::string(argv[0]);
  std::string error;
  const std::string info = run_child(exe, "--info", error);
  if (!error.empty()) return 1; // the child printed the one-line reason
  std::printf("{\n %s, \"k_blocks\": %d, \"repeats\": %d, \"stages\": %d, \"swizzle\": \"128B\",\n \"configs\": [",
              info.c_str(), kKBlocks, kRepeats, kStages);
  for (size_t i = 0; i < list.size(); ++i) {
    error.clear();
    const std::string out = run_child(exe, "--config " + std::to_string(i), error);
    if (error.empty())
      std::printf("%s\n  %s", i ? "," : "", out.c_str());
    else
      std::printf("%s\n  {\"dtype\": \"%s\", \"instruction\": \"%s\", \"warpgroups\": %d, \"wait_group\": %d, "
                  "\"error\": \"%s\"}",
                  i ? "," : "", list[i].dtype, list[i].instruction, list[i].warpgroups, list[i].wait_group,
                  error.c_str());
    std::fflush(stdout);
  }
  std::printf("\n ]\n}\n");
  return 0;
}
