// Properties every simulated result must have, over random valid specs (fixed seed): finite and
// positive, below the GPU's peaks, no less DRAM traffic than the compulsory misses of a cold L2,
// and one tile record per tile, each tile once. Issue 17: a spec the loader accepts must never
// yield 0 ms, infinite TFLOP/s or a wrong tile count.
#include "models/gpu_profile.h"
#include "models/kernel_spec.h"
#include "models/launch_order_names.h"
#include "sim/gpu_simulator.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <random>
#include <set>

using namespace tilesim;
using nlohmann::json;

namespace {

// Draws from raw mt19937_64 output (the standard's distributions differ between libraries).
int pick(std::mt19937_64& rng, int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<std::uint64_t>(hi - lo + 1)); }

json random_spec(std::mt19937_64& rng, int i) {
  const bool grouped = rng() % 2 == 0;
  const char* dtypes[] = {"bf16", "fp16", "fp8_e4m3"};
  const std::string dtype = dtypes[rng() % 3];
  const int element_bytes = dtype == "fp8_e4m3" ? 1 : 2;
  const int tile_ns[] = {64, 128, 256};
  json j{{"name", "random" + std::to_string(i)},
         {"kind", grouped ? "grouped_gemm" : "gemm"},
         {"dtype", dtype},
         {"n", pick(rng, 1, 1536)},
         {"k", pick(rng, 1, 768)},
         {"layout", {{"a", "row"}, {"b", rng() % 2 ? "row" : "col"}}},
         {"tile", {{"m", rng() % 2 ? 64 : 128}, {"n", tile_ns[rng() % 3]}, {"k", 128 / element_bytes}}},
         {"stages", pick(rng, 1, 4)},
         {"warps", rng() % 2 ? 8 : 12},
         {"load", rng() % 4 ? "tma" : "cp_async"},
         {"persistent", rng() % 2 == 0},
         {"cluster", pick(rng, 1, 2)}};
  if (grouped) {
    json experts = json::array();
    const int count = pick(rng, 1, 9);
    for (int e = 0; e < count; ++e) experts.push_back(rng() % 4 ? pick(rng, 0, 700) : 0);
    experts[0] = pick(rng, 1, 700); // not all zero
    j["experts"] = experts;
  } else {
    j["m"] = pick(rng, 1, 1536);
  }
  const auto orders = all_launch_orders(grouped);
  j["order"] = to_string(orders[rng() % orders.size()]);
  return j;
}

} // namespace

TEST_CASE("random valid specs give finite, positive results within the GPU's peaks, a record per tile") {
  const GpuProfile gpu = load_gpu_profile("h100");
  std::mt19937_64 rng(2026);
  for (int i = 0; i < 100; ++i) {
    const json j = random_spec(rng, i);
    INFO(j.dump());
    const KernelSpec spec = parse_kernel_spec(j, "random.json");
    const KernelResult r = simulate(gpu, spec, {.record_tiles = true, .progress = {}});

    REQUIRE(std::isfinite(r.time_ms));
    CHECK(r.time_ms > 0);
    CHECK(std::isfinite(r.tflops));
    CHECK(r.tflops > 0);
    // Tensor peak at the profile's clock: no kernel outruns its tensor cores.
    const double peak_tflops =
        gpu.tensor_flops_per_cycle(spec.a_dtype, spec.b_dtype) * gpu.sm.count * gpu.sm.clock_mhz * 1e6 / 1e12;
    CHECK(r.tflops <= peak_tflops);
    CHECK(r.l2_hit_rate >= 0);
    CHECK(r.l2_hit_rate <= 1);

    // A cold L2 reads every operand byte a tile needs from DRAM at least once: all of A, and B of
    // the experts that have tokens. The output is written back once, during the kernel or after
    // it for what the L2 still holds at the end (at most the whole L2).
    const int a_bytes = dtype_bits(spec.a_dtype) / 8, b_bytes = dtype_bits(spec.b_dtype) / 8;
    long long b_needed = 0;
    for (int m : spec.expert_tokens)
      if (m > 0) b_needed += static_cast<long long>(spec.n) * spec.k * b_bytes;
    CHECK(r.dram_read_bytes >= spec.total_m() * spec.k * a_bytes + b_needed);
    const long long output_bytes = spec.total_m() * spec.n * dtype_bits(spec.c_dtype) / 8;
    CHECK(r.dram_write_bytes <= output_bytes);
    CHECK(r.dram_write_bytes >= output_bytes - gpu.l2.size_bytes);
    // No faster than DRAM can carry that traffic.
    const double dram_ms = (r.dram_read_bytes + r.dram_write_bytes) / (gpu.dram.bandwidth_bytes_per_s * gpu.dram.achievable_fraction) * 1e3;
    CHECK(r.time_ms >= dram_ms * (1 - 1e-9));

    long long tiles = 0;
    for (int m : spec.expert_tokens) tiles += (m + spec.tile.m - 1) / spec.tile.m;
    tiles *= (spec.n + spec.tile.n - 1) / spec.tile.n;
    REQUIRE(static_cast<long long>(r.tiles.size()) == tiles);
    std::set<int> linear;
    for (const auto& t : r.tiles) {
      linear.insert(t.linear);
      CHECK(t.start_ns <= t.end_ns);
      CHECK(t.end_ns <= r.time_ms * 1e6 * (1 + 1e-9));
      CHECK(t.sm >= 0);
      CHECK(t.sm < gpu.sm.count);
    }
    CHECK(static_cast<long long>(linear.size()) == tiles);
  }
}
