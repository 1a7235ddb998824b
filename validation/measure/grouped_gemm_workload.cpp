// The grouped GEMM of kernels/ as a measured workload, built from a kernel spec.
#include "kernels/common/activations_check.h"
#include "kernels/grouped_gemm/grouped_gemm.h"
#include "models/kernel_spec.h"
#include "models/launch_order.h"
#include "models/launch_order_names.h"
#include "validation/measure/device_fill.h"
#include "validation/measure/measure_error.h"
#include "validation/measure/tiled_gemm_workload.h"

#include <cuda_bf16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace tilesim::measure {
namespace {

// The kernel is one producer warpgroup plus two consumer warpgroups (kernels/grouped_gemm/grouped_gemm_kernel.cuh).
constexpr int kKernelWarps = 12;
constexpr int kCheckSamples = 48;
// bf16 output of a K-long fp32 dot product: one bf16 rounding (2^-8 relative) dominates.
constexpr double kCheckTolerance = 2e-2;

// The epilogue applied to the double reference: bias, then ReLU or GELU (tanh form, as
// kernels/common/activations.cuh).
double epilogue_reference(GemmEpilogue epilogue, double acc, double bias) {
  if (epilogue == GemmEpilogue::none) return acc;
  const double v = acc + bias;
  return epilogue == GemmEpilogue::bias_relu ? kernels::relu_reference(v) : kernels::gelu_tanh_reference(v);
}

void require(bool ok, const std::string& spec, const std::string& field, const std::string& problem) {
  if (!ok) throw MeasureError(MeasureFailure::usage, spec + ": " + field + ": " + problem);
}

void check_spec(const KernelSpec& s) {
  const std::string& n = s.name;
  require(s.a_dtype == Dtype::bf16 && s.b_dtype == Dtype::bf16 && s.c_dtype == Dtype::bf16, n, "dtype",
          "the measured kernel is bf16 only; use \"dtype\": \"bf16\"");
  require(s.a_layout == MatrixLayout::row, n, "layout.a", "the kernel reads X row-major; use \"row\"");
  require(s.b_layout == MatrixLayout::col, n, "layout.b",
          "the kernel computes Y = X * W^T with W k-contiguous; use \"col\"");
  require(s.load == LoadPath::tma, n, "load", "the kernel loads with TMA; use \"tma\"");
  require(s.warps == kKernelWarps, n, "warps",
          "the kernel runs 3 warpgroups (1 producer, 2 consumers); use " + std::to_string(kKernelWarps));
  const std::string reason =
      kernels::grouped_gemm_unsupported_reason(s.tile.m, s.tile.n, s.tile.k, s.stages);
  require(reason.empty(), n, "tile/stages", reason);
  require(s.n % 8 == 0 && s.k % 8 == 0, n, "n/k", "must be multiples of 8 (16-byte TMA row strides)");
}

std::size_t bf16_count(std::int64_t rows, std::int64_t cols) { return static_cast<std::size_t>(rows * cols); }

float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

class GroupedGemmWorkload final : public TiledGemmWorkload<kernels::GroupedGemm> {
public:
  GroupedGemmWorkload(const KernelSpec& spec, int device, std::uint64_t seed, cudaStream_t stream)
      : TiledGemmWorkload(spec), total_m_(spec.total_m()),
        x_(bf16_count(total_m_, spec.k) * 2, "X (tokens x k)"),
        w_(bf16_count(static_cast<std::int64_t>(spec.experts()) * spec.n, spec.k) * 2, "W (experts x n x k)"),
        y_(bf16_count(total_m_, spec.n) * 2, "Y (tokens x n)"),
        bias_(spec.epilogue == GemmEpilogue::none ? 0 : bf16_count(spec.experts(), spec.n) * 2, "bias (experts x n)") {
    fill_random_bf16(x_.get(), bf16_count(total_m_, spec.k), seed, stream);
    fill_random_bf16(w_.get(), bf16_count(static_cast<std::int64_t>(spec.experts()) * spec.n, spec.k),
                     seed ^ 0x5bd1e995u, stream);
    if (spec.epilogue != GemmEpilogue::none)
      fill_random_bf16(bias_.get(), bf16_count(spec.experts(), spec.n), seed ^ 0x27d4eb2fu, stream);
    check_cuda(cudaMemsetAsync(y_.get(), 0xff, y_.bytes(), stream), "cudaMemsetAsync(Y poison)"); // NaN bf16
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (after filling the operands)");
    int sms = 0;
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
               "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)");
    kernels::GroupedGemmProblem p;
    p.experts = spec.experts();
    p.tokens_per_expert = spec.expert_tokens;
    p.n = spec.n;
    p.k = spec.k;
    p.tile_m = spec.tile.m;
    p.tile_n = spec.tile.n;
    p.tile_k = spec.tile.k;
    p.stages = spec.stages;
    p.persistent = spec.persistent;
    p.order = spec.order;
    p.epilogue = spec.epilogue;
    if (spec.cluster != 2)
      throw MeasureError(MeasureFailure::usage, spec.name + ": cluster: kernels/ runs clusters of 2 CTAs; set \"cluster\": 2");
    try {
      gemm_ = std::make_unique<kernels::GroupedGemm>(p, x_.get(), w_.get(), y_.get(), sms,
                                                     spec.epilogue == GemmEpilogue::none ? nullptr : bias_.get());
    } catch (const kernels::KernelError& e) {
      throw MeasureError(MeasureFailure::usage, spec.name + ": " + e.what());
    }
  }

  nlohmann::json check_output() override {
    // Recompute sampled outputs in double from the device's own bf16 operands.
    std::vector<int> token_offsets(spec_.expert_tokens.size() + 1, 0);
    for (std::size_t e = 0; e < spec_.expert_tokens.size(); ++e)
      token_offsets[e + 1] = token_offsets[e] + spec_.expert_tokens[e];
    std::mt19937_64 rng(12345);
    std::vector<std::uint16_t> x_row(static_cast<std::size_t>(spec_.k)), w_row(static_cast<std::size_t>(spec_.k));
    double max_error = 0.0;
    for (int s = 0; s < kCheckSamples; ++s) {
      const std::int64_t row = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(total_m_));
      const int col = static_cast<int>(rng() % static_cast<std::uint64_t>(spec_.n));
      const int expert =
          static_cast<int>(std::upper_bound(token_offsets.begin(), token_offsets.end(), row) - token_offsets.begin()) - 1;
      const auto* x = static_cast<const char*>(x_.get()) + row * spec_.k * 2;
      const auto* w = static_cast<const char*>(w_.get()) +
                      (static_cast<std::int64_t>(expert) * spec_.n + col) * spec_.k * 2;
      check_cuda(cudaMemcpy(x_row.data(), x, x_row.size() * 2, cudaMemcpyDeviceToHost), "cudaMemcpy(X row)");
      check_cuda(cudaMemcpy(w_row.data(), w, w_row.size() * 2, cudaMemcpyDeviceToHost), "cudaMemcpy(W row)");
      std::uint16_t y_bits = 0;
      check_cuda(cudaMemcpy(&y_bits, static_cast<const char*>(y_.get()) + (row * spec_.n + col) * 2, 2,
                            cudaMemcpyDeviceToHost),
                 "cudaMemcpy(Y element)");
      double ref = 0.0, scale = 0.0;
      for (int k = 0; k < spec_.k; ++k) {
        const double p = static_cast<double>(bf16_to_float(x_row[k])) * bf16_to_float(w_row[k]);
        ref += p;
        scale += std::fabs(p);
      }
      if (spec_.epilogue != GemmEpilogue::none) {
        std::uint16_t bias_bits = 0;
        check_cuda(cudaMemcpy(&bias_bits, static_cast<const char*>(bias_.get()) + (static_cast<std::int64_t>(expert) * spec_.n + col) * 2,
                              2, cudaMemcpyDeviceToHost),
                   "cudaMemcpy(bias element)");
        ref = epilogue_reference(spec_.epilogue, ref, bf16_to_float(bias_bits));
      }
      const double got = bf16_to_float(y_bits);
      const double error = std::fabs(got - ref) / std::max(scale / std::sqrt(static_cast<double>(spec_.k)), 1e-30);
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
  std::int64_t total_m_;
  DeviceBuffer x_, w_, y_, bias_;
};

} // namespace

std::unique_ptr<MeasuredWorkload> make_grouped_gemm_workload(const KernelSpec& spec, int device, std::uint64_t seed,
                                                             cudaStream_t stream) {
  check_spec(spec);
  return std::make_unique<GroupedGemmWorkload>(spec, device, seed, stream);
}

} // namespace tilesim::measure
