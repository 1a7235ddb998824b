#include "viz/compare_view.h"

#include "validation/compare/fidelity.h"

#include <QHeaderView>
#include <QSplitter>
#include <QVBoxLayout>

#include <map>

namespace tilesim::viz {
namespace {

struct Row {
  const char *name;
  double (*value)(const KernelResult &);
  int decimals;
};

const Row kRows[] = {
    {"time (ms)", [](const KernelResult &r) { return r.time_ms; }, 4},
    {"TFLOP/s", [](const KernelResult &r) { return r.tflops; }, 1},
    {"L2 hit rate (%)", [](const KernelResult &r) { return 100 * r.l2_hit_rate; }, 1},
    {"DRAM read (GB)", [](const KernelResult &r) { return r.dram_read_bytes / 1e9; }, 4},
    {"DRAM write (GB)", [](const KernelResult &r) { return r.dram_write_bytes / 1e9; }, 4},
    {"L2 read sectors", [](const KernelResult &r) { return static_cast<double>(r.l2_read_sectors); }, 0},
};

QString error_text(int row, const ConfigurationError &e, const KernelResult &p, const KernelResult &m) {
  const auto percent = [](double x) { return QString("%1%").arg(100 * x, 0, 'f', 1).prepend(x >= 0 ? "+" : ""); };
  switch (row) {
  case 0:
    return percent(e.time_error);
  case 1:
    return percent(m.tflops > 0 ? p.tflops / m.tflops - 1 : 0);
  case 2:
    return QString("%1%2 pt").arg(e.l2_hit_points >= 0 ? "+" : "").arg(e.l2_hit_points, 0, 'f', 1);
  case 3:
    return percent(e.dram_read_error);
  case 4:
    return percent(e.dram_write_error);
  default:
    return percent(e.l2_read_sectors_error);
  }
}

} // namespace

CompareView::CompareView(QWidget *parent) : QWidget(parent) {
  table_ = new QTableWidget(std::size(kRows), 3, this);
  table_->setHorizontalHeaderLabels({"predicted", "measured", "error"});
  for (int i = 0; i < static_cast<int>(std::size(kRows)); ++i)
    table_->setVerticalHeaderItem(i, new QTableWidgetItem(kRows[i].name));
  table_->setEditTriggers(QAbstractItemView::NoEditTriggers);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Stretch);
  note_ = new QLabel(this);
  note_->setWordWrap(true);
  scatter_ = new ScatterPlot(this);
  bars_ = new OrderBarChart(this);
  auto *top = new QSplitter(Qt::Horizontal, this);
  auto *left = new QWidget(top);
  auto *left_layout = new QVBoxLayout(left);
  left_layout->setContentsMargins(0, 0, 0, 0);
  left_layout->addWidget(table_);
  left_layout->addWidget(note_);
  top->addWidget(left);
  top->addWidget(scatter_);
  auto *split = new QSplitter(Qt::Vertical, this);
  split->addWidget(top);
  split->addWidget(bars_);
  auto *layout = new QVBoxLayout(this);
  layout->addWidget(split);
  clear();
}

void CompareView::clear() {
  for (int r = 0; r < table_->rowCount(); ++r)
    for (int c = 0; c < 3; ++c) table_->setItem(r, c, new QTableWidgetItem(""));
  note_->setText("Open a simulated and a measured result of one configuration to compare them.");
  scatter_->set_message("No measured trace to compare start times with.");
  scatter_tiles_.clear();
  bars_->set_results({});
}

void CompareView::set_document(const Document &document, const std::vector<OpenResultPtr> &same_config) {
  clear();
  bars_->set_results(same_config);
  const OpenResultPtr p = document.predicted(), m = document.measured();
  for (int row = 0; row < static_cast<int>(std::size(kRows)); ++row) {
    const auto cell = [&](const OpenResultPtr &r) {
      return r ? QString::number(kRows[row].value(r->result), 'f', kRows[row].decimals) : QString("-");
    };
    table_->item(row, 0)->setText(cell(p));
    table_->item(row, 1)->setText(cell(m));
    table_->item(row, 2)->setText(p && m ? error_text(row, compare_results(p->result, m->result), p->result, m->result)
                                         : "-");
  }
  if (!p || !m) {
    note_->setText(QString("Only a %1 result is open for this configuration and order; open the %2 one beside it to "
                           "see errors.")
                       .arg(p ? "predicted" : "measured", p ? "measured" : "predicted"));
    scatter_->set_message("The start-time scatter needs a predicted and a measured result of one configuration.");
    return;
  }
  note_->setText("error: (predicted - measured) / measured; L2 hit rate in points, as tilesim compare prints it.");
  if (!m->has_tiles()) {
    scatter_->set_message(QString("%1 has no per-tile trace (measured without --trace): no start-time scatter. Measure "
                                  "with tilesim-measure --trace to get one.")
                              .arg(m->path.isEmpty() ? m->label : m->path));
    return;
  }
  std::map<std::pair<int, int>, double> measured_start;
  for (const auto &t : m->result.tiles) measured_start[{t.row, t.col}] = t.start_ns / 1000;
  std::vector<QPointF> points;
  for (const auto &t : p->result.tiles) {
    const auto it = measured_start.find({t.row, t.col});
    if (it == measured_start.end()) continue;
    points.emplace_back(it->second, t.start_ns / 1000);
    scatter_tiles_.emplace_back(t.row, t.col);
  }
  if (points.empty())
    scatter_->set_message("The predicted result has no per-tile records matching the measured trace's tiles.");
  else
    scatter_->set_points(std::move(points), "measured start (µs)", "predicted start (µs)",
                         "tile start times, predicted against measured");
}

void CompareView::set_selected(int row, int col) {
  int index = -1;
  for (size_t i = 0; i < scatter_tiles_.size(); ++i)
    if (scatter_tiles_[i] == std::pair{row, col}) index = static_cast<int>(i);
  scatter_->set_highlight(index);
}

} // namespace tilesim::viz
