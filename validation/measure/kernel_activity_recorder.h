// Kernel durations from the CUPTI Activity API (CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL): the GPU's
// own start and end timestamps of each kernel, free of launch overhead and host clocks.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tilesim::measure {

struct KernelActivity {
  std::string name;
  std::uint64_t start_ns = 0; // GPU timestamps (ns)
  std::uint64_t end_ns = 0;
  std::uint32_t correlation_id = 0;
};

// Records every kernel that runs between start() and stop(). One recorder per process: CUPTI's
// buffer callbacks are plain C functions, so the records collect in one file-local store.
class KernelActivityRecorder {
public:
  KernelActivityRecorder();
  ~KernelActivityRecorder();
  KernelActivityRecorder(const KernelActivityRecorder&) = delete;
  KernelActivityRecorder& operator=(const KernelActivityRecorder&) = delete;

  void start();
  // Synchronises the device, flushes CUPTI's buffers and returns the kernels in start order.
  std::vector<KernelActivity> stop();

private:
  bool recording_ = false;
};

} // namespace tilesim::measure
