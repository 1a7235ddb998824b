#include "sim/occupancy.h"

#include <catch2/catch.hpp>

using namespace tilesim;

TEST_CASE("occupancy takes the tightest SM limit") {
  SmProfile sm;
  sm.max_ctas = 32;
  sm.max_warps = 64;
  sm.registers = 65536;
  sm.shared_memory_bytes = 233472;
  SECTION("shared memory: 4 stages of a 128x128x64 bf16 tile (132 KiB) fit once") {
    const auto o = occupancy(sm, {256, 128, 4 * 32768 + 1024});
    CHECK(o.ctas_per_sm == 1);
    CHECK(o.limited_by == "shared_memory");
  }
  SECTION("registers: 256 threads x 128 registers = 32768, two CTAs") {
    const auto o = occupancy(sm, {256, 128, 1024});
    CHECK(o.ctas_per_sm == 2);
    CHECK(o.limited_by == "registers");
  }
  SECTION("warps: 1024-thread CTAs with few registers, two by the 64-warp limit") {
    const auto o = occupancy(sm, {1024, 32, 1024});
    CHECK(o.ctas_per_sm == 2);
    CHECK(o.limited_by == "warps");
  }
  SECTION("CTA slots: tiny CTAs stop at 32") {
    const auto o = occupancy(sm, {32, 16, 0});
    CHECK(o.ctas_per_sm == 32);
    CHECK(o.limited_by == "ctas");
  }
  SECTION("a CTA larger than the SM fits zero times") {
    CHECK(occupancy(sm, {128, 32, 300000}).ctas_per_sm == 0);
  }
}
