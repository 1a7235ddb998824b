#include "models/gpu_profile.h"

#include "models/json_fields.h"
#include "models/launch_order_names.h"
#include "models/power_limit.h"

#include <algorithm>
#include <bit>
#include <cstdlib>
#include <filesystem>
#include <set>

namespace tilesim {
namespace {

// The keys of each profile object, in one place per object: a key missing here is refused as
// unknown. models/gpus/README.md says what each means.
constexpr std::string_view kProfileKeys[] = {"name", "display_name", "arch", "architecture", "sm", "tensor_flops_per_cycle_per_sm",
                                             "l2",   "dram",         "tma",  "launch", "tile_scheduler",
                                             "dequant_values_per_cycle_per_sm", "mixed_input_k_block_cycles",
                                             "mxfp8_stage_ns", "power",
                                             "tiled_gemm"};
constexpr std::string_view kSmKeys[] = {"count", "clock_mhz", "max_ctas", "max_warps", "max_threads", "registers",
                                        "max_registers_per_thread", "shared_memory_bytes",
                                        "max_shared_memory_per_cta_bytes", "warp_schedulers", "fp32_lanes",
                                        "int32_lanes", "dispatch_order", "cluster_dispatch_order", "gpc",
                                        "tensor_memory_bytes", "mma_operand_bytes_per_cycle"};
constexpr std::string_view kTensorKeys[] = {"bf16", "fp16", "tf32", "fp8", "int8", "mxfp8", "mxfp4"};
constexpr std::string_view kL2Keys[] = {"size_bytes", "line_bytes", "sector_bytes", "ways", "partitions", "slices",
                                        "hit_latency_cycles", "far_hit_extra_latency_cycles", "bandwidth_bytes_per_s",
                                        "replacement", "sm_partition", "coalescer_lines_per_gpc", "coalescer_ways",
                                        "coalescer_merges_per_request", "counter_background_sectors", "sm_service_factor",
                                        "gpc_port_bytes_per_s"};
constexpr std::string_view kDramKeys[] = {"size_bytes", "bandwidth_bytes_per_s", "achievable_fraction", "latency_ns",
                                          "sm_service_factor"};
constexpr std::string_view kTmaKeys[] = {"issue_cycles_per_box", "max_inflight_boxes", "latency_cycles"};
constexpr std::string_view kLaunchKeys[] = {"cta_launch_cycles", "cta_launch_cycles_without_shared_memory",
                                            "kernel_start_drain_ns", "kernel_launch_overhead_us"};
// Besides the pair fitted to every order, an order measured on its own may carry its own pair
// under its name (without a group: "grouped_m").
constexpr std::string_view kTileSchedulerKeys[] = {"cycles_per_call", "cycles_per_loop_trip", "row_major", "column_major",
                                                   "grouped_m", "grouped_n", "serpentine", "morton", "hilbert",
                                                   "expert_major", "interleaved"};
constexpr std::string_view kTileSchedulerCostKeys[] = {"cycles_per_call", "cycles_per_loop_trip"};
constexpr std::string_view kTiledGemmKeys[] = {"epilogue_cycles_per_output_kib", "cta_start_exit_cycles",
                                               "cta_first_load_cycles", "epilogue_tail_cycles"};
constexpr std::string_view kDequantKeys[] = {"prmt", "cvt"};
constexpr std::string_view kBlockCycleKeys[] = {"tile_m", "tile_k", "prmt", "cvt", "prmt_group_scales", "cvt_group_scales"};
constexpr std::string_view kMxfp8StageKeys[] = {"promote", "dequantize", "transposed_tile_m", "transposed_tile_n",
                                                 "transposed", "xpass", "xpass_f16", "xpass_f16_t16",
                                                 "xpass_f16_n256"};
constexpr std::string_view kPowerKeys[] = {"max_limit_w", "clock_independent_w"};
constexpr std::string_view kSourcedKeys[] = {"value", "source"};

// The simulator keeps state for every L2 line (tags, use stamps, fill times: ~13 bytes a way),
// so the L2 is bounded where that state stays near 100 MiB; today's largest L2 is 126 MB.
constexpr double kMaxL2Bytes = 1LL << 30;

// An object of the profile, its keys checked.
JsonFields section(const JsonFields& f, const char* key, std::span<const std::string_view> known) {
  JsonFields s = f.object(key);
  s.refuse_unknown_keys(known);
  return s;
}

// Every number in a profile is {"value": v, "source": "..."}; a bare number has no provenance
// and is refused.
double sourced(const JsonFields& f, const char* key, double min, double max) {
  const JsonFields field = section(f, key, kSourcedKeys);
  const std::string source = field.string("source");
  if (source.empty()) field.fail("source", "is empty", "say where the number comes from");
  return field.number("value", min, max);
}

int sourced_int(const JsonFields& f, const char* key, int min, int max) {
  const double v = sourced(f, key, min, max);
  if (v != static_cast<double>(static_cast<long long>(v)))
    f.object(key).fail("value", "must be a whole number", "round it");
  return static_cast<int>(v);
}

// The "value" list of a sourced per-SM field: a source, and one entry per SM.
const nlohmann::json& per_sm_values(const JsonFields& field, int count) {
  if (field.string("source").empty()) field.fail("source", "is empty", "say where the numbers come from");
  const auto& list = field.array("value");
  if (static_cast<int>(list.size()) != count)
    field.fail("value", "has " + std::to_string(list.size()) + " entries", "give one per SM (" + std::to_string(count) + ")");
  return list;
}

// An optional {"value": [ints], "source": "..."} of `count` entries each in [0, limit).
std::vector<int> sourced_list(const JsonFields& f, const char* key, int count, int limit) {
  if (!f.has(key)) return {};
  const JsonFields field = section(f, key, kSourcedKeys);
  const auto& list = per_sm_values(field, count);
  std::vector<int> values;
  for (size_t i = 0; i < list.size(); ++i) {
    values.push_back(static_cast<int>(field.integer_value(list[i], field.field("value") + "[" + std::to_string(i) + "]", 0, limit - 1)));
  }
  return values;
}

// An optional {"value": [numbers], "source": "..."} of one factor per SM, each in 0.5..2.
std::vector<double> sourced_sm_factors(const JsonFields& f, const char* key, int count) {
  if (!f.has(key)) return {};
  const JsonFields field = section(f, key, kSourcedKeys);
  const auto& list = per_sm_values(field, count);
  std::vector<double> values;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string entry = "value[" + std::to_string(i) + "]";
    if (!list[i].is_number()) field.fail(entry.c_str(), "must be a number", "write the SM's factor, 1 for the average SM");
    const double v = list[i].get<double>();
    if (!(v >= 0.5 && v <= 2.0))
      field.fail(entry.c_str(), "is " + list[i].dump() + ", outside 0.5..2", "give the SM's time over the average SM's");
    values.push_back(v);
  }
  return values;
}

// "mixed_input_k_block_cycles": {"value": {"tile_m": [...], "tile_k": [...], "prmt": [...], ...},
// "source": ...}: one number per tile_m in each list.
MixedInputBlockCycles mixed_input_block_cycles(const JsonFields& profile) {
  const JsonFields field = section(profile, "mixed_input_k_block_cycles", kSourcedKeys);
  if (field.string("source").empty()) field.fail("source", "is empty", "say where the numbers come from");
  const JsonFields table = section(field, "value", kBlockCycleKeys);
  MixedInputBlockCycles c;
  for (const auto& m : table.array("tile_m"))
    c.tile_m.push_back(static_cast<int>(table.integer_value(m, table.field("tile_m"), 1, 256)));
  for (const auto& k : table.array("tile_k"))
    c.tile_k.push_back(static_cast<int>(table.integer_value(k, table.field("tile_k"), 16, 512)));
  if (c.tile_k.size() != c.tile_m.size())
    table.fail("tile_k", "has " + std::to_string(c.tile_k.size()) + " entries for " + std::to_string(c.tile_m.size()) +
                             " tile_m", "give the K a ring stage carried in each measurement, one per tile_m");
  const auto cycles = [&](const char* key) {
    const auto& list = table.array(key);
    if (list.size() != c.tile_m.size())
      table.fail(key, "has " + std::to_string(list.size()) + " entries for " + std::to_string(c.tile_m.size()) +
                          " tile_m", "give one cycle count per tile_m, in its order");
    std::vector<double> out;
    for (const auto& v : list) {
      if (!v.is_number() || v.get<double>() <= 0 || v.get<double>() > 1e6)
        table.fail(key, "holds a value that is not a cycle count in (0, 1e6]", "give SM cycles per K block");
      out.push_back(v.get<double>());
    }
    return out;
  };
  c.prmt = cycles("prmt");
  c.cvt = cycles("cvt");
  c.prmt_group_scales = cycles("prmt_group_scales");
  c.cvt_group_scales = cycles("cvt_group_scales");
  return c;
}

// "mxfp8_stage_ns": {"value": {"promote": t, "dequantize": t, "transposed_tile_m": [...],
// "transposed_tile_n": [...] (optional: all 64), "transposed": [...], "xpass": t, "xpass_f16": t, "xpass_f16_t16": t,
// "xpass_f16_n256": t (the four optional)},
// "source": ...}:
// ns per 128-deep K stage, one transposed figure per tile (tile_m, tile_n).
Mxfp8StageNs mxfp8_stage_ns(const JsonFields& profile) {
  const JsonFields field = section(profile, "mxfp8_stage_ns", kSourcedKeys);
  if (field.string("source").empty()) field.fail("source", "is empty", "say where the numbers come from");
  const JsonFields table = section(field, "value", kMxfp8StageKeys);
  Mxfp8StageNs t;
  t.promote = table.number("promote", 1e-3, 1e6);
  t.dequantize = table.number("dequantize", 1e-3, 1e6);
  for (const auto& m : table.array("transposed_tile_m"))
    t.transposed_tile_m.push_back(static_cast<int>(table.integer_value(m, table.field("transposed_tile_m"), 1, 256)));
  if (table.has("transposed_tile_n")) {
    for (const auto& n : table.array("transposed_tile_n"))
      t.transposed_tile_n.push_back(static_cast<int>(table.integer_value(n, table.field("transposed_tile_n"), 8, 256)));
    if (t.transposed_tile_n.size() != t.transposed_tile_m.size())
      table.fail("transposed_tile_n", "has " + std::to_string(t.transposed_tile_n.size()) + " entries for " +
                                          std::to_string(t.transposed_tile_m.size()) + " transposed_tile_m",
                 "give one channel count per transposed_tile_m, in its order");
  } else {
    t.transposed_tile_n.assign(t.transposed_tile_m.size(), 64);
  }
  const auto& list = table.array("transposed");
  if (list.size() != t.transposed_tile_m.size())
    table.fail("transposed", "has " + std::to_string(list.size()) + " entries for " +
                                 std::to_string(t.transposed_tile_m.size()) + " transposed_tile_m",
               "give one time per transposed_tile_m, in its order");
  for (const auto& v : list) {
    if (!v.is_number() || v.get<double>() <= 0 || v.get<double>() > 1e6)
      table.fail("transposed", "holds a value that is not a time in (0, 1e6] ns", "give ns per K stage");
    t.transposed.push_back(v.get<double>());
  }
  if (table.has("xpass")) t.xpass = table.number("xpass", 1e-3, 1e6);
  if (table.has("xpass_f16")) t.xpass_f16 = table.number("xpass_f16", 1e-3, 1e6);
  if (table.has("xpass_f16_t16")) t.xpass_f16_t16 = table.number("xpass_f16_t16", 1e-3, 1e6);
  if (table.has("xpass_f16_n256")) t.xpass_f16_n256 = table.number("xpass_f16_n256", 1e-3, 1e6);
  return t;
}

} // namespace

double Mxfp8StageNs::transposed_of(int m, int n) const {
  for (size_t i = 0; i < transposed_tile_m.size(); ++i)
    if (transposed_tile_m[i] == m && transposed_tile_n[i] == n) return transposed[i];
  return 0;
}

int MixedInputBlockCycles::stage_k(int m) const {
  const auto found = std::find(tile_m.begin(), tile_m.end(), m);
  return found == tile_m.end() ? 0 : tile_k[static_cast<size_t>(found - tile_m.begin())];
}

double MixedInputBlockCycles::of(int m, bool cvt_conversion, bool group_scales) const {
  const auto found = std::find(tile_m.begin(), tile_m.end(), m);
  if (found == tile_m.end()) return 0;
  const std::vector<double>& row =
      group_scales ? (cvt_conversion ? cvt_group_scales : prmt_group_scales) : (cvt_conversion ? cvt : prmt);
  return row[static_cast<size_t>(found - tile_m.begin())];
}

double GpuProfile::tensor_flops_per_cycle(Dtype a, Dtype b) const {
  // A mixed-input GEMM converts the narrower operand and runs at the wider type's rate.
  const Dtype wide = dtype_bits(a) >= dtype_bits(b) ? a : b;
  double rate = 0;
  switch (wide) {
  case Dtype::bf16: rate = tensor.bf16; break;
  case Dtype::fp16: rate = tensor.fp16; break;
  case Dtype::fp32: rate = tensor.tf32; break;
  case Dtype::fp8_e4m3:
  case Dtype::fp8_e5m2: rate = tensor.fp8; break;
  case Dtype::int8:
  case Dtype::uint8: rate = tensor.int8; break;
  case Dtype::mxfp8: rate = tensor.mxfp8; break;
  case Dtype::mxfp4: rate = tensor.mxfp4; break;
  }
  if (rate <= 0)
    throw SpecError(source, "tensor_flops_per_cycle_per_sm." + to_string(wide), to_string(wide) + " is not supported on " + display_name,
                    "choose another dtype or GPU");
  return rate;
}

double GpuProfile::dram_bytes_per_cycle() const {
  return dram.bandwidth_bytes_per_s * dram.achievable_fraction / (sm.clock_mhz * 1e6);
}

GpuProfile load_gpu_profile_file(const std::string& path) {
  return parse_gpu_profile(read_json_file(path, "GPU profile"), path);
}

GpuProfile parse_gpu_profile(const nlohmann::json& j, const std::string& path) {
  const JsonFields f(j, path);
  f.refuse_unknown_keys(kProfileKeys);
  GpuProfile p;
  p.source = path;
  p.name = f.string("name");
  p.display_name = f.string("display_name");
  p.arch = f.string("arch");
  {
    const JsonFields architecture = section(f, "architecture", kSourcedKeys);
    if (architecture.string("source").empty()) architecture.fail("source", "is empty", "say where it comes from");
    p.architecture = architecture.string("value");
    if (p.architecture != "ampere" && p.architecture != "hopper" && p.architecture != "blackwell")
      architecture.fail("value", "'" + p.architecture + "' is not a modelled architecture", "use ampere, hopper or blackwell");
  }

  const JsonFields sm = section(f, "sm", kSmKeys);
  p.sm.count = sourced_int(sm, "count", 1, 1024);
  p.sm.clock_mhz = sourced(sm, "clock_mhz", 100, 5000);
  p.sm.max_ctas = sourced_int(sm, "max_ctas", 1, 64);
  p.sm.max_warps = sourced_int(sm, "max_warps", 1, 128);
  p.sm.max_threads = sourced_int(sm, "max_threads", 32, 4096);
  p.sm.registers = sourced_int(sm, "registers", 1024, 1 << 20);
  p.sm.max_registers_per_thread = sourced_int(sm, "max_registers_per_thread", 16, 1024);
  p.sm.shared_memory_bytes = sourced_int(sm, "shared_memory_bytes", 1024, 1 << 22);
  p.sm.max_shared_memory_per_cta_bytes = sourced_int(sm, "max_shared_memory_per_cta_bytes", 1024, 1 << 22);
  p.sm.warp_schedulers = sourced_int(sm, "warp_schedulers", 1, 16);
  p.sm.fp32_lanes = sourced_int(sm, "fp32_lanes", 1, 1024);
  p.sm.int32_lanes = sourced_int(sm, "int32_lanes", 1, 1024);
  if (p.sm.max_shared_memory_per_cta_bytes > p.sm.shared_memory_bytes)
    sm.fail("max_shared_memory_per_cta_bytes", "is more than shared_memory_bytes", "a CTA gets at most the SM's shared memory");
  if (p.sm.max_threads > 32 * p.sm.max_warps)
    sm.fail("max_threads", "is more than 32 * max_warps", "check both against the datasheet");
  p.sm.dispatch_order = sourced_list(sm, "dispatch_order", p.sm.count, p.sm.count);
  if (!p.sm.dispatch_order.empty() &&
      std::set<int>(p.sm.dispatch_order.begin(), p.sm.dispatch_order.end()).size() != p.sm.dispatch_order.size())
    sm.object("dispatch_order").fail("value", "names an SM twice", "list every SM once");
  p.sm.cluster_dispatch_order = sourced_list(sm, "cluster_dispatch_order", p.sm.count, p.sm.count);
  if (!p.sm.cluster_dispatch_order.empty() &&
      std::set<int>(p.sm.cluster_dispatch_order.begin(), p.sm.cluster_dispatch_order.end()).size() != p.sm.cluster_dispatch_order.size())
    sm.object("cluster_dispatch_order").fail("value", "names an SM twice", "list every SM once");
  p.sm.gpc = sourced_list(sm, "gpc", p.sm.count, p.sm.count);
  if (sm.has("tensor_memory_bytes")) p.sm.tensor_memory_bytes = sourced_int(sm, "tensor_memory_bytes", 1024, 1 << 24);
  if (sm.has("mma_operand_bytes_per_cycle"))
    p.sm.mma_operand_bytes_per_cycle = sourced(sm, "mma_operand_bytes_per_cycle", 1, 1e5);

  const JsonFields t = section(f, "tensor_flops_per_cycle_per_sm", kTensorKeys);
  constexpr double kMaxRate = 1 << 20;
  p.tensor = {sourced(t, "bf16", 1, kMaxRate), sourced(t, "fp16", 1, kMaxRate), sourced(t, "tf32", 0, kMaxRate),
              sourced(t, "fp8", 0, kMaxRate),  sourced(t, "int8", 0, kMaxRate), sourced(t, "mxfp8", 0, kMaxRate)};
  if (t.has("mxfp4")) p.tensor.mxfp4 = sourced(t, "mxfp4", 0, kMaxRate);

  const JsonFields l2 = section(f, "l2", kL2Keys);
  p.l2.size_bytes = static_cast<long long>(sourced(l2, "size_bytes", 1 << 16, kMaxL2Bytes));
  p.l2.line_bytes = sourced_int(l2, "line_bytes", 32, 1024);
  p.l2.sector_bytes = sourced_int(l2, "sector_bytes", 8, 1024);
  p.l2.ways = sourced_int(l2, "ways", 1, 1024);
  p.l2.partitions = sourced_int(l2, "partitions", 1, 64);
  p.l2.slices = sourced_int(l2, "slices", 1, 4096);
  p.l2.hit_latency_cycles = sourced(l2, "hit_latency_cycles", 1, 1e5);
  p.l2.far_hit_extra_latency_cycles = sourced(l2, "far_hit_extra_latency_cycles", 0, 1e5);
  p.l2.bandwidth_bytes_per_s = sourced(l2, "bandwidth_bytes_per_s", 1e9, 1e15);
  p.l2.replacement = l2.string("replacement");
  if (p.l2.replacement != "lru")
    l2.fail("replacement", "'" + p.l2.replacement + "' is not a modelled policy", "use \"lru\"");
  p.l2.sm_partition = sourced_list(l2, "sm_partition", p.sm.count, p.l2.partitions);
  p.l2.sm_service_factor = sourced_sm_factors(l2, "sm_service_factor", p.sm.count);
  if (l2.has("counter_background_sectors"))
    p.l2.counter_background_sectors = static_cast<long long>(sourced(l2, "counter_background_sectors", 0, 1e12));
  if (l2.has("coalescer_lines_per_gpc")) {
    p.l2.coalescer_lines_per_gpc = sourced_int(l2, "coalescer_lines_per_gpc", 0, 1 << 16);
    p.l2.coalescer_ways = sourced_int(l2, "coalescer_ways", 1, 64);
    if (l2.has("coalescer_merges_per_request"))
      p.l2.coalescer_merges_per_request = sourced_int(l2, "coalescer_merges_per_request", 1, 1 << 16);
    if (p.l2.coalescer_lines_per_gpc % p.l2.coalescer_ways != 0)
      l2.fail("coalescer_lines_per_gpc", "is not a multiple of coalescer_ways", "give whole sets");
    if (p.sm.gpc.empty()) l2.fail("coalescer_lines_per_gpc", "needs sm.gpc", "give the GPC of every SM");
    // The simulator holds every GPC's coalescer (16 bytes a line): 1 Mi lines in all is 16 MiB.
    const long long gpcs = *std::max_element(p.sm.gpc.begin(), p.sm.gpc.end()) + 1;
    if (gpcs * p.l2.coalescer_lines_per_gpc > (1LL << 20))
      l2.fail("coalescer_lines_per_gpc", "times the GPC count is more than 1 Mi lines", "check both against the probes");
  }
  if (l2.has("gpc_port_bytes_per_s")) {
    p.l2.gpc_port_bytes_per_s = sourced(l2, "gpc_port_bytes_per_s", 1e9, 1e15);
    if (p.sm.gpc.empty()) l2.fail("gpc_port_bytes_per_s", "needs sm.gpc", "give the GPC of every SM");
  }
  if (!std::has_single_bit(static_cast<unsigned>(p.l2.line_bytes)) ||
      !std::has_single_bit(static_cast<unsigned>(p.l2.sector_bytes)))
    l2.fail("line_bytes", "line and sector sizes must be powers of two", "use 128 and 32");
  // The simulator's L2 sets hold 16 tags and 4 valid bits per line (sim/sectored_cache.h).
  if (p.l2.ways > 16) l2.fail("ways", "more than 16 ways is not modelled", "use at most 16");
  if (p.l2.line_bytes % p.l2.sector_bytes != 0 || p.l2.line_bytes / p.l2.sector_bytes > 4)
    l2.fail("sector_bytes", "must divide line_bytes into at most 4 sectors", "use 32 with 128-byte lines");
  const long long sets_total = p.l2.size_bytes / (static_cast<long long>(p.l2.line_bytes) * p.l2.ways);
  if (sets_total < p.l2.slices || p.l2.slices % p.l2.partitions != 0)
    l2.fail("slices", "must be a multiple of partitions and at most size/(line*ways)", "check the L2 geometry");

  const JsonFields dram = section(f, "dram", kDramKeys);
  p.dram.size_bytes = static_cast<long long>(sourced(dram, "size_bytes", 1 << 20, 1e15));
  p.dram.bandwidth_bytes_per_s = sourced(dram, "bandwidth_bytes_per_s", 1e9, 1e15);
  p.dram.achievable_fraction = sourced(dram, "achievable_fraction", 0.05, 1.0);
  p.dram.latency_ns = sourced(dram, "latency_ns", 1, 1e5);
  p.dram.sm_service_factor = sourced_sm_factors(dram, "sm_service_factor", p.sm.count);

  const JsonFields tma = section(f, "tma", kTmaKeys);
  p.tma.issue_cycles_per_box = sourced(tma, "issue_cycles_per_box", 0, 1e5);
  p.tma.max_inflight_boxes = sourced_int(tma, "max_inflight_boxes", 1, 1 << 16);
  p.tma.latency_cycles = sourced(tma, "latency_cycles", 0, 1e5);

  const JsonFields launch = section(f, "launch", kLaunchKeys);
  p.launch.cta_launch_cycles = sourced(launch, "cta_launch_cycles", 0, 1e6);
  p.launch.cta_launch_cycles_without_shared_memory =
      launch.has("cta_launch_cycles_without_shared_memory")
          ? sourced(launch, "cta_launch_cycles_without_shared_memory", 0, 1e6)
          : p.launch.cta_launch_cycles;
  if (launch.has("kernel_start_drain_ns")) p.launch.kernel_start_drain_ns = sourced(launch, "kernel_start_drain_ns", 0, 1e5);
  p.launch.kernel_launch_overhead_us = sourced(launch, "kernel_launch_overhead_us", 0, 1e4);

  const JsonFields scheduler = section(f, "tile_scheduler", kTileSchedulerKeys);
  p.tile_scheduler.cycles_per_call = sourced(scheduler, "cycles_per_call", 0, 1e7);
  p.tile_scheduler.cycles_per_loop_trip = sourced(scheduler, "cycles_per_loop_trip", 0, 1e5);
  for (int kind = 0; kind < static_cast<int>(LaunchOrderKind::count_); ++kind) {
    std::string name = to_string(LaunchOrder{static_cast<LaunchOrderKind>(kind)});
    name = name.substr(0, name.find(':'));
    if (!scheduler.has(name.c_str())) continue;
    const JsonFields own = section(scheduler, name.c_str(), kTileSchedulerCostKeys);
    p.tile_scheduler.by_order[kind] =
        TileSchedulerCost{sourced(own, "cycles_per_call", 0, 1e7), sourced(own, "cycles_per_loop_trip", 0, 1e5)};
  }
  if (f.has("tiled_gemm")) {
    const JsonFields gemm = section(f, "tiled_gemm", kTiledGemmKeys);
    p.tiled_gemm = {sourced(gemm, "epilogue_cycles_per_output_kib", 0, 1e5), sourced(gemm, "cta_start_exit_cycles", 0, 1e6),
                    gemm.has("cta_first_load_cycles") ? sourced(gemm, "cta_first_load_cycles", 0, 1e6) : 0.0,
                    gemm.has("epilogue_tail_cycles") ? sourced(gemm, "epilogue_tail_cycles", 0, 1e6) : 0.0};
  }
  if (f.has("dequant_values_per_cycle_per_sm")) {
    const JsonFields d = section(f, "dequant_values_per_cycle_per_sm", kDequantKeys);
    p.dequant = {sourced(d, "prmt", 1e-3, 1e4), sourced(d, "cvt", 1e-3, 1e4)};
  }
  if (f.has("mixed_input_k_block_cycles")) p.mixed_input_k_block = mixed_input_block_cycles(f);
  if (f.has("mxfp8_stage_ns")) p.mxfp8_stage = mxfp8_stage_ns(f);
  if (f.has("power")) {
    const JsonFields power = section(f, "power", kPowerKeys);
    p.power = {sourced(power, "max_limit_w", 1, 1e5), sourced(power, "clock_independent_w", 0, 1e5)};
    if (p.power.clock_independent_w >= p.power.max_limit_w)
      power.fail("clock_independent_w", "is not below max_limit_w", "the SMs need some of the board's power");
  }
  return p;
}

std::string gpu_profile_dir() {
  if (const char* env = std::getenv("TILESIM_MODELS")) return std::string(env) + "/gpus";
  return std::string(TILESIM_SOURCE_DIR) + "/models/gpus";
}

std::vector<std::string> shipped_gpu_names() {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(gpu_profile_dir(), ec))
    if (entry.path().extension() == ".json") names.push_back(load_gpu_profile_file(entry.path().string()).name);
  std::sort(names.begin(), names.end());
  return names;
}

GpuProfile load_gpu_profile(const std::string& name_or_path_at_watts) {
  const auto [name_or_path, power_limit_w] = split_power_limit(name_or_path_at_watts);
  if (power_limit_w > 0) return at_power_limit(load_gpu_profile(name_or_path), power_limit_w, "--gpu " + name_or_path_at_watts);
  if (name_or_path.find('/') != std::string::npos || name_or_path.ends_with(".json"))
    return load_gpu_profile_file(name_or_path);
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(gpu_profile_dir(), ec)) {
    if (entry.path().extension() != ".json") continue;
    const std::string stem = entry.path().stem().string();
    if (stem == name_or_path || stem.starts_with(name_or_path + "_")) return load_gpu_profile_file(entry.path().string());
  }
  throw SpecError("--gpu", name_or_path, "no such GPU profile in " + gpu_profile_dir(),
                  "use one of h100, h200, a100, b200 or a path to a profile JSON");
}

} // namespace tilesim
