// The block-scaled MXFP8 grouped GEMM on tensor cores without block scaling (Hopper), in the two
// schemes of kernels/mxfp8/NOTES.md, chosen by the spec's "block_scale.scheme":
//  - promote (kernels/mxfp8/, built and measured): FP8 wgmma per 32-wide K block into a temporary,
//    folded into the accumulator on the CUDA cores, acc += tmp * sa[row] * sb[col]. The tensor cores
//    run at the FP8 rate; the consumer warps' promotion takes longer than the MMA: the engine
//    charges the larger of the two per K step; the consumers' rate is measured by
//    a microbenchmark of the kernel's own stage (kPromoteCyclesPerElementBlock);
//  - dequantize (not built): the operands converted exactly to bf16 once per K step ((tile.m +
//    tile.n) x tile.k values at the profile's measured conversion rate, dequant_values_per_cycle_per_sm:
//    the same prmt / integer-add sequence shape as the mixed-input kernel's), then bf16 wgmma, one
//    after the other; B is
//    written back to shared memory in bf16 (wgmma reads B only from there), two converted B tiles
//    beside the FP8 ring.
// Both read FP8 operand tiles (1 byte an element, the grouped GEMM's tile walk and boxes) and the
// scales: E8M0 bytes [rows, k / 32] of X and of W, 4 bytes a row per 128-wide K step, loaded with
// plain loads through L1; the L2 sees one 32-byte sector per row every 8 steps (a sector holds 32
// blocks' scales), as the kernel's scale warps read them.
#include "sim/kernel_model.h"

#include "models/spec_error.h"
#include "sim/device_heap.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tilesim {
namespace {

// SM cycles per output element and 32-wide K block of the promote scheme's consumers, measured on
// their own: validation/microbench/mxfp8_promote_rate.cu runs the kernel's stage (two warpgroups,
// eight m64n64k32 wgmma and their promotions) on one 128 x 128 x 128 stage in shared memory, every
// SM busy: 1938.5 cycles per stage (validation/data/h100/microbench/mxfp8_promote_rate.json).
// The stage loop's 712 instructions per consumer warp (cuobjdump -sass of mxfp8_gemm_kernel: the
// 256 FMUL and 256 FFMA validation/data/h100/mxfp8/sass_gemm.txt counts, 34 LDS, the wgmma with
// their fences and waits, barriers, addresses), two consumer warps per scheduler, would issue in
// 1424 cycles; the rest is each half's wait for its wgmma. Charged per element-block, so other
// tiles scale with their area.
constexpr double kPromoteCyclesPerElementBlock = 1938.5 / (128.0 * 128 * 4);
constexpr int kScaleBlock = 32;    // OCP MX v1.0
constexpr int kSectorBytes = 32;
// The scales' own allocations, after the operands (which start at the heap base).
constexpr Address kScaleBase = kHeapBase + (Address{1} << 38);

class Mxfp8GemmModel final : public KernelModel {
public:
  Mxfp8GemmModel(const KernelSpec& spec, const GpuProfile& gpu) : spec_(spec), base_(make_gemm_model(spec, gpu)) {
    if (spec.tile.k % kScaleBlock != 0)
      throw SpecError(spec.source, "tile.k", "is " + std::to_string(spec.tile.k) + ", not whole MX blocks of 32",
                      "use a multiple of 32 (the kernel: 128)");
    if (gpu.tensor.fp8 <= 0)
      throw SpecError(gpu.source, "tensor_flops_per_cycle_per_sm.fp8",
                      "is 0: " + gpu.display_name + " has no FP8 tensor cores for MXFP8 operands", "use a Hopper");
    const double outputs = static_cast<double>(spec.tile.m) * spec.tile.n;
    const int blocks = spec.tile.k / kScaleBlock;
    // The ring as the grouped GEMM model counts it (its epilogue staging and the scales' 3 KB per
    // stage are left out alike; the promote kernel fits one CTA per SM either way).
    resources_ = base_->resources();
    if (spec.block_scale.scheme == BlockScaleScheme::promote) {
      mma_cycles_ = 2.0 * outputs * spec.tile.k / gpu.tensor.fp8;
      element_cycles_ = kPromoteCyclesPerElementBlock * outputs * blocks;
    } else {
      if (gpu.tensor.bf16 <= 0 || gpu.dequant.prmt <= 0)
        throw SpecError(gpu.source, "dequant_values_per_cycle_per_sm",
                        "is not measured for " + gpu.display_name + ", which the dequantize scheme needs",
                        "use \"scheme\": \"promote\", or measure the conversion rate");
      // A consumer converts, then issues the wgmma that reads what it converted: the two add up,
      // as the mixed-input kernel measured (sim/src/mixed_input_model.cpp: charging the larger of
      // the two predicted its calibration part with a time MAPE of 34%, their sum 22%).
      mma_cycles_ = 2.0 * outputs * spec.tile.k / gpu.tensor.bf16;
      element_cycles_ = static_cast<double>(spec.tile.m + spec.tile.n) * spec.tile.k / gpu.dequant.prmt + mma_cycles_;
      resources_.shared_memory_bytes += 2 * spec.tile.n * spec.tile.k * 2; // converted B, double-buffered
    }
    if (resources_.shared_memory_bytes > gpu.sm.max_shared_memory_per_cta_bytes)
      throw SpecError(spec.source, "stages",
                      std::to_string(spec.stages) + " stages need " + std::to_string(resources_.shared_memory_bytes) +
                          " bytes of shared memory with the dequantize scheme's two bf16 B tiles, " + gpu.name +
                          " allows " +
                          std::to_string(gpu.sm.max_shared_memory_per_cta_bytes),
                      "use fewer stages");
    scale_cols_ = spec.k / kScaleBlock;
    token_offsets_.assign(spec.experts() + 1, 0);
    for (int e = 0; e < spec.experts(); ++e) token_offsets_[e + 1] = token_offsets_[e] + spec.expert_tokens[e];
    w_scale_base_ = kScaleBase + align_allocation(static_cast<Address>(spec.total_m()) * scale_cols_);
  }

  int tile_count() const override { return base_->tile_count(); }
  TileLookup lookup_tile(int linear) const override { return base_->lookup_tile(linear); }
  int k_steps() const override { return base_->k_steps(); }

  void load_boxes(const WorkItem& item, int k, std::vector<OperandBox>& out) const override {
    base_->load_boxes(item, k, out);
    const int first_block = k * spec_.tile.k / kScaleBlock;
    const int blocks_per_sector = kSectorBytes; // one byte a block
    if (first_block % blocks_per_sector != 0) return; // L1 serves the sector loaded 8 steps before
    const TileIndex& t = item.tile;
    const std::int64_t first_token = token_offsets_[t.expert];
    const int x_rows = std::min(spec_.tile.m, spec_.expert_tokens[t.expert] - t.local_row * spec_.tile.m);
    const int w_rows = std::min(spec_.tile.n, spec_.n - t.col * spec_.tile.n);
    const auto stride = static_cast<ByteCount>(scale_cols_);
    const auto sector = static_cast<ByteCount>(std::min(kSectorBytes, scale_cols_ - first_block));
    const Address x_first = static_cast<Address>(first_token + t.local_row * spec_.tile.m);
    const Address w_first = static_cast<Address>(t.expert) * spec_.n + static_cast<Address>(t.col) * spec_.tile.n;
    if (x_rows > 0) out.push_back({Operand::a, {kScaleBase + x_first * stride + first_block, sector, stride, x_rows}});
    if (w_rows > 0) out.push_back({Operand::b, {w_scale_base_ + w_first * stride + first_block, sector, stride, w_rows}});
  }

  Box store_box(const TileIndex& tile) const override { return base_->store_box(tile); }
  Cycle mma_cycles_per_k_step() const override { return mma_cycles_; }
  Cycle element_cycles_per_k_step() const override { return element_cycles_; }
  Cycle epilogue_cycles() const override { return base_->epilogue_cycles(); }
  CtaResources resources() const override { return resources_; }
  bool uses_tma() const override { return base_->uses_tma(); }

private:
  KernelSpec spec_;
  std::unique_ptr<KernelModel> base_;
  Cycle mma_cycles_ = 0, element_cycles_ = 0;
  CtaResources resources_;
  int scale_cols_ = 0;
  std::vector<std::int64_t> token_offsets_; // experts + 1 prefix sums of tokens: where each expert's X rows start
  Address w_scale_base_ = 0;
};

} // namespace

std::unique_ptr<KernelModel> make_mxfp8_gemm_model(const KernelSpec& spec, const GpuProfile& gpu) {
  return std::make_unique<Mxfp8GemmModel>(spec, gpu);
}

} // namespace tilesim
