#include "viz/main_window.h"
#include "viz_test_data.h"

#include <catch2/catch.hpp>

using namespace tilesim::viz;
using tilesim::viz::test::data;

namespace {
QString cell(const CompareView *c, int row, int col) { return c->table()->item(row, col)->text(); }
} // namespace

TEST_CASE("compare: the metrics table and its errors", "[viz][compare]") {
  MainWindow w;
  REQUIRE(w.open_file(data("small_measured.json")));
  REQUIRE(w.open_file(data("small_simulated.json"))); // joins the measured one's document
  REQUIRE(w.document_count() == 1);
  const CompareView *c = w.compare();
  // Predicted 0.0004 ms against measured 0.0005 ms: -20.0%.
  CHECK(cell(c, 0, 0) == "0.0004");
  CHECK(cell(c, 0, 1) == "0.0005");
  CHECK(cell(c, 0, 2) == "-20.0%");
  CHECK(cell(c, 1, 2) == "+25.0%"); // TFLOP/s 2.0 / 1.6
  CHECK(cell(c, 2, 0) == "50.0");
  CHECK(cell(c, 2, 1) == "60.0");
  CHECK(cell(c, 2, 2) == "-10.0 pt"); // L2 hit rate 50% against 60%
  CHECK(cell(c, 3, 2) == "-20.0%");   // DRAM read 1.0 GB against 1.25 GB
  CHECK(cell(c, 4, 2) == "+25.0%");   // DRAM write 0.5 GB against 0.4 GB
  CHECK(cell(c, 5, 0) == "800");
  CHECK(cell(c, 5, 2) == "-20.0%"); // L2 read sectors 800 against 1000

  // Start-time scatter: the measured trace starts each tile 50 ns later.
  REQUIRE(c->scatter()->points().size() == 6);
  for (const QPointF &p : c->scatter()->points()) CHECK(p.x() - p.y() == Approx(0.05)); // µs
  CHECK(c->bars()->entries().size() == 1);                                              // one order open
}

TEST_CASE("compare: only one side open, or a measurement without a trace", "[viz][compare]") {
  MainWindow w;
  SECTION("predicted alone") {
    REQUIRE(w.open_file(data("small_simulated.json")));
    CHECK(cell(w.compare(), 0, 0) == "0.0004");
    CHECK(cell(w.compare(), 0, 1) == "-");
    CHECK(cell(w.compare(), 0, 2) == "-");
    CHECK(w.compare()->note().contains("open the measured one"));
  }
  SECTION("measured without a per-tile trace: totals compare, the scatter says why it is empty") {
    const QString measured = tilesim::viz::test::dataset("dense4096_t128x128_np_row_major.json");
    REQUIRE(w.open_file(measured));
    tilesim::KernelResult p = tilesim::load_kernel_result(measured.toStdString());
    p.source = "simulated";
    p.time_ms *= 1.1;
    w.add_result(make_open_result(p, "predicted"));
    REQUIRE(w.document_count() == 1);
    CHECK(cell(w.compare(), 0, 2) == "+10.0%");
    CHECK(w.compare()->scatter()->points().empty());
    CHECK(w.compare()->scatter()->message().contains("no per-tile trace"));
    CHECK(w.compare()->scatter()->message().contains(measured));
  }
}

TEST_CASE("compare: per-order bars gather every open order of the configuration", "[viz][compare]") {
  MainWindow w;
  REQUIRE(w.open_file(data("small_simulated.json")));
  REQUIRE(w.open_file(data("small_measured.json")));
  tilesim::KernelResult other = tilesim::load_kernel_result(data("small_simulated.json").toStdString());
  other.order = "column_major";
  other.time_ms = 0.0003;
  w.add_result(make_open_result(other, "column_major"));
  REQUIRE(w.document_count() == 2);
  const auto &bars = w.compare()->bars()->entries();
  REQUIRE(bars.size() == 2);
  CHECK(bars[0].order == "row_major");
  CHECK(*bars[0].predicted_ms == 0.0004);
  CHECK(*bars[0].measured_ms == 0.0005);
  CHECK(bars[1].order == "column_major");
  CHECK(*bars[1].predicted_ms == 0.0003);
  CHECK_FALSE(bars[1].measured_ms);
}
