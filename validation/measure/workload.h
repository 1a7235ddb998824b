// What the harness measures: one kernel launch it can repeat, with its FLOP count and, where the
// kernel records one, a per-tile trace. Implementations: the grouped GEMM and the element-wise kernel of kernels/
// (from a kernel spec) and a streaming copy (the harness's own check of the DRAM counters).
#pragma once

#include "sim/kernel_result.h"

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <vector>

namespace tilesim {
struct KernelSpec;
}

namespace tilesim::measure {

class MeasuredWorkload {
public:
  virtual ~MeasuredWorkload() = default;
  virtual void launch(cudaStream_t stream) = 0;
  virtual double flops() const = 0;
  virtual nlohmann::json kernel_json() const = 0; // the result's "kernel" field
  virtual std::string order_name() const = 0;
  // Runs once with the tile trace on; start/end relative to the earliest tile start.
  // Throws MeasureError(usage) when the workload has no trace.
  virtual std::vector<TileRecord> run_traced(cudaStream_t stream) = 0;
  // Spot-checks the output after a launch; returns detail for the result's "extra".
  virtual nlohmann::json check_output() = 0;
};

// Throws MeasureError(usage) naming the spec field when the kernel cannot run the spec.
std::unique_ptr<MeasuredWorkload> make_grouped_gemm_workload(const KernelSpec& spec, int device,
                                                             std::uint64_t seed, cudaStream_t stream);
std::unique_ptr<MeasuredWorkload> make_elementwise_workload(const KernelSpec& spec, int device, std::uint64_t seed,
                                                            cudaStream_t stream);
// "kind": "mxfp8_quantize" specs: kernels/mxfp8/.
std::unique_ptr<MeasuredWorkload> make_mxfp8_quantize_workload(const KernelSpec& spec, int device, std::uint64_t seed,
                                                               cudaStream_t stream);
// MXFP8 x MXFP8 GEMM specs (KernelSpec::mxfp8_gemm()): kernels/mxfp8/, the promote scheme.
std::unique_ptr<MeasuredWorkload> make_mxfp8_gemm_workload(const KernelSpec& spec, int device, std::uint64_t seed,
                                                           cudaStream_t stream);
// bf16 x int8/uint8 specs (KernelSpec::mixed_input()): kernels/mixed_input/.
std::unique_ptr<MeasuredWorkload> make_mixed_input_workload(const KernelSpec& spec, int device, std::uint64_t seed,
                                                            cudaStream_t stream);
std::unique_ptr<MeasuredWorkload> make_streaming_copy_workload(std::size_t bytes, std::uint64_t seed,
                                                               cudaStream_t stream);

} // namespace tilesim::measure
