// The result schema shared by the simulator (predicted) and the measurement harness (measured).
// Top-level JSON keys: schema, source, gpu, order, kernel (the spec), time_ms, tflops, l2_hit_rate,
// dram_read_bytes, dram_write_bytes, l2_read_sectors, tiles, provenance. README.md documents each.
#pragma once

#include "models/kernel_spec.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace tilesim {

inline constexpr const char* kResultSchema = "tilesim.result/1";

struct TileRecord {
  int linear = 0; // position in the launch order
  int expert = 0;
  int row = 0; // stacked tile row
  int col = 0;
  int sm = 0;
  double start_ns = 0;
  double end_ns = 0;
  // Simulated only: SM cycles and L2 sector outcomes per operand.
  std::optional<double> start_cycle, end_cycle;
  std::optional<long long> a_hit_sectors, a_miss_sectors, b_hit_sectors, b_miss_sectors;
};

struct KernelResult {
  std::string source; // "simulated" or "measured"
  std::string gpu;    // profile name (h100) or the measured device's name
  std::string order;
  nlohmann::json kernel; // the kernel spec that ran
  double time_ms = 0;
  double tflops = 0;
  double l2_hit_rate = 0; // sector hit rate over all L2 lookups, 0..1 (lts__t_sector_hit_rate / 100)
  long long dram_read_bytes = 0;
  long long dram_write_bytes = 0;
  long long l2_read_sectors = 0;
  std::vector<TileRecord> tiles;
  nlohmann::json provenance = nlohmann::json::object(); // command, gpu, driver, date, ...
  nlohmann::json extra = nlohmann::json::object();      // source-specific detail (stall breakdown, counters)
};

nlohmann::json to_json(const KernelResult& r);
// Throws SpecError naming `source_name` and the field when the JSON does not follow the schema or
// its fields disagree (tflops against the kernel's FLOPs and time, tile records against its tiles).
KernelResult kernel_result_from_json(const nlohmann::json& j, const std::string& source_name);
KernelResult load_kernel_result(const std::string& path);
// Written through write_output_file: a failed write throws SpecError and leaves no partial file.
void save_kernel_result(const KernelResult& r, const std::string& path);
// The spec of `r.kernel` without what the measurement harness adds to it (grid, tiles); throws
// SpecError naming `source` and the kernel's field.
KernelSpec kernel_spec_of(const KernelResult& r, const std::string& source);

} // namespace tilesim
