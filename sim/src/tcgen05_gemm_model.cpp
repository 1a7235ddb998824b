// The Blackwell (sm_100) GEMM as CUTLASS's SM100 kernels run it. One thread issues tcgen05.mma
// from shared memory into accumulators in tensor memory (TMEM), so no warpgroup holds the
// accumulators in registers; a TMA warp fills the ring; the epilogue warps drain TMEM ->
// registers -> shared -> TMA store while the MMA runs the next tile into the other accumulator
// buffer, where two fit in TMEM. With a cluster of two the pair runs one (2 tile.m) x tile.n MMA
// (cta_group::2): each CTA loads its own tile.m rows of A and half of B, the pair shares its B
// tile by construction, and the work items walk the launch order over pair tiles. Block-scaled
// types (mxfp8, mxfp4) load an 8-bit scale per 32 K-elements of each operand row beside it; both
// CTAs of a pair hold the scales of all tile.n columns of B, which the MMA reads from each SM's
// tensor memory, multicast so each CTA fetches half (CUTLASS
// examples/python/CuTeDSL/blackwell/dense_blockscaled_gemm_persistent.py: SFB tiled for one CTA
// over round_up(N, 128) columns, multicast across the pair).
#include "sim/kernel_model.h"

#include "models/spec_error.h"
#include "sim/gemm_epilogue.h"
#include "sim/device_heap.h"
#include "sim/gemm_operands.h"

#include <algorithm>

namespace tilesim {
namespace {

// PTX ISA, tcgen05 (Tensor Memory): 128 lanes of 32-bit columns; an fp32 accumulator of a
// 128-row tile takes one column per output column; allocations come in units of 32 columns.
constexpr int kTmemLanes = 128;
constexpr int kTmemAllocationColumns = 32;
// OCP Microscaling Formats (MX) v1.0: one 8-bit (E8M0) scale per block of 32 elements along K.
constexpr int kScaleBlock = 32;
// Thread instructions per output element of the epilogue, counted from its instruction sequence
// (an estimate, not measured): tcgen05.ld.32x32b.x32 brings 32 columns a thread (1/32),
// cvt.rn.bf16x2.f32 (1/2), st.shared.v4 of 8 outputs (1/8), plus address arithmetic.
constexpr double kEpilogueInstructionsPerElement = 0.75;
constexpr int kBarrierBytes = 1024; // mbarriers (ring, accumulators, scheduler)

bool block_scaled(Dtype d) { return d == Dtype::mxfp8 || d == Dtype::mxfp4; }

class Tcgen05GemmModel final : public KernelModel {
public:
  Tcgen05GemmModel(const KernelSpec& spec, const GpuProfile& gpu)
      : spec_(spec), pair_(spec.cluster), operands_(spec_), epilogue_(spec_, operands_.end()) {
    // The launch order walks pair tiles of pair_ * tile.m rows; each CTA takes one half.
    KernelSpec pair_spec = spec;
    pair_spec.tile.m *= pair_;
    pair_offsets_ = pair_spec.tile_row_offsets();
    cta_offsets_ = spec.tile_row_offsets();
    space_ = {pair_offsets_.data(), spec.experts(), pair_offsets_.back(), spec.tile_cols()};
    scaled_ = block_scaled(spec.a_dtype) || block_scaled(spec.b_dtype);
    // Mixed inputs would need the narrow operand converted before the MMA, which this model does
    // not charge (kernels/mixed_input/ is a Hopper kernel).
    if (spec.a_dtype != spec.b_dtype)
      throw SpecError(spec.source, "b_dtype", "the Blackwell model runs operands of one type only",
                      "give dtype and b_dtype the same type, or a Hopper GPU for a mixed-input GEMM");
    // tcgen05.mma takes M = 64 or 128 rows per SM (PTX ISA, tcgen05.mma shapes; 128 or 256 for
    // the pair with cta_group::2).
    if (spec.tile.m != 64 && spec.tile.m != 128)
      throw SpecError(spec.source, "tile.m", "is " + std::to_string(spec.tile.m) + "; tcgen05.mma takes 64 or 128 rows per SM",
                      "use 128 (with cluster 2 the pair computes 256 rows)");
    if (gpu.sm.tensor_memory_bytes <= 0 || gpu.sm.mma_operand_bytes_per_cycle <= 0)
      throw SpecError(gpu.source, "sm.tensor_memory_bytes", "a Blackwell profile needs tensor_memory_bytes and mma_operand_bytes_per_cycle",
                      "add both to the profile's sm section");

    const int a_bits = dtype_bits(spec.a_dtype), b_bits = dtype_bits(spec.b_dtype);
    const int b_rows = spec.tile.n / pair_; // each CTA of a pair holds half of B
    a_scale_bytes_ = scaled_ ? spec.tile.m * spec.tile.k / kScaleBlock : 0;
    b_scale_bytes_ = scaled_ ? b_rows * spec.tile.k / kScaleBlock : 0; // this CTA's half of the multicast
    const ByteCount b_scales_held = b_scale_bytes_ * pair_;
    const double stage_bytes = (static_cast<double>(spec.tile.m) * spec.tile.k * a_bits +
                                static_cast<double>(b_rows) * spec.tile.k * b_bits) / 8;

    // An M=64 MMA uses half the tensor core's rows (SemiAnalysis microbench-blackwell,
    // umma_throughput/tput_results_max.csv: BF16 M64 ~4060 FLOP/cycle, M128 ~8150).
    const double rate = gpu.tensor_flops_per_cycle(spec.a_dtype, spec.b_dtype) * spec.tile.m / 128.0;
    const double math_cycles = 2.0 * spec.tile.m * spec.tile.n * spec.tile.k / rate;
    // The tensor core reads both operands from shared memory at a fixed rate: each SM its A rows
    // and its half of B (the peer's half comes from the other SM).
    const double operand_cycles = stage_bytes / gpu.sm.mma_operand_bytes_per_cycle;
    mma_cycles_ = std::max(math_cycles, operand_cycles);

    // Four epilogue warps, one per scheduler, drain the tile (and apply a fused bias + activation).
    epilogue_cycles_ = (kEpilogueInstructionsPerElement + epilogue_.instructions_per_element()) * spec.tile.m *
                       spec.tile.n / (32.0 * gpu.sm.warp_schedulers);

    // TMEM holds the accumulators (one column per output column) and, block-scaled, the scales
    // (tcgen05.cp from shared memory; one more allocation unit). Two accumulators run where two fit;
    // where the scales leave no room for two whole ones (tile.n = 256), CUTLASS's block-scaled
    // kernels overlap them by the scales' columns and the epilogue frees the overlap first, so the
    // next tile's MMA waits only for those columns' loads (dense_blockscaled_gemm_persistent.py,
    // overlapping_accum): counted as two.
    const int columns = gpu.sm.tensor_memory_bytes / (kTmemLanes * 4);
    const int scale_columns = scaled_ ? kTmemAllocationColumns : 0;
    if (spec.tile.n + scale_columns > columns)
      throw SpecError(spec.source, "tile.n", "a " + std::to_string(spec.tile.n) + "-column accumulator does not fit in tensor memory",
                      "use a smaller tile.n");
    accumulator_buffers_ = std::min(2, columns / spec.tile.n);

    resources_.threads = spec.warps * 32;
    resources_.registers_per_thread =
        std::min(gpu.sm.max_registers_per_thread, gpu.sm.registers / resources_.threads / 8 * 8);
    resources_.shared_memory_bytes =
        static_cast<int>(spec.stages * (stage_bytes + a_scale_bytes_ + b_scales_held)) + kBarrierBytes;
    if (resources_.shared_memory_bytes > gpu.sm.max_shared_memory_per_cta_bytes)
      throw SpecError(spec.source, "stages",
                      std::to_string(spec.stages) + " stages need " + std::to_string(resources_.shared_memory_bytes) +
                          " bytes of shared memory, " + gpu.name + " allows " +
                          std::to_string(gpu.sm.max_shared_memory_per_cta_bytes) + " per CTA",
                      "use fewer stages or a smaller tile");
    if (resources_.threads > gpu.sm.max_threads)
      throw SpecError(spec.source, "warps", std::to_string(spec.warps) + " warps exceed the SM's thread limit", "use fewer warps");

    // Scale tensors after C and the fused epilogue's bias ([experts, n]), in the 512-byte blocks
    // (128 rows x 4 scales) TMA copies whole.
    const Address bias_bytes = static_cast<Address>(spec.experts()) * spec.n * dtype_bits(spec.c_dtype) / 8;
    a_scale_base_ = align_allocation(operands_.end() + bias_bytes);
    b_scale_base_ = align_allocation(a_scale_base_ + static_cast<Address>(cta_offsets_.back()) * k_steps() * a_scale_bytes_);
  }

  int tile_count() const override { return pair_ * tilesim::tile_count(space_); }

  TileLookup lookup_tile(int linear) const override {
    TileLookup l;
    TileIndex pair_tile{};
    l.loop_trips = tile_at_trips(spec_.order, space_, linear / pair_, &pair_tile);
    l.tile = pair_tile;
    l.tile.local_row = pair_tile.local_row * pair_ + linear % pair_;
    l.tile.row = cta_offsets_[pair_tile.expert] + l.tile.local_row;
    return l;
  }

  int k_steps() const override { return (spec_.k + spec_.tile.k - 1) / spec_.tile.k; }

  void load_boxes(const WorkItem& item, int k, std::vector<OperandBox>& out) const override {
    const size_t first = out.size();
    operands_.tile_boxes(item.tile, k, out);
    operands_.split_shared_tile(item, first, out); // the pair's B tile, half each
    if (scaled_) {
      const TileIndex& t = item.tile;
      out.push_back({Operand::a, {a_scale_base_ + (static_cast<Address>(t.row) * k_steps() + k) * a_scale_bytes_,
                                  a_scale_bytes_, a_scale_bytes_, 1}});
      const Address b_block = static_cast<Address>(t.expert) * spec_.tile_cols() + t.col;
      out.push_back({Operand::b, {b_scale_base_ + ((b_block * k_steps() + k) * pair_ + item.rank) * b_scale_bytes_,
                                  b_scale_bytes_, b_scale_bytes_, 1}});
    }
    if (uses_tma())
      for (size_t i = first; i < out.size(); ++i) out[i].box.l2_promotion_256b = true;
    if (k == 0) epilogue_.bias_box(item.tile, out);
  }

  Box store_box(const TileIndex& t) const override { return operands_.store_box(t); }
  Cycle mma_cycles_per_k_step() const override { return mma_cycles_; }
  Cycle element_cycles_per_k_step() const override { return 0; } // scaling happens in the tensor core
  Cycle epilogue_cycles() const override { return epilogue_cycles_; }
  int accumulator_buffers() const override { return accumulator_buffers_; }
  CtaResources resources() const override { return resources_; }
  bool uses_tma() const override { return spec_.load == LoadPath::tma; }

private:
  KernelSpec spec_;
  int pair_ = 1;
  GemmOperands operands_;
  FusedEpilogue epilogue_;
  std::vector<int> pair_offsets_, cta_offsets_;
  TileSpace space_;
  bool scaled_ = false;
  ByteCount a_scale_bytes_ = 0, b_scale_bytes_ = 0;
  Address a_scale_base_ = 0, b_scale_base_ = 0;
  Cycle mma_cycles_ = 0, epilogue_cycles_ = 0;
  int accumulator_buffers_ = 1;
  CtaResources resources_;
};

} // namespace

std::unique_ptr<KernelModel> make_tcgen05_gemm_model(const KernelSpec& spec, const GpuProfile& gpu) {
  return std::make_unique<Tcgen05GemmModel>(spec, gpu);
}

} // namespace tilesim
