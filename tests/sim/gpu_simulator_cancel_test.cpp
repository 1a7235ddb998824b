#include "sim/gpu_simulator.h"

#include <catch2/catch.hpp>

using namespace tilesim;

TEST_CASE("simulate: a set cancel flag stops the replay, an unset one does not", "[simulator][cancel]") {
  const GpuProfile gpu = load_gpu_profile("h100");
  std::atomic<bool> cancel{true};
  SimulationOptions options;
  options.cancel = &cancel;
  // 8192^3 runs for seconds; cancelled, it stops at the first check (event 4096).
  const KernelSpec big = load_kernel_spec(TILESIM_SOURCE_DIR "/models/kernels/dense_8192.json");
  CHECK_THROWS_AS(simulate(gpu, big, options), SimulationCancelled);
  cancel = false;
  const KernelSpec small = load_kernel_spec(TILESIM_SOURCE_DIR "/tests/viz/data/whatif_small.json");
  CHECK(simulate(gpu, small, options).tiles.size() == 64); // 1024^2 in 128x128 tiles
}
