// The tiled (grouped) GEMM: C_e = A_e * B_e per expert, A rows stacked by expert, one output tile
// per CTA work item, a ring of `stages` shared-memory buffers fed by TMA boxes or cp.async.
#include "sim/kernel_model.h"

#include "models/spec_error.h"
#include "sim/gemm_epilogue.h"
#include "sim/gemm_operands.h"

#include <algorithm>

namespace tilesim {
namespace {

// Thread instructions per element, counted from the instruction sequences, not measured (an
// estimate to replace with a microbenchmark): the epilogue converts two fp32 accumulators to one
// bf16x2 (cvt.rn.bf16x2.f32, 0.5), stores 8 elements per st.global.v4 (0.125), plus address
// arithmetic; a converted operand element costs one unpack/convert and half a pack (prmt), the
// sequence of the seed article on mixed-input GEMMs (Google Research, "Mixed-input matrix
// multiplication performance optimizations", 2024). bf16 x int8/uint8 on a Hopper does not come
// here: it runs the mixed_input_gemm model (sim/src/mixed_input_model.cpp), which charges what
// kernels/mixed_input/ measured (3 instructions a value, 31 values per SM cycle); this estimate
// stays for the mixed pairs and GPUs no kernel of ours runs.
constexpr double kEpilogueInstructionsPerElement = 1.0;
constexpr double kConversionInstructionsPerElement = 1.5;
constexpr int kBarrierBytes = 1024; // mbarriers and the tile scheduler's slot

class GemmModel final : public KernelModel {
public:
  GemmModel(const KernelSpec& spec, const GpuProfile& gpu)
      : spec_(spec), offsets_(spec.tile_row_offsets()), operands_(spec_), epilogue_(spec_, operands_.end()) {
    space_ = {offsets_.data(), spec.experts(), offsets_.back(), spec.tile_cols()};
    const int a_bytes = dtype_bits(spec.a_dtype) / 8;
    const int b_bytes = dtype_bits(spec.b_dtype) / 8;

    // MXFP8 where the tensor cores lack block scaling (Hopper): FP8 wgmma into a partial
    // accumulator per 32-element K block (OCP MX v1.0), which the consumer warps scale and add
    // into the running one on the CUDA cores, one FMA per accumulator element per block (as
    // DeepGEMM promotes FP8 partial sums every 128).
    const bool software_scaled = spec.a_dtype == Dtype::mxfp8 && spec.b_dtype == Dtype::mxfp8 && gpu.tensor.mxfp8 <= 0 &&
                                 gpu.tensor.fp8 > 0;
    const double rate = software_scaled ? gpu.tensor.fp8 : gpu.tensor_flops_per_cycle(spec.a_dtype, spec.b_dtype);
    mma_cycles_ = 2.0 * spec.tile.m * spec.tile.n * spec.tile.k / rate;
    const double issue_per_cycle = 32.0 * gpu.sm.warp_schedulers;
    element_cycles_ = spec.a_dtype == spec.b_dtype
                          ? 0.0
                          : kConversionInstructionsPerElement * spec.tile.n * spec.tile.k / issue_per_cycle;
    if (software_scaled) element_cycles_ = static_cast<double>(spec.tile.m) * spec.tile.n * (spec.tile.k / 32) / gpu.sm.fp32_lanes;
    // The plain epilogue as measured with the kernel itself where the profile has it (its chunk loop
    // waits on barriers, fences and the TMA store's reads, not on issue), else counted in instructions.
    const double tile_elements = static_cast<double>(spec.tile.m) * spec.tile.n;
    const double output_kib = tile_elements * (dtype_bits(spec.c_dtype) / 8) / 1024.0;
    const double plain_epilogue = gpu.tiled_gemm.epilogue_cycles_per_output_kib > 0
                                      ? gpu.tiled_gemm.epilogue_cycles_per_output_kib * output_kib
                                      : kEpilogueInstructionsPerElement * tile_elements / issue_per_cycle;
    epilogue_cycles_ = plain_epilogue + epilogue_.instructions_per_element() * tile_elements / issue_per_cycle;
    cta_start_cycles_ = gpu.tiled_gemm.cta_start_exit_cycles;
    cta_first_load_cycles_ = gpu.tiled_gemm.cta_first_load_cycles;
    epilogue_tail_cycles_ = gpu.tiled_gemm.epilogue_tail_cycles;
    // The consumers zero their register accumulators before a tile's first wgmma, one move each
    // (kernels/grouped_gemm/grouped_gemm_kernel.cuh, consumer_loop).
    setup_cycles_ = tile_elements / issue_per_cycle;

    resources_.threads = spec.warps * 32;
    // Tiled GEMMs keep their accumulators in registers and are built to use every register of the SM
    // (allocation granularity: 8 per thread).
    resources_.registers_per_thread =
        std::min(gpu.sm.max_registers_per_thread, gpu.sm.registers / resources_.threads / 8 * 8);
    resources_.shared_memory_bytes =
        spec.stages * (spec.tile.m * spec.tile.k * a_bytes + spec.tile.n * spec.tile.k * b_bytes) + kBarrierBytes;
    if (resources_.shared_memory_bytes > gpu.sm.max_shared_memory_per_cta_bytes)
      throw SpecError(spec.source, "stages",
                      std::to_string(spec.stages) + " stages of a " + std::to_string(spec.tile.m) + "x" +
                          std::to_string(spec.tile.n) + "x" + std::to_string(spec.tile.k) + " tile need " +
                          std::to_string(resources_.shared_memory_bytes) + " bytes of shared memory, " + gpu.name +
                          " allows " + std::to_string(gpu.sm.max_shared_memory_per_cta_bytes) + " per CTA",
                      "use fewer stages or a smaller tile");
    if (resources_.threads > gpu.sm.max_threads)
      throw SpecError(spec.source, "warps", std::to_string(spec.warps) + " warps exceed the SM's thread limit",
                      "use fewer warps");
  }

  int tile_count() const override { return tilesim::tile_count(space_); }
  TileLookup lookup_tile(int linear) const override {
    TileLookup l;
    l.loop_trips = tile_at_trips(spec_.order, space_, linear, &l.tile);
    return l;
  }
  int k_steps() const override { return (spec_.k + spec_.tile.k - 1) / spec_.tile.k; }

  void load_boxes(const WorkItem& item, int k, std::vector<OperandBox>& out) const override {
    const size_t first = out.size();
    operands_.tile_boxes(item.tile, k, out);
    // The kernels' tensor maps ask for 256-byte L2 promotion (kernels/common/tensor_maps.cu).
    if (uses_tma())
      for (size_t i = first; i < out.size(); ++i) out[i].box.l2_promotion_256b = true;
    // In a cluster the shared operand tile is loaded half by each CTA and multicast to both
    // (kernels/grouped_gemm/grouped_gemm_kernel.cuh): W first, else X.
    operands_.split_shared_tile(item, first, out);
    // A fused epilogue reads the tile's bias row (plain loads, no promotion) before its first step.
    if (k == 0) epilogue_.bias_box(item.tile, out);
  }

  Box store_box(const TileIndex& t) const override { return operands_.store_box(t); }

  Cycle mma_cycles_per_k_step() const override { return mma_cycles_; }
  Cycle element_cycles_per_k_step() const override { return element_cycles_; }
  Cycle epilogue_cycles() const override { return epilogue_cycles_; }
  bool consumer_finds_tile() const override { return true; }
  Cycle tile_setup_cycles() const override { return setup_cycles_; }
  Cycle cta_start_cycles() const override { return cta_start_cycles_; }
  Cycle cta_first_load_cycles() const override { return cta_first_load_cycles_; }
  Cycle epilogue_tail_cycles() const override { return epilogue_tail_cycles_; }
  CtaResources resources() const override { return resources_; }
  bool uses_tma() const override { return spec_.load == LoadPath::tma; }

private:
  KernelSpec spec_;
  std::vector<int> offsets_;
  GemmOperands operands_;
  FusedEpilogue epilogue_;
  TileSpace space_;
  Cycle mma_cycles_ = 0, element_cycles_ = 0, epilogue_cycles_ = 0, setup_cycles_ = 0, cta_start_cycles_ = 0;
  Cycle cta_first_load_cycles_ = 0, epilogue_tail_cycles_ = 0;
  CtaResources resources_;
};

} // namespace

std::unique_ptr<KernelModel> make_gemm_model(const KernelSpec& spec, const GpuProfile& gpu) {
  return std::make_unique<GemmModel>(spec, gpu);
}

} // namespace tilesim
