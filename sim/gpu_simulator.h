// The event-driven replay of one kernel launch on one GPU profile: SMs with CTA slots, a TMA
// (or cp.async) issue unit and tensor cores per SM, CTAs made of a producer that fills a ring of
// shared-memory stages and consumers that run each K step on the tensor cores, a hardware block
// scheduler for non-persistent grids, and the L2/HBM memory system behind them.
#pragma once

#include "models/gpu_profile.h"
#include "models/kernel_spec.h"
#include "sim/kernel_result.h"

#include <atomic>
#include <functional>
#include <stdexcept>

namespace tilesim {

struct SimulationOptions {
  bool record_tiles = true;
  // Called now and then with the fraction of tiles finished (0..1).
  std::function<void(double)> progress;
  // Checked between events: once it reads true, simulate() throws SimulationCancelled (the
  // viewer's What-if Cancel button). Null: never cancelled.
  const std::atomic<bool>* cancel = nullptr;
};

struct SimulationCancelled : std::runtime_error {
  SimulationCancelled() : std::runtime_error("simulation cancelled") {}
};

// Throws SpecError when the kernel cannot run on the GPU (does not fit, unsupported dtype).
KernelResult simulate(const GpuProfile& gpu, const KernelSpec& spec, const SimulationOptions& options = {});

} // namespace tilesim
