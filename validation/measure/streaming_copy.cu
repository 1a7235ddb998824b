// A streaming device-to-device copy: the harness's known-answer workload. With a buffer far larger
// than the L2, dram__bytes_read must come out at the buffer size (each byte read once) and
// dram__bytes_write close to it (less what is still dirty in the L2 at the kernel's end).
#include "validation/measure/device_fill.h"
#include "validation/measure/measure_error.h"
#include "validation/measure/workload.h"

#include <cuda_bf16.h>

namespace tilesim::measure {
namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 8;

__global__ void streaming_copy_kernel(const int4* __restrict__ src, int4* __restrict__ dst, std::size_t count) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

class StreamingCopy final : public MeasuredWorkload {
public:
  StreamingCopy(std::size_t bytes, std::uint64_t seed, cudaStream_t stream)
      : bytes_(bytes / sizeof(int4) * sizeof(int4)), src_(bytes_, "copy source"), dst_(bytes_, "copy destination") {
    if (bytes_ == 0) throw MeasureError(MeasureFailure::usage, "--copy-bytes must be at least 16");
    int device = 0, sms = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
               "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)");
    blocks_ = sms * kBlocksPerSm;
    fill_random_bf16(src_.get(), bytes_ / 2, seed, stream);
    check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (after filling the copy source)");
  }

  void launch(cudaStream_t stream) override {
    streaming_copy_kernel<<<blocks_, kThreads, 0, stream>>>(static_cast<const int4*>(src_.get()),
                                                            static_cast<int4*>(dst_.get()), bytes_ / sizeof(int4));
    check_cuda(cudaGetLastError(), "streaming_copy_kernel launch");
  }
  double flops() const override { return 0.0; }
  nlohmann::json kernel_json() const override {
    return {{"name", "streaming_copy"}, {"kind", "copy"}, {"bytes", bytes_}};
  }
  std::string order_name() const override { return "none"; }
  std::vector<TileRecord> run_traced(cudaStream_t) override {
    throw MeasureError(MeasureFailure::usage, "the streaming copy has no tile trace; drop --trace");
  }
  nlohmann::json check_output() override {
    // Compare the last 4 KiB of source and destination on the host.
    const std::size_t tail = std::min<std::size_t>(bytes_, 4096);
    std::vector<unsigned char> a(tail), b(tail);
    const std::size_t offset = bytes_ - tail;
    check_cuda(cudaMemcpy(a.data(), static_cast<char*>(src_.get()) + offset, tail, cudaMemcpyDeviceToHost),
               "cudaMemcpy(copy source tail)");
    check_cuda(cudaMemcpy(b.data(), static_cast<char*>(dst_.get()) + offset, tail, cudaMemcpyDeviceToHost),
               "cudaMemcpy(copy destination tail)");
    if (a != b) throw MeasureError(MeasureFailure::runtime, "streaming copy: the destination differs from the source");
    return {{"checked_bytes", tail}, {"equal", true}};
  }

private:
  std::size_t bytes_;
  DeviceBuffer src_;
  DeviceBuffer dst_;
  int blocks_ = 0;
};

} // namespace

std::unique_ptr<MeasuredWorkload> make_streaming_copy_workload(std::size_t bytes, std::uint64_t seed,
                                                               cudaStream_t stream) {
  return std::make_unique<StreamingCopy>(bytes, seed, stream);
}

} // namespace tilesim::measure
