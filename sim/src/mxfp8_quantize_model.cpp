// The MXFP8 quantisers (kernels/mxfp8/): memory-bound kernels that read a bf16 tensor once and
// write it once as FP8 bytes plus one E8M0 scale byte per 32 elements, with a few instructions per
// element on the warp schedulers. One work item is one CTA step, handed out by the block scheduler
// in order as slots free (the grid form of the element-wise model):
//
// rowwise: a step is 256 threads x 4 vectors x 8 elements = 8192 contiguous bf16 (16 KiB read);
//   it writes 8 KiB of elements and 256 scale bytes. The kernel runs a grid-stride loop over 8
//   CTAs per SM, whose steps in flight at any time are the same contiguous window the grid form
//   walks. The last step is a short row.
// colwise: a step is a 128-row x 128-column tile (128 rows of 256 bytes, the tensor's row pitch
//   apart; fewer at the row and column tails); it writes 128 runs of 128 bytes, one per output row,
//   `rows` bytes apart, and 512 scale bytes.
//
// The dequantiser (mxfp8_dequantize, the pass the MXFP8 xpass scheme runs over X before its GEMM) is the
// rowwise walk the other way: each step reads the elements with their scales and writes the bf16 run.
//
// Rowwise, the scale bytes travel with the elements as 256 more bytes on the item's contiguous run
// (the byte count is exact, their addresses are not). Colwise, the stores are written as the
// kernel issues them, since the L2 looks a sector up once per store request that touches it: each
// thread stores its 32 bytes of an output row as two 16-byte halves (out_lo[0], out_lo[1]), so the
// four lanes of a column write the row's 128 bytes in 8 pieces and each 32-byte sector is looked up
// twice; and each column's 4 scale bytes of the tile (one per 32-row block, from 4 lanes) are one
// 4-byte request into the [cols, rows / 32] scale tensor. On the H100 the colwise kernels make 31-33%
// more L2 lookups than the rowwise ones at every shape, all of them hits
// (validation/data/h100/mxfp8/measured/q_16384x7168_*: 5.62 M more lookups, 5.58 M more hits), what
// twice the element sectors plus one lookup per 4 scale bytes come to.
#include "sim/kernel_model.h"

#include "models/spec_error.h"
#include "sim/device_heap.h"
#include "sim/occupancy.h"

#include <algorithm>
#include <limits>

namespace tilesim {
namespace {


constexpr std::int64_t kBlock = 32;
constexpr int kThreads = 256;
constexpr std::int64_t kRowwiseStepElements = kThreads * 4 * 8;
constexpr std::int64_t kTileRows = 128, kTileCols = 128;
constexpr std::int64_t kColwiseStoreBytes = 16; // one st.global.v4 of FP8 bytes

// Warp instructions per step, counted in the SASS of kernels/mxfp8/mxfp8_kernel.cuh (nvcc 13.0,
// sm_90a, cuobjdump -sass on the H100 machine: validation/data/h100/mxfp8/sass_counts.txt): the
// rowwise kernel's body is its loop, unrolled over 4 vectors, so a step is the function less its
// ~20 instructions of prologue and exit (392 floor, 416 round-up: 372 and 396); a colwise CTA runs
// its function once (608 and 624). Registers per thread from cuobjdump --dump-resource-usage of
// the same build: rowwise 39-40; colwise 48 (floor) and 64 (round-up), which holds the round-up
// rule's colwise CTAs to 4 per SM.
struct KernelCounts {
  double warp_instructions_per_step;
  int registers_per_thread;
  int shared_memory_bytes;
};
KernelCounts counts_of(const Mxfp8QuantizeShape &s) {
  const bool round_up = s.scale_rule == Mxfp8ScaleRule::round_up;
  if (s.axis == Mxfp8Axis::rowwise) return {round_up ? 396.0 : 372.0, 40, 0};
  return {round_up ? 624.0 : 608.0, round_up ? 64 : 48, static_cast<int>(kTileRows * kTileCols * 2)};
}

class Mxfp8QuantizeModel final : public KernelModel {
public:
  Mxfp8QuantizeModel(const KernelSpec &spec, const GpuProfile &gpu) : shape_(spec.mxfp8) {
    const std::int64_t elements = shape_.elements();
    rowwise_ = shape_.axis == Mxfp8Axis::rowwise;
    const KernelCounts counts = counts_of(shape_);
    if (rowwise_) {
      steps_ = (elements + kRowwiseStepElements - 1) / kRowwiseStepElements;
    } else {
      tile_cols_ = (shape_.cols + kTileCols - 1) / kTileCols;
      steps_ = (shape_.rows + kTileRows - 1) / kTileRows * tile_cols_;
    }
    if (steps_ > std::numeric_limits<int>::max())
      throw SpecError(spec.source, "rows",
                      std::to_string(shape_.rows) + " x " + std::to_string(shape_.cols) + " makes " +
                          std::to_string(steps_) + " CTA steps, more than the replay holds",
                      "model the tensor in parts");
    x_base_ = kHeapBase;
    out_base_ = align_allocation(x_base_ + static_cast<Address>(elements) * 2);
    scales_base_ = align_allocation(out_base_ + static_cast<Address>(elements));
    resources_ = {kThreads, counts.registers_per_thread, counts.shared_memory_bytes};
    const double warps = kThreads / 32.0;
    element_cycles_ = warps * counts.warp_instructions_per_step / gpu.sm.warp_schedulers;
  }

  int tile_count() const override { return static_cast<int>(steps_); }
  TileLookup lookup_tile(int linear) const override {
    TileLookup l;
    l.tile.row = linear;
    l.tile.local_row = linear;
    return l;
  }
  int k_steps() const override { return 1; }

  void load_boxes(const WorkItem &item, int, std::vector<OperandBox> &out) const override {
    const std::int64_t step = item.tile.row;
    if (rowwise_) {
      out.push_back({Operand::a, shape_.dequantize ? quantised_run(step) : bf16_run(step)});
      return;
    }
    const Tile t = tile_of(step);
    out.push_back({Operand::a,
                   {x_base_ + static_cast<Address>((t.row0 * shape_.cols + t.col0) * 2), t.cols * 2, shape_.cols * 2,
                    static_cast<int>(t.rows)}});
  }

  Box store_box(const TileIndex &tile) const override {
    const std::int64_t step = tile.row;
    if (rowwise_) return shape_.dequantize ? bf16_run(step) : quantised_run(step);
    const Tile t = tile_of(step);
    return {out_base_ + static_cast<Address>(t.col0 * shape_.rows + t.row0), t.rows, shape_.rows,
            static_cast<int>(t.cols)};
  }

  // Colwise: the tile's output rows as 16-byte pieces, piece p of every row in box p, then its
  // scale bytes, one 4-byte run per column (fewer at a row tail: one byte per 32-row block).
  void store_boxes(const TileIndex &tile, std::vector<Box> &out) const override {
    if (rowwise_) {
      out.push_back(store_box(tile));
      return;
    }
    const Tile t = tile_of(tile.row);
    const Address first = out_base_ + static_cast<Address>(t.col0 * shape_.rows + t.row0);
    for (std::int64_t piece = 0; piece * kColwiseStoreBytes < t.rows; ++piece)
      out.push_back({first + static_cast<Address>(piece * kColwiseStoreBytes), kColwiseStoreBytes, shape_.rows,
                     static_cast<int>(t.cols)});
    const std::int64_t blocks_per_column = shape_.rows / kBlock;
    out.push_back({scales_base_ + static_cast<Address>(t.col0 * blocks_per_column + t.row0 / kBlock), t.rows / kBlock,
                   blocks_per_column, static_cast<int>(t.cols)});
  }

  Cycle mma_cycles_per_k_step() const override { return 0; }
  Cycle element_cycles_per_k_step() const override { return element_cycles_; }
  Cycle epilogue_cycles() const override { return 0; }
  CtaResources resources() const override { return resources_; }
  bool uses_tma() const override { return false; }
  bool calls_tile_scheduler() const override { return false; }

private:
  // A rowwise step's bf16 elements, and its FP8 elements with their scales: read and written the one
  // way or the other (the dequantiser reads the second and writes the first).
  Box bf16_run(std::int64_t step) const {
    const std::int64_t first = step * kRowwiseStepElements;
    const std::int64_t count = std::min(kRowwiseStepElements, shape_.elements() - first);
    return {x_base_ + static_cast<Address>(first * 2), count * 2, count * 2, 1};
  }
  Box quantised_run(std::int64_t step) const {
    const std::int64_t first = step * kRowwiseStepElements;
    const std::int64_t count = std::min(kRowwiseStepElements, shape_.elements() - first);
    const ByteCount bytes = count + count / kBlock; // elements and their scales
    return {out_base_ + static_cast<Address>(first + first / kBlock), bytes, bytes, 1};
  }

  // A colwise step's tile: its first row and column and its extent, shorter at the tails.
  struct Tile {
    std::int64_t row0, col0, rows, cols;
  };
  Tile tile_of(std::int64_t step) const {
    const std::int64_t row0 = step / tile_cols_ * kTileRows, col0 = step % tile_cols_ * kTileCols;
    return {row0, col0, std::min(kTileRows, shape_.rows - row0), std::min(kTileCols, shape_.cols - col0)};
  }

  Mxfp8QuantizeShape shape_;
  bool rowwise_ = true;
  std::int64_t steps_ = 0;
  std::int64_t tile_cols_ = 1;
  Address x_base_ = 0, out_base_ = 0, scales_base_ = 0;
  Cycle element_cycles_ = 0;
  CtaResources resources_;
};

} // namespace

std::unique_ptr<KernelModel> make_mxfp8_quantize_model(const KernelSpec &spec, const GpuProfile &gpu) {
  return std::make_unique<Mxfp8QuantizeModel>(spec, gpu);
}

} // namespace tilesim
