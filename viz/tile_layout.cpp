#include "viz/tile_layout.h"

#include <algorithm>
#include <map>

namespace tilesim::viz {

TileState tile_state(const TileRecord &tile, double time_ns) {
  if (time_ns < tile.start_ns) return TileState::not_started;
  return time_ns < tile.end_ns ? TileState::running : TileState::finished;
}

TileGrid tile_grid(const KernelResult &r) {
  TileGrid g;
  std::map<int, std::pair<int, int>> expert_rows; // expert -> first, last stacked row
  for (const auto &t : r.tiles) {
    g.rows = std::max(g.rows, t.row + 1);
    g.cols = std::max(g.cols, t.col + 1);
    auto [it, fresh] = expert_rows.try_emplace(t.expert, t.row, t.row);
    if (!fresh) it->second = {std::min(it->second.first, t.row), std::max(it->second.second, t.row)};
  }
  g.index.assign(static_cast<size_t>(g.rows) * g.cols, -1);
  for (size_t i = 0; i < r.tiles.size(); ++i) {
    const auto &t = r.tiles[i];
    if (t.row >= 0 && t.col >= 0) g.index[static_cast<size_t>(t.row) * g.cols + t.col] = static_cast<int>(i);
  }
  if (r.kernel.value("kind", "") == "grouped_gemm")
    for (const auto &[expert, rows] : expert_rows)
      g.experts.push_back({expert, rows.first, rows.second - rows.first + 1});
  return g;
}

TileColors color_tiles(const std::vector<OpenResultPtr> &results, const TileMetric &metric, const ColorMap &map) {
  TileColors c;
  std::vector<std::vector<std::optional<double>>> values;
  for (const auto &r : results) {
    c.unavailable.push_back(metric.unavailable(*r));
    auto &v = values.emplace_back();
    if (!c.unavailable.back().isEmpty()) continue;
    for (const auto &t : r->result.tiles) {
      v.push_back(metric.value(t, r->maps));
      if (!v.back()) continue;
      c.min = c.any ? std::min(c.min, *v.back()) : *v.back();
      c.max = c.any ? std::max(c.max, *v.back()) : *v.back();
      c.any = true;
    }
  }
  const double span = c.max > c.min ? c.max - c.min : 1;
  for (const auto &v : values) {
    auto &colors = c.colors.emplace_back();
    colors.reserve(v.size());
    for (const auto &x : v) colors.push_back(x ? map.at((*x - c.min) / span) : QColor());
  }
  return c;
}

double replay_end_ns(const std::vector<OpenResultPtr> &results) {
  double end = 0;
  for (const auto &r : results)
    for (const auto &t : r->result.tiles) end = std::max(end, t.end_ns);
  return end;
}

QString describe_tile(const OpenResult &r, const TileRecord &t) {
  QString s = QString("%1 tile row %2, col %3, expert %4, #%5 in the order\nSM %6")
                  .arg(QString::fromStdString(r.result.source))
                  .arg(t.row)
                  .arg(t.col)
                  .arg(t.expert)
                  .arg(t.linear)
                  .arg(t.sm);
  if (t.sm >= 0 && t.sm < static_cast<int>(r.maps.gpc.size())) s += QString(", GPC %1").arg(r.maps.gpc[t.sm]);
  if (t.sm >= 0 && t.sm < static_cast<int>(r.maps.partition.size()))
    s += QString(", L2 partition %1").arg(r.maps.partition[t.sm]);
  s += QString("\nstart %1 ns, end %2 ns (%3 ns)")
           .arg(t.start_ns, 0, 'f', 0)
           .arg(t.end_ns, 0, 'f', 0)
           .arg(t.end_ns - t.start_ns, 0, 'f', 0);
  if (t.a_hit_sectors && t.a_miss_sectors && t.b_hit_sectors && t.b_miss_sectors)
    s += QString("\nA: %1 hit / %2 miss sectors; B: %3 hit / %4 miss sectors")
             .arg(*t.a_hit_sectors)
             .arg(*t.a_miss_sectors)
             .arg(*t.b_hit_sectors)
             .arg(*t.b_miss_sectors);
  else
    s += "\nno per-tile L2 sectors (measured)";
  return s;
}

} // namespace tilesim::viz
