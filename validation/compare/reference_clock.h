// The SM clock a published figure's machine ran at, read from a reference kernel its source timed
// in the same run on the same machine (validate --clock reference).
//
// A measured configuration records the clock it ran at (extra.sm_clock_mhz) and is predicted
// there. A published figure rarely states its clock; some sources time another kernel beside the
// scored one (quack's dense calibration, MSLK's and torchao's NVFP4 columns). The clock at which
// the model predicts that kernel's measured time is then the machine's clock, read the same way
// for every source that has one, and the figure is predicted there. A kernel whose predicted time
// hardly follows the SM clock (L2- or DRAM-bound in the model) cannot tell the clock and is not used.
#pragma once

#include "validation/compare/dataset_validation.h"

#include <string>
#include <vector>

namespace tilesim {

// The least elasticity -d ln(time) / d ln(clock) of a reference's predicted time for it to tell
// the clock: 1 for a kernel bound by its tensor cores, 0 for one bound by L2 or DRAM bandwidth,
// which do not run on the SM clock. Below half, most of its time is not the clock's.
inline constexpr double kMinReferenceElasticity = 0.5;

// What one configuration's reference said about its machine.
struct ReferenceReading {
  std::string id;            // the configuration
  std::string what;          // the reference kernel, as its file describes it
  double limit_clock_mhz = 0; // the profile's clock at the configuration's power limit
  double elasticity = 0;      // of the reference's predicted time to the clock, there
  bool used = false;          // false: the reference cannot tell the clock (why_not says why)
  double clock_mhz = 0;       // where used: the clock at which the model predicts the reference's time
  std::string why_not;
};

// Sets each configuration's extra.sm_clock_mhz (in memory, for validate_dataset at the measured
// clock): the clock its extra.reference reads where it names one that can tell the clock, else
// the profile's clock at its extra.power_limit_w, else the profile's own. Throws SpecError naming
// the file and field for a malformed reference.
std::vector<ReferenceReading> set_reference_clocks(const GpuProfile& gpu, std::vector<MeasuredConfiguration>& dataset,
                                                   unsigned threads);

} // namespace tilesim
