// What a kernel asks of the machine, tile by tile: the boxes each K step loads, the tensor-core
// and per-element work, the store of the output tile, and the resources a CTA occupies.
// Implementations are named factories listed in kernel_model.cpp and chosen from the spec.
#pragma once

#include "models/gpu_profile.h"
#include "models/kernel_spec.h"
#include "models/launch_order.h"
#include "sim/memory_system.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace tilesim {

enum class Operand { a, b };

struct OperandBox {
  Operand operand;
  Box box;
};

// One work item of a CTA: the tile it computes, and in a cluster of two the tile its partner
// computes at the same time (the pair may share an operand tile).
struct WorkItem {
  int linear = 0;         // position of the tile in the launch order
  TileIndex tile{};       // tile_at(linear), resolved once: the order's walk is not free (hilbert, interleaved)
  bool has_partner = false;
  TileIndex partner{};    // the partner CTA's tile, with a cluster of two
  int rank = 0;           // this CTA's rank in its cluster
  bool store = true;      // false for the partner that pads an odd tile count (computes, never stores)
  Cycle schedule_cycles = 0; // the kernel's scheduler finding this item's tile(s) before its first load
};

struct TileLookup {
  TileIndex tile{};
  long long loop_trips = 0;
};

struct CtaResources {
  int threads = 0;
  int registers_per_thread = 0;
  int shared_memory_bytes = 0;
};

class KernelModel {
public:
  virtual ~KernelModel() = default;
  virtual int tile_count() const = 0;
  // The linear-th work item's tile, and the loop trips the kernel's scheduler makes to find it
  // (tile_at_trips).
  virtual TileLookup lookup_tile(int linear) const = 0;
  virtual int k_steps() const = 0;
  // Boxes this CTA's producer loads for K step `k` of `item` (appended to `out`).
  virtual void load_boxes(const WorkItem& item, int k, std::vector<OperandBox>& out) const = 0;
  virtual Box store_box(const TileIndex& tile) const = 0;
  // What a tile's epilogue writes, one L2 lookup per sector each box row touches (appended to
  // `out`): the one store_box unless the kernel's stores are narrower than a sector (each sector
  // is looked up once per store that touches it) or write a second tensor.
  virtual void store_boxes(const TileIndex& tile, std::vector<Box>& out) const { out.push_back(store_box(tile)); }
  virtual Cycle mma_cycles_per_k_step() const = 0;
  // Per-element work the consumer warps issue each K step (conversions, scaling), in cycles.
  virtual Cycle element_cycles_per_k_step() const = 0;
  virtual Cycle epilogue_cycles() const = 0;
  // Output tiles whose accumulators a CTA holds at once. With one, the next tile's MMA waits for
  // the epilogue; with two (Blackwell's tensor memory), the epilogue drains one while the MMA
  // fills the other, and a tile's MMA waits only for the epilogue of the tile two before it.
  virtual int accumulator_buffers() const { return 1; }
  // Whether the kernel's software tile scheduler (tile_at, the profile's tile_scheduler costs) finds
  // each work item; an element-wise kernel's item is its blockIdx and costs nothing to find.
  virtual bool calls_tile_scheduler() const { return true; }
  // Whether the consumer warps call the tile scheduler themselves before each tile's first MMA
  // (kernels/grouped_gemm/: TileScheduler::next in consumer_loop), paying its cost in their own
  // time; false where a scheduler warp or the producer hands the tiles on.
  virtual bool consumer_finds_tile() const { return false; }
  // Cycles the consumers spend on a tile before its first MMA besides finding it (zeroing register
  // accumulators).
  virtual Cycle tile_setup_cycles() const { return 0; }
  // Cycles a CTA spends once, on its start and exit, beyond the block scheduler placing it.
  virtual Cycle cta_start_cycles() const { return 0; }
  // Cycles by which a CTA's first loads issue later than the model's start and tile scheduler
  // call give (a fresh CTA's first tile is longer than a running one's beyond its load latency).
  virtual Cycle cta_first_load_cycles() const { return 0; }
  // Cycles the epilogue keeps the consumers after the tile's last store is issued.
  virtual Cycle epilogue_tail_cycles() const { return 0; }
  virtual CtaResources resources() const = 0;
  virtual bool uses_tma() const = 0;
};

using KernelModelFactory = std::function<std::unique_ptr<KernelModel>(const KernelSpec&, const GpuProfile&)>;

std::unique_ptr<KernelModel> make_gemm_model(const KernelSpec& spec, const GpuProfile& gpu);
std::unique_ptr<KernelModel> make_tcgen05_gemm_model(const KernelSpec& spec, const GpuProfile& gpu);
std::unique_ptr<KernelModel> make_elementwise_model(const KernelSpec& spec, const GpuProfile& gpu);
std::unique_ptr<KernelModel> make_mixed_input_model(const KernelSpec& spec, const GpuProfile& gpu);
std::unique_ptr<KernelModel> make_mxfp8_quantize_model(const KernelSpec& spec, const GpuProfile& gpu);
std::unique_ptr<KernelModel> make_mxfp8_gemm_model(const KernelSpec& spec, const GpuProfile& gpu);
// The dequantiser's pass over X that the MXFP8 xpass scheme launches before its GEMM and is timed with,
// as the rowwise quantiser of the same tensor (the same bytes the other way); empty for every other
// kernel, and where the GEMM runs another model than mxfp8_gemm (a Blackwell scales in its tensor cores).
std::optional<KernelSpec> mxfp8_pass_before(const KernelSpec& spec, const GpuProfile& gpu);
// A kernel the registered model's kernel launches before it on the same stream and is timed with
// (today only mxfp8_gemm's xpass pass); empty for every other kernel.
std::optional<KernelSpec> kernel_launched_before(const KernelSpec& spec, const GpuProfile& gpu);
// The registered model that runs `spec` on `gpu`: chosen by the spec's kind and, for GEMMs, the
// profile's architecture (a Blackwell runs tcgen05 kernels, not wgmma ones).
std::string kernel_model_name(const KernelSpec& spec, const GpuProfile& gpu);
// The model named by the spec's kind; throws SpecError when none is registered.
std::unique_ptr<KernelModel> make_kernel_model(const KernelSpec& spec, const GpuProfile& gpu);

} // namespace tilesim
