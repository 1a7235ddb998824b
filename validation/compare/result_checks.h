// What makes two results comparable, and a measured result believable, before any error is
// computed: `tilesim compare` and `tilesim validate` refuse rather than score a wrong pairing.
#pragma once

#include "models/gpu_profile.h"
#include "sim/kernel_result.h"

#include <string>

namespace tilesim {

// True when a result's `gpu` names `profile`: its short name (h100), or a device name holding
// its model (NVIDIA H100 80GB HBM3 for the profile NVIDIA H100 SXM5 80GB).
bool gpu_matches(const GpuProfile& profile, const std::string& result_gpu);

// Throws SpecError naming `file` unless `measured` (source measured or published) ran on
// `profile` at a TFLOP/s the GPU can reach: a measured figure above twice the profile's dense
// tensor peak at its clock is a broken measurement, not a fast kernel.
void check_measurement(const KernelResult& measured, const std::string& file, const GpuProfile& profile);

// Throws SpecError naming `file` unless `predicted` is a simulated result.
void check_prediction(const KernelResult& predicted, const std::string& file);

// Throws SpecError unless `predicted` (simulated on `profile`) and `measured` are of the same
// kernel and launch order, naming every kernel field that differs.
void check_comparable(const KernelResult& predicted, const std::string& predicted_file, const KernelResult& measured,
                      const std::string& measured_file, const GpuProfile& profile);

} // namespace tilesim
