#include "models/json_fields.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace tilesim {

JsonFields::JsonFields(const nlohmann::json& object, std::string source, std::string path)
    : object_(object), source_(std::move(source)), path_(std::move(path)) {
  if (!object_.is_object())
    throw SpecError(source_, path_.empty() ? "(top level)" : path_, "is not a JSON object",
                    "write {\"key\": value, ...}");
}

std::string nearest_key(std::string_view key, std::span<const std::string_view> known) {
  // Optimal string alignment distance: insertions, deletions, substitutions and swaps of
  // neighbours ("persistant", "stgaes") each cost one.
  const auto distance = [](std::string_view a, std::string_view b) {
    std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
    for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
    for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
    for (size_t i = 1; i <= a.size(); ++i)
      for (size_t j = 1; j <= b.size(); ++j) {
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
        if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    return d[a.size()][b.size()];
  };
  if (key.empty() || key.size() > 64) return ""; // nothing to correct, or no key is that long
  // A typo changes a few letters of a word, not most of it: "x" is no typo of "m".
  std::string best;
  size_t best_distance = std::min(std::max<size_t>(1, key.size() / 3), key.size() - 1) + 1;
  for (const auto k : known) {
    const size_t dist = distance(key, k);
    if (dist < best_distance) {
      best_distance = dist;
      best = k;
    }
  }
  return best;
}

void JsonFields::refuse_unknown_keys(std::span<const std::string_view> known) const {
  for (const auto& [key, value] : object_.items()) {
    if (key == "comment" || key.starts_with("x-")) continue;
    if (std::find(known.begin(), known.end(), key) != known.end()) continue;
    const std::string near = nearest_key(key, known);
    std::string list;
    for (const auto k : known) list += (list.empty() ? "" : ", ") + std::string(k);
    fail(key.c_str(), "is not a known key",
         (near.empty() ? "known keys here: " + list : "did you mean \"" + near + "\"?") +
             " (\"comment\" and \"x-...\" keys are free for notes)");
  }
}

void JsonFields::fail(const char* key, const std::string& problem, const std::string& fix) const {
  throw SpecError(source_, field(key), problem, fix);
}

bool JsonFields::has(const char* key) const { return object_.contains(key); }

const nlohmann::json& JsonFields::at(const char* key) const {
  if (!object_.contains(key)) fail(key, "is missing", "add it (see README.md for the format)");
  return object_.at(key);
}

JsonFields JsonFields::object(const char* key) const { return JsonFields(at(key), source_, field(key)); }

const nlohmann::json& JsonFields::array(const char* key) const {
  const auto& v = at(key);
  if (!v.is_array()) fail(key, "must be an array", "write [ ... ]");
  return v;
}

std::string JsonFields::string(const char* key) const {
  const auto& v = at(key);
  if (!v.is_string()) fail(key, "must be a string", "quote it");
  return v.get<std::string>();
}

std::string JsonFields::string_or(const char* key, const std::string& fallback) const {
  return has(key) ? string(key) : fallback;
}

long long JsonFields::integer(const char* key, long long min, long long max) const {
  return integer_value(at(key), field(key), min, max);
}

long long JsonFields::integer_value(const nlohmann::json& v, const std::string& field, long long min, long long max) const {
  const std::string range = std::to_string(min) + ".." + std::to_string(max);
  const auto fail = [&](const std::string& problem, const std::string& fix) { throw SpecError(source_, field, problem, fix); };
  const auto out_of_range = [&] { fail("is " + v.dump() + ", outside " + range, "use a value in that range"); };
  // Read in the number's own type: through a double, 2^53 + 1 would pass as 2^53.
  if (v.is_number_unsigned()) {
    const auto u = v.get<unsigned long long>();
    if (u > static_cast<unsigned long long>(max) || static_cast<long long>(u) < min) out_of_range();
    return static_cast<long long>(u);
  }
  if (v.is_number_integer()) {
    const auto i = v.get<long long>();
    if (i < min || i > max) out_of_range();
    return i;
  }
  if (!v.is_number_float() || std::floor(v.get<double>()) != v.get<double>())
    fail("must be an integer", "write a whole number in " + range);
  const double d = v.get<double>();
  if (d < static_cast<double>(min) || d > static_cast<double>(max)) out_of_range();
  return static_cast<long long>(d);
}

long long JsonFields::integer_or(const char* key, long long fallback, long long min, long long max) const {
  return has(key) ? integer(key, min, max) : fallback;
}

double JsonFields::number(const char* key, double min, double max) const {
  const auto& v = at(key);
  if (!v.is_number()) fail(key, "must be a number", "write a number");
  const double d = v.get<double>();
  if (!std::isfinite(d) || d < min || d > max)
    fail(key, "is " + v.dump() + ", outside " + nlohmann::json(min).dump() + ".." + nlohmann::json(max).dump(),
         "use a value in that range");
  return d;
}

bool JsonFields::boolean_or(const char* key, bool fallback) const {
  if (!has(key)) return fallback;
  const auto& v = at(key);
  if (!v.is_boolean()) fail(key, "must be true or false", "write true or false without quotes");
  return v.get<bool>();
}

} // namespace tilesim
