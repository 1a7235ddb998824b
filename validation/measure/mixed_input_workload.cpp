// The mixed-input GEMM of kernels/mixed_input/ as a measured workload, built from a kernel spec
// (dtype bf16, b_dtype int8 or uint8, "quant" for scales, zero points and the conversion).
#include "kernels/mixed_input/mixed_input_gemm.h"
#include "models/kernel_spec.h"
#include "models/launch_order.h"
#include "models/launch_order_names.h"
#include "validation/measure/device_fill.h"
#include "validation/measure/measure_error.h"
#include "validation/measure/tiled_gemm_workload.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

namespace tilesim::measure {
namespace {

constexpr int kCheckSamples = 48;
// bf16 output of a K-long fp32 dot product of bf16-rounded weights: one bf16 rounding (2^-8
// relative) of the output dominates, as in the bf16 workload.
constexpr double kCheckTolerance = 2e-2;

void require(bool ok, const std::string& spec, const std::string& field, const std::string& problem) {
  if (!ok) throw MeasureError(MeasureFailure::usage, spec + ": " + field + ": " + problem);
}

void check_spec(const KernelSpec& s) {
  const std::string& n = s.name;
  require(s.mixed_input() && s.c_dtype == Dtype::bf16, n, "dtype",
          "the mixed-input kernel takes bf16 X with int8 or uint8 W and writes bf16; use \"dtype\": \"bf16\", "
          "\"b_dtype\": \"int8\" or \"uint8\"");
  require(s.a_layout == MatrixLayout::row, n, "layout.a", "the kernel reads X row-major; use \"row\"");
  require(s.b_layout == MatrixLayout::col, n, "layout.b", "the kernel reads W [n, k], k contiguous; use \"col\"");
  require(s.load == LoadPath::tma, n, "load", "the kernel loads with TMA; use \"tma\"");
  require(s.cluster == 1, n, "cluster", "the mixed-input kernel runs without clusters; use 1");
  const int warps = 4 * (kernels::mixed_input_consumers(s.tile.m, s.tile.n) + 1);
  require(s.warps == warps, n, "warps",
          "the kernel runs a producer warpgroup and " + std::to_string(warps / 4 - 1) + " consumer warpgroups on " +
              std::to_string(s.tile.m) + "x" + std::to_string(s.tile.n) + " tiles; use " + std::to_string(warps));
  const std::string reason = kernels::mixed_input_unsupported_reason(s.tile.m, s.tile.n, s.tile.k, s.stages);
  require(reason.empty(), n, "tile/stages", reason);
  require(s.n % 8 == 0 && s.k % 16 == 0, n, "n/k", "n must be a multiple of 8 and k of 16 (16-byte TMA rows)");
}

float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// Uniform random bytes (weights, zero points), made on the host with splitmix64 and copied: every
// byte value is a valid weight, and the bf16 filler's bytes would be far from uniform.
void fill_random_bytes(void* data, std::size_t bytes, std::uint64_t seed) {
  std::vector<std::uint64_t> host((bytes + 7) / 8);
  std::uint64_t state = seed;
  for (auto& v : host) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    v = z ^ (z >> 31);
  }
  check_cuda(cudaMemcpy(data, host.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy(random bytes)");
}

class MixedInputWorkload final : public TiledGemmWorkload<kernels::MixedInputGemm> {
public:
  MixedInputWorkload(const KernelSpec& spec, int device, std::uint64_t seed, cudaStream_t stream)
      : TiledGemmWorkload(spec), total_m_(spec.total_m()), problem_(make_problem(spec)),
        x_(static_cast<std::size_t>(total_m_ * spec.k) * 2, "X (tokens x k)"),
        w_(static_cast<std::size_t>(spec.experts()) * spec.n * spec.k, "W (experts x n x k bytes)"),
        scales_(kernels::MixedInputGemm::scale_count(problem_) * 2, "scales"),
        zeros_(std::max<std::size_t>(kernels::MixedInputGemm::zero_count(problem_), 2), "zero points"),
        y_(static_cast<std::size_t>(total_m_ * spec.n) * 2, "Y (tokens x n)") {
    fill_random_bf16(x_.get(), static_cast<std::size_t>(total_m_ * spec.k), seed, stream);
    fill_random_bytes(w_.get(), w_.bytes(), seed ^ 0x5bd1e995u);
    // Scales around 1/128 (0.5/128 .. 1.5/128), as symmetric int8 quantisation of unit weights gives.
    std::vector<std::uint16_t> host_scales(kernels::MixedInputGemm::scale_count(problem_));
    std::mt19937 rng(static_cast<std::uint32_t>(seed));
    for (auto& s : host_scales) {
      const float v = (0.5f + static_cast<float>(rng() % 1024) / 1024.0f) / 128.0f;
      std::uint32_t u;
      std::memcpy(&u, &v, sizeof u);
      s = static_cast<std::uint16_t>(u >> 16);
    }
    check_cuda(cudaMemcpy(scales_.get(), host_scales.data(), host_scales.size() * 2, cudaMemcpyHostToDevice),
               "cudaMemcpy(scales)");
    fill_random_bytes(zeros_.get(), zeros_.bytes(), seed ^ 0x27d4eb2fu);
    check_cuda(cudaMemsetAsync(y_.get(), 0xff, y_.bytes(), stream), "cudaMemsetAsync(Y poison)"); // NaN bf16
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (after filling the operands)");
    int sms = 0;
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
               "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)");
    kernels::MixedInputBuffers b;
    b.x = x_.get();
    b.w = w_.get();
    b.scales = scales_.get();
    b.scale_count = kernels::MixedInputGemm::scale_count(problem_);
    b.zeros = problem_.weight == kernels::WeightType::uint8 ? zeros_.get() : nullptr;
    b.zero_count = kernels::MixedInputGemm::zero_count(problem_);
    b.y = y_.get();
    try {
      gemm_ = std::make_unique<kernels::MixedInputGemm>(problem_, b, sms);
    } catch (const kernels::KernelError& e) {
      throw MeasureError(MeasureFailure::usage, spec.name + ": " + e.what());
    }
  }

  // Sampled outputs recomputed in double from the device's own operands: dequant(q) = (q - zero) * scale.
  nlohmann::json check_output() override {
    std::vector<int> token_offsets(spec_.expert_tokens.size() + 1, 0);
    for (std::size_t e = 0; e < spec_.expert_tokens.size(); ++e)
      token_offsets[e + 1] = token_offsets[e] + spec_.expert_tokens[e];
    const int groups = problem_.scale_group ? spec_.k / problem_.scale_group : 1;
    std::mt19937_64 rng(12345);
    std::vector<std::uint16_t> x_row(static_cast<std::size_t>(spec_.k)), scale_row(static_cast<std::size_t>(groups));
    std::vector<std::uint8_t> w_row(static_cast<std::size_t>(spec_.k));
    double max_error = 0.0;
    for (int s = 0; s < kCheckSamples; ++s) {
      const std::int64_t row = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(total_m_));
      const int col = static_cast<int>(rng() % static_cast<std::uint64_t>(spec_.n));
      const int expert = static_cast<int>(std::upper_bound(token_offsets.begin(), token_offsets.end(), row) -
                                          token_offsets.begin()) - 1;
      const std::int64_t channel = static_cast<std::int64_t>(expert) * spec_.n + col;
      copy(x_row.data(), static_cast<const char*>(x_.get()) + row * spec_.k * 2, x_row.size() * 2, "X row");
      copy(w_row.data(), static_cast<const char*>(w_.get()) + channel * spec_.k, w_row.size(), "W row");
      copy(scale_row.data(), static_cast<const char*>(scales_.get()) + channel * groups * 2, scale_row.size() * 2,
           "scales of the channel");
      std::uint8_t zero = 0;
      if (problem_.weight == kernels::WeightType::uint8)
        copy(&zero, static_cast<const char*>(zeros_.get()) + channel, 1, "zero point");
      std::uint16_t y_bits = 0;
      copy(&y_bits, static_cast<const char*>(y_.get()) + (row * spec_.n + col) * 2, 2, "Y element");
      double ref = 0.0, magnitude = 0.0;
      for (int k = 0; k < spec_.k; ++k) {
        const double q = problem_.weight == kernels::WeightType::int8 ? static_cast<std::int8_t>(w_row[k]) : w_row[k];
        const double w = (q - zero) * bf16_to_float(scale_row[problem_.scale_group ? k / problem_.scale_group : 0]);
        const double p = static_cast<double>(bf16_to_float(x_row[k])) * w;
        ref += p;
        magnitude += std::fabs(p);
      }
      const double got = bf16_to_float(y_bits);
      const double error = std::fabs(got - ref) / std::max(magnitude / std::sqrt(static_cast<double>(spec_.k)), 1e-30);
      if (!(error <= kCheckTolerance)) // NaN fails too
        throw MeasureError(MeasureFailure::runtime,
                           spec_.name + ": output check failed at row " + std::to_string(row) + ", col " +
                               std::to_string(col) + ": got " + std::to_string(got) + ", expected " +
                               std::to_string(ref) + "; the kernel is wrong for this spec, do not trust its timings");
      max_error = std::max(max_error, error);
    }
    return {{"samples", kCheckSamples}, {"max_scaled_error", max_error}, {"tolerance", kCheckTolerance}};
  }

private:
  static kernels::MixedInputProblem make_problem(const KernelSpec& spec) {
    kernels::MixedInputProblem p;
    p.experts = spec.experts();
    p.tokens_per_expert = spec.expert_tokens;
    p.n = spec.n;
    p.k = spec.k;
    p.weight = spec.b_dtype == Dtype::int8 ? kernels::WeightType::int8 : kernels::WeightType::uint8;
    p.scale_group = spec.quant.scale_group;
    p.conversion = spec.quant.conversion == WeightConversion::prmt ? kernels::ConversionPath::prmt
                                                                   : kernels::ConversionPath::cvt;
    p.tile_tokens = spec.tile.m;
    p.tile_n = spec.tile.n;
    p.tile_k = spec.tile.k;
    p.stages = spec.stages;
    p.persistent = spec.persistent;
    p.order = spec.order;
    p.tma_store = spec.quant.tma_store;
    return p;
  }
  static void copy(void* dst, const void* src, std::size_t bytes, const char* what) {
    check_cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), (std::string("cudaMemcpy(") + what + ")").c_str());
  }

  std::int64_t total_m_;
  kernels::MixedInputProblem problem_;
  DeviceBuffer x_, w_, scales_, zeros_, y_;
};

} // namespace

std::unique_ptr<MeasuredWorkload> make_mixed_input_workload(const KernelSpec& spec, int device, std::uint64_t seed,
                                                            cudaStream_t stream) {
  check_spec(spec);
  return std::make_unique<MixedInputWorkload>(spec, device, seed, stream);
}

} // namespace tilesim::measure
