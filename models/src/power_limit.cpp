#include "models/power_limit.h"

#include "models/spec_error.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace tilesim {
namespace {

std::string number(double w) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", w);
  return text;
}

std::string watts(double w) { return number(w) + " W"; }

} // namespace

double sustained_clock_mhz(const GpuProfile& gpu, double power_limit_w, const std::string& field) {
  const PowerProfile& p = gpu.power;
  if (p.max_limit_w <= 0)
    throw SpecError(field, watts(power_limit_w),
                    gpu.display_name + " has no power model (no `power` section in " + gpu.source + ")",
                    "leave the power limit out, or give the profile a sourced power section");
  if (!std::isfinite(power_limit_w) || power_limit_w <= p.clock_independent_w || power_limit_w > p.max_limit_w)
    throw SpecError(field, watts(power_limit_w),
                    "is outside " + gpu.name + "'s power range: above its clock-independent " +
                        watts(p.clock_independent_w) + ", at most its board's " + watts(p.max_limit_w),
                    "give a limit in that range, e.g. " + gpu.name + "@" + number(p.max_limit_w));
  return gpu.sm.clock_mhz *
         std::cbrt((power_limit_w - p.clock_independent_w) / (p.max_limit_w - p.clock_independent_w));
}

GpuProfile at_power_limit(GpuProfile gpu, double power_limit_w, const std::string& field) {
  // The law starts from the clock at the board's limit, which a limited profile no longer holds.
  if (gpu.power_limit_w > 0)
    throw SpecError(field, watts(power_limit_w), gpu.display_name + " is already at a power limit", "give one limit");
  gpu.sm.clock_mhz = sustained_clock_mhz(gpu, power_limit_w, field);
  gpu.power_limit_w = power_limit_w;
  gpu.display_name += " at " + watts(power_limit_w);
  return gpu;
}

ProfileAtPower split_power_limit(const std::string& name_at_watts) {
  const auto at = name_at_watts.rfind('@');
  // A path may hold an '@' of its own: only a last part without '/' and ".json" is a limit.
  if (at == std::string::npos || name_at_watts.find('/', at) != std::string::npos || name_at_watts.ends_with(".json"))
    return {name_at_watts, 0};
  std::string text = name_at_watts.substr(at + 1);
  if (!text.empty() && (text.back() == 'W' || text.back() == 'w')) text.pop_back();
  size_t used = 0;
  double w = 0;
  try {
    w = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !std::isfinite(w) || w <= 0)
    throw SpecError("--gpu", name_at_watts, "'" + name_at_watts.substr(at + 1) + "' is not a power limit in watts",
                    "write the profile and its limit as b200@750");
  return {name_at_watts.substr(0, at), w};
}

} // namespace tilesim
