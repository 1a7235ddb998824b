#include "viz/order_bar_chart.h"

#include <QPainter>

#include <algorithm>

namespace tilesim::viz {
namespace {

const QColor kPredicted(0, 114, 178); // Okabe-Ito blue
const QColor kMeasured(230, 159, 0);  // Okabe-Ito orange

} // namespace

std::vector<OrderTimes> order_times(const std::vector<OpenResultPtr> &results) {
  std::vector<OrderTimes> out;
  for (const auto &r : results) {
    const QString order = QString::fromStdString(r->result.order);
    auto it = std::find_if(out.begin(), out.end(), [&](const OrderTimes &e) { return e.order == order; });
    if (it == out.end()) it = out.insert(out.end(), {order, std::nullopt, std::nullopt});
    (r->simulated() ? it->predicted_ms : it->measured_ms) = r->result.time_ms;
  }
  return out;
}

OrderBarChart::OrderBarChart(QWidget *parent) : QWidget(parent) { setMinimumSize(240, 160); }

void OrderBarChart::set_results(const std::vector<OpenResultPtr> &results) {
  entries_ = order_times(results);
  update();
}

void OrderBarChart::paintEvent(QPaintEvent *) {
  QPainter p(this);
  p.fillRect(rect(), palette().base());
  p.setPen(palette().text().color());
  if (entries_.size() < 2) {
    p.drawText(rect().adjusted(8, 8, -8, -8), Qt::AlignCenter | Qt::TextWordWrap,
               "Per-order chart: open results of this configuration in other launch orders, or run them in the "
               "What-if tab.");
    return;
  }
  double top = 0;
  for (const auto &e : entries_) top = std::max({top, e.predicted_ms.value_or(0), e.measured_ms.value_or(0)});
  const QRectF plot(56, 24, width() - 70, height() - 64);
  p.drawText(QRectF(0, 2, width(), 18), Qt::AlignCenter, "kernel time per launch order (ms)");
  p.fillRect(QRectF(width() - 190, 4, 10, 10), kPredicted);
  p.drawText(QRectF(width() - 176, 0, 70, 18), Qt::AlignLeft | Qt::AlignVCenter, "predicted");
  p.fillRect(QRectF(width() - 100, 4, 10, 10), kMeasured);
  p.drawText(QRectF(width() - 86, 0, 80, 18), Qt::AlignLeft | Qt::AlignVCenter, "measured");
  p.drawLine(plot.bottomLeft(), plot.bottomRight());
  p.drawText(QRectF(0, plot.top() - 8, 50, 16), Qt::AlignRight, QString::number(top, 'g', 4));
  p.drawText(QRectF(0, plot.bottom() - 8, 50, 16), Qt::AlignRight, "0");
  const double slot = plot.width() / static_cast<double>(entries_.size());
  for (size_t i = 0; i < entries_.size(); ++i) {
    const auto &e = entries_[i];
    const double x = plot.left() + i * slot + slot * 0.1;
    const double bar_w = slot * 0.4;
    const auto bar = [&](const std::optional<double> &ms, double left, const QColor &c) {
      if (!ms || top <= 0) return;
      const double h = *ms / top * plot.height();
      p.fillRect(QRectF(left, plot.bottom() - h, bar_w, h), c);
    };
    bar(e.predicted_ms, x, kPredicted);
    bar(e.measured_ms, x + bar_w, kMeasured);
    p.drawText(QRectF(plot.left() + i * slot, plot.bottom() + 4, slot, 32),
               Qt::AlignHCenter | Qt::AlignTop | Qt::TextWordWrap, e.order);
  }
}

} // namespace tilesim::viz
