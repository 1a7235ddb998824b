// An owning device allocation (cudaMalloc) that frees itself; the harness's only memory owner.
#pragma once

#include <cstddef>

namespace tilesim::measure {

class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(std::size_t bytes, const char* what); // throws MeasureError naming `what`
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return data_; }
  std::size_t bytes() const { return bytes_; }

private:
  void* data_ = nullptr;
  std::size_t bytes_ = 0;
};

} // namespace tilesim::measure
