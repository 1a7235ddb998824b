// A result file the viewer has open: the result (read with sim/kernel_result.h, the CLI's own
// loader), where it came from, which configuration it is, and the GPU profile's per-SM maps
// that the GPC and L2-partition metrics need.
#pragma once

#include "sim/kernel_result.h"

#include <QString>

#include <memory>
#include <stdexcept>
#include <vector>

namespace tilesim::viz {

// One line naming the file, the field and the fix (the loader's SpecError text, or the same
// shape for what the loader does not catch).
struct ViewerError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct GpuMaps {
  QString profile;            // the shipped profile that matched the result's gpu, "" if none
  int sm_count = 0;           // the profile's SMs: the timeline's rows
  std::vector<int> gpc;       // per SM
  std::vector<int> partition; // per SM: the L2 partition it reads through
};

struct OpenResult {
  QString path;  // "" for a result made in the What-if tab
  QString label; // what tabs and charts call it
  KernelResult result;
  QString config; // the kernel configuration without its order: results with equal configs compare
  GpuMaps maps;

  bool simulated() const { return result.source == "simulated"; }
  bool has_tiles() const { return !result.tiles.empty(); }
  bool has_sectors() const { return has_tiles() && result.tiles.front().a_hit_sectors.has_value(); }
};

using OpenResultPtr = std::shared_ptr<const OpenResult>;

// Throws ViewerError when the file is missing, not JSON, truncated, or not a tilesim.result/1.
OpenResultPtr open_result_file(const QString &path);
OpenResultPtr make_open_result(KernelResult result, const QString &label, const QString &path = {});

// The profile's SM -> GPC and SM -> L2 partition maps for a result's `gpu` ("h100" or a device
// name such as "NVIDIA H100 80GB HBM3"); empty maps when no shipped profile matches.
GpuMaps gpu_maps_for(const std::string &gpu);

} // namespace tilesim::viz
