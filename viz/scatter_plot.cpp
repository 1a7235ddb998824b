#include "viz/scatter_plot.h"

#include <QPainter>

#include <algorithm>

namespace tilesim::viz {

ScatterPlot::ScatterPlot(QWidget *parent) : QWidget(parent) { setMinimumSize(240, 200); }

void ScatterPlot::set_points(std::vector<QPointF> points, QString x_label, QString y_label, QString title) {
  points_ = std::move(points);
  x_label_ = std::move(x_label);
  y_label_ = std::move(y_label);
  title_ = std::move(title);
  message_.clear();
  highlight_ = -1;
  update();
}

void ScatterPlot::set_message(QString message) {
  points_.clear();
  message_ = std::move(message);
  update();
}

void ScatterPlot::set_highlight(int index) {
  highlight_ = index;
  update();
}

void ScatterPlot::paintEvent(QPaintEvent *) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  p.setPen(palette().text().color());
  if (points_.empty()) {
    p.drawText(rect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap, message_);
    return;
  }
  double lo = points_.front().x(), hi = lo;
  for (const auto &q : points_) {
    lo = std::min({lo, q.x(), q.y()});
    hi = std::max({hi, q.x(), q.y()});
  }
  if (hi <= lo) hi = lo + 1;
  // One scale on both axes, so the diagonal is where prediction equals measurement.
  const double side = std::min(width() - 70.0, height() - 60.0);
  const QRectF plot(56, 24, side, side);
  const auto map = [&](QPointF q) {
    return QPointF(plot.left() + (q.x() - lo) / (hi - lo) * plot.width(),
                   plot.bottom() - (q.y() - lo) / (hi - lo) * plot.height());
  };
  p.drawText(QRectF(0, 2, width(), 18), Qt::AlignCenter, title_);
  p.drawRect(plot);
  p.setPen(QPen(Qt::gray, 1, Qt::DashLine));
  p.drawLine(plot.bottomLeft(), plot.topRight());
  p.setPen(palette().text().color());
  p.drawText(QRectF(plot.left(), plot.bottom() + 4, plot.width(), 16), Qt::AlignCenter, x_label_);
  p.drawText(QRectF(plot.left() - 50, plot.bottom(), 46, 16), Qt::AlignRight, QString::number(lo, 'g', 4));
  p.drawText(QRectF(plot.right() - 23, plot.bottom() + 18, 46, 16), Qt::AlignCenter, QString::number(hi, 'g', 4));
  p.drawText(QRectF(plot.left() - 50, plot.top(), 46, 16), Qt::AlignRight, QString::number(hi, 'g', 4));
  p.save();
  p.translate(12, plot.center().y());
  p.rotate(-90);
  p.drawText(QRectF(-plot.height() / 2, -8, plot.height(), 16), Qt::AlignCenter, y_label_);
  p.restore();
  p.setPen(Qt::NoPen);
  p.setBrush(QColor(0, 114, 178, 140)); // Okabe-Ito blue, translucent where points pile up
  for (const auto &q : points_) p.drawEllipse(map(q), 2.2, 2.2);
  if (highlight_ >= 0 && highlight_ < static_cast<int>(points_.size())) {
    p.setBrush(Qt::NoBrush);
    p.setPen(QPen(Qt::black, 2));
    p.drawEllipse(map(points_[highlight_]), 6, 6);
  }
}

} // namespace tilesim::viz
