#include "viz/timeline_view.h"

#include <QKeyEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>
#include <QWheelEvent>

#include <algorithm>
#include <cmath>

namespace tilesim::viz {
namespace {

constexpr double kLeft = 64; // SM labels
constexpr double kTop = 40;  // lane legend and time axis
constexpr double kBottom = 8;
constexpr double kRight = 12;

} // namespace

TimelineView::TimelineView(QWidget *parent) : TileView(parent) { setFocusPolicy(Qt::StrongFocus); }

void TimelineView::results_changed() {
  std::erase_if(results_, [](const OpenResultPtr &r) { return !r->has_tiles(); });
  sm_count_ = 0;
  // Every SM of the GPU gets a row, idle ones too; a result of an unknown GPU, those that ran tiles.
  for (const auto &r : results_) {
    sm_count_ = std::max(sm_count_, r->maps.sm_count);
    for (const auto &t : r->result.tiles) sm_count_ = std::max(sm_count_, t.sm + 1);
  }
  end_ns_ = replay_end_ns(results_);
  fit();
}

void TimelineView::fit() {
  view_start_ = 0;
  view_end_ = std::max(1.0, end_ns_);
  update();
}

void TimelineView::zoom(double factor, double anchor_ns) {
  const double span = (view_end_ - view_start_) / factor;
  if (span < 10 || span > 4 * std::max(1.0, end_ns_)) return; // 10 ns is below any tile
  const double f = (anchor_ns - view_start_) / (view_end_ - view_start_);
  view_start_ = anchor_ns - f * span;
  view_end_ = view_start_ + span;
  update();
}

void TimelineView::pan(double ns) {
  view_start_ += ns;
  view_end_ += ns;
  update();
}

QRectF TimelineView::plot() const { return QRectF(kLeft, kTop, width() - kLeft - kRight, height() - kTop - kBottom); }

double TimelineView::x_of(double ns) const {
  const QRectF r = plot();
  return r.left() + (ns - view_start_) / (view_end_ - view_start_) * r.width();
}

double TimelineView::ns_of(double x) const {
  const QRectF r = plot();
  return view_start_ + (x - r.left()) / r.width() * (view_end_ - view_start_);
}

double TimelineView::lane_height() const {
  return plot().height() / std::max(1, sm_count_) / std::max<double>(1, static_cast<double>(results_.size()));
}

QRectF TimelineView::bar_rect(int result, int tile) const {
  const TileRecord &t = results_.at(result)->result.tiles.at(tile);
  const double lane_h = lane_height();
  const double y = plot().top() + (t.sm * static_cast<double>(results_.size()) + result) * lane_h;
  return QRectF(QPointF(x_of(t.start_ns), y), QPointF(x_of(t.end_ns), y + std::max(1.0, lane_h - 0.5)));
}

bool TimelineView::hit(QPointF pos, int &result, int &tile) const {
  if (!plot().contains(pos)) return false;
  for (size_t r = 0; r < results_.size(); ++r)
    for (size_t i = 0; i < results_[r]->result.tiles.size(); ++i)
      if (bar_rect(static_cast<int>(r), static_cast<int>(i)).contains(pos)) {
        result = static_cast<int>(r);
        tile = static_cast<int>(i);
        return true;
      }
  return false;
}

QString TimelineView::hover_text(QPointF pos) const {
  int r = 0, i = 0;
  if (!hit(pos, r, i)) return {};
  return describe_tile(*results_[r], results_[r]->result.tiles[i]);
}

void TimelineView::paintEvent(QPaintEvent *) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  p.setPen(palette().text().color());
  if (results_.empty()) {
    p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
               "No per-tile records to draw: open a simulated result (tilesim simulate --out) or a measured one "
               "taken with tilesim-measure --trace.");
    return;
  }
  const QRectF area = plot();
  const double row_h = area.height() / std::max(1, sm_count_);
  const int label_every = std::max(1, static_cast<int>(std::ceil(14 / row_h)));
  for (int sm = 0; sm < sm_count_; sm += label_every)
    p.drawText(QRectF(0, area.top() + sm * row_h - 7 + row_h / 2, kLeft - 6, 14), Qt::AlignRight | Qt::AlignVCenter,
               QString("SM %1").arg(sm));
  p.save();
  p.setClipRect(area);
  const QColor unknown(170, 170, 170);
  for (size_t r = 0; r < results_.size(); ++r) {
    const auto &tiles = results_[r]->result.tiles;
    const auto &colors = colors_.colors[r];
    for (size_t i = 0; i < tiles.size(); ++i) {
      if (tiles[i].end_ns < view_start_ || tiles[i].start_ns > view_end_) continue;
      const QRectF bar = bar_rect(static_cast<int>(r), static_cast<int>(i));
      p.fillRect(bar.adjusted(0, 0, -0.5, 0), colors.empty() || !colors[i].isValid() ? unknown : colors[i]);
      if (tiles[i].row == selected_row_ && tiles[i].col == selected_col_) {
        p.setPen(QPen(Qt::black, 2));
        p.drawRect(bar);
      }
    }
  }
  p.setPen(QPen(QColor(213, 94, 0), 2)); // Okabe-Ito vermilion: apart from both colour maps
  p.drawLine(QPointF(x_of(time_ns_), area.top()), QPointF(x_of(time_ns_), area.bottom()));
  p.restore();
  paint_axis(p);
}

void TimelineView::paint_axis(QPainter &p) const {
  const QRectF area = plot();
  p.setPen(palette().text().color());
  QStringList lanes;
  for (const auto &r : results_) lanes << QString::fromStdString(r->result.source);
  p.drawText(QRectF(kLeft, 0, area.width(), 18), Qt::AlignLeft | Qt::AlignVCenter,
             "lanes in each SM row, top to bottom: " + lanes.join(", ") + "   (wheel: zoom, drag: pan, Home: fit)");
  // Ticks at 1, 2 or 5 times a power of ten, about every 100 pixels.
  const double span = view_end_ - view_start_;
  const double raw = span / std::max(1.0, area.width() / 100);
  const double pow10 = std::pow(10, std::floor(std::log10(raw)));
  const double step = raw / pow10 < 2 ? pow10 : raw / pow10 < 5 ? 2 * pow10 : 5 * pow10;
  for (double t = std::ceil(view_start_ / step) * step; t <= view_end_; t += step) {
    const double x = x_of(t);
    p.drawLine(QPointF(x, kTop - 4), QPointF(x, kTop));
    p.drawText(QRectF(x - 50, 18, 100, 16), Qt::AlignCenter, QString("%1 µs").arg(t / 1000, 0, 'g', 5));
  }
  p.drawLine(QPointF(area.left(), kTop), QPointF(area.right(), kTop));
}

void TimelineView::wheelEvent(QWheelEvent *e) {
  const double steps = e->angleDelta().y() / 120.0;
  if (steps != 0) zoom(std::pow(1.25, steps), ns_of(e->position().x()));
  e->accept();
}

void TimelineView::mousePressEvent(QMouseEvent *e) {
  if (e->button() != Qt::LeftButton) return;
  int r = 0, i = 0;
  if (hit(e->position(), r, i)) {
    const TileRecord &t = results_[r]->result.tiles[i];
    emit tileClicked(t.row, t.col);
  }
  dragging_ = true;
  drag_x_ = e->position().x();
}

void TimelineView::mouseMoveEvent(QMouseEvent *e) {
  if (dragging_) {
    const double dx = e->position().x() - drag_x_;
    drag_x_ = e->position().x();
    pan(-dx / plot().width() * (view_end_ - view_start_));
    return;
  }
  const QString text = hover_text(e->position());
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(e->globalPosition().toPoint(), text, this);
}

void TimelineView::mouseReleaseEvent(QMouseEvent *) { dragging_ = false; }

void TimelineView::keyPressEvent(QKeyEvent *e) {
  const double span = view_end_ - view_start_;
  const double middle = view_start_ + span / 2;
  switch (e->key()) {
  case Qt::Key_Plus:
  case Qt::Key_Equal:
    zoom(1.5, middle);
    break;
  case Qt::Key_Minus:
    zoom(1 / 1.5, middle);
    break;
  case Qt::Key_Left:
    pan(-span / 10);
    break;
  case Qt::Key_Right:
    pan(span / 10);
    break;
  case Qt::Key_Home:
    fit();
    break;
  default:
    QWidget::keyPressEvent(e);
  }
}

} // namespace tilesim::viz
