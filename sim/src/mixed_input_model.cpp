// The mixed-input GEMM of kernels/mixed_input/ (bf16 X, int8/uint8 W converted in registers):
// the grouped GEMM's tile walk and operand boxes (make_gemm_model: X boxes of tile.m tokens x
// tile.k, W boxes of tile.n channels x tile.k one-byte weights, so half the bf16 weight bytes go
// through TMA, L2 and DRAM), plus what this kernel does that a bf16 GEMM does not:
//  - every K step (tile.k: one K block of 128 or 64, or two of 128 a stage on 64-token tiles) costs
//    the SM what its K blocks cost the kernel's consumers: the wait, the
//    shared-memory loads, the conversion, the wgmma and the release, as the kernel overlaps them
//    (two or four consumer warpgroups splitting K on 64-channel tiles, two owning 64 channels
//    each on 128-channel tiles). The profile's mixed_input_k_block_cycles were measured by running
//    the kernel itself with L2-resident operands at two depths (kernels/mixed_input/
//    mixed_input_block_rate.cu), so the memory side is left to the replay. Built up from parts
//    instead (the conversion at the dequant_issue_rate microbenchmark's 31.2 values per cycle
//    plus the wgmma at the tensor rate), a decode K block came to 327 cycles where the kernel
//    took 714 (645 since v10): its load path alone, with no conversion and no wgmma, takes about
//    380, and the conversion adds to it rather than hiding behind it, so the model predicted the
//    dataset 20% fast (kernels/mixed_input/NOTES.md, v10 ablations);
//  - the split-K reduction at the end of a 64-channel tile: consumers 1.. write their fp32 sums
//    to shared memory and consumer 0 adds them (a load and an add per accumulator and consumer);
//  - the scales' and zero points' loads: per-channel ones once per tile, group scales as the
//    L1 serves them, one 32-byte sector (16 groups) per channel every 2048 of K;
//  - the epilogue: each output element is scaled, converted and stored on its own (2-byte stores
//    in the accumulator layout), or with "store": "tma" on 128-channel tiles written transposed
//    into shared memory and stored by one TMA store the consumers do not wait for; both counted
//    from the kernel's SASS.
#include "sim/kernel_model.h"

#include "models/spec_error.h"

namespace tilesim {
namespace {

// Per output element in the epilogue of mixed_input_gemm_kernel (cuobjdump -sass, NOTES.md: 8.7
// at 256-token tiles, 10 at 16): FMUL (scale), F2FP (bf16), STG.E.U16, and the token/channel
// predicates and 64-bit address arithmetic of each 2-byte store.
constexpr double kEpilogueInstructionsPerElement = 9.0;
// The TMA-store epilogue (store_tile_tma), from the last wgmma wait to the store's issue, counted
// in the SASS of its 128-, 224- and 256-token instantiations (prmt and cvt alike): 170, 268 and 300
// instructions a consumer warp, 40 + 130/64 per fp32 accumulator of a thread (an FMUL, half an
// F2FP, a sixteenth of an STSM .x4 .trans and the moves that gather its operands; the 40 are the
// two barriers, the proxy fence, the buffer address and the store). The store itself reads the
// buffer while the next tile runs: the replay's write of the tile's box.
constexpr double kTmaStoreInstructionsPerTile = 40.0;
constexpr double kTmaStoreInstructionsPerAccumulator = 130.0 / 64.0;
// Scales live in their own allocation; far from the operands (which start at 2^40).
constexpr Address kScaleBase = Address{3} << 40;
constexpr int kGroupSize = 128;
constexpr int kSectorBytes = 32;

// The share of the kernel's tiles that are an expert's last, part-filled tile with tokens of a
// later expert after it: those the TMA-store epilogue leaves to the element stores.
double ragged_tile_share(const KernelSpec& spec) {
  long long tiles = 0, ragged = 0;
  int last_with_tokens = -1;
  for (int e = 0; e < spec.experts(); ++e)
    if (spec.expert_tokens[e] > 0) last_with_tokens = e;
  for (int e = 0; e < spec.experts(); ++e) {
    const int m = spec.expert_tokens[e];
    tiles += (m + spec.tile.m - 1) / spec.tile.m;
    if (m % spec.tile.m != 0 && e < last_with_tokens) ++ragged;
  }
  return tiles ? static_cast<double>(ragged) / tiles : 0.0;
}

class MixedInputModel final : public KernelModel {
public:
  MixedInputModel(const KernelSpec& spec, const GpuProfile& gpu) : spec_(spec), base_(make_gemm_model(spec, gpu)) {
    // The tiles kernels/mixed_input/ is built for (mixed_input_unsupported_reason): 16, 32 or 64
    // tokens by 64 channels by 128 of K, or 128, 224 or 256 tokens by 128 channels by 64 of K.
    const bool decode = spec.tile.n == 64 && (spec.tile.m == 16 || spec.tile.m == 32 || spec.tile.m == 64);
    const bool prefill = spec.tile.n == 128 && (spec.tile.m == 128 || spec.tile.m == 224 || spec.tile.m == 256);
    if (!decode && !prefill)
      throw SpecError(spec.source, "tile", "is " + std::to_string(spec.tile.m) + "x" + std::to_string(spec.tile.n) +
                                             ", which the mixed-input kernel is not built for",
                      "use 16, 32 or 64 tokens (tile.m) with tile.n 64, or 128, 224 or 256 with tile.n 128");
    const bool cvt = spec.quant.conversion == WeightConversion::cvt;
    const double block_cycles = gpu.mixed_input_k_block.of(spec.tile.m, cvt, spec.quant.scale_group != 0);
    if (block_cycles <= 0)
      throw SpecError(gpu.source, "mixed_input_k_block_cycles",
                      "has no K-block cost for " + std::to_string(spec.tile.m) + "-token tiles on " +
                          gpu.display_name + ", which the mixed-input model needs",
                      "run kernels/mixed_input/mixed_input_block_rate on it and add the figures");
    // A K block costs what it was measured to cost with as many blocks a stage as the spec's: a
    // stage's barrier round trip is shared by its blocks (kernels/mixed_input/NOTES.md, stage K).
    const int block_k = decode ? 128 : 64, measured_k = gpu.mixed_input_k_block.stage_k(spec.tile.m);
    if (spec.tile.k != measured_k)
      throw SpecError(spec.source, "tile.k", "is " + std::to_string(spec.tile.k) + "; " + gpu.display_name +
                                               "'s mixed_input_k_block_cycles for " + std::to_string(spec.tile.m) +
                                               "-token tiles were measured with " + std::to_string(measured_k) +
                                               " of K a stage",
                      "use tile.k " + std::to_string(measured_k) +
                          ", the stage K of the kernel's figures (kernels/mixed_input/mixed_input_block_rate.cu)");
    block_cycles_ = block_cycles * spec.tile.k / block_k; // a K step of the replay is tile.k deep
    const int consumers = spec_.warps / 4 - 1; // the warpgroups after the producer
    const int accumulators = spec.tile.m / 2;  // fp32 sums per consumer thread: 64 x tile.m over 128
    epilogue_cycles_ = kEpilogueInstructionsPerElement * spec.tile.m * spec.tile.n / (32.0 * gpu.sm.warp_schedulers);
    // Split K: consumer 0's four warps, one per scheduler, load and add each other consumer's sums.
    if (spec.tile.n == 64) epilogue_cycles_ += 2.0 * accumulators * (consumers - 1);
    if (spec.quant.tma_store) {
      // Every consumer warp issues the whole sequence; the schedulers share the consumers' warps.
      const double tma_cycles = (kTmaStoreInstructionsPerTile + kTmaStoreInstructionsPerAccumulator * accumulators) *
                                consumers * 4.0 / gpu.sm.warp_schedulers;
      // A ragged expert's last tile keeps the element stores (its rows past the expert are the next
      // expert's) unless nothing follows it. The replay charges one epilogue a tile for the whole
      // kernel, so it charges the mean over the kernel's tiles.
      const double ragged = ragged_tile_share(spec);
      epilogue_cycles_ = ragged * epilogue_cycles_ + (1.0 - ragged) * tma_cycles;
    }
    groups_ = spec.quant.scale_group ? spec.k / kGroupSize : 0;
    const int shared = resources().shared_memory_bytes;
    if (shared > gpu.sm.max_shared_memory_per_cta_bytes)
      throw SpecError(spec.source, "stages",
                      std::to_string(spec.stages) + " stages beside the " +
                          (spec.quant.tma_store ? "TMA store's buffers" : "split-K sums") + " need " +
                          std::to_string(shared) + " bytes of shared memory, " + gpu.name + " allows " +
                          std::to_string(gpu.sm.max_shared_memory_per_cta_bytes) + " per CTA",
                      "use fewer stages");
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
  // The measured K block holds the wgmma too: the simulator takes the larger of this and the MMA.
  Cycle element_cycles_per_k_step() const override { return block_cycles_; }
  Cycle epilogue_cycles() const override { return epilogue_cycles_; }
  CtaResources resources() const override {
    CtaResources r = base_->resources();
    // 64-channel tiles split K: every consumer but the first hands its fp32 sums over in shared
    // memory (the consumers are the warpgroups after the producer).
    const int consumers = spec_.warps / 4 - 1;
    if (spec_.tile.n == 64) r.shared_memory_bytes += (consumers - 1) * spec_.tile.m / 2 * 128 * 4;
    // The TMA store's buffers: each consumer's 64 channels (128 bytes) for every token of the tile.
    if (spec_.quant.tma_store) r.shared_memory_bytes += consumers * spec_.tile.m * 128;
    return r;
  }
  bool uses_tma() const override { return true; }

private:
  KernelSpec spec_;
  std::unique_ptr<KernelModel> base_;
  Cycle block_cycles_ = 0, epilogue_cycles_ = 0;
  int groups_ = 0;
};

} // namespace

std::unique_ptr<KernelModel> make_mixed_input_model(const KernelSpec& spec, const GpuProfile& gpu) {
  return std::make_unique<MixedInputModel>(spec, gpu);
}

} // namespace tilesim
