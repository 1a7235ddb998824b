#include "viz/screenshot.h"

#include "viz/main_window.h"

#include <QApplication>
#include <QPixmap>

#include <cstdio>

namespace tilesim::viz {
namespace {

int render_screenshot(const ViewerOptions &options, std::ostream &err) {
  MainWindow window;
  for (const QString &file : options.files)
    if (!window.open_file(file)) {
      err << "tilesim-viewer: " << window.last_error().toStdString() << '\n';
      return 1;
    }
  window.set_view(options.view);
  window.set_metric(options.metric);
  window.set_color_map(options.color_map);
  if (options.time_ns) window.set_time_ns(*options.time_ns);
  window.resize(options.size);
  window.show(); // a real window under X (xvfb-run)
  QApplication::processEvents();
  const QPixmap picture = window.grab();
  if (!picture.save(options.screenshot, "PNG")) {
    err << "tilesim-viewer: " << options.screenshot.toStdString()
        << ": --screenshot: cannot write the PNG; check the folder exists and is writable\n";
    return 1;
  }
  return 0;
}

} // namespace

int run_screenshot(const ViewerOptions &options, std::ostream &err) {
  // Headless mode promises one stderr line on bad input: Qt's own warnings (the offscreen
  // platform has no size hints, ...) say nothing about the files and would add lines.
  const QtMessageHandler previous =
      qInstallMessageHandler([](QtMsgType type, const QMessageLogContext &, const QString &m) {
        if (type == QtCriticalMsg || type == QtFatalMsg)
          std::fprintf(stderr, "tilesim-viewer: Qt: %s\n", qPrintable(m));
      });
  const int code = render_screenshot(options, err);
  qInstallMessageHandler(previous);
  return code;
}

} // namespace tilesim::viz
