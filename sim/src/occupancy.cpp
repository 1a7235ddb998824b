#include "sim/occupancy.h"

#include <algorithm>
#include <utility>
#include <vector>

namespace tilesim {

Occupancy occupancy(const SmProfile& sm, const CtaResources& cta) {
  const int warps = (cta.threads + 31) / 32;
  // Registers are allocated per warp in units of 256 (CUDA occupancy calculator, sm_80/sm_90).
  const int regs_per_warp = (cta.registers_per_thread * 32 + 255) / 256 * 256;
  const std::vector<std::pair<int, const char*>> limits{
      {sm.max_ctas, "ctas"},
      {sm.max_warps / std::max(warps, 1), "warps"},
      {regs_per_warp > 0 ? sm.registers / (regs_per_warp * warps) : sm.max_ctas, "registers"},
      {cta.shared_memory_bytes > 0 ? sm.shared_memory_bytes / cta.shared_memory_bytes : sm.max_ctas, "shared_memory"},
  };
  Occupancy o{sm.max_ctas, "ctas"};
  for (const auto& [n, name] : limits)
    if (n < o.ctas_per_sm) o = {n, name};
  return o;
}

} // namespace tilesim
