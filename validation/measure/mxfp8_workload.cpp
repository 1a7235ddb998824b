// The MXFP8 quantiser of kernels/mxfp8/ as a measured workload, built from a kernel spec
// ("kind": "mxfp8_quantize"). The output check quantises sampled blocks with the CPU reference and
// compares bytes: scales and elements must match exactly.
#include "kernels/mxfp8/mxfp8.h"
#include "kernels/mxfp8/mxfp8_reference.h"
#include "models/kernel_spec.h"
#include "validation/measure/device_buffer.h"
#include "validation/measure/device_fill.h"
#include "validation/measure/measure_error.h"
#include "validation/measure/workload.h"

#include <random>

namespace tilesim::measure {
namespace {

namespace ref = kernels::mxfp8_reference;
constexpr int kCheckBlocks = 64;

template <typename T> T read_device(const void *base, std::int64_t index) {
  T v{};
  check_cuda(cudaMemcpy(&v, static_cast<const T *>(base) + index, sizeof(T), cudaMemcpyDeviceToHost),
             "cudaMemcpy(output sample)");
  return v;
}

class Mxfp8QuantizeWorkload final : public MeasuredWorkload {
public:
  Mxfp8QuantizeWorkload(const KernelSpec &spec, int device, std::uint64_t seed, cudaStream_t stream)
      : spec_(spec), x_(static_cast<std::size_t>(spec.mxfp8.elements()) * 2, "x (bf16)"),
        elements_(static_cast<std::size_t>(spec.mxfp8.elements()), "elements (fp8)"),
        scales_(static_cast<std::size_t>(spec.mxfp8.elements() / ref::kBlock), "scales (e8m0)") {
    fill_random_bf16(x_.get(), static_cast<std::size_t>(spec.mxfp8.elements()), seed, stream);
    check_cuda(cudaMemsetAsync(elements_.get(), 0xFF, elements_.bytes(), stream), "cudaMemsetAsync(elements poison)");
    check_cuda(cudaMemsetAsync(scales_.get(), 0xA5, scales_.bytes(), stream), "cudaMemsetAsync(scales poison)");
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (after filling the input)");
    int sms = 0;
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
               "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)");
    try {
      kernel_ = std::make_unique<kernels::Mxfp8Quantize>(spec.mxfp8, x_.get(), elements_.get(), scales_.get(), sms);
    } catch (const kernels::KernelError &e) {
      throw MeasureError(MeasureFailure::usage, spec.name + ": " + e.what());
    }
  }

  void launch(cudaStream_t stream) override {
    try {
      kernel_->run(stream);
    } catch (const kernels::KernelError &e) {
      throw MeasureError(MeasureFailure::runtime, e.what());
    }
  }

  double flops() const override { return spec_.flops(); }
  nlohmann::json kernel_json() const override {
    nlohmann::json j = to_json(spec_);
    j["grid"] = kernel_->grid_size();
    return j;
  }
  std::string order_name() const override { return "grid"; }
  std::vector<TileRecord> run_traced(cudaStream_t) override {
    throw MeasureError(MeasureFailure::usage, spec_.name + ": the MXFP8 quantiser has no tile trace; drop --trace");
  }

  // Sampled blocks, the last one included, against the CPU reference on the device's own input.
  nlohmann::json check_output() override {
    const Mxfp8QuantizeShape &s = spec_.mxfp8;
    const bool rowwise = s.axis == Mxfp8Axis::rowwise;
    const std::int64_t length = rowwise ? s.cols : s.rows, blocks = s.elements() / ref::kBlock;
    std::mt19937_64 rng(12345);
    for (int sample = 0; sample < kCheckBlocks; ++sample) {
      const std::int64_t block = sample == 0 ? blocks - 1 : static_cast<std::int64_t>(rng() % blocks);
      const std::int64_t line = block / (length / ref::kBlock), start = block % (length / ref::kBlock) * ref::kBlock;
      std::uint16_t values[ref::kBlock];
      for (int i = 0; i < ref::kBlock; ++i)
        values[i] =
            read_device<std::uint16_t>(x_.get(), rowwise ? line * s.cols + start + i : (start + i) * s.cols + line);
      const ref::Block want = ref::quantize_block(values, 1, s.scale_rule, s.element);
      bool same = read_device<std::uint8_t>(scales_.get(), block) == want.scale;
      for (int i = 0; i < ref::kBlock && same; ++i)
        same = read_device<std::uint8_t>(elements_.get(), line * length + start + i) == want.elements[i];
      if (!same)
        throw MeasureError(
            MeasureFailure::runtime,
            spec_.name + ": output check failed at block " + std::to_string(block) +
                " (bytes differ from the CPU reference); the kernel is wrong for this spec, do not trust its timings");
    }
    return {{"blocks_checked", kCheckBlocks}, {"bit_exact", true}};
  }

private:
  KernelSpec spec_;
  DeviceBuffer x_, elements_, scales_;
  std::unique_ptr<kernels::Mxfp8Quantize> kernel_;
};

} // namespace

std::unique_ptr<MeasuredWorkload> make_mxfp8_quantize_workload(const KernelSpec &spec, int device, std::uint64_t seed,
                                                               cudaStream_t stream) {
  return std::make_unique<Mxfp8QuantizeWorkload>(spec, device, seed, stream);
}

} // namespace tilesim::measure
