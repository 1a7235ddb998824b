// The timeline: one row per SM, a bar per tile from its start to its end, coloured like the
// heatmap; with a predicted and a measured result, the predicted lane sits above the measured
// one in every SM's row. Mouse wheel zooms about the cursor, dragging pans; keys: + and - zoom,
// left and right pan, Home fits the whole run. The replay time is a vertical line.
#pragma once

#include "viz/tile_view.h"

#include <vector>

namespace tilesim::viz {

class TimelineView : public TileView {
  Q_OBJECT
public:
  explicit TimelineView(QWidget *parent = nullptr);

  // The visible time window, ns.
  double view_start_ns() const { return view_start_; }
  double view_end_ns() const { return view_end_; }
  void zoom(double factor, double anchor_ns); // factor > 1 zooms in
  void pan(double ns);
  void fit();
  int sm_rows() const { return sm_count_; }
  double lane_height() const; // each result's share of an SM's row
  QRectF bar_rect(int result, int tile) const;
  QString hover_text(QPointF pos) const;

protected:
  void results_changed() override;
  void paintEvent(QPaintEvent *) override;
  void wheelEvent(QWheelEvent *e) override;
  void mousePressEvent(QMouseEvent *e) override;
  void mouseMoveEvent(QMouseEvent *e) override;
  void mouseReleaseEvent(QMouseEvent *e) override;
  void keyPressEvent(QKeyEvent *e) override;

private:
  QRectF plot() const;
  double x_of(double ns) const;
  double ns_of(double x) const;
  bool hit(QPointF pos, int &result, int &tile) const;
  void paint_axis(QPainter &p) const;

  int sm_count_ = 0;
  double end_ns_ = 0;
  double view_start_ = 0, view_end_ = 1;
  bool dragging_ = false;
  double drag_x_ = 0;
};

} // namespace tilesim::viz
