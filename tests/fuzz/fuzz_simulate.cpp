// libFuzzer target: whatever the spec loader accepts must simulate to a meaningful result. The
// first byte sets the SM count (1..8) of a small H100-like GPU (its measured SM maps dropped, a
// 1 MiB L2, still read by the profile loader); the rest is the spec. Specs of more than 256
// tiles or 64 K steps are skipped to keep each run short. A SpecError (the launch does not fit)
// is an answer; 0 ms, a non-finite figure or a missing tile record is a finding: the issue's
// 1-SM cluster launch reported 0 ms and infinite TFLOP/s.
#include "models/gpu_profile.h"
#include "models/json_input.h"
#include "sim/gpu_simulator.h"
#include "tests/fuzz/accepted.h"

#include <cmath>
#include <cstdlib>
#include <string_view>

namespace {

tilesim::GpuProfile small_gpu(int sm_count) {
  static const nlohmann::json h100 = tilesim::read_json_file(TILESIM_SOURCE_DIR "/models/gpus/h100_sxm.json", "GPU profile");
  nlohmann::json j = h100;
  for (const char* key : {"dispatch_order", "cluster_dispatch_order", "gpc"}) j["sm"].erase(key);
  for (const char* key : {"sm_partition", "coalescer_lines_per_gpc", "coalescer_ways", "coalescer_merges_per_request",
                          "sm_service_factor", "gpc_port_bytes_per_s"})
    j["l2"].erase(key);
  j["dram"].erase("sm_service_factor");
  j["sm"]["count"]["value"] = sm_count;
  j["l2"]["size_bytes"]["value"] = 1 << 20;
  return tilesim::parse_gpu_profile(j, "small_gpu.json");
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  if (size < 1) return 0;
  static const tilesim::GpuProfile gpus[] = {small_gpu(1), small_gpu(2), small_gpu(3), small_gpu(4),
                                             small_gpu(5), small_gpu(6), small_gpu(7), small_gpu(8)};
  const tilesim::GpuProfile& gpu = gpus[data[0] % 8];
  const std::string_view text(reinterpret_cast<const char*>(data) + 1, size - 1);
  const auto parsed = tilesim::fuzz::accepted(
      [&] { return tilesim::parse_kernel_spec(tilesim::parse_json_text(text, "fuzz.json", "kernel spec"), "fuzz.json"); });
  if (!parsed) return 0;
  const tilesim::KernelSpec& spec = *parsed;
  if (!spec.is_gemm()) {
    if (spec.flops() > (1 << 22)) return 0; // one operation per element
  } else {
    const long long tiles = static_cast<long long>(spec.tile_row_offsets().back()) * spec.tile_cols();
    if (tiles > 256 || (spec.k + spec.tile.k - 1) / spec.tile.k > 64) return 0;
  }
  const auto result = tilesim::fuzz::accepted([&] { return tilesim::simulate(gpu, spec, {.record_tiles = true, .progress = {}}); });
  if (!result) return 0;
  const tilesim::KernelResult& r = *result;
  if (!(r.time_ms > 0) || !std::isfinite(r.time_ms) || !std::isfinite(r.tflops) || !(r.tflops > 0)) std::abort();
  if (r.l2_hit_rate < 0 || r.l2_hit_rate > 1 || r.dram_read_bytes < 0) std::abort();
  if (spec.is_gemm() &&
      static_cast<long long>(r.tiles.size()) != static_cast<long long>(spec.tile_row_offsets().back()) * spec.tile_cols())
    std::abort();
  return 0;
}
