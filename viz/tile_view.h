// What the heatmap and the timeline share: the results they draw, each tile's colour under the
// chosen metric and colour map (one scale for all results), the replay time and the selected tile.
#pragma once

#include "viz/tile_layout.h"

#include <QWidget>

#include <vector>

namespace tilesim::viz {

class TileView : public QWidget {
  Q_OBJECT
public:
  explicit TileView(QWidget *parent = nullptr);

  void set_results(std::vector<OpenResultPtr> results);
  void set_metric(const QString &id);      // throws std::invalid_argument for an unknown id
  void set_color_map(const QString &name); // the same for an unknown map
  void set_time_ns(double t);
  void set_selected(int row, int col);

  const QString &metric() const { return metric_; }
  const TileColors &colors() const { return colors_; }

signals:
  void tileClicked(int row, int col);

protected:
  // Called by set_results before the colours are worked out: lay out, or drop what cannot be drawn.
  virtual void results_changed() {}

  std::vector<OpenResultPtr> results_;
  TileColors colors_;
  double time_ns_ = 0;
  int selected_row_ = -1, selected_col_ = -1;
  QString map_ = "viridis";

private:
  void recolor();

  QString metric_ = "l2_hit_rate";
};

} // namespace tilesim::viz
