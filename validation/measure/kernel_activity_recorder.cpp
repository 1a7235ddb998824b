#include "validation/measure/kernel_activity_recorder.h"

#include "validation/measure/measure_error.h"

#include <cupti.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

namespace tilesim::measure {
namespace {

// 8 MiB holds tens of thousands of kernel records; CUPTI asks for more when one fills.
constexpr size_t kActivityBufferBytes = 8u << 20;
constexpr size_t kActivityBufferAlign = 8; // CUPTI requires ACTIVITY_RECORD_ALIGNMENT (8)

struct ActivityStore {
  std::mutex mutex;
  std::vector<KernelActivity> kernels;
  size_t dropped = 0;
};

ActivityStore& store() {
  static ActivityStore s;
  return s;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kActivityBufferAlign, kActivityBufferBytes));
  *size = *buffer ? kActivityBufferBytes : 0;
  *max_records = 0; // as many as fit
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t /*size*/,
                               size_t valid_size) {
  ActivityStore& s = store();
  std::lock_guard<std::mutex> lock(s.mutex);
  CUpti_Activity* record = nullptr;
  while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && record->kind != CUPTI_ACTIVITY_KIND_KERNEL)
      continue;
    const auto* k = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    s.kernels.push_back({k->name ? k->name : "", k->start, k->end, k->correlationId});
  }
  size_t dropped = 0;
  if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS) s.dropped += dropped;
  std::free(buffer);
}

} // namespace

KernelActivityRecorder::KernelActivityRecorder() {
  check_cupti(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed), "cuptiActivityRegisterCallbacks");
}

KernelActivityRecorder::~KernelActivityRecorder() {
  if (recording_) {
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL); // no throw from a destructor
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
}

void KernelActivityRecorder::start() {
  {
    std::lock_guard<std::mutex> lock(store().mutex);
    store().kernels.clear();
    store().dropped = 0;
  }
  check_cupti(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
              "cuptiActivityEnable(CONCURRENT_KERNEL)");
  recording_ = true;
}

std::vector<KernelActivity> KernelActivityRecorder::stop() {
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize (end of timed runs)");
  check_cupti(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "cuptiActivityFlushAll");
  check_cupti(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL),
              "cuptiActivityDisable(CONCURRENT_KERNEL)");
  recording_ = false;
  std::lock_guard<std::mutex> lock(store().mutex);
  if (store().dropped != 0)
    throw MeasureError(MeasureFailure::runtime, "CUPTI dropped " + std::to_string(store().dropped) +
                                                    " kernel activity records; use fewer --runs");
  std::vector<KernelActivity> kernels = std::move(store().kernels);
  store().kernels.clear();
  std::sort(kernels.begin(), kernels.end(),
            [](const KernelActivity& a, const KernelActivity& b) { return a.start_ns < b.start_ns; });
  return kernels;
}

} // namespace tilesim::measure
