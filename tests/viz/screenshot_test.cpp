#include "viz/open_result.h"
#include "viz/screenshot.h"
#include "viz_test_data.h"

#include <catch2/catch.hpp>

#include <QDir>
#include <QImage>

#include <sstream>

using namespace tilesim::viz;
using tilesim::viz::test::data;

TEST_CASE("screenshot: renders the chosen view to a PNG of the window's size", "[viz][screenshot]") {
  const QString out = QDir::tempPath() + "/tilesim_viz_test_shot.png";
  QFile::remove(out);
  const ViewerOptions o = parse_viewer_options({"tilesim-viewer", "--screenshot", out, "--view", "timeline", "--metric",
                                                "start", "--time-ns", "150", "--size", "800x600",
                                                data("small_simulated.json"), data("small_measured.json")});
  std::ostringstream err;
  REQUIRE(run_screenshot(o, err) == 0);
  CHECK(err.str().empty());
  const QImage image(out);
  CHECK(image.width() == 800);
  CHECK(image.height() == 600);
}

TEST_CASE("screenshot: bad input is one line on stderr and exit 1", "[viz][screenshot]") {
  std::ostringstream err;
  SECTION("not a result") {
    const ViewerOptions o =
        parse_viewer_options({"tilesim-viewer", "--screenshot", "/tmp/x.png", data("not_result.json")});
    CHECK(run_screenshot(o, err) == 1);
    CHECK(err.str().starts_with("tilesim-viewer: " + data("not_result.json").toStdString() + ": schema"));
  }
  SECTION("an unwritable PNG") {
    const ViewerOptions o =
        parse_viewer_options({"tilesim-viewer", "--screenshot", "/no/such/dir/x.png", data("small_simulated.json")});
    CHECK(run_screenshot(o, err) == 1);
    CHECK(err.str().find("--screenshot: cannot write the PNG") != std::string::npos);
  }
  const std::string line = err.str();
  CHECK(std::count(line.begin(), line.end(), '\n') == 1);
}

TEST_CASE("viewer options: unknown views, metrics, maps, times and sizes name the option and the fix",
          "[viz][options]") {
  const auto error = [](QStringList args) {
    args.prepend("tilesim-viewer");
    try {
      parse_viewer_options(args);
    } catch (const ViewerError &e) {
      return std::string(e.what());
    }
    return std::string();
  };
  CHECK(error({"--screenshot", "a.png", "--view", "map", "r.json"}).starts_with("--view: 'map' is not a view"));
  CHECK(error({"--metric", "hits"}).starts_with("--metric: unknown metric 'hits'"));
  CHECK(error({"--colormap", "jet"}).starts_with("--colormap: unknown colour map 'jet'"));
  CHECK(error({"--time-ns", "-5"}).starts_with("--time-ns: '-5' is not a time"));
  CHECK(error({"--size", "10x10"}).starts_with("--size: '10x10' is not a size"));
  CHECK(error({"--screenshot", "a.png"}).starts_with("--screenshot: no result file given"));
  CHECK(error({"--bogus"}).find("--help") != std::string::npos);
  const ViewerOptions o = parse_viewer_options({"tilesim-viewer", "a.json", "b.json", "--time-ns", "2500"});
  CHECK(o.files == QStringList{"a.json", "b.json"});
  CHECK(*o.time_ns == 2500);
  CHECK(o.size == QSize(1280, 800));
}
