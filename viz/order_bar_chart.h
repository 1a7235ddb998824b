// Kernel time per launch order, predicted and measured bars side by side, for every open result
// of one configuration (QPainter). Says why when fewer than two orders are open.
#pragma once

#include "viz/open_result.h"

#include <QWidget>

#include <optional>
#include <vector>

namespace tilesim::viz {

struct OrderTimes {
  QString order;
  std::optional<double> predicted_ms, measured_ms;
};

// One entry per order among `results`, in first-seen order; a later result of the same order
// and source replaces the earlier (a What-if rerun).
std::vector<OrderTimes> order_times(const std::vector<OpenResultPtr> &results);

class OrderBarChart : public QWidget {
  Q_OBJECT
public:
  explicit OrderBarChart(QWidget *parent = nullptr);
  void set_results(const std::vector<OpenResultPtr> &results);
  const std::vector<OrderTimes> &entries() const { return entries_; }

protected:
  void paintEvent(QPaintEvent *) override;

private:
  std::vector<OrderTimes> entries_;
};

} // namespace tilesim::viz
