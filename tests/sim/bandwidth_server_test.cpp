#include "sim/bandwidth_server.h"

#include <catch2/catch.hpp>

using namespace tilesim;

TEST_CASE("bandwidth server queues requests first come, first served") {
  BandwidthServer s(32.0); // 32 bytes per cycle
  CHECK(s.serve(0, 320) == Approx(10));
  CHECK(s.serve(5, 64) == Approx(12)); // waits behind the first
  CHECK(s.serve(100, 32) == Approx(101)); // idle server starts at arrival
  CHECK(s.busy_cycles() == Approx(13));
  CHECK(s.served_bytes() == 416);
}

TEST_CASE("bandwidth server sustains exactly its rate under a backlog") {
  BandwidthServer s(3000.0 / 1650.0); // bytes per cycle
  Cycle done = 0;
  for (int i = 0; i < 1000; ++i) done = s.serve(0, 1000);
  CHECK(done == Approx(1e6 / (3000.0 / 1650.0)));
}
