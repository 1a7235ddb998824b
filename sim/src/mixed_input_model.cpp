// The mixed-input GEMM of kernels/mixed_input/ (bf16 X, int8/uint8 W converted in registers):
// the grouped GEMM's tile walk and operand boxes (make_gemm_model: X boxes of tile.m tokens x
// tile.k, W boxes of tile.n channels x tile.k one-byte weights, so half the bf16 weight bytes go
// through TMA, L2 and DRAM), plus what this kernel does that a bf16 GEMM does not:
//  - every K step its consumer warps convert tile.n x tile.k weights in registers, at the rate the
//    dequant_issue_rate microbenchmark measured for the kernel's own sequence and warp count (the
//    profile's dequant_values_per_cycle_per_sm); with per-128 group scales one more bf16x2
//    multiply per two values. A consumer converts a block and then issues the wgmma that read
//    those registers, so a K step costs conversion plus MMA (element_cycles_per_k_step returns the
//    sum; the simulator takes the larger of it and the MMA). Charging the larger of the two
//    instead, as if the other consumer's MMA hid each conversion, predicted the calibration part
//    with a time MAPE of 34%, the sum 22% (kernels/mixed_input/NOTES.md);
//  - the scales' and zero points' loads: per-channel ones once per tile, group scales as the
//    L1 serves them, one 32-byte sector (16 groups) per channel every 2048 of K;
//  - the epilogue: each output element is scaled, converted and stored on its own (2-byte stores
//    in the accumulator layout), counted from the kernel's SASS.
#include "sim/kernel_model.h"

#include "models/spec_error.h"

namespace tilesim {
namespace {

// Per output element in the epilogue of mixed_input_gemm_kernel (cuobjdump -sass, NOTES.md: 8.7
// at 256-token tiles, 10 at 16): FMUL (scale), F2FP (bf16), STG.E.U16, and the token/channel
// predicates and 64-bit address arithmetic of each 2-byte store.
constexpr double kEpilogueInstructionsPerElement = 9.0;
// Scales live in their own allocation; far from the operands (which start at 2^40).
constexpr Address kScaleBase = Address{3} << 40;
constexpr int kGroupSize = 128;
constexpr int kSectorBytes = 32;

class MixedInputModel final : public KernelModel {
public:
  MixedInputModel(const KernelSpec& spec, const GpuProfile& gpu) : spec_(spec), base_(make_gemm_model(spec, gpu)) {
    if (spec.tile.n != 64 && spec.tile.n != 128)
      throw SpecError(spec.source, "tile.n", "is " + std::to_string(spec.tile.n) +
                                               "; the mixed-input kernel's tiles are 64 or 128 channels",
                      "use 64 or 128");
    // Two consumer warpgroups convert side by side: on 128-channel tiles each its 64 channels, on
    // 64-channel tiles alternate K steps; either way the SM converts at the 8-warp rate.
    const double rate =
        spec.quant.conversion == WeightConversion::prmt ? gpu.dequant.prmt : gpu.dequant.cvt;
    if (rate <= 0)
      throw SpecError(gpu.source, "dequant_values_per_cycle_per_sm",
                      "is not measured for " + gpu.display_name + ", which the mixed-input model needs",
                      "run validation/microbench/dequant_issue_rate on it and add the figures");
    const double values = static_cast<double>(spec.tile.n) * spec.tile.k;
    element_cycles_ = values / rate;
    // Group scales: one mul.rn.bf16x2 per two values, on the FMA pipe.
    if (spec.quant.scale_group) element_cycles_ += values / 2 / gpu.sm.fp32_lanes;
    epilogue_cycles_ = kEpilogueInstructionsPerElement * spec.tile.m * spec.tile.n / (32.0 * gpu.sm.warp_schedulers);
    groups_ = spec.quant.scale_group ? spec.k / kGroupSize : 0;
  }

  int tile_count() const override { return base_->tile_count(); }
  TileLookup lookup_tile(int linear) const override { return base_->lookup_tile(linear); }
  int k_steps() const override { return base_->k_steps(); }

  void load_boxes(const WorkItem& item, int k, std::vector<OperandBox>& out) const override {
    const TileIndex& t = item.tile;
    base_->load_boxes(item, k, out);
    const int n0 = t.col * spec_.tile.n;
    const int channels = std::min(spec_.tile.n, spec_.n - n0);
    const Address first_channel = static_cast<Address>(t.expert) * spec_.n + n0;
    if (groups_ == 0) {
      if (k == 0) // per-channel scales (and zero points, one byte each, after them) at the tile's start
        out.push_back({Operand::b, {kScaleBase + first_channel * 2, static_cast<ByteCount>(channels) * 2,
                                    static_cast<ByteCount>(channels) * 2, 1}});
    } else {
      const int group = k * spec_.tile.k / kGroupSize;
      const int groups_per_sector = kSectorBytes / 2;
      if (k * spec_.tile.k % (kGroupSize * groups_per_sector) == 0) // a new sector of each channel's scales
        out.push_back({Operand::b, {kScaleBase + (first_channel * groups_ + group) * 2, kSectorBytes,
                                    static_cast<ByteCount>(groups_) * 2, channels}});
    }
    if (spec_.quant.zero_points && k == 0)
      out.push_back({Operand::b, {kScaleBase + (static_cast<Address>(spec_.experts()) * spec_.n * (groups_ ? groups_ : 1)) * 2 +
                                      first_channel,
                                  static_cast<ByteCount>(channels), static_cast<ByteCount>(channels), 1}});
  }

  Box store_box(const TileIndex& tile) const override { return base_->store_box(tile); }
  Cycle mma_cycles_per_k_step() const override { return base_->mma_cycles_per_k_step(); }
  // Conversion, then the wgmma that read the converted registers (wgmma.fence orders them).
  Cycle element_cycles_per_k_step() const override { return element_cycles_ + base_->mma_cycles_per_k_step(); }
  Cycle epilogue_cycles() const override { return epilogue_cycles_; }
  CtaResources resources() const override {
    CtaResources r = base_->resources();
    // 64-channel tiles split K: every consumer but the first hands its fp32 sums over in shared
    // memory (the consumers are the warpgroups after the producer).
    const int consumers = spec_.warps / 4 - 1;
    if (spec_.tile.n == 64) r.shared_memory_bytes += (consumers - 1) * spec_.tile.m / 2 * 128 * 4;
    return r;
  }
  bool uses_tma() const override { return true; }

private:
  KernelSpec spec_;
  std::unique_ptr<KernelModel> base_;
  Cycle element_cycles_ = 0, epilogue_cycles_ = 0;
  int groups_ = 0;
};

} // namespace

std::unique_ptr<KernelModel> make_mixed_input_model(const KernelSpec& spec, const GpuProfile& gpu) {
  return std::make_unique<MixedInputModel>(spec, gpu);
}

} // namespace tilesim
