// The one exception type of the measurement harness, and checked wrappers for CUDA runtime and
// CUPTI return codes. Every message names the failing call; the CLI prints it as one line.
#pragma once

#include <cupti_result.h>
#include <cuda_runtime_api.h>

#include <stdexcept>
#include <string>

namespace tilesim::measure {

// What went wrong decides the exit code and the fix printed with the message.
enum class MeasureFailure {
  no_device,     // no GPU or no driver: nothing to measure on this machine
  no_permission, // the GPU is there but its performance counters are closed to this user
  unsupported,   // counters or tracing not available on this device or in this VM
  usage,         // the spec or command line asks for something the harness cannot run
  runtime,       // any other CUDA or CUPTI failure
};

class MeasureError : public std::runtime_error {
public:
  MeasureError(MeasureFailure failure, const std::string& message)
      : std::runtime_error(message), failure_(failure) {}
  MeasureFailure failure() const { return failure_; }

private:
  MeasureFailure failure_;
};

// Throws MeasureError naming `call` when `status` is not cudaSuccess.
void check_cuda(cudaError_t status, const char* call);
// Throws MeasureError naming `call`; privilege and virtualisation codes carry their fix.
void check_cupti(CUptiResult status, const char* call);

// The device count, or MeasureError(no_device) with the fix when there is no usable GPU.
int require_cuda_device();

} // namespace tilesim::measure
