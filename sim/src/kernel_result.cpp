#include "sim/kernel_result.h"

#include "models/json_fields.h"
#include "models/launch_order_names.h"
#include "models/output_file.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace tilesim {
namespace {

// The keys of a result and of its tile records, each in one place: README.md, "Result schema".
constexpr std::string_view kResultKeys[] = {"schema",           "source",          "gpu",    "order",      "kernel",
                                            "time_ms",          "tflops",          "l2_hit_rate", "dram_read_bytes",
                                            "dram_write_bytes", "l2_read_sectors", "tiles",  "provenance", "extra"};
constexpr std::string_view kTileKeys[] = {"linear",        "expert",         "row",           "col",
                                          "sm",            "start_ns",       "end_ns",        "start_cycle",
                                          "end_cycle",     "a_hit_sectors",  "a_miss_sectors", "b_hit_sectors",
                                          "b_miss_sectors"};
// What the measurement harness adds to the spec it ran: the grid it launched and its tile count
// (an element-wise kernel's CTA steps).
constexpr const char* kHarnessKernelKeys[] = {"grid", "tiles", "steps"};
constexpr const char* kSources[] = {"simulated", "measured", "published"};

constexpr long long kMaxCount = 1LL << 60; // bytes or sectors: an exabyte
constexpr double kMaxNs = 1e15;             // ~11 days
// A result's TFLOP/s must be its kernel's FLOPs over its time: published figures round the time
// (0.3% at worst in validation/data/b200), so 1% separates rounding from a wrong number.
constexpr double kTflopsTolerance = 0.01;

template <typename T>
void put_optional(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

// `tile_count` < 0: the kernel's kind has no GEMM tile grid to hold the records to.
TileRecord read_tile(const JsonFields& t, const KernelSpec& spec, long long tile_count, long long tile_rows) {
  t.refuse_unknown_keys(kTileKeys);
  const bool grid = tile_count >= 0;
  constexpr long long kMaxInt = std::numeric_limits<int>::max();
  TileRecord r;
  r.linear = static_cast<int>(t.integer("linear", 0, grid ? tile_count - 1 : kMaxInt));
  r.expert = static_cast<int>(t.integer("expert", 0, grid ? spec.experts() - 1 : kMaxInt));
  r.row = static_cast<int>(t.integer("row", 0, grid ? tile_rows - 1 : kMaxInt));
  r.col = static_cast<int>(t.integer("col", 0, grid ? spec.tile_cols() - 1 : kMaxInt));
  r.sm = static_cast<int>(t.integer("sm", 0, 4095));
  r.start_ns = t.number("start_ns", 0, kMaxNs);
  r.end_ns = t.number("end_ns", r.start_ns, kMaxNs);
  if (t.has("start_cycle")) r.start_cycle = t.number("start_cycle", 0, kMaxNs * 10);
  if (t.has("end_cycle")) r.end_cycle = t.number("end_cycle", r.start_cycle.value_or(0), kMaxNs * 10);
  const auto sectors = [&](const char* key, std::optional<long long>& out) {
    if (t.has(key)) out = t.integer(key, 0, kMaxCount);
  };
  sectors("a_hit_sectors", r.a_hit_sectors);
  sectors("a_miss_sectors", r.a_miss_sectors);
  sectors("b_hit_sectors", r.b_hit_sectors);
  sectors("b_miss_sectors", r.b_miss_sectors);
  return r;
}

long long tile_count_of(const KernelSpec& spec) {
  if (!spec.is_gemm()) return -1;
  return static_cast<long long>(spec.tile_row_offsets().back()) * spec.tile_cols();
}

} // namespace

KernelSpec kernel_spec_of(const KernelResult& r, const std::string& source) {
  nlohmann::json spec = r.kernel;
  for (const char* key : kHarnessKernelKeys) spec.erase(key);
  return parse_kernel_spec(spec, source, "kernel");
}

nlohmann::json to_json(const KernelResult& r) {
  nlohmann::json tiles = nlohmann::json::array();
  for (const auto& t : r.tiles) {
    nlohmann::json jt{{"linear", t.linear}, {"expert", t.expert}, {"row", t.row},         {"col", t.col},
                      {"sm", t.sm},         {"start_ns", t.start_ns}, {"end_ns", t.end_ns}};
    put_optional(jt, "start_cycle", t.start_cycle);
    put_optional(jt, "end_cycle", t.end_cycle);
    put_optional(jt, "a_hit_sectors", t.a_hit_sectors);
    put_optional(jt, "a_miss_sectors", t.a_miss_sectors);
    put_optional(jt, "b_hit_sectors", t.b_hit_sectors);
    put_optional(jt, "b_miss_sectors", t.b_miss_sectors);
    tiles.push_back(std::move(jt));
  }
  return {{"schema", kResultSchema},
          {"source", r.source},
          {"gpu", r.gpu},
          {"order", r.order},
          {"kernel", r.kernel},
          {"time_ms", r.time_ms},
          {"tflops", r.tflops},
          {"l2_hit_rate", r.l2_hit_rate},
          {"dram_read_bytes", r.dram_read_bytes},
          {"dram_write_bytes", r.dram_write_bytes},
          {"l2_read_sectors", r.l2_read_sectors},
          {"tiles", tiles},
          {"provenance", r.provenance},
          {"extra", r.extra}};
}

KernelResult kernel_result_from_json(const nlohmann::json& j, const std::string& source_name) {
  const JsonFields f(j, source_name);
  f.refuse_unknown_keys(kResultKeys);
  if (f.string("schema") != kResultSchema)
    f.fail("schema", "is not " + std::string(kResultSchema), "write results with this version of tilesim");
  KernelResult r;
  r.source = f.string("source");
  if (std::find(std::begin(kSources), std::end(kSources), r.source) == std::end(kSources))
    f.fail("source", "is '" + r.source + "'", "write simulated, measured or published");
  r.gpu = f.string("gpu");
  if (r.gpu.empty()) f.fail("gpu", "is empty", "name the GPU (a profile name or the device's name)");

  const JsonFields kernel = f.object("kernel");
  r.kernel = j.at("kernel");
  const KernelSpec spec = kernel_spec_of(r, source_name);
  const long long tile_count = tile_count_of(spec);
  if (tile_count >= 0 && kernel.has("tiles") && kernel.integer("tiles", 0, kMaxCount) != tile_count)
    kernel.fail("tiles", "is not the spec's tile count (" + std::to_string(tile_count) + ")",
                "the result is not of this kernel; re-measure it");
  if (kernel.has("grid")) kernel.integer("grid", 1, kMaxCount);

  r.order = f.string("order");
  if (spec.is_gemm() && r.order != to_string(spec.order)) {
    LaunchOrder order{};
    try {
      order = parse_launch_order(r.order);
    } catch (const std::invalid_argument& e) {
      f.fail("order", e.what(), "");
    }
    if (order.kind != spec.order.kind || order.group != spec.order.group)
      f.fail("order", "is " + r.order + " but kernel.order is " + to_string(spec.order), "make them agree");
  }

  r.time_ms = f.number("time_ms", 1e-9, 1e9);
  r.tflops = f.number("tflops", 0, 1e9);
  const double tflops = spec.flops() / (r.time_ms * 1e-3) / 1e12;
  if (std::abs(r.tflops - tflops) > kTflopsTolerance * tflops)
    f.fail("tflops", "is " + std::to_string(r.tflops) + ", but the kernel's FLOPs over time_ms give " + std::to_string(tflops),
           "write tflops = 2*M*N*K / time");
  r.l2_hit_rate = f.number("l2_hit_rate", 0, 1);
  r.dram_read_bytes = f.integer("dram_read_bytes", 0, kMaxCount);
  r.dram_write_bytes = f.integer("dram_write_bytes", 0, kMaxCount);
  r.l2_read_sectors = f.integer("l2_read_sectors", 0, kMaxCount);
  if (f.has("provenance")) {
    f.object("provenance");
    r.provenance = j.at("provenance");
  }
  if (f.has("extra")) {
    const JsonFields extra = f.object("extra");
    // The clock a measurement ran at: predictions are made at it (tilesim validate --clock measured).
    if (extra.has("sm_clock_mhz")) extra.number("sm_clock_mhz", 100, 5000);
    // The board power limit it ran under: --clock profile predicts at the clock the profile's
    // power model gives for it (models/power_limit.h).
    if (extra.has("power_limit_w")) extra.number("power_limit_w", 1, 1e5);
    r.extra = j.at("extra");
  }
  if (f.has("tiles")) {
    const auto& tiles = f.array("tiles");
    if (tile_count >= 0 && !tiles.empty() && static_cast<long long>(tiles.size()) != tile_count)
      f.fail("tiles", "has " + std::to_string(tiles.size()) + " records for " + std::to_string(tile_count) + " tiles",
             "give one record per tile, or none");
    r.tiles.reserve(tiles.size());
    const long long tile_rows = tile_count >= 0 ? spec.tile_row_offsets().back() : 0;
    for (size_t i = 0; i < tiles.size(); ++i)
      r.tiles.push_back(read_tile(JsonFields(tiles[i], source_name, "tiles[" + std::to_string(i) + "]"), spec, tile_count, tile_rows));
  }
  return r;
}

KernelResult load_kernel_result(const std::string& path) {
  return kernel_result_from_json(read_json_file(path, "result"), path);
}

void save_kernel_result(const KernelResult& r, const std::string& path) {
  write_output_file(path, to_json(r).dump(1) + '\n', "--out");
}

} // namespace tilesim
