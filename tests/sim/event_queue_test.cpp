#include "sim/event_queue.h"

#include <catch2/catch.hpp>

using namespace tilesim;

TEST_CASE("events pop in time order, ties in push order") {
  EventQueue<int> q;
  q.push(5.0, 1);
  q.push(1.0, 2);
  q.push(5.0, 3);
  q.push(0.5, 4);
  std::vector<int> order;
  while (!q.empty()) order.push_back(q.pop().payload);
  CHECK(order == std::vector<int>{4, 2, 1, 3});
}
