// One traced launch of a kernel of kernels/ that records kernels/common/tile_trace.h: the trace
// buffer (poisoned, so an unwritten record is caught), the launch, and the records as the result's
// tiles (start/end relative to the earliest tile start; expert, row and column from the order).
#pragma once

#include "kernels/common/kernel_error.h"
#include "kernels/common/tile_trace.h"
#include "models/kernel_spec.h"
#include "models/launch_order.h"
#include "sim/kernel_result.h"
#include "validation/measure/device_buffer.h"
#include "validation/measure/measure_error.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>
#include <vector>

namespace tilesim::measure {

// `launch(trace)` enqueues the kernel on `stream` with the device trace array; a KernelError it
// throws becomes a MeasureError.
template <class Launch>
std::vector<TileRecord> traced_launch(const KernelSpec& spec, int tiles, cudaStream_t stream, Launch&& launch) {
  DeviceBuffer trace(sizeof(kernels::TileTrace) * static_cast<std::size_t>(tiles), "tile trace");
  check_cuda(cudaMemsetAsync(trace.get(), 0xff, trace.bytes(), stream), "cudaMemsetAsync(tile trace)");
  try {
    launch(static_cast<kernels::TileTrace*>(trace.get()));
  } catch (const kernels::KernelError& e) {
    throw MeasureError(MeasureFailure::runtime, e.what());
  }
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (after the traced run)");
  std::vector<kernels::TileTrace> host(static_cast<std::size_t>(tiles));
  check_cuda(cudaMemcpy(host.data(), trace.get(), trace.bytes(), cudaMemcpyDeviceToHost), "cudaMemcpy(tile trace)");

  const std::vector<int> row_offsets = spec.tile_row_offsets();
  const TileSpace space{row_offsets.data(), spec.experts(), row_offsets.back(), spec.tile_cols()};
  unsigned long long first = ~0ULL;
  for (const auto& t : host) first = std::min(first, t.start_ns);
  std::vector<TileRecord> records;
  records.reserve(host.size());
  for (int i = 0; i < tiles; ++i) {
    const kernels::TileTrace& t = host[static_cast<std::size_t>(i)];
    if (t.linear != i)
      throw MeasureError(MeasureFailure::runtime, "tile trace record " + std::to_string(i) +
                                                      " was not written (linear = " + std::to_string(t.linear) + ")");
    const TileIndex tile = tile_at(spec.order, space, i);
    TileRecord r;
    r.linear = i;
    r.expert = tile.expert;
    r.row = tile.row;
    r.col = tile.col;
    r.sm = t.sm;
    r.start_ns = static_cast<double>(t.start_ns - first);
    r.end_ns = static_cast<double>(t.end_ns - first);
    records.push_back(r);
  }
  return records;
}

} // namespace tilesim::measure
