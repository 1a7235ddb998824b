#include "sim/kernel_model.h"

#include "models/spec_error.h"

#include <map>

namespace tilesim {
namespace {

// One line per kernel model.
const std::map<std::string, KernelModelFactory>& registry() {
  static const std::map<std::string, KernelModelFactory> models{
      {"gemm", make_gemm_model},
  };
  return models;
}

} // namespace

std::unique_ptr<KernelModel> make_kernel_model(const KernelSpec& spec, const GpuProfile& gpu) {
  // Dense and grouped GEMMs share one model: a dense GEMM is the one-expert case.
  const std::string name = "gemm";
  const auto it = registry().find(name);
  if (it == registry().end())
    throw SpecError(spec.name, "kind", "no kernel model named '" + name + "' is registered", "add it to registry()");
  return it->second(spec, gpu);
}

} // namespace tilesim
