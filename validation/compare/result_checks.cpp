#include "validation/compare/result_checks.h"

#include "models/spec_error.h"

#include <algorithm>
#include <cctype>
#include <sstream>

namespace tilesim {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// The model in a display name: its first word with a digit ("H100" of "NVIDIA H100 SXM5 80GB").
std::string model_of(const std::string& display_name) {
  std::istringstream words(display_name);
  for (std::string w; words >> w;)
    if (std::any_of(w.begin(), w.end(), [](unsigned char c) { return std::isdigit(c); })) return lower(w);
  return "";
}

// A measured GPU can run above the profile's clock (boost) but not at twice its peak.
constexpr double kPeakMargin = 2.0;

} // namespace

bool gpu_matches(const GpuProfile& profile, const std::string& result_gpu) {
  if (lower(result_gpu) == lower(profile.name)) return true;
  const std::string model = model_of(profile.display_name);
  if (model.empty()) return false;
  std::istringstream words(lower(result_gpu));
  for (std::string w; words >> w;)
    if (w == model) return true;
  return false;
}

void check_measurement(const KernelResult& measured, const std::string& file, const GpuProfile& profile) {
  if (measured.source != "measured" && measured.source != "published")
    throw SpecError(file, "source", "is '" + measured.source + "', not a measurement",
                    "give a result of tilesim-measure (source measured) or a published figure");
  if (!gpu_matches(profile, measured.gpu))
    throw SpecError(file, "gpu", "is '" + measured.gpu + "', not the profile's " + profile.display_name + " (" + profile.name + ")",
                    "compare with --gpu naming the GPU it ran on");
  const KernelSpec spec = kernel_spec_of(measured, file);
  if (!spec.is_gemm()) return;
  // MXFP8 on tensor cores without block scaling (Hopper) runs on the FP8 ones (kernels/mxfp8/).
  const double rate = spec.mxfp8_gemm() && profile.tensor.mxfp8 <= 0 && profile.tensor.fp8 > 0
                          ? profile.tensor.fp8
                          : profile.tensor_flops_per_cycle(spec.a_dtype, spec.b_dtype);
  const double peak_tflops = rate * profile.sm.count * profile.sm.clock_mhz * 1e6 / 1e12;
  if (measured.tflops > kPeakMargin * peak_tflops)
    throw SpecError(file, "tflops", "is " + std::to_string(measured.tflops) + ", more than twice " + profile.name + "'s peak of " +
                                        std::to_string(peak_tflops) + " for " + to_string(spec.a_dtype),
                    "check time_ms and the kernel's shape");
}

void check_prediction(const KernelResult& predicted, const std::string& file) {
  if (predicted.source != "simulated")
    throw SpecError(file, "source", "is '" + predicted.source + "', not a prediction",
                    "give tilesim simulate's result first, the measurement second");
}

void check_comparable(const KernelResult& predicted, const std::string& predicted_file, const KernelResult& measured,
                      const std::string& measured_file, const GpuProfile& profile) {
  check_prediction(predicted, predicted_file);
  if (predicted.gpu != profile.name)
    throw SpecError(predicted_file, "gpu", "is '" + predicted.gpu + "', not " + profile.name, "simulate on the measured GPU");
  check_measurement(measured, measured_file, profile);
  const nlohmann::json p = to_json(kernel_spec_of(predicted, predicted_file));
  const nlohmann::json m = to_json(kernel_spec_of(measured, measured_file));
  std::string differ;
  for (const auto& [key, value] : p.items()) {
    if (key == "name" || (m.contains(key) && m.at(key) == value)) continue;
    differ += (differ.empty() ? "" : ", ") + key + " (predicted " + value.dump() + ", measured " +
              (m.contains(key) ? m.at(key).dump() : "absent") + ")";
  }
  for (const auto& [key, value] : m.items())
    if (!p.contains(key)) differ += (differ.empty() ? "" : ", ") + key + " (predicted absent, measured " + value.dump() + ")";
  if (!differ.empty())
    throw SpecError(measured_file, "kernel", "is another kernel than " + predicted_file + "'s: " + differ,
                    "simulate the measured spec: tilesim simulate --kernel <its spec> --out predicted.json");
}

} // namespace tilesim
