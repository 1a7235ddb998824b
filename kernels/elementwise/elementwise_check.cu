// elementwise_check: the element-wise kernel against a double-precision host reference. Every case
// draws fresh inputs, poisons the output and a guard region after it (0xFF bytes) before the run,
// and checks every element within the dtype's rounding (GELU: plus tanh.approx's 2^-11), and the
// guard untouched. Sizes straddle the vector and block boundaries (masked tail), forms grid and
// persistent. Exit 0 pass, 1 fail, 77 no CUDA device (CTest skip).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/check_kernels.cuh"
#include "kernels/elementwise/elementwise.h"
#include "kernels/elementwise/elementwise_check_reference.h"
#include "models/elementwise_launch_shape.h"

namespace tk = tilesim::kernels;
using tilesim::Dtype;
using tilesim::ElementwiseLaunchShape;
using tilesim::ElementwiseOp;
using tilesim::elementwise_launch_shape;
using tk::testing::check;

namespace {

constexpr std::size_t kGuardBytes = 4096;

int bytes_of(Dtype d) { return d == Dtype::fp32 ? 4 : 2; }
const char* name_of(Dtype d) { return d == Dtype::fp32 ? "fp32" : d == Dtype::bf16 ? "bf16" : "fp16"; }
const char* name_of(ElementwiseOp op) {
  const char* names[] = {"add", "mul", "relu", "gelu"};
  return names[static_cast<int>(op)];
}

// Host encodings of the device types (round to nearest even), and back.
std::uint32_t float_bits(float f) {
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
double decode(Dtype d, const unsigned char* p) {
  if (d == Dtype::fp32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  std::uint16_t h;
  std::memcpy(&h, p, 2);
  if (d == Dtype::bf16) {
    const std::uint32_t u = static_cast<std::uint32_t>(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  return static_cast<double>(__half2float(__half(__half_raw{h})));
}
void encode(Dtype d, double v, unsigned char* p) {
  if (d == Dtype::fp32) {
    const float f = static_cast<float>(v);
    std::memcpy(p, &f, 4);
  } else if (d == Dtype::bf16) {
    std::uint32_t u = float_bits(static_cast<float>(v));
    u += 0x7FFF + ((u >> 16) & 1);
    const std::uint16_t h = static_cast<std::uint16_t>(u >> 16);
    std::memcpy(p, &h, 2);
  } else {
    const __half_raw raw = __half(__float2half_rn(static_cast<float>(v)));
    std::memcpy(p, &raw.x, 2);
  }
}

// Rounding of the output type (relative, and below the smallest normal half the smallest subnormal:
// fp32 2^-149, bf16 2^-133, fp16 2^-24), plus tanh.approx.f32's relative error for GELU.
double tolerance(Dtype d, ElementwiseOp op, double ref) {
  const double unit = d == Dtype::fp32 ? 0x1p-23 : d == Dtype::bf16 ? 0x1p-7 : 0x1p-10;
  const double half_subnormal = d == Dtype::fp32 ? 0x1p-150 : d == Dtype::bf16 ? 0x1p-134 : 0x1p-25;
  double t = unit * std::fabs(ref) + half_subnormal;
  if (op == ElementwiseOp::gelu) t += 2e-3 * (std::fabs(ref) + 0.1);
  return t;
}

struct Buffers {
  void* x = nullptr;
  void* y = nullptr;
  void* out = nullptr;
  ~Buffers() {
    cudaFree(x);
    cudaFree(y);
    cudaFree(out);
  }
};

// A traced run's records: every CTA started, saw its first data and ended in that order, within a
// second, on an SM that exists. Returns an empty string or what is wrong.
std::string trace_fault(const std::vector<tk::CtaTrace>& trace, int sm_count) {
  for (std::size_t c = 0; c < trace.size(); ++c) {
    const tk::CtaTrace& t = trace[c];
    if (!(t.start_ns > 0 && t.start_ns <= t.first_data_ns && t.first_data_ns <= t.end_ns &&
          t.end_ns - t.start_ns < 1000000000ULL && t.sm < static_cast<std::uint32_t>(sm_count)))
      return "CTA " + std::to_string(c) + " has start " + std::to_string(t.start_ns) + ", first data " +
             std::to_string(t.first_data_ns) + ", end " + std::to_string(t.end_ns) + " ns on SM " + std::to_string(t.sm);
  }
  return {};
}

// Runs one configuration on fresh inputs, traced or not; returns the number of failures (0 or 1).
// `pick`: the block and unroll the launcher must take for a problem that leaves them to it.
int run_case(const tk::ElementwiseProblem& p, int sm_count, std::mt19937_64& rng, bool traced = false,
             const ElementwiseLaunchShape* pick = nullptr) {
  const std::size_t bytes = static_cast<std::size_t>(p.elements) * bytes_of(p.dtype);
  std::vector<unsigned char> hx(bytes), hy(bytes), hout(bytes + kGuardBytes);
  std::uniform_real_distribution<double> uniform(-4.0, 4.0);
  for (std::int64_t i = 0; i < p.elements; ++i) {
    encode(p.dtype, uniform(rng), &hx[i * bytes_of(p.dtype)]);
    encode(p.dtype, uniform(rng), &hy[i * bytes_of(p.dtype)]);
  }
  Buffers b;
  check(cudaMalloc(&b.x, bytes), "cudaMalloc(x)");
  check(cudaMalloc(&b.y, bytes), "cudaMalloc(y)");
  check(cudaMalloc(&b.out, bytes + kGuardBytes), "cudaMalloc(out)");
  check(cudaMemcpy(b.x, hx.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy(x)");
  check(cudaMemcpy(b.y, hy.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy(y)");
  check(cudaMemset(b.out, 0xFF, bytes + kGuardBytes), "cudaMemset(out poison)");
  const bool binary = p.op == ElementwiseOp::add || p.op == ElementwiseOp::mul;
  std::string where = std::string(name_of(p.op)) + " " + name_of(p.dtype) + " n=" + std::to_string(p.elements) +
                      " block=" + std::to_string(p.block) + " vector=" + std::to_string(p.vector) +
                      " unroll=" + std::to_string(p.unroll) +
                      (p.persistent ? " persistent" : " grid") + (traced ? " traced" : "");
  std::vector<tk::CtaTrace> trace;
  try {
    tk::Elementwise kernel(p, b.x, binary ? b.y : nullptr, b.out, sm_count);
    if (pick != nullptr) {
      const tk::ElementwiseProblem& launched = kernel.problem();
      where += ", the launcher's pick " + std::to_string(launched.block) + " x " + std::to_string(launched.unroll);
      if (launched.block != pick->block || launched.unroll != pick->unroll) {
        std::printf("FAIL %s: the rule gives %d x %d\n", where.c_str(), pick->block, pick->unroll);
        return 1;
      }
    }
    if (traced) {
      trace.resize(kernel.grid_size());
      tk::CtaTrace* device_trace = nullptr;
      check(cudaMalloc(&device_trace, trace.size() * sizeof(tk::CtaTrace)), "cudaMalloc(trace)");
      check(cudaMemset(device_trace, 0, trace.size() * sizeof(tk::CtaTrace)), "cudaMemset(trace)");
      kernel.run_traced(nullptr, device_trace);
      check(cudaMemcpy(trace.data(), device_trace, trace.size() * sizeof(tk::CtaTrace), cudaMemcpyDeviceToHost),
            "cudaMemcpy(trace)");
      check(cudaFree(device_trace), "cudaFree(trace)");
    } else {
      kernel.run(nullptr);
    }
    where += " (grid " + std::to_string(kernel.grid_size()) + ")";
  } catch (const tk::KernelError& e) {
    std::printf("FAIL %s: %s\n", where.c_str(), e.what());
    return 1;
  }
  check(cudaDeviceSynchronize(), "elementwise_kernel");
  if (const std::string fault = trace_fault(trace, sm_count); !fault.empty()) {
    std::printf("FAIL %s: trace: %s\n", where.c_str(), fault.c_str());
    return 1;
  }
  check(cudaMemcpy(hout.data(), b.out, bytes + kGuardBytes, cudaMemcpyDeviceToHost), "cudaMemcpy(out)");
  for (std::int64_t i = 0; i < p.elements; ++i) {
    const std::size_t at = static_cast<std::size_t>(i) * bytes_of(p.dtype);
    const double want = tk::elementwise_reference(p.op, decode(p.dtype, &hx[at]), decode(p.dtype, &hy[at]));
    const double got = decode(p.dtype, &hout[at]);
    if (!(std::fabs(got - want) <= tolerance(p.dtype, p.op, want))) { // NaN (poison) fails too
      std::printf("FAIL %s: element %lld is %.8g, expected %.8g\n", where.c_str(), static_cast<long long>(i), got, want);
      return 1;
    }
  }
  for (std::size_t i = bytes; i < bytes + kGuardBytes; ++i)
    if (hout[i] != 0xFF) {
      std::printf("FAIL %s: wrote past the end (guard byte %zu)\n", where.c_str(), i - bytes);
      return 1;
    }
  std::printf("ok   %s\n", where.c_str());
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device (elementwise_check needs an sm_90 GPU)\n");
    return 77;
  }
  int sm_count = 0;
  check(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");
  std::mt19937_64 rng(18);
  // Tails: one element, one short of a vector, one past a block step, a prime, and ~1M + 3.
  const std::vector<std::int64_t> sizes =
      quick ? std::vector<std::int64_t>{1, 1023, 4097, 1000003} : std::vector<std::int64_t>{1, 7, 1023, 1024, 4097, 65537, 1000003, 4194304};
  int failures = 0, cases = 0;
  for (Dtype dtype : {Dtype::fp32, Dtype::bf16, Dtype::fp16})
    for (ElementwiseOp op : {ElementwiseOp::add, ElementwiseOp::mul, ElementwiseOp::relu, ElementwiseOp::gelu})
      for (std::int64_t n : sizes)
        for (bool persistent : {false, true})
          for (int block : {64, 256, 1024}) {
            const int max_vector = 16 / bytes_of(dtype);
            for (int vector : {1, max_vector})
              for (int unroll : {1, 2, 4}) {
                if (quick && (block == 64 || unroll == 4 || (dtype == Dtype::fp16 && op != ElementwiseOp::gelu))) continue;
                tk::ElementwiseProblem p{op, dtype, n, block, vector, unroll, persistent};
                failures += run_case(p, sm_count, rng);
                ++cases;
              }
          }
  // The last step's tail on 4-vector shapes (skipped above in --quick): whole vectors before the
  // end, the vector that crosses it, none past it (1,000,003 leaves 579 elements in 64 x 4 x 4's
  // last CTA; 1,000,001 and 1,000,002 end one and two elements into a vector).
  for (std::int64_t n : {std::int64_t{1000001}, std::int64_t{1000002}, std::int64_t{1000003}})
    for (const auto& [dtype, vector] : {std::pair{Dtype::fp32, 4}, std::pair{Dtype::bf16, 8}, std::pair{Dtype::fp16, 1}}) {
      failures += run_case({ElementwiseOp::add, dtype, n, 64, vector, 4, false}, sm_count, rng);
      ++cases;
    }
  // Traced runs (fp32 in 16-byte vectors): the same output, and every CTA's record in order.
  for (bool persistent : {false, true}) {
    failures += run_case({ElementwiseOp::add, Dtype::fp32, 1000003, 256, 4, 2, persistent}, sm_count, rng, true);
    ++cases;
  }
  // Problems that leave block and unroll to the launcher: the rule's shape for this GPU
  // (models/elementwise_launch_shape.h; on the H100 64 x 4 x 4 at 2^20 and 786,432, 256 x 4 at
  // 1,000,003 and 2^22), with the output as exact as a named shape's.
  int threads = 0;
  check(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, 0), "cudaDeviceGetAttribute");
  for (std::int64_t n : {std::int64_t{1} << 20, std::int64_t{786432}, std::int64_t{1000003}, std::int64_t{1} << 22}) {
    tk::ElementwiseProblem p{ElementwiseOp::add, Dtype::fp32, n, 256, 4, 1, false};
    p.launcher_shape = true;
    const ElementwiseLaunchShape pick = elementwise_launch_shape(n, Dtype::fp32, 4, false, sm_count, threads);
    failures += run_case(p, sm_count, rng, false, &pick);
    ++cases;
  }
  // Bad problems are refused with a message, not launched.
  for (const auto& [p, what] : std::vector<std::pair<tk::ElementwiseProblem, const char*>>{
           {{ElementwiseOp::add, Dtype::fp32, 0, 256, 4, 1, false}, "zero elements"},
           {{ElementwiseOp::add, Dtype::fp32, 1024, 96, 4, 1, false}, "block 96"},
           {{ElementwiseOp::add, Dtype::fp32, 1024, 256, 8, 1, false}, "vector 8 of fp32"},
           {{ElementwiseOp::add, Dtype::fp32, 1024, 256, 4, 3, false}, "unroll 3"}}) {
    ++cases;
    if (tk::elementwise_unsupported_reason(p).empty()) {
      std::printf("FAIL %s was accepted\n", what);
      ++failures;
    }
  }
  std::printf("%d of %d cases passed\n", cases - failures, cases);
  return failures == 0 ? 0 : 1;
}
