// The MXFP8 grouped GEMM of kernels/mxfp8/ (any scheme, block_scale.scheme) as a measured workload, built from a
// kernel spec with "dtype": "mxfp8". Its operands are what training would feed it: random bf16 X and
// W, each quantised along K by our rowwise quantiser (round-up rule, E4M3). The output check
// recomputes sampled outputs from the device's own FP8 elements and scales on the CPU
// (kernels/mxfp8/mxfp8_gemm_reference.h).
#include "kernels/mxfp8/mxfp8.h"
#include "kernels/mxfp8/mxfp8_gemm.h"
#include "kernels/mxfp8/mxfp8_gemm_reference.h"
#include "models/kernel_spec.h"
#include "models/launch_order_names.h"
#include "validation/measure/device_buffer.h"
#include "validation/measure/device_fill.h"
#include "validation/measure/measure_error.h"
#include "validation/measure/tiled_gemm_workload.h"

#include <algorithm>
#include <random>

namespace tilesim::measure {
namespace {

namespace ref = kernels::mxfp8_reference;
constexpr int kKernelWarps = 12; // promote, dequantize: one producer and two consumer warpgroups
constexpr int kCheckSamples = 48;

void require(bool ok, const std::string& spec, const std::string& field, const std::string& problem) {
  if (!ok) throw MeasureError(MeasureFailure::usage, spec + ": " + field + ": " + problem);
}

kernels::Mxfp8GemmScheme scheme_of(const KernelSpec& s) {
  switch (s.block_scale.scheme) {
  case BlockScaleScheme::dequantize: return kernels::Mxfp8GemmScheme::dequantize;
  case BlockScaleScheme::transposed: return kernels::Mxfp8GemmScheme::transposed;
  case BlockScaleScheme::xpass: return kernels::Mxfp8GemmScheme::xpass;
  case BlockScaleScheme::xpass_f16: return kernels::Mxfp8GemmScheme::xpass_f16;
  default: return kernels::Mxfp8GemmScheme::promote;
  }
}

// The transposed scheme's warps: a producer warpgroup and four consumers at 16 or 32 tokens per
// tile, two at 64 or 128 (kernels/mxfp8/mxfp8_transposed_kernel.cuh; 128 x 128 tiles: two too).
int transposed_warps(int tile_m, int tile_n) { return 4 * (1 + (tile_m <= 32 && tile_n == 64 ? 4 : 2)); }

void check_spec(const KernelSpec& s) {
  const std::string& n = s.name;
  require(s.block_scale.element == Mxfp8Element::e4m3, n, "block_scale.element",
          "both schemes' kernels take E4M3 elements (promote's wgmma, dequantize's conversion); use \"e4m3\"");
  require(s.c_dtype == Dtype::bf16, n, "c_dtype", "the kernel writes bf16; use \"bf16\"");
  require(s.a_layout == MatrixLayout::row && s.b_layout == MatrixLayout::col, n, "layout",
          "the kernel computes Y = X * W^T with both K-contiguous; use {\"a\": \"row\", \"b\": \"col\"}");
  require(s.load == LoadPath::tma, n, "load", "the kernel loads with TMA; use \"tma\"");
  if (s.block_scale.scheme == BlockScaleScheme::transposed || s.block_scale.scheme == BlockScaleScheme::xpass ||
      s.block_scale.scheme == BlockScaleScheme::xpass_f16) {
    const int warps = transposed_warps(s.tile.m, s.tile.n);
    require(s.warps == warps, n, "warps",
            "the transposed kernel runs " + std::to_string(warps / 4) + " warpgroups at tile " +
                std::to_string(s.tile.m) + " x " + std::to_string(s.tile.n) + "; use " + std::to_string(warps));
    require(s.cluster == 1, n, "cluster", "the transposed kernel runs no clusters; set \"cluster\": 1");
  } else {
    require(s.warps == kKernelWarps, n, "warps", "the kernel runs 3 warpgroups (1 producer, 2 consumers); use 12");
    require(s.cluster == 2, n, "cluster", "the kernel runs clusters of 2 CTAs; set \"cluster\": 2");
  }
  const std::string tile =
      kernels::mxfp8_gemm_unsupported_reason(s.tile.m, s.tile.n, s.tile.k, s.stages, scheme_of(s));
  require(tile.empty(), n, "tile/stages", tile);
  const std::string k = kernels::mxfp8_gemm_k_reason(s.k);
  require(k.empty(), n, "k", k);
  require(s.n % 8 == 0, n, "n", "must be a multiple of 8 (16-byte rows of Y)");
}

// bf16 [rows, k] random, quantised rowwise into elements [rows, k] and scales [rows, k / 32].
void quantised_random(DeviceBuffer& elements, DeviceBuffer& scales, std::int64_t rows, int k, std::uint64_t seed,
                      int sms, cudaStream_t stream) {
  DeviceBuffer bf16(static_cast<std::size_t>(rows) * k * 2, "bf16 operand before quantisation");
  fill_random_bf16(bf16.get(), static_cast<std::size_t>(rows) * k, seed, stream);
  Mxfp8QuantizeShape shape;
  shape.rows = rows;
  shape.cols = k;
  kernels::Mxfp8Quantize(shape, bf16.get(), elements.get(), scales.get(), sms).run(stream);
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (after quantising an operand)");
}

template <typename T> std::vector<T> read_device(const void* base, std::int64_t offset, std::size_t count) {
  std::vector<T> v(count);
  check_cuda(cudaMemcpy(v.data(), static_cast<const T*>(base) + offset, count * sizeof(T), cudaMemcpyDeviceToHost),
             "cudaMemcpy(output check sample)");
  return v;
}

class Mxfp8GemmWorkload final : public TiledGemmWorkload<kernels::Mxfp8GroupedGemm> {
public:
  Mxfp8GemmWorkload(const KernelSpec& spec, int device, std::uint64_t seed, cudaStream_t stream)
      : TiledGemmWorkload(spec), total_m_(spec.total_m()), w_rows_(static_cast<std::int64_t>(spec.experts()) * spec.n),
        x_(static_cast<std::size_t>(total_m_) * spec.k, "X (e4m3, tokens x k)"),
        x_scales_(static_cast<std::size_t>(total_m_) * spec.k / 32, "X scales (e8m0)"),
        w_(static_cast<std::size_t>(w_rows_) * spec.k, "W (e4m3, experts x n x k)"),
        w_scales_(static_cast<std::size_t>(w_rows_) * spec.k / 32, "W scales (e8m0)"),
        y_(static_cast<std::size_t>(total_m_) * spec.n * 2, "Y (bf16, tokens x n)") {
    int sms = 0;
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
               "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)");
    try {
      quantised_random(x_, x_scales_, total_m_, spec.k, seed, sms, stream);
      quantised_random(w_, w_scales_, w_rows_, spec.k, seed ^ 0x5bd1e995u, sms, stream);
      check_cuda(cudaMemsetAsync(y_.get(), 0xff, y_.bytes(), stream), "cudaMemsetAsync(Y poison)"); // NaN bf16
      check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (after poisoning Y)");
      kernels::Mxfp8GemmProblem p;
      p.experts = spec.experts();
      p.tokens_per_expert = spec.expert_tokens;
      p.n = spec.n;
      p.k = spec.k;
      p.stages = spec.stages;
      p.persistent = spec.persistent;
      p.order = spec.order;
      p.scheme = scheme_of(spec);
      p.tile_tokens = spec.tile.m;
      if (p.scheme == kernels::Mxfp8GemmScheme::transposed || p.scheme == kernels::Mxfp8GemmScheme::xpass ||
          p.scheme == kernels::Mxfp8GemmScheme::xpass_f16)
        p.tile_channels = spec.tile.n;
      gemm_ = std::make_unique<kernels::Mxfp8GroupedGemm>(p, x_.get(), x_scales_.get(), w_.get(), w_scales_.get(),
                                                           y_.get(), sms);
    } catch (const kernels::KernelError& e) {
      throw MeasureError(MeasureFailure::usage, spec.name + ": " + e.what());
    }
  }

  // Sampled outputs (the last row's last column among them) from the device's own operands.
  nlohmann::json check_output() override {
    std::vector<std::int64_t> token_offsets(spec_.expert_tokens.size() + 1, 0);
    for (std::size_t e = 0; e < spec_.expert_tokens.size(); ++e)
      token_offsets[e + 1] = token_offsets[e] + spec_.expert_tokens[e];
    std::mt19937_64 rng(12345);
    const int blocks = spec_.k / ref::kBlock;
    double worst = 0.0;
    for (int s = 0; s < kCheckSamples; ++s) {
      const std::int64_t row = s == 0 ? total_m_ - 1 : static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(total_m_));
      const int col = s == 0 ? spec_.n - 1 : static_cast<int>(rng() % static_cast<std::uint64_t>(spec_.n));
      const auto expert = std::upper_bound(token_offsets.begin(), token_offsets.end(), row) - token_offsets.begin() - 1;
      const std::int64_t w_row = static_cast<std::int64_t>(expert) * spec_.n + col;
      const auto x = read_device<std::uint8_t>(x_.get(), row * spec_.k, spec_.k);
      const auto xs = read_device<std::uint8_t>(x_scales_.get(), row * blocks, blocks);
      const auto w = read_device<std::uint8_t>(w_.get(), w_row * spec_.k, spec_.k);
      const auto ws = read_device<std::uint8_t>(w_scales_.get(), w_row * blocks, blocks);
      const std::uint16_t y = read_device<std::uint16_t>(y_.get(), row * spec_.n + col, 1)[0];
      const ref::DotProduct want = ref::dequantised_dot(x.data(), xs.data(), w.data(), ws.data(), spec_.k);
      const double got = ref::bf16_to_double(y);
      if (!ref::agrees(got, want))
        throw MeasureError(MeasureFailure::runtime,
                           spec_.name + ": output check failed at row " + std::to_string(row) + ", col " +
                               std::to_string(col) + ": got " + std::to_string(got) + ", expected " +
                               std::to_string(want.value) + "; the kernel is wrong for this spec, do not trust its timings");
      worst = std::max(worst, std::fabs(got - want.value) / ref::tolerance(want));
    }
    return {{"samples", kCheckSamples}, {"worst_error_of_tolerance", worst}, {"reference", "fp32 of the dequantised operands"}};
  }

private:
  std::int64_t total_m_, w_rows_;
  DeviceBuffer x_, x_scales_, w_, w_scales_, y_;
};

} // namespace

std::unique_ptr<MeasuredWorkload> make_mxfp8_gemm_workload(const KernelSpec& spec, int device, std::uint64_t seed,
                                                           cudaStream_t stream) {
  check_spec(spec);
  return std::make_unique<Mxfp8GemmWorkload>(spec, device, seed, stream);
}

} // namespace tilesim::measure
