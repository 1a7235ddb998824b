// The per-tile quantities the heatmap and the timeline colour by, each a named entry in one
// table (tile_metric.cpp): adding one is one row there.
#pragma once

#include "sim/kernel_result.h"
#include "viz/open_result.h"

#include <QString>
#include <QStringList>

#include <functional>
#include <optional>
#include <vector>

namespace tilesim::viz {

struct TileMetric {
  QString id;    // as written after --metric
  QString label; // for menus and legends
  QString unit;  // for the legend: "%", "sectors", "µs", "" for ids
  // Why a result cannot show this metric ("" when it can), e.g. measured runs have no per-tile
  // L2 sectors.
  std::function<QString(const OpenResult &)> unavailable;
  std::function<std::optional<double>(const TileRecord &, const GpuMaps &)> value;
};

const std::vector<TileMetric> &tile_metrics();
// Throws std::invalid_argument listing the ids when `id` is not one.
const TileMetric &tile_metric(const QString &id);

} // namespace tilesim::viz
