// The L2 heatmap: each open result's output-tile grid side by side (predicted, measured), each
// tile coloured by a metric once finished at the replay time, outlined while running, blank
// before it starts; expert bands labelled; a legend with the scale and its unit.
#pragma once

#include "viz/tile_layout.h"

#include <QWidget>

#include <vector>

namespace tilesim::viz {

class HeatmapView : public QWidget {
  Q_OBJECT
public:
  explicit HeatmapView(QWidget *parent = nullptr);

  void set_results(std::vector<OpenResultPtr> results);
  void set_metric(const QString &id);      // throws std::invalid_argument for an unknown id
  void set_color_map(const QString &name); // the same for an unknown map
  void set_time_ns(double t);
  void set_selected(int row, int col);

  const QString &metric() const { return metric_; }
  int panels() const { return static_cast<int>(results_.size()); }
  TileState state_of(int panel, int row, int col) const;
  QRectF tile_rect(int panel, int row, int col) const;
  QString hover_text(QPointF pos) const;
  // What a panel says above (or, without tiles, instead of) its grid; "" when nothing.
  QString message(int panel) const;
  const TileColors &colors() const { return colors_; }

signals:
  void tileClicked(int row, int col);

protected:
  void paintEvent(QPaintEvent *) override;
  void resizeEvent(QResizeEvent *) override;
  void mouseMoveEvent(QMouseEvent *e) override;
  void mousePressEvent(QMouseEvent *e) override;

private:
  struct Panel {
    QRectF frame; // the panel, title included
    QRectF grid;  // the tile area
    double cell_w = 0, cell_h = 0;
  };
  void recolor();
  void relayout();
  bool hit(QPointF pos, int &panel, int &row, int &col) const;
  void paint_panel(QPainter &p, int i) const;
  void paint_legend(QPainter &p) const;

  std::vector<OpenResultPtr> results_;
  std::vector<TileGrid> grids_;
  std::vector<Panel> panels_;
  TileColors colors_;
  QString metric_ = "l2_hit_rate";
  QString map_ = "viridis";
  double time_ns_ = 0;
  int selected_row_ = -1, selected_col_ = -1;
};

} // namespace tilesim::viz
