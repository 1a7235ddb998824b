#include "viz/main_window.h"
#include "viz_test_data.h"

#include <catch2/catch.hpp>

#include <QMimeData>
#include <QSettings>
#include <QTest>
#include <QUrl>

using namespace tilesim::viz;
using tilesim::viz::test::data;

TEST_CASE("open: bad files leave one line naming the file, the field and the fix", "[viz][open]") {
  MainWindow w;
  SECTION("JSON that is not a result") {
    CHECK_FALSE(w.open_file(data("not_result.json")));
    CHECK(w.last_error().startsWith(data("not_result.json") +
                                    ": schema: is missing: this is not a tilesim.result/1 file; open a result"));
  }
  SECTION("a truncated file") {
    CHECK_FALSE(w.open_file(data("truncated.json")));
    CHECK(w.last_error().startsWith(data("truncated.json") + ":"));
  }
  SECTION("a missing file") {
    CHECK_FALSE(w.open_file(data("no_such_file.json")));
    CHECK(w.last_error().startsWith(data("no_such_file.json") + ":"));
  }
  CHECK_FALSE(w.last_error().contains('\n'));
  CHECK(w.document_count() == 0);
}

TEST_CASE("open: a good file after a bad one opens, the error stays in view", "[viz][open]") {
  MainWindow w;
  CHECK_FALSE(w.open_file(data("truncated.json")));
  CHECK(w.open_file(data("small_simulated.json")));
  CHECK(w.document_count() == 1);
  CHECK(w.last_error().startsWith(data("truncated.json")));
}

TEST_CASE("open: a result with no tiles shows its totals and says why there is no grid", "[viz][open]") {
  MainWindow w;
  REQUIRE(w.open_file(data("no_tiles.json")));
  const QString m = w.heatmap()->message(0);
  CHECK(m.contains(data("no_tiles.json")));
  CHECK(m.contains("tiles is empty"));
  CHECK(m.contains("simulate with --out"));
  CHECK(m.contains("time 0.0004 ms, 31.5 TFLOP/s, L2 hit rate 50.0%"));
  CHECK(w.replay_end() == 0);
  w.play(); // nothing to replay: nothing happens
  CHECK_FALSE(w.playing());
}

TEST_CASE("open: results of other configurations or orders get their own tabs", "[viz][open]") {
  MainWindow w;
  REQUIRE(w.open_file(data("small_simulated.json")));
  REQUIRE(w.open_file(tilesim::viz::test::dataset("dense8192_t128x256_p_grouped_m8.json")));
  CHECK(w.document_count() == 2);
  CHECK(w.current_document() == 1);
  CHECK(w.heatmap()->panels() == 1);
  w.close_document(1);
  CHECK(w.document_count() == 1);
  CHECK(w.replay_end() == 400);
}

TEST_CASE("open: drag and drop, and the recent-files list", "[viz][open]") {
  QSettings("tilesim", "tilesim-viewer").remove("recent");
  MainWindow w;
  QMimeData mime;
  mime.setUrls({QUrl::fromLocalFile(data("small_simulated.json")), QUrl::fromLocalFile(data("small_measured.json"))});
  w.show();
  QDragEnterEvent enter(QPoint(100, 100), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&w, &enter);
  CHECK(enter.isAccepted());
  QDropEvent drop(QPointF(100, 100), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
  QApplication::sendEvent(&w, &drop);
  CHECK(w.document_count() == 1);
  CHECK(w.heatmap()->panels() == 2);
  const QStringList recent = QSettings("tilesim", "tilesim-viewer").value("recent").toStringList();
  CHECK(recent == QStringList{data("small_measured.json"), data("small_simulated.json")});
}
