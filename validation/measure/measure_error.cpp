#include "validation/measure/measure_error.h"

#include <cupti.h>

namespace tilesim::measure {
namespace {

// NVIDIA's page for ERR_NVGPUCTRPERM explains the driver option that opens the counters.
constexpr const char* kCounterPermissionFix =
    "run as root, or load the nvidia driver with NVreg_RestrictProfilingToAdminUsers=0 "
    "(https://developer.nvidia.com/ERR_NVGPUCTRPERM); or pass --no-counters to time only";

std::string cupti_name(CUptiResult status) {
  const char* text = nullptr;
  if (cuptiGetResultString(status, &text) != CUPTI_SUCCESS || text == nullptr)
    return "CUPTI error " + std::to_string(static_cast<int>(status));
  return text;
}

} // namespace

void check_cuda(cudaError_t status, const char* call) {
  if (status == cudaSuccess) return;
  const std::string what = std::string(call) + " failed: " + cudaGetErrorName(status) + " (" +
                           cudaGetErrorString(status) + ")";
  if (status == cudaErrorNoDevice || status == cudaErrorInsufficientDriver)
    throw MeasureError(MeasureFailure::no_device,
                       "no usable CUDA device: " + what + "; run tilesim-measure on a machine with an NVIDIA GPU and its driver");
  throw MeasureError(MeasureFailure::runtime, what);
}

void check_cupti(CUptiResult status, const char* call) {
  if (status == CUPTI_SUCCESS) return;
  const std::string what = std::string(call) + " failed: " + cupti_name(status);
  switch (status) {
  case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
  case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
    throw MeasureError(MeasureFailure::no_permission, "no permission to read GPU performance counters: " + what +
                                                          "; " + kCounterPermissionFix);
  case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
  case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
  case CUPTI_ERROR_NOT_SUPPORTED:
  case CUPTI_ERROR_NOT_COMPATIBLE:
    throw MeasureError(MeasureFailure::unsupported,
                       "GPU performance counters are not available here: " + what +
                           "; run on bare metal or a VM that passes the profiler through, or pass --no-counters");
  case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
    throw MeasureError(MeasureFailure::unsupported,
                       what + "; another profiler (ncu, nsys) holds CUPTI: run tilesim-measure outside it");
  default: throw MeasureError(MeasureFailure::runtime, what);
  }
}

int require_cuda_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    check_cuda(status, "cudaGetDeviceCount");
  }
  if (count == 0)
    throw MeasureError(MeasureFailure::no_device, "no usable CUDA device: cudaGetDeviceCount found none; run "
                                                  "tilesim-measure on a machine with an NVIDIA GPU and its driver");
  return count;
}

} // namespace tilesim::measure
