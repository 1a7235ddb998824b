// libFuzzer target: bytes -> JSON guard -> result loader (what compare and validate read). A
// SpecError is the expected answer to bad input; anything else, or an accepted result that does
// not read back the same, is a finding.
#include "models/json_input.h"
#include "sim/kernel_result.h"
#include "tests/fuzz/accepted.h"

#include <cmath>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto r = tilesim::fuzz::accepted(
      [&] { return tilesim::kernel_result_from_json(tilesim::parse_json_text(text, "fuzz.json", "result"), "fuzz.json"); });
  if (!r) return 0;
  if (!(r->time_ms > 0) || !std::isfinite(r->tflops) || r->l2_hit_rate < 0 || r->l2_hit_rate > 1) std::abort();
  const nlohmann::json written = tilesim::to_json(*r);
  if (tilesim::to_json(tilesim::kernel_result_from_json(written, "written.json")) != written) std::abort();
  return 0;
}
