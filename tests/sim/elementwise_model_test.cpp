#include "models/gpu_profile.h"
#include "models/kernel_spec.h"
#include "sim/gpu_simulator.h"
#include "sim/kernel_model.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace tilesim;

namespace {

KernelSpec elementwise(const std::string& op, long long elements, bool persistent, int block = 256, int unroll = 1) {
  nlohmann::json j{{"kind", "elementwise"}, {"op", op},          {"elements", elements}, {"dtype", "fp32"},
                   {"block", block},        {"unroll", unroll}, {"persistent", persistent}};
  return parse_kernel_spec(j, "test.json");
}

// Bytes of n fp32 elements rounded up to whole 32-byte sectors.
long long sector_bytes(long long n) { return (n * 4 + 31) / 32 * 32; }

} // namespace

TEST_CASE("a vector add reads both inputs once; its output reaches DRAM as the L2 evicts it") {
  const GpuProfile h100 = load_gpu_profile("h100");
  // 10000001 elements: 9766 steps of 1024, the last holding 641; 40000004 bytes per array end
  // inside a sector, which is read and written whole. The output stays in L2 until evicted, so
  // what is written during the kernel is the output less what the 50 MiB L2 still holds at the
  // end. The L2 ends full of the most recent lines: each output line (held once, at its home
  // partition) comes with two input lines, each held once at the reading SM's partition and once
  // more at its home when that is the other one (half of them): 4 lines of L2 per output line,
  // so about a quarter of the L2, 12.5 MiB, is output; between a sixth and a third (homes uneven).
  const long long output = sector_bytes(10000001);
  const double l2 = static_cast<double>(h100.l2.size_bytes);
  const KernelResult grid = simulate(h100, elementwise("add", 10000001, false), {.record_tiles = false, .progress = {}});
  CHECK(grid.dram_read_bytes == 2 * sector_bytes(10000001));
  CHECK(grid.dram_write_bytes <= output - l2 / 6);
  CHECK(grid.dram_write_bytes >= output - l2 / 3);
  // Persistent: the same reads; the store of the item holding the tail is one box of whole steps
  // (sim/src/elementwise_model.cpp), 9766 x 4096 bytes.
  const KernelResult persistent = simulate(h100, elementwise("add", 10000001, true), {.record_tiles = false, .progress = {}});
  CHECK(persistent.dram_read_bytes == 2 * sector_bytes(10000001));
  CHECK(persistent.dram_write_bytes <= 9766LL * 4096 - l2 / 6);
  CHECK(persistent.dram_write_bytes >= 9766LL * 4096 - l2 / 3);
  // relu reads one array; its 4000-byte output never leaves the L2 during the kernel.
  const KernelResult relu = simulate(h100, elementwise("relu", 1000, false), {.record_tiles = true, .progress = {}});
  CHECK(relu.dram_read_bytes == 4000);
  CHECK(relu.dram_write_bytes == 0);
  CHECK(relu.tiles.size() == 1);
}

TEST_CASE("the grid form runs one CTA per step; the persistent form one replay CTA per SM") {
  const GpuProfile h100 = load_gpu_profile("h100");
  // 2^20 elements, 1024 per step: 1024 steps. Persistent: 256-thread CTAs, 8 per SM (2048 threads),
  // grid min(1024, 132 x 8) = 1024, so each of the 132 SMs' items holds up to 8 steps, once.
  const KernelResult grid = simulate(h100, elementwise("add", 1 << 20, false));
  CHECK(grid.tiles.size() == 1024);
  CHECK(grid.extra["ctas_per_sm"] == 8);
  const KernelResult persistent = simulate(h100, elementwise("add", 1 << 20, true));
  CHECK(persistent.tiles.size() == 132);
  CHECK(persistent.dram_read_bytes == 2 * (1 << 22));
}

TEST_CASE("a step issues what the kernel's SASS does: straight through in the grid form, a loop trip when persistent") {
  const GpuProfile h100 = load_gpu_profile("h100");
  REQUIRE(h100.sm.warp_schedulers == 4);
  // 256 threads (8 warps), vectors of 4 fp32, one FADD per element. Grid form, one vector: each warp
  // issues 22 instructions besides the FADDs, so a CTA issues 8 x 22 + 1024 / 32 = 208 over 4
  // schedulers, 52 cycles; four vectors: 8 x 45 + 4096 / 32 = 488, 122 cycles.
  CHECK(make_elementwise_model(elementwise("add", 1 << 20, false), h100)->element_cycles_per_k_step() == Approx(52));
  CHECK(make_elementwise_model(elementwise("add", 1 << 20, false, 256, 4), h100)->element_cycles_per_k_step() ==
        Approx(122));
  // Persistent: an item holds the 8 resident CTAs' trips on one SM, each 8 x 26 + 32 = 240: 480 cycles.
  CHECK(make_elementwise_model(elementwise("add", 1 << 20, true), h100)->element_cycles_per_k_step() == Approx(480));
}

TEST_CASE("a large vector add is bound by DRAM bandwidth, a tiny one by latency") {
  const GpuProfile h100 = load_gpu_profile("h100");
  // 2^26 fp32: 512 MiB read, 256 MiB written, at 0.93 x 3.35 TB/s. The kernel cannot end before
  // its reads are in; its last writes drain to DRAM after it (they end in L2).
  const double bandwidth = h100.dram.bandwidth_bytes_per_s * h100.dram.achievable_fraction;
  const double read_ms = 2.0 * 4 * (1 << 26) / bandwidth * 1e3, all_ms = 1.5 * read_ms;
  const KernelResult large = simulate(h100, elementwise("add", 1 << 26, false), {.record_tiles = false, .progress = {}});
  CHECK(large.time_ms >= read_ms);
  CHECK(large.time_ms <= 1.1 * all_ms);
  // 1024 elements: one CTA that waits for one DRAM round trip (354 ns) at least, plus the
  // kernel's start and drain (873 ns), and far less than the time any bandwidth would explain.
  const KernelResult tiny = simulate(h100, elementwise("add", 1024, false));
  CHECK(tiny.time_ms * 1e6 >= h100.dram.latency_ns + h100.launch.kernel_start_drain_ns);
  CHECK(tiny.time_ms * 1e6 <= 5000.0);
}

TEST_CASE("a spec that names no shape is charged as the launcher's pick on the GPU simulated") {
  const GpuProfile h100 = load_gpu_profile("h100");
  const auto unnamed = [](long long n) {
    return parse_kernel_spec(nlohmann::json{{"kind", "elementwise"}, {"op", "add"}, {"elements", n}, {"dtype", "fp32"}},
                             "test.json");
  };
  // 2^20 elements on 132 SMs: 64 threads x 4 vectors of 4 (models/elementwise_launch_shape.h), 2 warps
  // of 45 instructions and 1024 / 32 FADDs a step, 122 over 4 schedulers: 30.5 cycles.
  CHECK(make_elementwise_model(unnamed(1 << 20), h100)->element_cycles_per_k_step() == Approx(30.5));
  CHECK(make_elementwise_model(unnamed(1 << 20), h100)->resources().threads == 64);
  const KernelResult picked = simulate(h100, unnamed(1 << 20));
  const KernelResult named = simulate(h100, elementwise("add", 1 << 20, false, 64, 4));
  CHECK(picked.time_ms == named.time_ms);
  CHECK(picked.tiles.size() == 1024);
  // 1,000,003 has a masked CTA: 256 x 4, as at 2^24.
  CHECK(make_elementwise_model(unnamed(1000003), h100)->resources().threads == 256);
  CHECK(make_elementwise_model(unnamed(1 << 24), h100)->element_cycles_per_k_step() == Approx(52));
}

TEST_CASE("a kernel's duration holds the start and drain CUPTI counts beside its CTAs' span") {
  GpuProfile h100 = load_gpu_profile("h100");
  h100.launch.kernel_start_drain_ns = 0;
  const KernelResult bare = simulate(h100, elementwise("add", 1024, false));
  h100.launch.kernel_start_drain_ns = 873;
  const KernelResult timed = simulate(h100, elementwise("add", 1024, false));
  // The empty kernel's 873 ns include placing its one CTA, which the replay already starts with:
  // 91 cycles at 1630 MHz, 55.8 ns.
  const double placed_ns = 91 / (h100.sm.clock_mhz / 1000.0);
  CHECK((timed.time_ms - bare.time_ms) * 1e6 == Approx(873 - placed_ns).margin(0.01));
}

TEST_CASE("CTAs without shared memory take the small-CTA refill, GEMM CTAs the large one") {
  GpuProfile h100 = load_gpu_profile("h100");
  // 2^22 elements, 4096 steps of 1024: 1056 CTA slots (132 SMs x 8) hold the first 1056, the other
  // 3040 wait for a slot each.
  const KernelResult quick = simulate(h100, elementwise("add", 1 << 22, false));
  h100.launch.cta_launch_cycles_without_shared_memory = h100.launch.cta_launch_cycles; // 402
  const KernelResult slow = simulate(h100, elementwise("add", 1 << 22, false));
  CHECK(slow.time_ms > quick.time_ms);
}

TEST_CASE("the L2 hit rate counts the lookups the profiler adds to every launch") {
  GpuProfile h100 = load_gpu_profile("h100");
  const KernelResult with = simulate(h100, elementwise("add", 1024, false));
  h100.l2.counter_background_sectors = 0;
  const KernelResult without = simulate(h100, elementwise("add", 1024, false));
  // Its own lookups: 256 read sectors that miss at the SM's partition (and again over the fabric
  // where homed across) and 128 stores that hit (twice where homed across): at most 256 hits in
  // at least 512 lookups. With 64630 more that all hit, at least 64630 / (64630 + 3 x 256) do.
  CHECK(without.l2_hit_rate <= 0.5);
  CHECK(with.l2_hit_rate >= 64630.0 / (64630 + 3 * 256));
  CHECK(with.l2_hit_rate < 1.0);
}

TEST_CASE("a fused epilogue reads the bias once and adds epilogue work, never less time") {
  const GpuProfile h100 = load_gpu_profile("h100");
  nlohmann::json j = nlohmann::json::parse(R"({"kind":"gemm","dtype":"bf16","m":1024,"n":1024,"k":1024,
    "layout":{"a":"row","b":"col"},"tile":{"m":128,"n":256,"k":64},"stages":4,"warps":12,"persistent":true,
    "cluster":2,"order":"grouped_m:8"})");
  const KernelResult plain = simulate(h100, parse_kernel_spec(j, "g.json"), {.record_tiles = false, .progress = {}});
  j["epilogue"] = "bias_gelu";
  const KernelResult fused = simulate(h100, parse_kernel_spec(j, "g.json"), {.record_tiles = false, .progress = {}});
  // The bias row: 1024 bf16 = 2048 bytes, fetched from DRAM once.
  CHECK(fused.dram_read_bytes - plain.dram_read_bytes == 2048);
  CHECK(fused.dram_write_bytes == plain.dram_write_bytes);
  CHECK(fused.time_ms >= plain.time_ms);
}
