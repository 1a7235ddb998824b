// Simulates every measured configuration of a dataset folder and compares each with its
// measurement.
#pragma once

#include "models/gpu_profile.h"
#include "validation/compare/fidelity.h"

#include <string>
#include <vector>

namespace tilesim {

struct MeasuredConfiguration {
  std::string id;   // file stem
  std::string file; // its path, for error messages
  KernelResult measured;
};

// Every tilesim.result/1 file with source "measured" (our harness) or "published" (a figure from
// a paper or vendor, time only) under `folder` (recursively), sorted by id.
// Throws SpecError when the folder does not exist or holds none.
std::vector<MeasuredConfiguration> load_measured_dataset(const std::string& folder);

// The configurations of several folders together (validate's repeated --dataset), sorted by id.
// Throws SpecError when two folders hold the same id: a configuration scored twice would weigh
// double (a repeat sweep is scored on its own).
std::vector<MeasuredConfiguration> load_measured_datasets(const std::vector<std::string>& folders);

// Simulates each configuration's kernel spec on `gpu` with `threads` workers. With
// `at_measured_clock`, each runs at the SM clock its measurement recorded (extra.sm_clock_mhz):
// the card sets its own clock under load and clocks may not be locked here, so, as Accel-Sim
// correlates at the hardware's clock, predictions are compared at the clock the kernel ran at.
std::vector<ConfigurationError> validate_dataset(const GpuProfile& gpu, const std::vector<MeasuredConfiguration>& dataset,
                                                 unsigned threads, bool at_measured_clock);

} // namespace tilesim
