#include "sim/gpc_port.h"

#include <catch2/catch.hpp>

using namespace tilesim;

TEST_CASE("GPC ports: each GPC queues its own reads first come, first served; the others pass freely") {
  GpcPorts ports(16.0, 3); // 16 bytes a cycle, 3 GPCs
  REQUIRE(ports.enabled());
  CHECK(ports.serve(0, 1, 1600) == Approx(100));
  CHECK(ports.serve(10, 1, 320) == Approx(120)); // behind GPC 1's first read
  CHECK(ports.serve(10, 2, 320) == Approx(30));  // GPC 2's port is idle
  CHECK(ports.port(1).served_bytes() == 1920);
  CHECK(ports.port(0).served_bytes() == 0);
}

TEST_CASE("GPC ports: none given, none modelled") {
  CHECK_FALSE(GpcPorts().enabled());
}
