#include "viz/main_window.h"
#include "viz_test_data.h"

#include <catch2/catch.hpp>

#include <QTest>
#include <QToolTip>

using namespace tilesim::viz;
using tilesim::viz::test::data;

// small_simulated.json: experts of 128 and 256 tokens, 128x128 tiles, N 256: a 3x2 grid, expert 0
// on row 0, expert 1 on rows 1-2. Tile (row, col): start-end ns:
// (0,0) 0-100, (0,1) 0-120, (1,0) 100-250, (1,1) 120-260, (2,0) 0-300, (2,1) 250-400.
TEST_CASE("heatmap: moving the slider finishes, runs and hides the tiles it should", "[viz][heatmap]") {
  MainWindow w;
  w.resize(1280, 800);
  REQUIRE(w.open_file(data("small_simulated.json")));
  HeatmapView *h = w.heatmap();
  REQUIRE(h->panels() == 1);
  CHECK(w.replay_end() == 400);
  CHECK(w.slider()->maximum() == 400);

  w.slider()->setValue(150); // as dragging the slider does
  CHECK(w.time_ns() == 150);
  CHECK(h->state_of(0, 0, 0) == TileState::finished);    // ended at 100
  CHECK(h->state_of(0, 0, 1) == TileState::finished);    // ended at 120
  CHECK(h->state_of(0, 1, 0) == TileState::running);     // 100-250
  CHECK(h->state_of(0, 1, 1) == TileState::running);     // 120-260
  CHECK(h->state_of(0, 2, 0) == TileState::running);     // 0-300
  CHECK(h->state_of(0, 2, 1) == TileState::not_started); // starts at 250

  w.slider()->setValue(260); // a tile that ends exactly now is finished
  CHECK(h->state_of(0, 1, 1) == TileState::finished);
  CHECK(h->state_of(0, 2, 1) == TileState::running);
  w.slider()->setValue(0);
  CHECK(h->state_of(0, 0, 0) == TileState::running);
  CHECK(h->state_of(0, 1, 0) == TileState::not_started);
}

TEST_CASE("heatmap: hover text of a known tile, click selects it everywhere", "[viz][heatmap]") {
  MainWindow w;
  w.resize(1280, 800);
  REQUIRE(w.open_file(data("small_simulated.json")));
  w.show();
  REQUIRE(QTest::qWaitForWindowExposed(&w));
  HeatmapView *h = w.heatmap();
  const QRectF cell = h->tile_rect(0, 1, 0);
  REQUIRE(cell.width() > 4);
  const QString text = h->hover_text(cell.center());
  CHECK(text.contains("row 1, col 0, expert 1, #2 in the order"));
  CHECK(text.contains("SM 0"));
  CHECK(text.contains("start 100 ns, end 250 ns (150 ns)"));
  CHECK(text.contains("A: 0 hit / 40 miss sectors; B: 20 hit / 20 miss sectors"));
  CHECK(h->hover_text(QPointF(2, 2)).isEmpty());

  QTest::mouseMove(h, cell.center().toPoint());
  CHECK(QToolTip::text() == text); // the mouse brings up the same text
  QTest::mouseClick(h, Qt::LeftButton, {}, cell.center().toPoint());
  CHECK(w.selection_text().contains("simulated tile row 1, col 0"));
  CHECK(w.compare()->scatter()->points().empty()); // nothing measured to select a point in
}

TEST_CASE("heatmap: metrics colour on one scale with the right range", "[viz][heatmap]") {
  MainWindow w;
  REQUIRE(w.open_file(data("small_simulated.json")));
  HeatmapView *h = w.heatmap();
  SECTION("L2 hit rate: tile (1,0) and (2,0) hit 25% of their sectors, (0,1) all of them") {
    w.set_metric("l2_hit_rate");
    CHECK(h->colors().min == Approx(25));
    CHECK(h->colors().max == Approx(100));
    CHECK(h->colors().colors[0][1] == color_map("viridis").at(1.0)); // (0,1) at the top
    CHECK(h->colors().colors[0][2] == color_map("viridis").at(0.0)); // (1,0) at the bottom
  }
  SECTION("DRAM sectors: misses of A and B, 30 for (0,0), 0 for (0,1), 60 for (1,1)... range 0..40+40") {
    w.set_metric("dram_sectors");
    CHECK(h->colors().min == Approx(0));
    CHECK(h->colors().max == Approx(60)); // (1,0): 40 + 20, (1,1): 30 + 10, (2,0): 20 + 40
  }
  SECTION("end time in microseconds: 0.1 .. 0.4") {
    w.set_metric("end");
    CHECK(h->colors().min == Approx(0.1));
    CHECK(h->colors().max == Approx(0.4));
  }
  SECTION("GPC and L2 partition come from the h100 profile's maps") {
    w.set_metric("gpc");
    CHECK(h->colors().any);
    CHECK(h->message(0).isEmpty());
  }
}

TEST_CASE("heatmap: a predicted and a measured result of one configuration open side by side", "[viz][heatmap]") {
  MainWindow w;
  w.resize(1280, 800);
  REQUIRE(w.open_file(data("small_simulated.json")));
  REQUIRE(w.open_file(data("small_measured.json")));
  CHECK(w.document_count() == 1);
  REQUIRE(w.heatmap()->panels() == 2);
  // Measured tiles start 50 ns and end 60 ns later: at 110 ns (0,0) is finished predicted, running measured.
  w.set_time_ns(110);
  CHECK(w.heatmap()->state_of(0, 0, 0) == TileState::finished);
  CHECK(w.heatmap()->state_of(1, 0, 0) == TileState::running);
  // The measured run has no per-tile sectors: its panel says so and what to pick instead.
  w.set_metric("l2_hit_rate");
  CHECK(w.heatmap()->message(0).isEmpty());
  CHECK(w.heatmap()->message(1).contains("no per-tile L2 sectors"));
  CHECK(w.heatmap()->message(1).contains("pick start"));
  w.set_metric("sm"); // measured SMs are 3 more than predicted: 0..2 and 3..5 on one scale
  CHECK(w.heatmap()->colors().min == 0);
  CHECK(w.heatmap()->colors().max == 5);
}

TEST_CASE("heatmap: play advances the replay, pause holds it, the end stops it", "[viz][heatmap]") {
  MainWindow w;
  REQUIRE(w.open_file(data("small_simulated.json")));
  REQUIRE(w.time_ns() == 400); // a result opens at the end of its run: every tile finished
  w.play();
  CHECK(w.playing());
  CHECK(w.time_ns() == 0); // playing from the end starts again at 0
  REQUIRE(QTest::qWaitFor([&] { return w.time_ns() > 0; }, 2000));
  w.pause();
  const double held = w.time_ns();
  QTest::qWait(100);
  CHECK(w.time_ns() == held);
  w.set_time_ns(390);
  w.play();
  REQUIRE(QTest::qWaitFor([&] { return !w.playing(); }, 2000));
  CHECK(w.time_ns() == 400);
}
