// Two kernels timed as one (sim/kernel_sequence.h): hand-worked sums of two made-up results.
#include "sim/kernel_sequence.h"

#include <catch2/catch.hpp>

using namespace tilesim;

TEST_CASE("run_in_sequence: times, bytes and L2 sectors add; the hit rate is weighted; tiles move later") {
  KernelResult first;
  first.time_ms = 0.1;
  first.dram_read_bytes = 100;
  first.dram_write_bytes = 200;
  first.l2_read_sectors = 1000;
  first.l2_hit_rate = 0.5;
  first.extra = {{"l2_write_sectors", 1000}, {"cycles", 180000}};
  KernelResult second;
  second.time_ms = 0.9;
  second.tflops = 100;
  second.dram_read_bytes = 1000;
  second.dram_write_bytes = 50;
  second.l2_read_sectors = 3000;
  second.l2_hit_rate = 0.8;
  second.extra = {{"l2_write_sectors", 1000}, {"cycles", 1620000}, {"sm_clock_mhz", 1800}};
  TileRecord tile;
  tile.start_ns = 10;
  tile.end_ns = 20;
  tile.start_cycle = 18;
  tile.end_cycle = 36;
  second.tiles = {tile};
  const KernelResult both = run_in_sequence(first, second);
  CHECK(both.time_ms == Approx(1.0));
  CHECK(both.tflops == Approx(90)); // the second's FLOPs: 100 TFLOP/s x 0.9 ms over 1.0 ms
  CHECK(both.dram_read_bytes == 1100);
  CHECK(both.dram_write_bytes == 250);
  CHECK(both.l2_read_sectors == 4000);
  CHECK(both.l2_hit_rate == Approx((0.5 * 2000 + 0.8 * 4000) / 6000)); // 0.7
  REQUIRE(both.tiles.size() == 1);
  CHECK(both.tiles[0].start_ns == Approx(100010)); // 0.1 ms later
  CHECK(both.tiles[0].end_ns == Approx(100020));
  CHECK(*both.tiles[0].start_cycle == Approx(18 + 180000)); // 100,000 ns at 1800 MHz
  CHECK(both.extra["cycles"].get<double>() == Approx(1800000));
  CHECK(both.extra["launched_before"]["time_ms"].get<double>() == Approx(0.1));
  CHECK(both.extra["launched_before"]["dram_write_bytes"].get<long long>() == 200);
}
