// The timeline: one row per SM, a bar per tile from its start to its end, coloured like the
// heatmap; with a predicted and a measured result, the predicted lane sits above the measured
// one in every SM's row. Mouse wheel zooms about the cursor, dragging pans; keys: + and - zoom,
// left and right pan, Home fits the whole run. The replay time is a vertical line.
#pragma once

#include "viz/tile_layout.h"

#include <QWidget>

#include <vector>

namespace tilesim::viz {

class TimelineView : public QWidget {
  Q_OBJECT
public:
  explicit TimelineView(QWidget *parent = nullptr);

  void set_results(std::vector<OpenResultPtr> results);
  void set_metric(const QString &id);
  void set_color_map(const QString &name);
  void set_time_ns(double t);
  void set_selected(int row, int col);

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

signals:
  void tileClicked(int row, int col);

protected:
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

  std::vector<OpenResultPtr> results_;
  TileColors colors_;
  QString metric_ = "l2_hit_rate";
  QString map_ = "viridis";
  int sm_count_ = 0;
  double end_ns_ = 0;
  double view_start_ = 0, view_end_ = 1;
  double time_ns_ = 0;
  int selected_row_ = -1, selected_col_ = -1;
  bool dragging_ = false;
  double drag_x_ = 0;
};

} // namespace tilesim::viz
