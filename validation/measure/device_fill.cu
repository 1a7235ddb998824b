#include "validation/measure/device_fill.h"

#include "validation/measure/measure_error.h"

#include <cuda_bf16.h>

#include <algorithm>
#include <string>
#include <utility>

// Named extern "C" so its activity records are easy to tell from the measured kernel's
// (kL2FlushKernelName in device_fill.h).
extern "C" __global__ void tilesim_l2_flush_kernel(const int4* data, std::size_t count, int* sink) {
  int acc = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int4 v = data[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) *sink = acc; // keeps the loads; practically never stores
}

namespace tilesim::measure {
namespace {

constexpr int kThreads = 256;
constexpr int kMaxBlocks = 4096;

__global__ void fill_random_bf16_kernel(__nv_bfloat16* data, std::size_t count, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < count;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::uint64_t h = splitmix64(i * 0x9e3779b97f4a7c15ULL + seed);
    // 24 random bits -> [-1, 1) in steps of 2^-23, then nudged off zero.
    float v = static_cast<float>(h >> 40) * (2.0f / 16777216.0f) - 1.0f;
    if (v == 0.0f) v = 0.5f;
    data[i] = __float2bfloat16(v);
  }
}

} // namespace

DeviceBuffer::DeviceBuffer(std::size_t bytes, const char* what) : bytes_(bytes) {
  const cudaError_t status = cudaMalloc(&data_, bytes);
  if (status != cudaSuccess) {
    data_ = nullptr;
    check_cuda(status, (std::string("cudaMalloc(") + what + ", " + std::to_string(bytes) + " bytes)").c_str());
  }
}

DeviceBuffer::~DeviceBuffer() {
  if (data_) cudaFree(data_); // no throw from a destructor
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (data_) cudaFree(data_);
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
  }
  return *this;
}

void fill_random_bf16(void* data, std::size_t count, std::uint64_t seed, cudaStream_t stream) {
  if (count == 0) return;
  const std::size_t blocks = std::min<std::size_t>((count + kThreads - 1) / kThreads, kMaxBlocks);
  fill_random_bf16_kernel<<<static_cast<unsigned>(blocks), kThreads, 0, stream>>>(
      static_cast<__nv_bfloat16*>(data), count, seed);
  check_cuda(cudaGetLastError(), "fill_random_bf16_kernel launch");
}

L2Flusher::L2Flusher(int device) {
  int l2_bytes = 0;
  check_cuda(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device),
             "cudaDeviceGetAttribute(cudaDevAttrL2CacheSize)");
  scratch_ = DeviceBuffer(2 * static_cast<std::size_t>(l2_bytes), "L2 flush buffer");
  sink_ = DeviceBuffer(sizeof(int), "L2 flush sink");
  check_cuda(cudaMemset(scratch_.get(), 0x5a, scratch_.bytes()), "cudaMemset(L2 flush buffer)");
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize (after filling the L2 flush buffer)");
}

void L2Flusher::flush(cudaStream_t stream) const {
  const std::size_t count = scratch_.bytes() / sizeof(int4);
  tilesim_l2_flush_kernel<<<kMaxBlocks, kThreads, 0, stream>>>(static_cast<const int4*>(scratch_.get()), count,
                                                               static_cast<int*>(sink_.get()));
  check_cuda(cudaGetLastError(), "tilesim_l2_flush_kernel launch");
}

} // namespace tilesim::measure
