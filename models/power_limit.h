// The SM clock a GPU sustains under tensor-core load at a board power limit.
//
// A GPU at its power limit lowers its clock until its power fits. The dynamic power of the SMs
// is C·V²·f, and in the DVFS range the voltage rises in proportion to the clock, so it grows as
// f³; the rest (leakage, memory, links, the board) does not follow the SM clock. With the clock
// f_max sustained at the board's maximum (and default) limit P_max and a clock-independent
// power P₀:
//
//   f(P) = f_max · ((P − P₀) / (P_max − P₀))^(1/3)
//
// f_max is the profile's sm.clock_mhz; P_max and P₀ are its `power` section, each sourced there
// (models/gpus/README.md).
#pragma once

#include "models/gpu_profile.h"

#include <string>

namespace tilesim {

// The clock `gpu` sustains at `power_limit_w`. Throws SpecError naming `field` when the profile
// has no power section or the limit is outside (P₀, P_max].
double sustained_clock_mhz(const GpuProfile& gpu, double power_limit_w, const std::string& field);

// `gpu` with its SM clock at `power_limit_w` and the limit in its display name.
GpuProfile at_power_limit(GpuProfile gpu, double power_limit_w, const std::string& field);

// "b200@750" or "b200@750W": the profile and the limit; without '@': the name and no limit (0).
struct ProfileAtPower {
  std::string name;
  double power_limit_w = 0;
};
ProfileAtPower split_power_limit(const std::string& name_at_watts);

} // namespace tilesim
