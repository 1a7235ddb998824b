#include "models/json_fields.h"

#include <cmath>
#include <fstream>

namespace tilesim {

JsonFields::JsonFields(const nlohmann::json& object, std::string source, std::string path)
    : object_(object), source_(std::move(source)), path_(std::move(path)) {
  if (!object_.is_object())
    throw SpecError(source_, path_.empty() ? "(top level)" : path_, "is not a JSON object",
                    "write {\"key\": value, ...}");
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
  const auto& v = at(key);
  if (!v.is_number_integer() && !(v.is_number_float() && std::floor(v.get<double>()) == v.get<double>()))
    fail(key, "must be an integer", "write a whole number between " + std::to_string(min) + " and " + std::to_string(max));
  const double d = v.get<double>();
  if (d < static_cast<double>(min) || d > static_cast<double>(max))
    fail(key, "is " + v.dump() + ", outside " + std::to_string(min) + ".." + std::to_string(max),
         "use a value in that range");
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

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) throw SpecError(path, what, "cannot open the file", "check the path");
  try {
    return nlohmann::json::parse(in);
  } catch (const nlohmann::json::parse_error& e) {
    throw SpecError(path, what, std::string("is not valid JSON (") + e.what() + ")", "fix the syntax");
  }
}

} // namespace tilesim
