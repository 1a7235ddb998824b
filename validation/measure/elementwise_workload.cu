// The element-wise kernel of kernels/elementwise/ as a measured workload, built from a kernel spec.
#include "kernels/elementwise/elementwise.h"
#include "kernels/elementwise/elementwise_check_reference.h"
#include "models/kernel_spec.h"
#include "validation/measure/device_buffer.h"
#include "validation/measure/device_fill.h"
#include "validation/measure/measure_error.h"
#include "validation/measure/workload.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>

namespace tilesim::measure {
namespace {

constexpr int kCheckSamples = 64;
constexpr int kFillThreads = 256;
constexpr int kFillBlocks = 4096;

// Uniform in [-4, 4), never exactly 0 (zeros hide indexing errors), rounded to T.
template <typename T> __global__ void fill_random_kernel(T* data, std::size_t count, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    float v = static_cast<float>(splitmix64(i * 0x9e3779b97f4a7c15ULL + seed) >> 40) * (8.0f / 16777216.0f) - 4.0f;
    if (v == 0.0f) v = 0.5f;
    data[i] = static_cast<T>(v);
  }
}

template <typename T> void fill_random(void* data, std::size_t count, std::uint64_t seed, cudaStream_t stream) {
  fill_random_kernel<T><<<kFillBlocks, kFillThreads, 0, stream>>>(static_cast<T*>(data), count, seed);
  check_cuda(cudaGetLastError(), "fill_random_kernel launch");
}

int element_bytes(Dtype d) { return dtype_bits(d) / 8; }

double read_element(Dtype d, const void* base, std::int64_t i) {
  const char* p = static_cast<const char*>(base) + i * element_bytes(d);
  if (d == Dtype::fp32) {
    float f;
    check_cuda(cudaMemcpy(&f, p, 4, cudaMemcpyDeviceToHost), "cudaMemcpy(element)");
    return f;
  }
  std::uint16_t bits;
  check_cuda(cudaMemcpy(&bits, p, 2, cudaMemcpyDeviceToHost), "cudaMemcpy(element)");
  if (d == Dtype::fp16) return static_cast<double>(__half2float(__half(__half_raw{bits})));
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

class ElementwiseWorkload final : public MeasuredWorkload {
public:
  ElementwiseWorkload(const KernelSpec& spec, int device, std::uint64_t seed, cudaStream_t stream)
      : spec_(spec), bytes_(static_cast<std::size_t>(spec.elementwise.elements) * element_bytes(spec.a_dtype)),
        x_(bytes_, "x (elements)"), y_(input_count(spec.elementwise.op) == 2 ? bytes_ : 0, "y (elements)"),
        out_(bytes_, "out (elements)") {
    const auto count = static_cast<std::size_t>(spec.elementwise.elements);
    const auto fill = spec.a_dtype == Dtype::fp32   ? &fill_random<float>
                      : spec.a_dtype == Dtype::bf16 ? &fill_random<__nv_bfloat16>
                                                    : &fill_random<__half>;
    fill(x_.get(), count, seed, stream);
    if (y_.get()) fill(y_.get(), count, seed ^ 0x5bd1e995u, stream);
    check_cuda(cudaMemsetAsync(out_.get(), 0xff, out_.bytes(), stream), "cudaMemsetAsync(out poison)"); // NaN
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (after filling the inputs)");
    int sms = 0;
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
               "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)");
    kernels::ElementwiseProblem p;
    p.op = spec.elementwise.op;
    p.dtype = spec.a_dtype;
    p.elements = spec.elementwise.elements;
    p.block = spec.elementwise.block;
    p.vector = spec.elementwise.vector;
    p.unroll = spec.elementwise.unroll;
    p.persistent = spec.persistent;
    p.launcher_shape = !spec.elementwise.shape_named;
    try {
      kernel_ = std::make_unique<kernels::Elementwise>(p, x_.get(), y_.get(), out_.get(), sms);
    } catch (const kernels::KernelError& e) {
      throw MeasureError(MeasureFailure::usage, spec.name + ": " + e.what());
    }
  }

  void launch(cudaStream_t stream) override {
    try {
      kernel_->run(stream);
    } catch (const kernels::KernelError& e) {
      throw MeasureError(MeasureFailure::runtime, e.what());
    }
  }

  double flops() const override { return spec_.flops(); }
  nlohmann::json kernel_json() const override {
    nlohmann::json j = to_json(spec_);
    j["block"] = kernel_->problem().block; // as launched: the launcher's pick where the spec names none
    j["unroll"] = kernel_->problem().unroll;
    j["grid"] = kernel_->grid_size();
    j["steps"] = kernel_->steps();
    return j;
  }
  std::string order_name() const override { return spec_.persistent ? "persistent" : "grid"; }
  std::vector<TileRecord> run_traced(cudaStream_t) override {
    throw MeasureError(MeasureFailure::usage, spec_.name + ": the element-wise kernel has no tile trace; drop --trace");
  }

  // Samples spread over the array, plus the last elements (the masked tail), against a double
  // reference computed from the device's own inputs.
  nlohmann::json check_output() override {
    const std::int64_t n = spec_.elementwise.elements;
    const Dtype d = spec_.a_dtype;
    const double unit = d == Dtype::fp32 ? 0x1p-23 : d == Dtype::bf16 ? 0x1p-7 : 0x1p-10;
    // Below the smallest normal the spacing is fixed: half the smallest subnormal bounds the rounding.
    const double half_subnormal = d == Dtype::fp32 ? 0x1p-150 : d == Dtype::bf16 ? 0x1p-134 : 0x1p-25;
    std::mt19937_64 rng(12345);
    double max_error = 0.0;
    for (int s = 0; s < kCheckSamples; ++s) {
      const std::int64_t i = s < 8 ? std::max<std::int64_t>(0, n - 1 - s) : static_cast<std::int64_t>(rng() % n);
      const double a = read_element(d, x_.get(), i);
      const double b = y_.get() ? read_element(d, y_.get(), i) : 0.0;
      const double want = kernels::elementwise_reference(spec_.elementwise.op, a, b);
      const double got = read_element(d, out_.get(), i);
      // The output's rounding, plus tanh.approx.f32's 2^-11 for GELU (kernels/common/activations.cuh).
      const double tolerance = unit * std::fabs(want) + half_subnormal +
                               (spec_.elementwise.op == ElementwiseOp::gelu ? 2e-3 * (std::fabs(want) + 0.1) : 0.0);
      const double error = std::fabs(got - want);
      if (!(error <= tolerance)) // NaN (the poison) fails too
        throw MeasureError(MeasureFailure::runtime,
                           spec_.name + ": output check failed at element " + std::to_string(i) + ": got " +
                               std::to_string(got) + ", expected " + std::to_string(want) +
                               "; the kernel is wrong for this spec, do not trust its timings");
      max_error = std::max(max_error, error / std::max(tolerance, 1e-30));
    }
    return {{"samples", kCheckSamples}, {"max_error_in_tolerances", max_error}};
  }

private:
  KernelSpec spec_;
  std::size_t bytes_;
  DeviceBuffer x_, y_, out_;
  std::unique_ptr<kernels::Elementwise> kernel_;
};

} // namespace

std::unique_ptr<MeasuredWorkload> make_elementwise_workload(const KernelSpec& spec, int device, std::uint64_t seed,
                                                            cudaStream_t stream) {
  return std::make_unique<ElementwiseWorkload>(spec, device, seed, stream);
}

} // namespace tilesim::measure
