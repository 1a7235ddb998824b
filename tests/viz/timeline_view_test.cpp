#include "viz/main_window.h"
#include "viz_test_data.h"

#include <catch2/catch.hpp>

#include <QTest>

using namespace tilesim::viz;
using tilesim::viz::test::data;

TEST_CASE("timeline: a row per SM, predicted lane above measured, zoom and pan", "[viz][timeline]") {
  MainWindow w;
  w.resize(1280, 800);
  REQUIRE(w.open_file(data("small_simulated.json")));
  REQUIRE(w.open_file(data("small_measured.json")));
  w.set_view("timeline");
  TimelineView *t = w.timeline();
  CHECK(t->sm_rows() == 132); // the H100 profile's SMs, though only 0..5 ran tiles
  CHECK(t->view_start_ns() == 0);
  CHECK(t->view_end_ns() == 460); // the measured (2,1) ends at 400 + 60

  // Predicted (0,0) on SM 0 runs 0-100 ns; measured (0,0) on SM 3 runs 50-160 ns.
  const QRectF predicted = t->bar_rect(0, 0), measured = t->bar_rect(1, 0);
  CHECK(predicted.width() == Approx(measured.width() * 100.0 / 110.0).epsilon(0.01));
  CHECK(measured.left() > predicted.left());
  // SM rows are two lanes each, predicted on top: measured SM 3's lane is 3 rows + 1 lane lower.
  CHECK(measured.top() - predicted.top() == Approx(7 * t->lane_height()));
  CHECK(t->hover_text(predicted.center()).contains("row 0, col 0"));

  SECTION("wheel-free zoom about a point keeps that point in place") {
    t->zoom(2, 100);
    CHECK(t->view_end_ns() - t->view_start_ns() == Approx(230));
    CHECK(t->view_start_ns() == Approx(100 - 100.0 / 460 * 230));
  }
  SECTION("keys: + zooms in, Home fits, Right pans by a tenth") {
    QTest::keyClick(t, Qt::Key_Plus);
    CHECK(t->view_end_ns() - t->view_start_ns() == Approx(460 / 1.5));
    QTest::keyClick(t, Qt::Key_Home);
    CHECK(t->view_end_ns() == 460);
    QTest::keyClick(t, Qt::Key_Right);
    CHECK(t->view_start_ns() == Approx(46));
  }
  SECTION("dragging pans") {
    const QPoint from(600, 300);
    QTest::mousePress(t, Qt::LeftButton, {}, from);
    QTest::mouseMove(t, from - QPoint(100, 0));
    QTest::mouseRelease(t, Qt::LeftButton, {}, from - QPoint(100, 0));
    CHECK(t->view_start_ns() > 0);
  }
}

TEST_CASE("timeline: a measured result without a trace says what to do", "[viz][timeline]") {
  MainWindow w;
  REQUIRE(w.open_file(tilesim::viz::test::dataset("dense4096_t128x128_np_row_major.json")));
  CHECK(w.timeline()->sm_rows() == 0);
  CHECK(w.heatmap()->message(0).contains("no per-tile records"));
  CHECK(w.heatmap()->message(0).contains("measure with --trace"));
}
