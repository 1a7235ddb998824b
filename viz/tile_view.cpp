#include "viz/tile_view.h"

namespace tilesim::viz {

TileView::TileView(QWidget *parent) : QWidget(parent) {
  setMouseTracking(true);
  setMinimumSize(320, 240);
}

void TileView::set_results(std::vector<OpenResultPtr> results) {
  results_ = std::move(results);
  results_changed();
  recolor();
  update();
}

void TileView::set_metric(const QString &id) {
  metric_ = tile_metric(id).id; // throws for an unknown id
  recolor();
  update();
}

void TileView::set_color_map(const QString &name) {
  map_ = color_map(name).name(); // throws for an unknown map
  recolor();
  update();
}

void TileView::set_time_ns(double t) {
  time_ns_ = t;
  update();
}

void TileView::set_selected(int row, int col) {
  selected_row_ = row;
  selected_col_ = col;
  update();
}

void TileView::recolor() { colors_ = color_tiles(results_, tile_metric(metric_), color_map(map_)); }

} // namespace tilesim::viz
