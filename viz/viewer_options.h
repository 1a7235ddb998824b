// tilesim-viewer's command line: files to open, and the headless --screenshot mode.
#pragma once

#include <QSize>
#include <QString>
#include <QStringList>

#include <optional>

namespace tilesim::viz {

struct ViewerOptions {
  QStringList files;
  QString screenshot;       // PNG to write, then exit; "" for the interactive viewer
  QString view = "heatmap"; // heatmap, timeline, compare, whatif
  QString metric = "l2_hit_rate";
  QString color_map = "viridis";
  std::optional<double> time_ns; // replay time; default: the end of the run
  QSize size{1280, 800};
  bool help = false;
};

// `arguments` as QCoreApplication::arguments() gives them (the program first). Throws ViewerError
// naming the option and the fix for an unknown option, view, metric, colour map, time or size.
ViewerOptions parse_viewer_options(const QStringList &arguments);
QString viewer_help();

} // namespace tilesim::viz
