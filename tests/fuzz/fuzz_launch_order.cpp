// libFuzzer target: the launch-order parser and the orders themselves. The first bytes shape a
// small grouped tile space, the rest is an order's name: a parsed order must name itself back,
// and visit every tile of the space exactly once (tile_at is a bijection).
#include "models/launch_order.h"
#include "models/launch_order_names.h"

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  if (size < 3) return 0;
  const int experts = 1 + data[0] % 6;
  const int cols = 1 + data[1] % 12;
  const int rows_seed = data[2];
  const std::string name(reinterpret_cast<const char*>(data) + 3, size - 3);
  tilesim::LaunchOrder order;
  try {
    order = tilesim::parse_launch_order(name);
  } catch (const std::invalid_argument&) {
    return 0;
  }
  if (tilesim::parse_launch_order(tilesim::to_string(order)).kind != order.kind) std::abort();
  std::vector<int> offsets{0};
  for (int e = 0; e < experts; ++e) offsets.push_back(offsets.back() + (rows_seed >> e) % 5); // 0..4 rows, zeros included
  const tilesim::TileSpace space{offsets.data(), experts, offsets.back(), cols};
  std::vector<int> seen(static_cast<size_t>(tilesim::tile_count(space)), 0);
  for (int i = 0; i < tilesim::tile_count(space); ++i) {
    const tilesim::TileIndex t = tilesim::tile_at(order, space, i);
    if (t.row < 0 || t.row >= space.tile_rows || t.col < 0 || t.col >= cols) std::abort();
    if (t.expert < 0 || t.expert >= experts || t.row < offsets[t.expert] || t.row >= offsets[t.expert + 1]) std::abort();
    if (t.local_row != t.row - offsets[t.expert]) std::abort();
    if (++seen[static_cast<size_t>(t.row * cols + t.col)] != 1) std::abort();
  }
  return 0;
}
