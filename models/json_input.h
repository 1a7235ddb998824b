// Reading untrusted JSON: every tilesim input (spec, profile, result, dataset) comes through here,
// so the limits that keep a hostile file from crashing, hanging or misleading the loaders live
// in one place. Failures are SpecErrors naming the file and the fix, in one line.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace tilesim {

// Deeper nesting is refused while parsing, before a document is built: a document's copy and
// dump recurse, so an unbounded depth overflows the stack. No tilesim format nests deeper than 8.
inline constexpr int kMaxJsonDepth = 64;
// The largest input read: a result with a record for each of the spec's 4 Mi tiles is ~1 GiB.
inline constexpr long long kMaxJsonBytes = 1LL << 30;

// Throws SpecError unless `path` names a regular file (not a folder, FIFO or device), checked
// with stat before anything opens it, so a FIFO never blocks.
void require_regular_file(const std::string& path, const std::string& what);

// Parses `text` (the contents of `source`), refusing malformed JSON with its line and column,
// duplicate keys, and nesting deeper than kMaxJsonDepth.
nlohmann::json parse_json_text(std::string_view text, const std::string& source, const std::string& what);

// require_regular_file, a size check, then parse_json_text on the whole file.
nlohmann::json read_json_file(const std::string& path, const std::string& what);

} // namespace tilesim
