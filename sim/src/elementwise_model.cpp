// The element-wise kernel (kernels/elementwise/): every CTA step reads block * vector * unroll
// elements of each input and writes as many, with a few instructions per element on the warp
// schedulers.
//
// Grid form: one work item per CTA step, a CTA per item, handed out by the block scheduler in
// blockIdx order as slots free, as many resident per SM as its threads and registers allow; the
// last step is masked (shorter rows).
//
// Persistent form: the kernel's grid is every CTA that fits at once, G = SMs x resident, and CTA b
// runs steps b, b + G, b + 2G, ... The first wave lands round the SMs (CTA b on the SM of slot
// b % SMs), so iteration j of the resident CTAs of one SM covers steps p + r * SMs + j * G for its
// slots r: one work item of the replay is that set, a box of `resident` rows SMs steps apart, and
// the replay runs one CTA per SM through the items p, p + SMs, ... with one item in flight, as each
// of the SM's CTAs loads its next step only after storing the last.
#include "sim/kernel_model.h"

#include "models/elementwise_launch_shape.h"
#include "models/spec_error.h"
#include "sim/device_heap.h"
#include "sim/occupancy.h"

#include <algorithm>
#include <limits>

namespace tilesim {
namespace {

// Instructions per warp and CTA step besides the operation, counted on the path of a whole step in
// the SASS of the kernel as built (validation/data/h100/elementwise/asm/ours_add_fp32.sass: fp32
// add, 16-byte vectors, 32-bit index; nvcc 13.0, sm_90a): index arithmetic, bound check, loads and
// stores, for 1, 2 and 4 vectors per thread. The grid form runs straight through, so its count is
// the whole CTA from entry to exit; the persistent form's is one trip of its strided loop, update
// and back edge included (its entry, once per CTA, is left out). Other dtypes and vector widths
// take these counts. The kernel's step since run C5 (asm/ours_add_fp32_c3.sass, the same code) has
// -1, +1 and -4 instructions a warp on that path for 1, 2 and 4 vectors; the counts stay as they
// were, as run C5's registration said (kernels/elementwise/NOTES.md).
double instructions_per_step(const KernelSpec& spec) {
  const int unroll = spec.elementwise.unroll;
  if (spec.persistent) return unroll == 1 ? 26.0 : unroll == 2 ? 32.0 : 48.0;
  return unroll == 1 ? 22.0 : unroll == 2 ? 28.0 : 45.0;
}
// Per element the operation (add, mul: 1; relu: 1; gelu: 6 including tanh.approx) plus the
// conversions to and from fp32 for 16-bit types (2).
double instructions_per_element(const KernelSpec& spec) {
  const double op = spec.elementwise.op == ElementwiseOp::gelu ? 6.0 : 1.0;
  return op + (spec.a_dtype == Dtype::fp32 ? 0.0 : 2.0);
}
// Registers per thread (nvcc 13.0 -Xptxas -v, sm_90a): 14-32 for one or two vectors per thread,
// so threads, not registers, bound the CTAs per SM; 34-44 for four, allocated as 40 (48 for 8-wide
// 16-bit vectors) in the SM's 8-register steps.
int registers_per_thread(const ElementwiseShape& e) { return e.unroll < 4 ? 32 : 40; }

// The spec with the block and unroll the launcher picks on this GPU where the spec names none
// (models/elementwise_launch_shape.h), so the model charges the kernel that runs.
KernelSpec as_launched(KernelSpec spec, const GpuProfile& gpu) {
  ElementwiseShape& e = spec.elementwise;
  if (e.shape_named) return spec;
  const ElementwiseLaunchShape shape =
      elementwise_launch_shape(e.elements, spec.a_dtype, e.vector, spec.persistent, gpu.sm.count, gpu.sm.max_threads);
  e.block = shape.block;
  e.unroll = shape.unroll;
  e.shape_named = true;
  spec.warps = e.block / 32;
  return spec;
}

class ElementwiseModel final : public KernelModel {
public:
  ElementwiseModel(const KernelSpec& given, const GpuProfile& gpu) : spec_(as_launched(given, gpu)) {
    const KernelSpec& spec = spec_;
    const ElementwiseShape& e = spec.elementwise;
    element_bytes_ = dtype_bits(spec.a_dtype) / 8;
    step_bytes_ = e.chunk() * element_bytes_;
    steps_ = (e.elements + e.chunk() - 1) / e.chunk();
    array_bytes_ = static_cast<ByteCount>(e.elements) * element_bytes_;
    const Address array = static_cast<Address>(array_bytes_);
    x_base_ = kHeapBase;
    y_base_ = align_allocation(x_base_ + array);
    out_base_ = input_count(e.op) == 2 ? align_allocation(y_base_ + array) : y_base_;

    resources_.threads = e.block;
    resources_.registers_per_thread = registers_per_thread(e);
    resources_.shared_memory_bytes = 0;
    const int resident = std::max(1, occupancy(gpu.sm, resources_).ctas_per_sm);
    sms_ = gpu.sm.count;
    if (spec.persistent) {
      const std::int64_t grid = std::min<std::int64_t>(steps_, static_cast<std::int64_t>(sms_) * resident);
      grid_ = grid;
      item_rows_ = static_cast<int>(std::min<std::int64_t>(resident, (grid + sms_ - 1) / sms_));
      replay_ctas_ = std::min<std::int64_t>(sms_, grid);
      items_ = replay_ctas_ * ((steps_ + grid - 1) / grid);
    } else {
      grid_ = steps_;
      item_rows_ = 1;
      replay_ctas_ = steps_;
      items_ = steps_;
    }
    if (items_ > std::numeric_limits<int>::max())
      throw SpecError(spec.source, "elements",
                      std::to_string(e.elements) + " elements make " + std::to_string(items_) +
                          " CTA steps, more than a grid holds",
                      "use \"persistent\": true or a larger block, vector or unroll");
    const double issue_per_cycle = 32.0 * gpu.sm.warp_schedulers;
    const double warps_per_step = e.block / 32.0;
    element_cycles_ = item_rows_ *
                      (warps_per_step * instructions_per_step(spec) + e.chunk() * instructions_per_element(spec) / 32.0) /
                      (issue_per_cycle / 32.0);
  }

  int tile_count() const override { return static_cast<int>(items_); }
  TileLookup lookup_tile(int linear) const override {
    TileLookup l;
    l.tile.row = linear;
    l.tile.local_row = linear;
    return l;
  }
  int k_steps() const override { return 1; }

  void load_boxes(const WorkItem& item, int, std::vector<OperandBox>& out) const override {
    append_boxes(Operand::a, x_base_, item.tile.row, out);
    if (input_count(spec_.elementwise.op) == 2) append_boxes(Operand::b, y_base_, item.tile.row, out);
  }
  // One box per store: the masked tail's short row, when the item holds full rows too, is counted
  // as a full row (at most one step's bytes too many, once per launch).
  Box store_box(const TileIndex& tile) const override {
    std::vector<OperandBox> boxes;
    append_boxes(Operand::a, out_base_, tile.row, boxes);
    if (boxes.empty()) return {out_base_, 0, 0, 0};
    Box b = boxes.front().box;
    if (boxes.size() > 1) ++b.rows;
    return b;
  }

  Cycle mma_cycles_per_k_step() const override { return 0; }
  Cycle element_cycles_per_k_step() const override { return element_cycles_; }
  Cycle epilogue_cycles() const override { return 0; }
  CtaResources resources() const override { return resources_; }
  bool uses_tma() const override { return false; }
  bool calls_tile_scheduler() const override { return false; }

private:
  // The steps of replay item `linear` over the array at `base`, appended to `out` as one box of
  // whole steps (one step in the grid form; the resident CTAs' steps of one SM, SMs steps apart, in
  // the persistent form) and, where the array ends inside the item's last step, a short box for the
  // part before the end (the masked tail).
  void append_boxes(Operand operand, Address base, int linear, std::vector<OperandBox>& out) const {
    std::int64_t first = linear, stride = 1;
    int rows = 1;
    if (spec_.persistent) {
      const std::int64_t slot = linear % replay_ctas_, iteration = linear / replay_ctas_;
      first = slot + iteration * grid_;
      stride = sms_;
      rows = 0;
      for (int r = 0; r < item_rows_; ++r)
        if (slot + r * sms_ < grid_ && first + r * stride < steps_) rows = r + 1;
    }
    if (first >= steps_ || rows == 0) return;
    const std::int64_t last = first + (rows - 1) * stride;
    const ByteCount last_bytes = std::min(step_bytes_, array_bytes_ - last * step_bytes_);
    const int whole = last_bytes == step_bytes_ ? rows : rows - 1;
    if (whole > 0)
      out.push_back({operand, {base + static_cast<Address>(first * step_bytes_), step_bytes_, stride * step_bytes_, whole}});
    if (whole < rows)
      out.push_back({operand, {base + static_cast<Address>(last * step_bytes_), last_bytes, last_bytes, 1}});
  }

  KernelSpec spec_;
  int element_bytes_ = 4;
  ByteCount step_bytes_ = 0;
  ByteCount array_bytes_ = 0;
  std::int64_t steps_ = 0;
  std::int64_t grid_ = 0;
  std::int64_t replay_ctas_ = 0;
  std::int64_t items_ = 0;
  int item_rows_ = 1;
  int sms_ = 1;
  Address x_base_ = 0, y_base_ = 0, out_base_ = 0;
  Cycle element_cycles_ = 0;
  CtaResources resources_;
};

} // namespace

std::unique_ptr<KernelModel> make_elementwise_model(const KernelSpec& spec, const GpuProfile& gpu) {
  return std::make_unique<ElementwiseModel>(spec, gpu);
}

} // namespace tilesim
