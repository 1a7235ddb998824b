// Checked reads of JSON fields for the profile, spec and result loaders: every failure is a
// SpecError that names the file, the dotted field path and what to write instead.
#pragma once

#include "models/json_input.h"
#include "models/spec_error.h"

#include <nlohmann/json.hpp>

#include <span>
#include <string>
#include <string_view>

namespace tilesim {

class JsonFields {
public:
  JsonFields(const nlohmann::json& object, std::string source, std::string path = "");

  // Refuses any key not in `known`, suggesting the nearest known key (a misspelt "persistant"
  // must not quietly run the default). "comment" and keys starting with "x-" are free for notes.
  // Each loader lists its struct's keys once, next to the code that reads them.
  void refuse_unknown_keys(std::span<const std::string_view> known) const;

  bool has(const char* key) const;
  JsonFields object(const char* key) const;
  const nlohmann::json& array(const char* key) const;
  std::string string(const char* key) const;
  std::string string_or(const char* key, const std::string& fallback) const;
  long long integer(const char* key, long long min, long long max) const;
  // The same check for a value that is not under a key here (an array entry), named `field`.
  long long integer_value(const nlohmann::json& value, const std::string& field, long long min, long long max) const;
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

// The known key nearest to `key` by edit distance, or "" when none is close enough to be a typo.
std::string nearest_key(std::string_view key, std::span<const std::string_view> known);

} // namespace tilesim
