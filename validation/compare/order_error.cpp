#include "validation/compare/order_error.h"

#include "models/json_input.h"
#include "models/spec_error.h"

#include <cmath>

namespace tilesim {

std::string default_order_error_path(const std::string& source_dir, const std::string& gpu_name) {
  return source_dir + "/validation/data/" + gpu_name + "/validate_scores.json";
}

KnownOrderError load_known_order_error(const std::string& path, const std::string& gpu_name) {
  const nlohmann::json j = read_json_file(path, "validate scores");
  const std::string fix = "write it with tilesim validate --gpu " + gpu_name + " --json " + path;
  if (!j.is_object() || !j.contains("gpu") || !j["gpu"].is_string())
    throw SpecError(path, "gpu", "is missing: this is not a tilesim validate --json file", fix);
  if (j["gpu"].get<std::string>() != gpu_name)
    throw SpecError(path, "gpu", "is '" + j["gpu"].get<std::string>() + "', not '" + gpu_name + "'",
                    "give the scores validated on " + gpu_name);
  if (!j.contains("held_back") || !j["held_back"].is_object())
    throw SpecError(path, "held_back", "is missing or not an object", fix);
  const nlohmann::json& held = j["held_back"];
  KnownOrderError e;
  e.file = path;
  if (!held.contains("order_pairs") || !held["order_pairs"].is_number_integer() || held["order_pairs"].get<long long>() < 1)
    throw SpecError(path, "held_back.order_pairs", "is missing or not a positive count",
                    "validate a dataset with two or more orders of a shape in its held-back part; " + fix);
  e.pairs = held["order_pairs"].get<long long>();
  if (!held.contains("order_pair_error_p90") || !held["order_pair_error_p90"].is_number() ||
      !std::isfinite(held["order_pair_error_p90"].get<double>()) || held["order_pair_error_p90"].get<double>() < 0 ||
      held["order_pair_error_p90"].get<double>() > 10)
    throw SpecError(path, "held_back.order_pair_error_p90", "is missing or outside 0..10", fix);
  e.ratio_error = held["order_pair_error_p90"].get<double>();
  return e;
}

} // namespace tilesim
