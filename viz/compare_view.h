// Compare: predicted against measured for every total (time, TFLOP/s, L2 hit rate, DRAM read and
// write, L2 read sectors) with the error as `tilesim compare` computes it; a per-tile start-time
// scatter when the measurement has a trace; kernel time per order for the configuration.
#pragma once

#include "viz/order_bar_chart.h"
#include "viz/result_library.h"
#include "viz/scatter_plot.h"

#include <QLabel>
#include <QTableWidget>
#include <QWidget>

namespace tilesim::viz {

class CompareView : public QWidget {
  Q_OBJECT
public:
  explicit CompareView(QWidget *parent = nullptr);
  // `document` is what the table and the scatter show; `same_config` feeds the per-order chart.
  void set_document(const Document &document, const std::vector<OpenResultPtr> &same_config);
  void clear();
  void set_selected(int row, int col);

  const QTableWidget *table() const { return table_; }
  const ScatterPlot *scatter() const { return scatter_; }
  const OrderBarChart *bars() const { return bars_; }
  QString note() const { return note_->text(); }

private:
  QTableWidget *table_;
  QLabel *note_;
  ScatterPlot *scatter_;
  OrderBarChart *bars_;
  std::vector<std::pair<int, int>> scatter_tiles_; // (row, col) of each scatter point
};

} // namespace tilesim::viz
