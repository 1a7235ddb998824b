// What every tiled-GEMM workload of kernels/ shares: one kernel object that runs a launch order's
// tile schedule (`run(stream, trace)`, `grid_size()`, `tile_count()`), launched, described and
// traced the same way. Each family adds its operands, their fill and its output check.
#pragma once

#include "kernels/common/kernel_error.h"
#include "models/kernel_spec.h"
#include "models/launch_order_names.h"
#include "validation/measure/measure_error.h"
#include "validation/measure/traced_launch.h"
#include "validation/measure/workload.h"

#include <memory>

namespace tilesim::measure {

template <class Gemm>
class TiledGemmWorkload : public MeasuredWorkload {
public:
  void launch(cudaStream_t stream) override {
    try {
      gemm_->run(stream, nullptr);
    } catch (const kernels::KernelError& e) {
      throw MeasureError(MeasureFailure::runtime, e.what());
    }
  }

  double flops() const override { return spec_.flops(); }

  nlohmann::json kernel_json() const override {
    nlohmann::json j = to_json(spec_);
    j["grid"] = gemm_->grid_size();
    j["tiles"] = gemm_->tile_count();
    return j;
  }

  std::string order_name() const override { return to_string(spec_.order); }

  std::vector<TileRecord> run_traced(cudaStream_t stream) override {
    return traced_launch(spec_, gemm_->tile_count(), stream,
                         [&](kernels::TileTrace* trace) { gemm_->run(stream, trace); });
  }

protected:
  explicit TiledGemmWorkload(const KernelSpec& spec) : spec_(spec) {}

  KernelSpec spec_;
  std::unique_ptr<Gemm> gemm_; // made by the family's constructor once its operands exist
};

} // namespace tilesim::measure
