// The block-scaled MXFP8 grouped GEMM on tensor cores without block scaling (Hopper), in the three
// schemes of kernels/mxfp8/NOTES.md, chosen by the spec's "block_scale.scheme":
//  - promote: FP8 wgmma per 32-wide K block into a temporary, folded into the accumulator on the
//    CUDA cores, acc += tmp * sa[row] * sb[col];
//  - dequantize: both operands converted exactly to bf16 (X into wgmma's register A, W into a bf16
//    copy in shared memory), then bf16 wgmma;
//  - transposed: Y^T = W X^T, W converted into wgmma's register A and the tile's few tokens (tile.m)
//    on its N, X converted into a bf16 copy per consumer, consumer warpgroups splitting K on
//    64-channel tiles and adding their sums at the end (the mixed-input kernel's structure); or, on
//    128 x 128 tiles, two consumers of 64 channels each over all of K sharing one bf16 X copy per
//    stage (three in rotation);
//  - xpass: the 128 x 128 transposed tile on X dequantised to bf16 by a pass before the GEMM
//    (mxfp8_transposed_xpass_kernel.cuh): X's boxes are bf16 and carry no scales, W is converted alone;
//  - xpass_f16: the same in f16 relative to a reference exponent a row (mxfp8_transposed_xpass_f16_kernel.cuh),
//    its own stage figures (128 x 128, 16 tokens x 128 channels for few tokens an expert, and 128 x 256:
//    mxfp8_transposed_xpass_f16_wide_kernel.cuh); its pass also reads
//    W's scales for W's rows' references.
// Every K step costs the SM what one 128-deep stage costs the kernel's CTA with its operands in L2,
// measured by running the kernel itself at two depths (the profile's mxfp8_stage_ns, kernels/
// mxfp8/mxfp8_stage_rate.cu): waits, scale loads, conversion or promotion, wgmma, barriers and
// release as the kernel overlaps them. It is a time, charged at the SM clock of the replay: charged
// as the cycles the microbenchmark counts (CUPTI), the dataset's promote and dequantize
// configurations went 7-26% slow (kernels/mxfp8/NOTES.md, "The stage in cycles"). Built up from parts instead (the promotion's consumer stage
// alone, or the conversion at the mixed-input microbenchmark's issue rate plus the MMA), the model
// predicted every configuration 21-42% fast (kernels/mxfp8/NOTES.md). The memory side is the
// replay's: FP8 operand tiles (1 byte an element, the grouped GEMM's tile walk and boxes) and the
// scales: E8M0 bytes [rows, k / 32] of X and of W, 4 bytes a row per 128-wide K step, loaded with
// plain loads through L1; the L2 sees one 32-byte sector per row every 8 steps (a sector holds 32
// blocks' scales), as the kernels' scale warps (transposed: consumers) read them.
#include "sim/kernel_model.h"

#include "models/mxfp8_xpass_tiles.h"
#include "models/spec_error.h"
#include "sim/device_heap.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace tilesim {
namespace {

constexpr int kScaleBlock = 32;    // OCP MX v1.0
constexpr int kStageK = 128;       // the stage the profile's cycles are for: four MX blocks
constexpr int kSectorBytes = 32;
constexpr int kTransposedChannels = 64; // the transposed scheme's tile.n: one consumer's m64
constexpr int kWideChannels = 128;      // or two consumers' (mxfp8_transposed_wide_kernel.cuh), at 128 tokens
constexpr int kWideXCopies = 3;         // its rotating bf16 copies of X
// Per output element in the transposed scheme's epilogue: as the mixed-input kernel's (the same
// store_transposed_tile: FMUL by the unit scale, F2FP, STG.E.U16, predicates and 64-bit addresses,
// 8.7-10 SASS instructions per element there, sim/src/mixed_input_model.cpp).
constexpr double kTransposedEpilogueInstructionsPerElement = 9.0;
// xpass_f16's store multiplies each output by 2^(ref_x + ref_w - 268) first: the exponents' add and an FMUL
// more a element (mxfp8_transposed_xpass_f16_kernel.cuh, store_f16_tile; the token's 2-byte reference load
// is one per four elements).
constexpr double kF16EpilogueExtraInstructionsPerElement = 2.0;
// The scales' own allocations, after the operands (which start at the heap base).
constexpr Address kScaleBase = kHeapBase + (Address{1} << 38);

// The 64-channel transposed kernel's consumer warpgroups, splitting K: four at 16 or 32 tokens, two at
// 64 or 128 (kernels/mxfp8/mxfp8_transposed_kernel.cuh, transposed_consumers).
int transposed_consumers(int tile_m) { return tile_m <= 32 ? 4 : 2; }

bool x_passed(const KernelSpec& spec) {
  return spec.block_scale.scheme == BlockScaleScheme::xpass || spec.block_scale.scheme == BlockScaleScheme::xpass_f16;
}

// The operands the GEMM kernel reads: xpass's X is the pass's bf16 copy (xpass_f16's f16 copy: the same
// bytes), W stays FP8 (its scales are this model's own boxes).
KernelSpec operand_spec(const KernelSpec& spec) {
  if (!x_passed(spec)) return spec;
  KernelSpec s = spec;
  s.a_dtype = Dtype::bf16;
  s.b_dtype = Dtype::fp8_e4m3;
  return s;
}

class Mxfp8GemmModel final : public KernelModel {
public:
  Mxfp8GemmModel(const KernelSpec& spec, const GpuProfile& gpu)
      : spec_(spec), base_(make_gemm_model(operand_spec(spec), gpu)) {
    if (spec.tile.k % kScaleBlock != 0)
      throw SpecError(spec.source, "tile.k", "is " + std::to_string(spec.tile.k) + ", not whole MX blocks of 32",
                      "use a multiple of 32 (the kernel: 128)");
    if (gpu.tensor.fp8 <= 0)
      throw SpecError(gpu.source, "tensor_flops_per_cycle_per_sm.fp8",
                      "is 0: " + gpu.display_name + " has no FP8 tensor cores for MXFP8 operands", "use a Hopper");
    const double outputs = static_cast<double>(spec.tile.m) * spec.tile.n;
    const double stages = static_cast<double>(spec.tile.k) / kStageK;
    // The ring as the grouped GEMM model counts it (its epilogue staging and the scales' 3 KB per
    // stage are left out alike; every scheme's kernel fits one CTA per SM either way).
    resources_ = base_->resources();
    epilogue_cycles_ = base_->epilogue_cycles();
    const Mxfp8StageNs& measured = gpu.mxfp8_stage;
    double stage_ns = 0;
    switch (spec.block_scale.scheme) {
    case BlockScaleScheme::promote:
      mma_cycles_ = 2.0 * outputs * spec.tile.k / gpu.tensor.fp8;
      // Per element-block, so that other tile areas scale (the kernel runs 128 x 128 only).
      stage_ns = measured.promote * outputs / (128.0 * 128);
      break;
    case BlockScaleScheme::dequantize:
      mma_cycles_ = 2.0 * outputs * spec.tile.k / gpu.tensor.bf16;
      stage_ns = measured.dequantize * outputs / (128.0 * 128);
      resources_.shared_memory_bytes += 2 * spec.tile.n * spec.tile.k * 2; // converted B, double-buffered
      break;
    case BlockScaleScheme::xpass:
    case BlockScaleScheme::xpass_f16: { // f16 wgmma: bf16's rate
      const bool f16 = spec.block_scale.scheme == BlockScaleScheme::xpass_f16;
      if (!xpass_tile_built(f16, spec.tile.m, spec.tile.n) || spec.tile.k != kStageK)
        throw SpecError(spec.source, "tile", "is " + std::to_string(spec.tile.m) + "x" + std::to_string(spec.tile.n) +
                                               "x" + std::to_string(spec.tile.k) + ", which the " +
                                               to_string(spec.block_scale.scheme) + " scheme's kernel is not built for",
                        f16 ? "use 16, 32, 64 or 128 tokens x 128 x 128, or 128 x 256 x 128" : "use 128 x 128 x 128");
      mma_cycles_ = 2.0 * outputs * spec.tile.k / gpu.tensor.bf16;
      stage_ns = f16 ? measured.xpass_f16_of(spec.tile.m, spec.tile.n) : measured.xpass;
      const double per_element =
          kTransposedEpilogueInstructionsPerElement + (f16 ? kF16EpilogueExtraInstructionsPerElement : 0.0);
      epilogue_cycles_ = per_element * outputs / (32.0 * gpu.sm.warp_schedulers);
      break;
    }
    case BlockScaleScheme::transposed: {
      const bool wide = spec.tile.n == kWideChannels && spec.tile.m == 128;
      if ((spec.tile.n != kTransposedChannels && !wide) || spec.tile.k != kStageK)
        throw SpecError(spec.source, "tile", "is " + std::to_string(spec.tile.m) + "x" + std::to_string(spec.tile.n) +
                                               "x" + std::to_string(spec.tile.k) +
                                               ", which the transposed scheme's kernel is not built for",
                        "use tile.m tokens (16, 32, 64 or 128) x 64 x 128, or 128 x 128 x 128");
      mma_cycles_ = 2.0 * outputs * spec.tile.k / gpu.tensor.bf16;
      stage_ns = measured.transposed_of(spec.tile.m, spec.tile.n);
      // The stores, each element on its own, spread over the SM's schedulers: consumer 0's four warps
      // store the whole tile (64 channels), or each 128 x 128 consumer's four warps its 64 channels.
      epilogue_cycles_ = kTransposedEpilogueInstructionsPerElement * outputs / (32.0 * gpu.sm.warp_schedulers);
      if (wide) {
        resources_.shared_memory_bytes += kWideXCopies * spec.tile.m * spec.tile.k * 2; // the bf16 copies of X
        break;
      }
      const int consumers = transposed_consumers(spec.tile.m);
      const int accumulators = spec.tile.m / 2; // fp32 sums per consumer thread: 64 x tile.m over 128
      // Split K: consumer 0 first loads and adds each other consumer's sums.
      epilogue_cycles_ += 2.0 * accumulators * (consumers - 1);
      // Each consumer's bf16 copy of X, and the split-K sums of all consumers but the first.
      resources_.shared_memory_bytes += consumers * spec.tile.m * spec.tile.k * 2 +
                                        (consumers - 1) * accumulators * 128 * 4;
      break;
    }
    }
    if (stage_ns <= 0)
      throw SpecError(gpu.source, "mxfp8_stage_ns",
                      "has no stage cost for the " + to_string(spec.block_scale.scheme) + " scheme at tile " +
                          std::to_string(spec.tile.m) + "x" + std::to_string(spec.tile.n) + " on " +
                          gpu.display_name + ", which the MXFP8 model needs",
                      "run kernels/mxfp8/mxfp8_stage_rate on it and add the figures");
    // The measured stage holds the MMA too: the engine charges the larger of the two per K step.
    element_cycles_ = stage_ns * gpu.sm.clock_mhz / 1000.0 * stages;
    if (resources_.shared_memory_bytes > gpu.sm.max_shared_memory_per_cta_bytes)
      throw SpecError(spec.source, "stages",
                      std::to_string(spec.stages) + " stages need " + std::to_string(resources_.shared_memory_bytes) +
                          " bytes of shared memory with the " + to_string(spec.block_scale.scheme) +
                          " scheme's converted copies, " + gpu.name + " allows " +
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
    if (x_rows > 0 && !x_passed(spec_))
      out.push_back({Operand::a, {kScaleBase + x_first * stride + first_block, sector, stride, x_rows}});
    if (w_rows > 0) out.push_back({Operand::b, {w_scale_base_ + w_first * stride + first_block, sector, stride, w_rows}});
  }

  Box store_box(const TileIndex& tile) const override { return base_->store_box(tile); }
  Cycle mma_cycles_per_k_step() const override { return mma_cycles_; }
  Cycle element_cycles_per_k_step() const override { return element_cycles_; }
  Cycle epilogue_cycles() const override { return epilogue_cycles_; }
  // Each scheme's consumers find their tiles with the bf16 kernel's TileScheduler, zero their
  // accumulators and start and exit as its CTAs do (kernels/mxfp8/mxfp8_gemm_kernel.cuh).
  bool consumer_finds_tile() const override { return base_->consumer_finds_tile(); }
  Cycle tile_setup_cycles() const override { return base_->tile_setup_cycles(); }
  Cycle cta_start_cycles() const override { return base_->cta_start_cycles(); }
  Cycle cta_first_load_cycles() const override { return base_->cta_first_load_cycles(); }
  Cycle epilogue_tail_cycles() const override { return base_->epilogue_tail_cycles(); }
  CtaResources resources() const override { return resources_; }
  bool uses_tma() const override { return base_->uses_tma(); }

private:
  KernelSpec spec_;
  std::unique_ptr<KernelModel> base_;
  Cycle mma_cycles_ = 0, element_cycles_ = 0, epilogue_cycles_ = 0;
  CtaResources resources_;
  int scale_cols_ = 0;
  std::vector<std::int64_t> token_offsets_; // experts + 1 prefix sums of tokens: where each expert's X rows start
  Address w_scale_base_ = 0;
};

} // namespace

std::unique_ptr<KernelModel> make_mxfp8_gemm_model(const KernelSpec& spec, const GpuProfile& gpu) {
  return std::make_unique<Mxfp8GemmModel>(spec, gpu);
}

std::optional<KernelSpec> mxfp8_pass_before(const KernelSpec& spec, const GpuProfile& gpu) {
  if (!x_passed(spec) || kernel_model_name(spec, gpu) != "mxfp8_gemm" || spec.total_m() == 0) return std::nullopt;
  // mxfp8_dequantize reads 1 + 1/32 bytes and writes 2 per element of X [total_m, k], a grid-stride
  // stream as the rowwise quantiser's the other way (kernels/mxfp8/mxfp8_kernel.cuh): its model with
  // the reads and writes exchanged, its instruction counts kept (the stream is memory-bound).
  // xpass_f16's pass (mxfp8_f16_pass_kernel.cuh) moves the same bytes for X and reads W's scales too,
  // k / 32 bytes a row of W: charged as that many more bytes of the same stream, i.e. as
  // ceil(W's scale bytes / (3 + 1/32) / k) more rows of X (its 2 bytes of row references a row left out).
  const bool f16 = spec.block_scale.scheme == BlockScaleScheme::xpass_f16;
  const std::int64_t w_scale_bytes = f16 ? static_cast<std::int64_t>(spec.experts()) * spec.n * (spec.k / kScaleBlock) : 0;
  const double row_bytes = (3.0 + 1.0 / kScaleBlock) * spec.k;
  KernelSpec pass;
  pass.source = spec.source;
  pass.name = spec.name + (f16 ? ": X to f16 and the rows' references (xpass_f16)" : ": X dequantised (xpass)");
  pass.kind = KernelKind::mxfp8_quantize;
  pass.a_dtype = pass.b_dtype = Dtype::bf16;
  pass.mxfp8.rows = spec.total_m() + static_cast<std::int64_t>(std::ceil(static_cast<double>(w_scale_bytes) / row_bytes));
  pass.mxfp8.cols = spec.k;
  pass.mxfp8.axis = Mxfp8Axis::rowwise;
  pass.mxfp8.scale_rule = Mxfp8ScaleRule::round_up;
  pass.mxfp8.element = spec.block_scale.element;
  pass.mxfp8.dequantize = true;
  pass.c_dtype = Dtype::fp8_e4m3;
  pass.warps = 8;
  pass.stages = 1;
  pass.cluster = 1;
  pass.load = LoadPath::cp_async;
  return pass;
}

} // namespace tilesim
