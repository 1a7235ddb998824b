#include "viz/open_result.h"

#include "models/gpu_profile.h"
#include "models/json_input.h"
#include "models/spec_error.h"

#include <QFileInfo>

#include <algorithm>
#include <cctype>
#include <map>

namespace tilesim::viz {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// What makes two results the same kernel: everything but the order (and the names, the
// recorded command and the measured grid, which the order or the harness set).
QString config_of(const nlohmann::json &kernel) {
  if (!kernel.is_object()) return {};
  nlohmann::json key = nlohmann::json::object();
  for (const char *field : {"kind", "dtype", "b_dtype", "m", "n", "k", "tile", "persistent", "cluster", "layout"})
    if (kernel.contains(field)) key[field] = kernel.at(field);
  if (kernel.contains("experts") && kernel.at("experts").is_array()) {
    nlohmann::json tokens = nlohmann::json::array();
    for (const auto &e : kernel.at("experts")) tokens.push_back(e.is_object() ? e.value("m", nlohmann::json(0)) : e);
    key["experts"] = tokens;
  }
  return QString::fromStdString(key.dump());
}

QString default_label(const KernelResult &r, const QString &path) {
  const QString name = QString::fromStdString(r.kernel.is_object() ? r.kernel.value("name", "") : "");
  const QString base = name.isEmpty() ? QFileInfo(path).completeBaseName() : name;
  return QString("%1 [%2, %3]").arg(base, QString::fromStdString(r.order), QString::fromStdString(r.source));
}

} // namespace

GpuMaps gpu_maps_for(const std::string &gpu) {
  // Loading every shipped profile takes milliseconds; a viewer opens many results of one GPU.
  static std::map<std::string, GpuMaps> cache;
  if (const auto it = cache.find(gpu); it != cache.end()) return it->second;
  GpuMaps maps;
  try {
    const std::string text = lower(gpu);
    for (const std::string &name : shipped_gpu_names()) {
      if (text != name && text.find(name) == std::string::npos) continue;
      const GpuProfile p = load_gpu_profile(name);
      maps = {QString::fromStdString(name), p.sm.count, p.sm.gpc, p.l2.sm_partition};
      // The simulator's rule when the profile has no measured map: contiguous id ranges.
      if (maps.partition.empty() && p.l2.partitions > 0)
        for (int sm = 0; sm < p.sm.count; ++sm) maps.partition.push_back(sm * p.l2.partitions / p.sm.count);
      break;
    }
  } catch (const SpecError &) {
    maps = {}; // a broken shipped profile only costs the GPC and partition metrics
  }
  cache[gpu] = maps;
  return maps;
}

OpenResultPtr make_open_result(KernelResult result, const QString &label, const QString &path) {
  auto r = std::make_shared<OpenResult>();
  r->path = path;
  r->label = label.isEmpty() ? default_label(result, path) : label;
  r->config = config_of(result.kernel);
  r->maps = gpu_maps_for(result.gpu);
  r->result = std::move(result);
  return r;
}

OpenResultPtr open_result_file(const QString &path) {
  const std::string file = path.toStdString();
  try {
    const nlohmann::json j = read_json_file(file, "result");
    // Say what the file is not before the loader lists the first key it does not know (a kernel
    // spec dropped on the viewer is the usual case).
    if (j.is_object() && !j.contains("schema"))
      throw SpecError(file, "schema", "is missing: this is not a tilesim.result/1 file",
                      "open a result written by tilesim simulate --out or tilesim-measure --out");
    return make_open_result(kernel_result_from_json(j, file), {}, path);
  } catch (const SpecError &e) {
    throw ViewerError(e.what());
  } catch (const nlohmann::json::exception &e) {
    // A field of the wrong type inside a tile record.
    throw ViewerError(file + ": tiles: " + e.what() + "; write each tile's fields as numbers (README, result schema)");
  } catch (const std::exception &e) {
    throw ViewerError(file + ": " + e.what() +
                      "; open a tilesim.result/1 file (tilesim simulate --out, tilesim-measure)");
  }
}

} // namespace tilesim::viz
