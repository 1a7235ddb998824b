// A GPU profile: every hardware number the simulator uses, read from models/gpus/<name>.json
// where each number carries its source.
#pragma once

#include "models/kernel_spec.h"
#include "models/launch_order.h"

#include <nlohmann/json_fwd.hpp>

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace tilesim {

struct SmProfile {
  int count = 0;
  double clock_mhz = 0;
  int max_ctas = 0;
  int max_warps = 0;
  int max_threads = 0;
  int registers = 0;
  int max_registers_per_thread = 0;
  int shared_memory_bytes = 0;
  int max_shared_memory_per_cta_bytes = 0;
  int warp_schedulers = 0;
  int fp32_lanes = 0;
  int int32_lanes = 0;
  // The SM each CTA of a fresh launch lands on, in blockIdx order (measured); empty: SM b.
  std::vector<int> dispatch_order;
  // The same for launches in clusters of two CTAs, which the block scheduler places otherwise.
  std::vector<int> cluster_dispatch_order;
  // The GPC of each SM (measured); empty: unknown. The L2 request coalescer merges the reads of
  // one GPC's SMs (sim/request_coalescer.h).
  std::vector<int> gpc;
  // Blackwell (optional, 0 elsewhere): tensor memory per SM, which holds tcgen05 accumulators
  // and block scales, and the shared-memory bytes per cycle the tensor core reads its operands at.
  int tensor_memory_bytes = 0;
  double mma_operand_bytes_per_cycle = 0;
};

struct TensorRates { // dense FLOPs per SM cycle; 0 where the architecture lacks the type
  double bf16 = 0, fp16 = 0, tf32 = 0, fp8 = 0, int8 = 0, mxfp8 = 0;
  double mxfp4 = 0; // optional in the profile: block-scaled FP4 (tcgen05 kind::mxf4)
};

struct L2Profile {
  long long size_bytes = 0;
  int line_bytes = 0;
  int sector_bytes = 0;
  int ways = 0;
  int partitions = 0;
  int slices = 0;
  double hit_latency_cycles = 0;
  double far_hit_extra_latency_cycles = 0;
  double bandwidth_bytes_per_s = 0; // the L2 runs on its own clock
  std::string replacement;
  // The L2 request coalescer (sim/request_coalescer.h), one per GPC: lines it holds and their
  // associativity; 0 lines: none modelled (no measurement for this GPU; needs sm.gpc).
  int coalescer_lines_per_gpc = 0;
  int coalescer_ways = 1;
  int coalescer_merges_per_request = 0; // reads one held request takes in; 0: no limit
  // The read port of each GPC (sim/gpc_port.h), in bytes a second the SMs ask for; 0: none
  // modelled (needs sm.gpc).
  double gpc_port_bytes_per_s = 0;
  // The partition each SM reads through (measured); empty: SMs split in contiguous id ranges.
  std::vector<int> sm_partition;
  // How much longer than the average SM each SM waits for the L2 when every SM loads it at once
  // (measured; the same SMs in every repeat); empty: all SMs alike.
  std::vector<double> sm_service_factor;
  // Tag lookups, all hits, that the profiler's lts__t_sectors counts in every profiled launch
  // beside the kernel's own (optional, else 0): part of the hit rate a measurement reports.
  long long counter_background_sectors = 0;
};

struct DramProfile {
  long long size_bytes = 0;
  double bandwidth_bytes_per_s = 0;
  double achievable_fraction = 0;
  double latency_ns = 0;
  // As L2Profile::sm_service_factor, for reads of DRAM.
  std::vector<double> sm_service_factor;
};

struct TmaProfile {
  double issue_cycles_per_box = 0;
  int max_inflight_boxes = 0;
  double latency_cycles = 0;
};

struct LaunchProfile {
  double cta_launch_cycles = 0;
  // The same for a CTA without shared memory (the element-wise kernels): optional, else
  // cta_launch_cycles.
  double cta_launch_cycles_without_shared_memory = 0;
  // What CUPTI's duration of a kernel adds to its CTAs' span (optional, else 0).
  double kernel_start_drain_ns = 0;
  double kernel_launch_overhead_us = 0;
};

// The kernels' software tile scheduler (tilesim::tile_at, called twice per work item): a cost per
// call and per loop trip, the trips counted by tile_at_trips. Each order walks its own code, so an
// order measured on its own has its own pair (optional); the others cost the pair fitted to all.
struct TileSchedulerCost {
  double cycles_per_call = 0;
  double cycles_per_loop_trip = 0;
};
struct TileSchedulerProfile {
  double cycles_per_call = 0;
  double cycles_per_loop_trip = 0;
  std::array<std::optional<TileSchedulerCost>, static_cast<size_t>(LaunchOrderKind::count_)> by_order;
  TileSchedulerCost cost(LaunchOrderKind order) const {
    const auto& own = by_order[static_cast<size_t>(order)];
    return own ? *own : TileSchedulerCost{cycles_per_call, cycles_per_loop_trip};
  }
};

// What our tiled GEMM kernels (kernels/grouped_gemm/ and the families built on it) cost on this GPU
// beyond their K steps, measured with the kernel itself (validation/microbench/tile_phase_probe.sh);
// optional, 0 where not measured.
struct TiledGemmCosts {
  // The epilogue's chunk loop (convert, stage in shared memory, fence, TMA store, wait for the
  // chunk two back to be read), per KiB of bf16 output tile.
  double epilogue_cycles_per_output_kib = 0;
  // A CTA's start and exit beyond the block scheduler's refill: barrier setup, the cluster's
  // start and exit barriers, waiting for its last stores.
  double cta_start_exit_cycles = 0;
  // How much later a fresh CTA's first loads issue than its start and tile scheduler call give:
  // its first tile's time beyond the simulator's (optional within the section, else 0).
  double cta_first_load_cycles = 0;
  // How long the epilogue keeps the consumers after the tile's last store is issued (optional
  // within the section, else 0).
  double epilogue_tail_cycles = 0;
};

// bf16 values per SM cycle that the mixed-input kernel's weight conversions reach (kernels/
// mixed_input/dequant.h: prmt magic numbers or cvt/I2F) with the kernel's 8 consumer warps
// converting; measured by validation/microbench/dequant_issue_rate.cu. 0: not measured (optional;
// the mixed-input model needs it).
struct DequantRates {
  double prmt = 0, cvt = 0;
};

// SM cycles one K block of a tile costs the mixed-input kernel's consumers (kernels/mixed_input/:
// the wait, shared-memory loads, conversion, wgmma and release, overlapped as the kernel overlaps
// them), by the tile's tokens, measured with L2-resident operands by
// kernels/mixed_input/mixed_input_block_rate.cu. Optional (empty: not measured; the mixed-input
// model needs it).
struct MixedInputBlockCycles {
  std::vector<int> tile_m;
  // One per tile_m: the K a ring stage carried when the figures were measured (the kernel's K
  // block, or two of them on 64-channel tiles), which a spec's tile.k must match.
  std::vector<int> tile_k;
  // One per tile_m: int8 with per-channel scales, and uint8 with per-128 group scales.
  std::vector<double> prmt, cvt, prmt_group_scales, cvt_group_scales;
  // The cycles of one K block of a tile of `tile_m` tokens; 0 where not measured.
  double of(int tile_m, bool cvt_conversion, bool group_scales) const;
  int stage_k(int tile_m) const; // the tile_k those were measured at; 0 where not measured
};

// The time one 128-deep K stage adds to each CTA of the MXFP8 GEMM (kernels/mxfp8/), per scheme, with
// its operands in L2 (kernels/mxfp8/mxfp8_stage_rate.cu), in ns; optional, 0 where not measured.
struct Mxfp8StageNs {
  double promote = 0;    // 128 x 128 tile
  double dequantize = 0; // 128 x 128 tile
  std::vector<int> transposed_tile_m; // tokens per tile of the transposed scheme
  std::vector<int> transposed_tile_n; // its channels per tile, one per transposed_tile_m
  std::vector<double> transposed;     // one per transposed_tile_m
  double xpass = 0;                   // 128 x 128 tile on bf16 X (the GEMM without its pass); 0 where not measured
  double xpass_f16 = 0;               // the same on f16 X, f16 wgmma (scheme xpass_f16); 0 where not measured
  double xpass_f16_t16 = 0;           // xpass_f16's 16-token x 128-channel tile (decode); 0 where not measured
  double xpass_f16_n256 = 0;          // xpass_f16's 128-token x 256-channel tile; 0 where not measured
  double xpass_f16_of(int tile_m, int tile_n) const {
    if (tile_n == 256) return tile_m == 128 ? xpass_f16_n256 : 0;
    return tile_m == 128 ? xpass_f16 : tile_m == 16 ? xpass_f16_t16 : 0;
  }
  double transposed_of(int tile_m, int tile_n) const; // 0 where not measured
};

// The board power limit and what of the power does not follow the SM clock (models/
// power_limit.h); optional: 0 where the profile has no power model.
struct PowerProfile {
  double max_limit_w = 0;         // the most the board may be set to, and its default
  double clock_independent_w = 0; // leakage, memory, links: power that does not scale with f³
};

struct GpuProfile {
  std::string source; // the file it was read from, for error messages
  std::string name;
  std::string display_name;
  std::string arch;
  // The tensor-core generation, which picks the GEMM kernel model (sim/src/kernel_model.cpp):
  // ampere, hopper or blackwell.
  std::string architecture;
  SmProfile sm;
  TensorRates tensor;
  L2Profile l2;
  DramProfile dram;
  TmaProfile tma;
  LaunchProfile launch;
  TileSchedulerProfile tile_scheduler;
  TiledGemmCosts tiled_gemm;
  DequantRates dequant;
  MixedInputBlockCycles mixed_input_k_block;
  Mxfp8StageNs mxfp8_stage;
  PowerProfile power;
  // The power limit sm.clock_mhz was derived for (models/power_limit.h); 0: the profile's own clock.
  double power_limit_w = 0;

  // Tensor-core FLOPs per SM cycle for the operand types; throws SpecError when unsupported.
  double tensor_flops_per_cycle(Dtype a, Dtype b) const;
  double dram_bytes_per_cycle() const; // achievable bandwidth in bytes per SM cycle
};

GpuProfile load_gpu_profile_file(const std::string& path);
// Throws SpecError naming `path`, the field and the fix.
GpuProfile parse_gpu_profile(const nlohmann::json& j, const std::string& path);
// `name_or_path`: a short name (h100, h200, a100, b200) looked up in the profiles folder, or a path;
// either may end in @<watts> (b200@750): the profile at that power limit (models/power_limit.h).
GpuProfile load_gpu_profile(const std::string& name_or_path);
// The folder holding the shipped profiles: $TILESIM_MODELS/gpus, else the source tree's.
std::string gpu_profile_dir();
std::vector<std::string> shipped_gpu_names();

} // namespace tilesim
