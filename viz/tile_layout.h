// Where each tile of a result sits on the output-tile grid (experts' tile rows stacked, as the
// launch orders walk them), what state it is in at a time of the replay, and its colour under a
// metric, on one scale shared by every result shown together.
#pragma once

#include "viz/color_map.h"
#include "viz/open_result.h"
#include "viz/tile_metric.h"

#include <QColor>

#include <vector>

namespace tilesim::viz {

enum class TileState { not_started, running, finished };

// Not started before start_ns, running in [start_ns, end_ns), finished from end_ns on.
TileState tile_state(const TileRecord &tile, double time_ns);

struct ExpertBand {
  int expert = 0;
  int first_row = 0;
  int rows = 0;
};

struct TileGrid {
  int rows = 0;
  int cols = 0;
  std::vector<int> index;          // row * cols + col -> position in result.tiles, -1 if absent
  std::vector<ExpertBand> experts; // for grouped GEMMs: each expert's band of stacked rows
  int at(int row, int col) const {
    return row < 0 || col < 0 || row >= rows || col >= cols ? -1 : index[static_cast<size_t>(row) * cols + col];
  }
};

TileGrid tile_grid(const KernelResult &r);

struct TileColors {
  bool any = false; // some tile has a value
  double min = 0, max = 0;
  std::vector<std::vector<QColor>> colors; // per result, per tile; invalid QColor: no value
  std::vector<QString> unavailable;        // per result: why the metric cannot be shown, or ""
};

// Colours every tile of `results` by `metric` on one min..max scale.
TileColors color_tiles(const std::vector<OpenResultPtr> &results, const TileMetric &metric, const ColorMap &map);

// The latest tile end over `results`, in ns (the replay's length).
double replay_end_ns(const std::vector<OpenResultPtr> &results);

// One tile's numbers, for hover text and the status bar.
QString describe_tile(const OpenResult &r, const TileRecord &t);

} // namespace tilesim::viz
