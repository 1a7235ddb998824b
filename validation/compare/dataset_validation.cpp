#include "validation/compare/dataset_validation.h"

#include "models/json_fields.h"
#include "models/power_limit.h"
#include "validation/compare/parallel_jobs.h"
#include "validation/compare/result_checks.h"
#include "sim/gpu_simulator.h"

#include <algorithm>
#include <filesystem>
#include <numeric>
#include <stdexcept>

namespace tilesim {

std::vector<MeasuredConfiguration> load_measured_dataset(const std::string& folder) {
  namespace fs = std::filesystem;
  if (!fs::is_directory(folder))
    throw SpecError(folder, "--dataset", "is not a folder", "give the folder holding measured result JSON files");
  std::vector<MeasuredConfiguration> dataset;
  const auto text_of = [](const nlohmann::json& j, const char* key) {
    return j.contains(key) && j.at(key).is_string() ? j.at(key).get<std::string>() : std::string();
  };
  std::vector<fs::path> files;
  try {
    for (const auto& entry : fs::recursive_directory_iterator(folder))
      if (entry.path().extension() == ".json") files.push_back(entry.path());
  } catch (const fs::filesystem_error& e) {
    throw SpecError(e.path1().string(), "--dataset", std::string("cannot be listed: ") + e.code().message(),
                    "check the folder's permissions");
  }
  for (const auto& path : files) {
    // Other JSON (specs, notes) may sit beside the results; only results are scored.
    const nlohmann::json j = read_json_file(path.string(), "result");
    if (!j.is_object() || text_of(j, "schema") != kResultSchema) continue;
    const std::string source = text_of(j, "source");
    if (source != "measured" && source != "published") continue;
    dataset.push_back({path.stem().string(), path.string(), kernel_result_from_json(j, path.string())});
  }
  if (dataset.empty())
    throw SpecError(folder, "--dataset", "holds no measured or published tilesim.result/1 files",
                    "run tilesim-measure first");
  std::sort(dataset.begin(), dataset.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return dataset;
}

std::vector<MeasuredConfiguration> load_measured_datasets(const std::vector<std::string>& folders) {
  std::vector<MeasuredConfiguration> all;
  for (const auto& folder : folders) {
    auto dataset = load_measured_dataset(folder);
    all.insert(all.end(), std::make_move_iterator(dataset.begin()), std::make_move_iterator(dataset.end()));
  }
  std::sort(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  for (size_t i = 1; i < all.size(); ++i)
    if (all[i].id == all[i - 1].id)
      throw SpecError(all[i].file, "--dataset", "configuration " + all[i].id + " is also in " + all[i - 1].file,
                      "give folders of different configurations (score a repeat sweep on its own)");
  return all;
}

std::vector<ConfigurationError> validate_dataset(const GpuProfile& gpu, const std::vector<MeasuredConfiguration>& dataset,
                                                 unsigned threads, bool at_measured_clock) {
  for (const auto& c : dataset) check_measurement(c.measured, c.file, gpu);
  std::vector<ConfigurationError> rows(dataset.size());
  // Longest first: a configuration looks up L2 lines in proportion to M*N*K*(1/tile_m + 1/tile_n),
  // so the last ones to start are short and every thread stays busy to the end.
  std::vector<double> cost(dataset.size(), 0.0);
  for (size_t i = 0; i < dataset.size(); ++i) {
    try {
      const KernelSpec spec = kernel_spec_of(dataset[i].measured, dataset[i].file);
      cost[i] = spec.tile.m > 0 && spec.tile.n > 0 ? spec.flops() * (1.0 / spec.tile.m + 1.0 / spec.tile.n) : spec.flops();
    } catch (...) {
      // reported by the worker that simulates it
    }
  }
  std::vector<size_t> order(dataset.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return cost[a] > cost[b]; });
  run_parallel_jobs(dataset.size(), threads, [&](size_t n) {
    const size_t i = order[n];
    const KernelSpec spec = kernel_spec_of(dataset[i].measured, dataset[i].file);
    GpuProfile run_gpu = gpu;
    const nlohmann::json& extra = dataset[i].measured.extra;
    if (at_measured_clock && extra.contains("sm_clock_mhz") && extra["sm_clock_mhz"].is_number())
      run_gpu.sm.clock_mhz = extra["sm_clock_mhz"].get<double>();
    else if (!at_measured_clock && extra.contains("power_limit_w") && extra["power_limit_w"].is_number())
      run_gpu = at_power_limit(gpu, extra["power_limit_w"].get<double>(), dataset[i].file + ": extra.power_limit_w");
    const KernelResult predicted = simulate(run_gpu, spec, {.record_tiles = false, .progress = {}});
    rows[i] = compare_results(predicted, dataset[i].measured);
    rows[i].id = dataset[i].id;
    rows[i].held_back = is_held_back(dataset[i].id);
  });
  return rows;
}

} // namespace tilesim
