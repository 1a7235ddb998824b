// Checked reads of JSON fields for the profile and spec loaders: every failure is a SpecError
// that names the file, the dotted field path and what to write instead.
#pragma once

#include "models/spec_error.h"

#include <nlohmann/json.hpp>

#include <string>

namespace tilesim {

class JsonFields {
public:
  JsonFields(const nlohmann::json& object, std::string source, std::string path = "");

  bool has(const char* key) const;
  JsonFields object(const char* key) const;
  const nlohmann::json& array(const char* key) const;
  std::string string(const char* key) const;
  std::string string_or(const char* key, const std::string& fallback) const;
  long long integer(const char* key, long long min, long long max) const;
  long long integer_or(const char* key, long long fallback, long long min, long long max) const;
  double number(const char* key, double min, double max) const;
  bool boolean_or(const char* key, bool fallback) const;

  std::string field(const char* key) const { return path_.empty() ? key : path_ + "." + key; }
  [[noreturn]] void fail(const char* key, const std::string& problem, const std::string& fix) const;
  const std::string& source() const { return source_; }

private:
  const nlohmann::json& at(const char* key) const;

  const nlohmann::json& object_;
  std::string source_;
  std::string path_;
};

// Parses a whole file; a missing file or malformed JSON is a SpecError too.
nlohmann::json read_json_file(const std::string& path, const std::string& what);

} // namespace tilesim
