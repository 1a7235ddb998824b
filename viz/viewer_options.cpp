#include "viz/viewer_options.h"

#include "viz/color_map.h"
#include "viz/open_result.h"
#include "viz/tile_metric.h"

#include <QCommandLineParser>

namespace tilesim::viz {
namespace {

const QStringList kViews{"heatmap", "timeline", "compare", "whatif"};

void describe(QCommandLineParser &p) {
  p.setApplicationDescription(
      "tilesim-viewer: look at predicted (tilesim simulate --out) and measured (tilesim-measure) results of a kernel:\n"
      "an L2 heatmap over the output tiles with a launch-order replay, a per-SM timeline, predicted against\n"
      "measured, and what-if runs of other orders. A simulated and a measured result of one configuration\n"
      "open side by side.");
  p.addHelpOption();
  p.addPositionalArgument("files", "tilesim.result/1 JSON files to open", "[files...]");
  p.addOption(
      {"screenshot", "render offscreen to this PNG and exit (one line on stderr and exit 1 on bad input)", "out.png"});
  p.addOption({"view", "what --screenshot shows: " + kViews.join(", ") + " (default heatmap)", "view"});
  QStringList metrics;
  for (const auto &m : tile_metrics()) metrics << m.id;
  p.addOption({"metric", "tile colour: " + metrics.join(", ") + " (default l2_hit_rate)", "metric"});
  p.addOption({"colormap", "colour map: " + color_map_names().join(", ") + " (default viridis)", "map"});
  p.addOption({"time-ns", "replay time in ns (default: the end of the run)", "T"});
  p.addOption({"size", "window size for --screenshot, WxH (default 1280x800)", "WxH"});
}

[[noreturn]] void fail(const QString &option, const QString &problem, const QString &fix) {
  throw ViewerError(("--" + option + ": " + problem + "; " + fix).toStdString());
}

} // namespace

QString viewer_help() {
  QCommandLineParser p;
  describe(p);
  return p.helpText();
}

ViewerOptions parse_viewer_options(const QStringList &arguments) {
  QCommandLineParser p;
  describe(p);
  if (!p.parse(arguments)) throw ViewerError((p.errorText() + "; see tilesim-viewer --help").toStdString());
  ViewerOptions o;
  o.help = p.isSet("help");
  o.files = p.positionalArguments();
  o.screenshot = p.value("screenshot");
  if (p.isSet("view")) {
    o.view = p.value("view");
    if (!kViews.contains(o.view)) fail("view", "'" + o.view + "' is not a view", "use one of " + kViews.join(", "));
  }
  // A name the viewer looks up (metric, colour map): the lookup's own message lists the names.
  const auto named = [&](const char *option, QString &value, auto lookup) {
    if (!p.isSet(option)) return;
    value = p.value(option);
    try {
      lookup(value);
    } catch (const std::invalid_argument &e) {
      fail(option, QString::fromStdString(e.what()), "see tilesim-viewer --help");
    }
  };
  named("metric", o.metric, [](const QString &v) { tile_metric(v); });
  named("colormap", o.color_map, [](const QString &v) { color_map(v); });
  if (p.isSet("time-ns")) {
    bool ok = false;
    const double t = p.value("time-ns").toDouble(&ok);
    if (!ok || t < 0)
      fail("time-ns", "'" + p.value("time-ns") + "' is not a time", "give nanoseconds >= 0, e.g. 250000");
    o.time_ns = t;
  }
  if (p.isSet("size")) {
    const QStringList wh = p.value("size").split('x');
    bool ok_w = false, ok_h = false;
    const int w = wh.size() == 2 ? wh[0].toInt(&ok_w) : 0, h = wh.size() == 2 ? wh[1].toInt(&ok_h) : 0;
    if (!ok_w || !ok_h || w < 320 || h < 240 || w > 8192 || h > 8192)
      fail("size", "'" + p.value("size") + "' is not a size", "write WxH between 320x240 and 8192x8192, e.g. 1280x800");
    o.size = {w, h};
  }
  if (!o.screenshot.isEmpty() && o.files.isEmpty() && o.view != "whatif")
    fail("screenshot", "no result file given",
         "name the result files to show, e.g. tilesim-viewer --screenshot out.png r.json");
  return o;
}

} // namespace tilesim::viz
