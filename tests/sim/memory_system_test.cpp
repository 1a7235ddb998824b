#include "sim/memory_system.h"

#include <catch2/catch.hpp>

using namespace tilesim;

namespace {

GpuProfile small_gpu() {
  GpuProfile g = load_gpu_profile("h100");
  g.sm.clock_mhz = 1000;               // 1 cycle = 1 ns
  g.l2.size_bytes = 64 * 1024;         // 512 lines
  g.l2.ways = 16;
  g.l2.hit_latency_cycles = 200;
  g.l2.far_hit_extra_latency_cycles = 0;
  g.l2.bandwidth_bytes_per_s = 1024e9; // 1024 bytes per cycle
  g.l2.partitions = 1;
  g.dram.bandwidth_bytes_per_s = 64e9; // 64 bytes per cycle
  g.dram.achievable_fraction = 1.0;
  g.dram.latency_ns = 500;
  g.l2.sm_partition.clear(); // SMs in contiguous halves
  return g;
}

} // namespace

TEST_CASE("a box becomes lines and sectors: alignment decides the sector count") {
  MemorySystem mem(small_gpu());
  SectorCount c;
  SECTION("an aligned 128 x 128-byte box is 128 lines of 4 sectors") {
    mem.read_box(0, 0, {0, 128, 4096, 128}, c);
    CHECK(c.misses == 512);
    CHECK(mem.totals().dram_read_bytes == 128 * 128);
  }
  SECTION("a 64-byte row starting mid-line touches 2 sectors; one straddling lines touches 3") {
    mem.read_box(0, 0, {32, 64, 4096, 1}, c);
    CHECK(c.misses == 2);
    mem.read_box(0, 0, {100, 64, 4096, 1}, c); // bytes 100..163: sector 3 of line 0, sectors 0 and 1 of line 1
    CHECK(c.misses == 2 + 3);
  }
  SECTION("the second read of a box hits in L2 and reads nothing more from DRAM") {
    mem.read_box(0, 0, {0, 128, 128, 64}, c);
    mem.read_box(10000, 0, {0, 128, 128, 64}, c);
    CHECK(c.hits == 256);
    CHECK(mem.totals().dram_read_bytes == 64 * 128);
  }
}

TEST_CASE("box latency: L2 hits take the hit latency, misses wait for DRAM bandwidth and latency") {
  MemorySystem mem(small_gpu());
  SectorCount c;
  // 64 lines = 8192 bytes: DRAM serves 64 B/cycle -> 128 cycles, then 500 cycles latency.
  const Cycle miss_done = mem.read_box(0, 0, {0, 128, 128, 64}, c);
  CHECK(miss_done == Approx(128 + 500));
  // The same box again from L2: 8192 bytes at 1024 B/cycle after the first 8 cycles of L2 transfer.
  const Cycle hit_done = mem.read_box(1000, 0, {0, 128, 128, 64}, c);
  CHECK(hit_done == Approx(1000 + 8 + 200));
}

TEST_CASE("stores write through to DRAM and leave a clean copy in L2") {
  MemorySystem mem(small_gpu());
  SectorCount c;
  mem.write_box(0, {0, 128, 128, 16});
  CHECK(mem.totals().dram_write_bytes == 16 * 128);
  CHECK(mem.totals().write_sectors == 64);
  // Reading the stored lines back hits; evicting them writes nothing more.
  mem.read_box(100, 0, {0, 128, 128, 16}, c);
  CHECK(c.hits == 64);
  mem.read_box(200, 0, {1 << 20, 128, 128, 4096}, c);
  CHECK(mem.totals().dram_write_bytes == 16 * 128);
}

TEST_CASE("two L2 partitions: a line read from both sides is cached in both, fetched from DRAM once") {
  GpuProfile g = small_gpu();
  g.l2.partitions = 2; // SMs 0..65 on partition 0, 66..131 on partition 1
  g.l2.size_bytes = 1 << 20; // room for every line twice over
  MemorySystem mem(g);
  SectorCount c;
  const Box box{0, 128, 128, 256}; // 256 lines, about half homed on each side
  // SM 0 misses everywhere: its near copy and, for lines homed across, the home copy are filled.
  mem.read_box(0, 0, box, c);
  CHECK(c.misses == 1024);
  CHECK(mem.totals().dram_read_bytes == 256 * 128);
  const long long homed_across = mem.totals().fabric_read_sectors; // lines homed in partition 1
  CHECK(homed_across > 256);
  CHECK(homed_across < 768);
  // SM 131 finds the lines homed on its side in its own partition, the rest over the fabric.
  mem.read_box(1000, 131, box, c);
  const auto& t = mem.totals();
  CHECK(t.sm_read_sectors == 2048);
  CHECK(t.near_read_hit_sectors == homed_across);
  CHECK(t.fabric_read_sectors == homed_across + (1024 - homed_across));
  CHECK(t.far_read_hit_sectors == 1024 - homed_across);
  CHECK(t.dram_read_bytes == 256 * 128);
  // Now both partitions hold every line: a third read from the far side hits near throughout.
  mem.read_box(2000, 131, box, c);
  CHECK(mem.totals().near_read_hit_sectors == homed_across + 1024);
}
