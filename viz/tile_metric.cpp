#include "viz/tile_metric.h"

#include <stdexcept>

namespace tilesim::viz {
namespace {

QString needs_sectors(const OpenResult &r) {
  if (r.has_sectors()) return {};
  return QString("%1: no per-tile L2 sectors; pick start, end, SM, GPC or L2 partition")
      .arg(QString::fromStdString(r.result.source));
}

QString needs_map(const OpenResult &r, const std::vector<int> &map, const char *what) {
  if (!map.empty()) return {};
  return QString("no shipped GPU profile has the %1 map of '%2'").arg(what, QString::fromStdString(r.result.gpu));
}

std::optional<double> from_map(const std::vector<int> &map, int sm) {
  if (sm < 0 || sm >= static_cast<int>(map.size())) return std::nullopt;
  return map[sm];
}

long long sectors(const std::optional<long long> &v) { return v.value_or(0); }

} // namespace

const std::vector<TileMetric> &tile_metrics() {
  static const std::vector<TileMetric> metrics{
      {"l2_hit_rate", "L2 hit rate", "%", needs_sectors,
       [](const TileRecord &t, const GpuMaps &) -> std::optional<double> {
         const long long hits = sectors(t.a_hit_sectors) + sectors(t.b_hit_sectors);
         const long long all = hits + sectors(t.a_miss_sectors) + sectors(t.b_miss_sectors);
         if (!t.a_hit_sectors || all == 0) return std::nullopt;
         return 100.0 * static_cast<double>(hits) / static_cast<double>(all);
       }},
      {"dram_sectors", "DRAM sectors (L2 misses)", "sectors", needs_sectors,
       [](const TileRecord &t, const GpuMaps &) -> std::optional<double> {
         if (!t.a_miss_sectors) return std::nullopt;
         return static_cast<double>(sectors(t.a_miss_sectors) + sectors(t.b_miss_sectors));
       }},
      {"start", "start time", "µs", [](const OpenResult &) { return QString(); },
       [](const TileRecord &t, const GpuMaps &) -> std::optional<double> { return t.start_ns / 1000; }},
      {"end", "end time", "µs", [](const OpenResult &) { return QString(); },
       [](const TileRecord &t, const GpuMaps &) -> std::optional<double> { return t.end_ns / 1000; }},
      {"sm", "SM", "SM id", [](const OpenResult &) { return QString(); },
       [](const TileRecord &t, const GpuMaps &) -> std::optional<double> { return t.sm; }},
      {"gpc", "GPC", "GPC id", [](const OpenResult &r) { return needs_map(r, r.maps.gpc, "GPC"); },
       [](const TileRecord &t, const GpuMaps &m) { return from_map(m.gpc, t.sm); }},
      {"l2_partition", "L2 partition", "partition",
       [](const OpenResult &r) { return needs_map(r, r.maps.partition, "L2 partition"); },
       [](const TileRecord &t, const GpuMaps &m) { return from_map(m.partition, t.sm); }},
  };
  return metrics;
}

const TileMetric &tile_metric(const QString &id) {
  QStringList ids;
  for (const auto &m : tile_metrics()) {
    if (m.id == id) return m;
    ids << m.id;
  }
  throw std::invalid_argument("unknown metric '" + id.toStdString() + "'; use one of: " + ids.join(", ").toStdString());
}

} // namespace tilesim::viz
