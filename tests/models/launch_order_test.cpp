#include "models/launch_order.h"
#include "models/launch_order_names.h"

#include <catch2/catch.hpp>

#include <cstdlib>
#include <set>
#include <utility>
#include <vector>

using namespace tilesim;

namespace {

std::vector<int> prefix(const std::vector<int>& rows) {
  std::vector<int> off(rows.size() + 1, 0);
  for (size_t e = 0; e < rows.size(); ++e) off[e + 1] = off[e] + rows[e];
  return off;
}

std::vector<std::pair<int, int>> walk(const LaunchOrder& order, const std::vector<int>& offsets, int cols) {
  const TileSpace space{offsets.data(), static_cast<int>(offsets.size()) - 1, offsets.back(), cols};
  std::vector<std::pair<int, int>> tiles;
  for (int i = 0; i < tile_count(space); ++i) {
    const TileIndex t = tile_at(order, space, i);
    REQUIRE(t.row >= 0);
    REQUIRE(t.row < space.tile_rows);
    REQUIRE(t.col >= 0);
    REQUIRE(t.col < cols);
    REQUIRE(offsets[t.expert] + t.local_row == t.row);
    REQUIRE(t.local_row < offsets[t.expert + 1] - offsets[t.expert]);
    tiles.emplace_back(t.row, t.col);
  }
  return tiles;
}

} // namespace

TEST_CASE("every launch order is a bijection on awkward tile sets") {
  const std::vector<std::vector<int>> experts{{1}, {3}, {13}, {5, 0, 7}, {0, 2, 0, 1}, {2, 9, 0, 4, 4, 3}, {0, 0, 1}};
  for (const auto& order : all_launch_orders(true)) {
    for (int group : {1, 3, 8}) {
      LaunchOrder o = order;
      o.group = group;
      for (const auto& rows : experts) {
        for (int cols : {1, 2, 7, 16, 33}) {
          const auto offsets = prefix(rows);
          const auto tiles = walk(o, offsets, cols);
          const std::set<std::pair<int, int>> distinct(tiles.begin(), tiles.end());
          INFO(to_string(o) << " rows " << offsets.back() << " cols " << cols);
          CHECK(distinct.size() == static_cast<size_t>(offsets.back() * cols));
        }
      }
    }
  }
}

TEST_CASE("launch orders visit tiles in their defining sequence") {
  const auto off = prefix({4});
  SECTION("row_major and column_major on 4x3") {
    const auto rm = walk({LaunchOrderKind::row_major, 8}, off, 3);
    CHECK(rm[0] == std::pair{0, 0});
    CHECK(rm[1] == std::pair{0, 1});
    CHECK(rm[3] == std::pair{1, 0});
    const auto cm = walk({LaunchOrderKind::column_major, 8}, off, 3);
    CHECK(cm[1] == std::pair{1, 0});
    CHECK(cm[4] == std::pair{0, 1});
  }
  SECTION("grouped_m:2 walks column-major inside bands of two rows (Triton GROUP_M)") {
    const auto g = walk({LaunchOrderKind::grouped_m, 2}, off, 3);
    const std::vector<std::pair<int, int>> expected{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {0, 2}, {1, 2},
                                                    {2, 0}, {3, 0}, {2, 1}, {3, 1}, {2, 2}, {3, 2}};
    CHECK(g == expected);
  }
  SECTION("grouped_m with a short last band (5 rows, G=2)") {
    const auto g = walk({LaunchOrderKind::grouped_m, 2}, prefix({5}), 2);
    CHECK(g[8] == std::pair{4, 0});
    CHECK(g[9] == std::pair{4, 1});
  }
  SECTION("serpentine reverses odd rows") {
    const auto s = walk({LaunchOrderKind::serpentine, 8}, off, 3);
    CHECK(s[3] == std::pair{1, 2});
    CHECK(s[5] == std::pair{1, 0});
  }
  SECTION("morton on 4x4 is the Z curve") {
    const auto m = walk({LaunchOrderKind::morton, 8}, off, 4);
    const std::vector<std::pair<int, int>> first{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 0}};
    CHECK(std::vector(m.begin(), m.begin() + 9) == first);
  }
  SECTION("hilbert steps to a neighbour every time on a power-of-two square") {
    const auto h = walk({LaunchOrderKind::hilbert, 8}, prefix({16}), 16);
    CHECK(h.front() == std::pair{0, 0});
    for (size_t i = 1; i < h.size(); ++i)
      CHECK(std::abs(h[i].first - h[i - 1].first) + std::abs(h[i].second - h[i - 1].second) == 1);
  }
  SECTION("expert_major finishes an expert before the next; interleaved takes row r of every expert") {
    const auto offsets = prefix({2, 0, 1});
    const auto em = walk({LaunchOrderKind::expert_major, 8}, offsets, 2);
    CHECK(em == std::vector<std::pair<int, int>>{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {2, 0}, {2, 1}});
    const auto il = walk({LaunchOrderKind::interleaved, 8}, offsets, 2);
    CHECK(il == std::vector<std::pair<int, int>>{{0, 0}, {0, 1}, {2, 0}, {2, 1}, {1, 0}, {1, 1}});
  }
}

TEST_CASE("launch order names round-trip and bad names are refused") {
  for (const auto& o : all_launch_orders(true)) CHECK(to_string(parse_launch_order(to_string(o))).size() > 0);
  CHECK(parse_launch_order("grouped_m:16").group == 16);
  CHECK(parse_launch_order("hilbert").kind == LaunchOrderKind::hilbert);
  CHECK_THROWS_WITH(parse_launch_order("zigzag"), Catch::Contains("unknown launch order"));
  CHECK_THROWS_WITH(parse_launch_order("grouped_m:0"), Catch::Contains("1..4096"));
  CHECK_THROWS_WITH(parse_launch_order("hilbert:4"), Catch::Contains("takes no"));
  CHECK(all_launch_orders(false).size() == 7);
}

TEST_CASE("tile_at_trips counts the scheduler's loop trips") {
  const std::vector<int> one_row_each = prefix(std::vector<int>(128, 1));
  const TileSpace experts{one_row_each.data(), 128, 128, 8};
  const std::vector<int> dense_rows = prefix({64});
  const TileSpace dense{dense_rows.data(), 1, 64, 64};
  // row_major divides: no loop but the binary search for the expert, none for one expert.
  CHECK(tile_at_trips({LaunchOrderKind::row_major, 8}, dense, 1000) == 0);
  CHECK(tile_at_trips({LaunchOrderKind::row_major, 8}, experts, 500) == 7); // log2(128) search steps
  // morton on 64 x 64: 6 levels of at most 4 quadrants, plus finding the enclosing square.
  const long long morton = tile_at_trips({LaunchOrderKind::morton, 8}, dense, 4095);
  CHECK(morton > 6);
  CHECK(morton <= 6 * 4 + 7);
  // interleaved: every step of the search over 128 rounds walks all 128 experts.
  CHECK(tile_at_trips({LaunchOrderKind::interleaved, 8}, experts, 1000) > 7 * 128);
  // expert_major walks the experts before the tile's own.
  CHECK(tile_at_trips({LaunchOrderKind::expert_major, 8}, experts, 8 * 100 + 3) == 100 + 7);
}
