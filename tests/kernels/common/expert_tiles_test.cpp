// kernels/common/expert_tiles.h: the tile space the grouped kernels walk, worked by hand.
#include "kernels/common/expert_tiles.h"

#include <catch2/catch.hpp>

using tilesim::kernels::expert_tiles;
using tilesim::kernels::KernelError;

TEST_CASE("ragged and zero-token experts: tile rows and token offsets", "[expert_tiles]") {
  // 300 tokens = 3 tiles of 128, 0 = none, 129 = 2, 1 = 1; n = 520 in 64-wide columns = 9.
  const auto t = expert_tiles({300, 0, 129, 1}, 128, 520, 64, "P");
  CHECK(t.offsets == std::vector<int>{0, 3, 3, 5, 6, 0, 300, 300, 429, 430});
  CHECK(t.total_tokens == 430);
  CHECK(t.tile_cols == 9);
  CHECK(t.tiles == 54);
}

TEST_CASE("bad token counts are refused by field", "[expert_tiles]") {
  CHECK_THROWS_WITH(expert_tiles({16, -1}, 16, 64, 64, "MixedInputProblem"),
                    "MixedInputProblem: tokens_per_expert[1] = -1 is negative");
  CHECK_THROWS_AS(expert_tiles({2000000000, 2000000000}, 16, 64, 64, "P"), KernelError);
}
