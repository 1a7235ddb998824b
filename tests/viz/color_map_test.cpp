#include "viz/color_map.h"

#include <catch2/catch.hpp>

using namespace tilesim::viz;

TEST_CASE("colour maps: viridis and cividis from colormaps.json, interpolated", "[viz][colormap]") {
  CHECK(color_map_names() == QStringList{"viridis", "cividis"});
  const ColorMap &v = color_map("viridis");
  CHECK(v.at(0).name() == "#440154"); // matplotlib's first and last viridis entries
  CHECK(v.at(1).name() == "#fde725");
  CHECK(v.at(0.5).name() == "#21918c"); // sample 16 of 32
  CHECK(v.at(-1) == v.at(0));
  CHECK(v.at(2) == v.at(1));
  // Halfway between samples 0 (#440154) and 1 (#470d60): red 0x44..0x47, green 0x01..0x0d.
  const QColor mid = v.at(1.0 / 64);
  CHECK(mid.red() == Approx(69.5).margin(1));
  CHECK(mid.green() == Approx(7).margin(1));
  CHECK(color_map("cividis").at(0).name() == "#00224e");
  CHECK_THROWS_WITH(color_map("jet"), "unknown colour map 'jet'; use one of: viridis, cividis");
}
