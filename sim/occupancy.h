// How many CTAs of a kernel fit on one SM at once: the tightest of the SM's CTA, warp, register
// and shared-memory limits (CUDA C Programming Guide, "Occupancy Calculator" rules).
#pragma once

#include "models/gpu_profile.h"
#include "sim/kernel_model.h"

#include <string>

namespace tilesim {

struct Occupancy {
  int ctas_per_sm = 0;
  std::string limited_by; // "ctas", "warps", "registers" or "shared_memory"
};

Occupancy occupancy(const SmProfile& sm, const CtaResources& cta);

} // namespace tilesim
