#include "viz/heatmap_view.h"

#include <QMouseEvent>
#include <QPainter>
#include <QToolTip>

#include <algorithm>

namespace tilesim::viz {
namespace {

constexpr double kTitleHeight = 36; // two lines: the result, then its message
constexpr double kLabelWidth = 64;  // expert labels left of the grid
constexpr double kLegendHeight = 44;
constexpr double kGap = 16;

QString totals(const KernelResult &r) {
  return QString("time %1 ms, %2 TFLOP/s, L2 hit rate %3%, DRAM read %4 GB, write %5 GB, L2 read sectors %6")
      .arg(r.time_ms, 0, 'f', 4)
      .arg(r.tflops, 0, 'f', 1)
      .arg(100 * r.l2_hit_rate, 0, 'f', 1)
      .arg(r.dram_read_bytes / 1e9, 0, 'f', 3)
      .arg(r.dram_write_bytes / 1e9, 0, 'f', 3)
      .arg(r.l2_read_sectors);
}

} // namespace

HeatmapView::HeatmapView(QWidget *parent) : TileView(parent) {}

void HeatmapView::results_changed() {
  grids_.clear();
  for (const auto &r : results_) grids_.push_back(tile_grid(r->result));
  relayout();
}

void HeatmapView::resizeEvent(QResizeEvent *) { relayout(); }

void HeatmapView::relayout() {
  panels_.assign(results_.size(), {});
  if (results_.empty()) return;
  const double n = static_cast<double>(results_.size());
  const double panel_w = (width() - kGap * (n + 1)) / n;
  const double panel_h = height() - kLegendHeight - kGap;
  for (size_t i = 0; i < results_.size(); ++i) {
    Panel &p = panels_[i];
    p.frame = QRectF(kGap + i * (panel_w + kGap), kGap / 2, panel_w, panel_h);
    const TileGrid &g = grids_[i];
    if (g.rows == 0) continue;
    const QRectF area(p.frame.left() + kLabelWidth, p.frame.top() + kTitleHeight, panel_w - kLabelWidth,
                      panel_h - kTitleHeight);
    // The grid fills its area: a grouped GEMM's stacked rows make tall, narrow grids that square
    // cells would shrink to a sliver.
    p.cell_w = std::max(0.5, area.width() / g.cols);
    p.cell_h = std::max(0.5, area.height() / g.rows);
    p.grid = QRectF(area.left(), area.top(), p.cell_w * g.cols, p.cell_h * g.rows);
  }
}

QRectF HeatmapView::tile_rect(int panel, int row, int col) const {
  const Panel &p = panels_.at(panel);
  return QRectF(p.grid.left() + col * p.cell_w, p.grid.top() + row * p.cell_h, p.cell_w, p.cell_h);
}

TileState HeatmapView::state_of(int panel, int row, int col) const {
  const int i = grids_.at(panel).at(row, col);
  return i < 0 ? TileState::not_started : tile_state(results_[panel]->result.tiles[i], time_ns_);
}

QString HeatmapView::message(int panel) const {
  const OpenResult &r = *results_.at(panel);
  if (!r.has_tiles())
    return QString("%1 has no per-tile records (tiles is empty): simulate with --out or measure with --trace to see "
                   "tiles. Totals: %2")
        .arg(r.path.isEmpty() ? r.label : r.path, totals(r.result));
  return colors_.unavailable.at(panel);
}

bool HeatmapView::hit(QPointF pos, int &panel, int &row, int &col) const {
  for (size_t i = 0; i < panels_.size(); ++i) {
    if (!panels_[i].grid.contains(pos)) continue;
    panel = static_cast<int>(i);
    col = static_cast<int>((pos.x() - panels_[i].grid.left()) / panels_[i].cell_w);
    row = static_cast<int>((pos.y() - panels_[i].grid.top()) / panels_[i].cell_h);
    return grids_[i].at(row, col) >= 0;
  }
  return false;
}

QString HeatmapView::hover_text(QPointF pos) const {
  int panel = 0, row = 0, col = 0;
  if (!hit(pos, panel, row, col)) return {};
  const OpenResult &r = *results_[panel];
  return describe_tile(r, r.result.tiles[grids_[panel].at(row, col)]);
}

void HeatmapView::mouseMoveEvent(QMouseEvent *e) {
  const QString text = hover_text(e->position());
  if (text.isEmpty())
    QToolTip::hideText();
  else
    QToolTip::showText(e->globalPosition().toPoint(), text, this);
}

void HeatmapView::mousePressEvent(QMouseEvent *e) {
  int panel = 0, row = 0, col = 0;
  if (e->button() == Qt::LeftButton && hit(e->position(), panel, row, col)) emit tileClicked(row, col);
}

void HeatmapView::paintEvent(QPaintEvent *) {
  QPainter p(this);
  p.fillRect(rect(), palette().window());
  if (results_.empty()) {
    p.drawText(rect(), Qt::AlignCenter | Qt::TextWordWrap,
               "Open a result: File > Open, drop a file here, or name it on the command line "
               "(tilesim-viewer predicted.json measured.json).");
    return;
  }
  for (size_t i = 0; i < results_.size(); ++i) paint_panel(p, static_cast<int>(i));
  paint_legend(p);
}

void HeatmapView::paint_panel(QPainter &p, int i) const {
  const Panel &panel = panels_[i];
  const OpenResult &r = *results_[i];
  p.setPen(palette().windowText().color());
  const QRectF title(panel.frame.left(), panel.frame.top(), panel.frame.width(), kTitleHeight / 2);
  p.drawText(title, Qt::AlignLeft | Qt::AlignVCenter,
             QString("%1: %2 ms, L2 hit %3%")
                 .arg(r.label)
                 .arg(r.result.time_ms, 0, 'f', 4)
                 .arg(100 * r.result.l2_hit_rate, 0, 'f', 1));
  const QString note = message(i);
  if (!r.has_tiles()) {
    p.drawText(panel.frame.adjusted(0, kTitleHeight, 0, 0), Qt::AlignLeft | Qt::AlignTop | Qt::TextWordWrap, note);
    return;
  }
  if (!note.isEmpty()) {
    QFont small = p.font();
    small.setPointSizeF(small.pointSizeF() * 0.85);
    p.setFont(small);
    // One line above the grid, elided to the panel's width.
    p.drawText(title.translated(0, kTitleHeight / 2), Qt::AlignLeft | Qt::AlignVCenter,
               p.fontMetrics().elidedText(note, Qt::ElideRight, static_cast<int>(title.width())));
    p.setFont(font());
  }
  const TileGrid &g = grids_[i];
  const auto &tiles = r.result.tiles;
  const auto &colors = colors_.colors[i];
  const QColor unknown(170, 170, 170); // finished, but the metric has no value for it
  const QColor outline = palette().windowText().color();
  // Cells a few pixels high get a 1-pixel outline on their edge; an inset one would fill them.
  const bool small = panel.cell_h < 8 || panel.cell_w < 8;
  const QPen running_pen(outline, small ? 1.0 : 1.5);
  p.setPen(Qt::NoPen);
  for (size_t t = 0; t < tiles.size(); ++t) {
    const TileRecord &tile = tiles[t];
    const TileState s = tile_state(tile, time_ns_);
    if (s == TileState::not_started) continue;
    const QRectF cell = tile_rect(i, tile.row, tile.col);
    if (s == TileState::finished) {
      p.fillRect(cell, colors.empty() || !colors[t].isValid() ? unknown : colors[t]);
    } else {
      p.setPen(running_pen);
      p.drawRect(small ? cell.adjusted(0.5, 0.5, -0.5, -0.5) : cell.adjusted(1, 1, -1, -1));
      p.setPen(Qt::NoPen);
    }
  }
  p.setPen(QPen(outline, 1));
  p.setBrush(Qt::NoBrush);
  p.drawRect(panel.grid);
  for (const ExpertBand &band : g.experts) {
    const double y = panel.grid.top() + band.first_row * panel.cell_h;
    if (band.first_row > 0) p.drawLine(QPointF(panel.grid.left() - 6, y), QPointF(panel.grid.right(), y));
    const QRectF label(panel.frame.left(), y, kLabelWidth - 8, band.rows * panel.cell_h);
    if (label.height() >= 10)
      p.drawText(label, Qt::AlignRight | Qt::AlignVCenter, QString("expert %1").arg(band.expert));
  }
  if (g.at(selected_row_, selected_col_) >= 0) {
    // Black inside white: visible on every colour of the map.
    const QRectF cell = tile_rect(i, selected_row_, selected_col_);
    p.setPen(QPen(Qt::white, 3));
    p.drawRect(cell.adjusted(-1, -1, 1, 1));
    p.setPen(QPen(Qt::black, 1.5));
    p.drawRect(cell.adjusted(-1, -1, 1, 1));
  }
}

void HeatmapView::paint_legend(QPainter &p) const {
  const TileMetric &m = tile_metric(metric());
  const QRectF area(kGap, height() - kLegendHeight, width() - 2 * kGap, kLegendHeight - 6);
  p.setPen(palette().windowText().color());
  const QString name = m.label + (m.unit.isEmpty() ? "" : " (" + m.unit + ")");
  p.drawText(QRectF(area.left(), area.top(), 220, area.height()), Qt::AlignLeft | Qt::AlignVCenter, name);
  if (!colors_.any) return;
  const QRectF bar(area.left() + 230, area.top() + 6, std::min(360.0, area.width() - 460), 14);
  if (bar.width() < 20) return;
  const ColorMap &map = color_map(map_);
  for (int x = 0; x < static_cast<int>(bar.width()); ++x)
    p.fillRect(QRectF(bar.left() + x, bar.top(), 1.5, bar.height()), map.at(x / bar.width()));
  p.drawRect(bar);
  const auto number = [](double v) { return QString::number(v, 'g', 4); };
  p.drawText(QRectF(bar.left() - 40, bar.bottom() + 2, 80, 16), Qt::AlignCenter, number(colors_.min));
  p.drawText(QRectF(bar.right() - 40, bar.bottom() + 2, 80, 16), Qt::AlignCenter, number(colors_.max));
  p.drawText(QRectF(bar.right() + 50, area.top(), area.right() - bar.right() - 50, area.height()),
             Qt::AlignLeft | Qt::AlignVCenter, "blank: not started, outlined: running, grey: no value");
}

} // namespace tilesim::viz
