#include "sim/kernel_model.h"

#include "models/spec_error.h"

#include <map>

namespace tilesim {
namespace {

// One line per kernel model.
const std::map<std::string, KernelModelFactory>& registry() {
  static const std::map<std::string, KernelModelFactory> models{
      {"gemm", make_gemm_model},
      {"tcgen05_gemm", make_tcgen05_gemm_model},
      {"elementwise", make_elementwise_model},
      {"mixed_input_gemm", make_mixed_input_model},
      {"mxfp8_quantize", make_mxfp8_quantize_model},
      {"mxfp8_gemm", make_mxfp8_gemm_model},
  };
  return models;
}

using LaunchedBefore = std::optional<KernelSpec> (*)(const KernelSpec&, const GpuProfile&);

// The models whose kernel launches another one first and is timed with it, one line each.
const std::map<std::string, LaunchedBefore>& launched_before() {
  static const std::map<std::string, LaunchedBefore> passes{
      {"mxfp8_gemm", mxfp8_pass_before},
  };
  return passes;
}

// The GEMM model each tensor-core generation runs: wgmma / mma.sync kernels with register
// accumulators before Blackwell, tcgen05 with tensor-memory accumulators on it.
const std::map<std::string, std::string>& gemm_model_by_architecture() {
  static const std::map<std::string, std::string> models{
      {"ampere", "gemm"}, {"hopper", "gemm"}, {"blackwell", "tcgen05_gemm"}};
  return models;
}

} // namespace

std::string kernel_model_name(const KernelSpec& spec, const GpuProfile& gpu) {
  if (spec.kind == KernelKind::elementwise) return "elementwise";
  if (spec.kind == KernelKind::mxfp8_quantize) return "mxfp8_quantize";
  // bf16 x int8/uint8 on Hopper: kernels/mixed_input/, weights converted in registers.
  if (spec.mixed_input() && gpu.architecture == "hopper") return "mixed_input_gemm";
  // MXFP8 x MXFP8 on Hopper: FP8 tensor cores without block scaling, scales in software (kernels/mxfp8/).
  if (spec.mxfp8_gemm() && gpu.architecture == "hopper") return "mxfp8_gemm";
  // Dense and grouped GEMMs share one model: a dense GEMM is the one-expert case.
  const auto it = gemm_model_by_architecture().find(gpu.architecture);
  if (it == gemm_model_by_architecture().end())
    throw SpecError(gpu.source, "architecture", "'" + gpu.architecture + "' has no GEMM model", "use ampere, hopper or blackwell");
  return it->second;
}

std::optional<KernelSpec> kernel_launched_before(const KernelSpec& spec, const GpuProfile& gpu) {
  const auto it = launched_before().find(kernel_model_name(spec, gpu));
  if (it == launched_before().end()) return std::nullopt;
  return it->second(spec, gpu);
}

std::unique_ptr<KernelModel> make_kernel_model(const KernelSpec& spec, const GpuProfile& gpu) {
  // A cluster's CTAs run on distinct SMs at once: a launch whose clusters do not fit has no CTA
  // to run (a persistent grid of sm.count / cluster * cluster CTAs would be empty).
  if (spec.cluster > gpu.sm.count)
    throw SpecError(spec.source, "cluster", "is " + std::to_string(spec.cluster) + ", more than the " +
                                                std::to_string(gpu.sm.count) + " SM(s) of " + gpu.source,
                    "use cluster 1 on this GPU");
  const std::string name = kernel_model_name(spec, gpu);
  const auto it = registry().find(name);
  if (it == registry().end())
    throw SpecError(spec.source, "kind", "no kernel model named '" + name + "' is registered", "add it to registry()");
  return it->second(spec, gpu);
}

} // namespace tilesim
