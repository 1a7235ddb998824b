#include "viz/main_window.h"
#include "viz_test_data.h"

#include <catch2/catch.hpp>

#include <QTest>

using namespace tilesim::viz;
using tilesim::viz::test::data;

TEST_CASE("what-if: a run completes and opens each order as a tab", "[viz][whatif]") {
  MainWindow w;
  WhatIfPanel *p = w.whatif();
  p->set_gpu("h100");
  p->set_spec_path(data("whatif_small.json"));
  p->set_orders("row_major, column_major");
  REQUIRE(p->run());
  CHECK(p->running());
  REQUIRE(QTest::qWaitFor([&] { return !p->running(); }, 60000));
  CHECK(p->status() == "Done: 2 order(s) simulated; each opened as a tab.");
  CHECK(p->progress_percent() == 100);
  REQUIRE(w.document_count() == 2);
  // 1024 x 1024 in 128 x 128 tiles: 64 tiles each; both in the per-order chart.
  CHECK(w.library().documents()[0].results[0]->result.tiles.size() == 64);
  CHECK(w.library().documents()[1].results[0]->result.order == "column_major");
  CHECK(w.compare()->bars()->entries().size() == 2);
}

TEST_CASE("what-if: Cancel stops a long run between events", "[viz][whatif]") {
  MainWindow w;
  WhatIfPanel *p = w.whatif();
  p->set_spec_path(QString(TILESIM_SOURCE_DIR) + "/models/kernels/dense_8192.json"); // seconds per order
  p->set_orders("all");
  REQUIRE(p->run());
  p->cancel();
  REQUIRE(QTest::qWaitFor([&] { return !p->running(); }, 20000));
  CHECK(p->status() == "Cancelled after 0 order(s).");
  CHECK(w.document_count() == 0);
  // The panel runs again after a cancel.
  p->set_spec_path(data("whatif_small.json"));
  p->set_orders("hilbert");
  REQUIRE(p->run());
  REQUIRE(QTest::qWaitFor([&] { return !p->running(); }, 60000));
  CHECK(w.document_count() == 1);
}

TEST_CASE("what-if: bad input is one line naming the file, the field and the fix", "[viz][whatif]") {
  MainWindow w;
  WhatIfPanel *p = w.whatif();
  SECTION("a spec whose tile does not fit the GPU") {
    p->set_spec_path(data("whatif_too_big_tile.json"));
    p->set_orders("row_major");
    p->run(); // refused when the loader catches it, else the simulator does
    REQUIRE(QTest::qWaitFor([&] { return !p->running(); }, 20000));
    CHECK(p->status().contains("whatif_too_big_tile"));
    CHECK((p->status().contains("tile") || p->status().contains("stages")));
    CHECK(w.document_count() == 0);
  }
  SECTION("a missing spec file") {
    CHECK_FALSE(p->run());
    CHECK(p->status().contains("kernel spec: no file given"));
    p->set_spec_path(data("no_such_spec.json"));
    CHECK_FALSE(p->run());
    CHECK(p->status().contains("no_such_spec.json"));
  }
  SECTION("an unknown order") {
    p->set_spec_path(data("whatif_small.json"));
    p->set_orders("row_major, sideways");
    CHECK_FALSE(p->run());
    CHECK(p->status().contains("launch orders"));
    CHECK(p->status().contains("sideways"));
  }
  CHECK_FALSE(p->status().contains('\n'));
}
