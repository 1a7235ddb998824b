// libFuzzer target: bytes -> JSON guard -> kernel spec loader. A SpecError is the expected answer
// to bad input; any other exception, a sanitizer report or a broken invariant is a finding.
#include "models/json_input.h"
#include "models/kernel_spec.h"
#include "tests/fuzz/accepted.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto spec = tilesim::fuzz::accepted(
      [&] { return tilesim::parse_kernel_spec(tilesim::parse_json_text(text, "fuzz.json", "kernel spec"), "fuzz.json"); });
  if (!spec) return 0;
  // An accepted spec describes work, and writes out as a spec that reads back the same.
  if (!(spec->flops() > 0) || !std::isfinite(spec->flops())) std::abort();
  const nlohmann::json written = tilesim::to_json(*spec);
  if (tilesim::to_json(tilesim::parse_kernel_spec(written, "written.json")) != written) std::abort();
  return 0;
}
