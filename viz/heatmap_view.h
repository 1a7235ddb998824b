// The L2 heatmap: each open result's output-tile grid side by side (predicted, measured), each
// tile coloured by a metric once finished at the replay time, outlined while running, blank
// before it starts; expert bands labelled; a legend with the scale and its unit.
#pragma once

#include "viz/tile_view.h"

#include <vector>

namespace tilesim::viz {

class HeatmapView : public TileView {
  Q_OBJECT
public:
  explicit HeatmapView(QWidget *parent = nullptr);

  int panels() const { return static_cast<int>(results_.size()); }
  TileState state_of(int panel, int row, int col) const;
  QRectF tile_rect(int panel, int row, int col) const;
  QString hover_text(QPointF pos) const;
  // What a panel says above (or, without tiles, instead of) its grid; "" when nothing.
  QString message(int panel) const;

protected:
  void results_changed() override;
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
  void relayout();
  bool hit(QPointF pos, int &panel, int &row, int &col) const;
  void paint_panel(QPainter &p, int i) const;
  void paint_legend(QPainter &p) const;

  std::vector<TileGrid> grids_;
  std::vector<Panel> panels_;
};

} // namespace tilesim::viz
