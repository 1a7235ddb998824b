// tilesim-viewer: the Qt 6 viewer of predicted and measured results (README, "Viewer").
#include "viz/main_window.h"
#include "viz/screenshot.h"
#include "viz/viewer_options.h"

#include <QApplication>
#include <QDir>
#include <QFile>

#include <cstring>
#include <iostream>

#include <unistd.h>

namespace {

int run_window(const tilesim::viz::ViewerOptions &options) {
  tilesim::viz::MainWindow window;
  for (const QString &file : options.files) window.open_file(file);
  window.set_metric(options.metric);
  window.set_color_map(options.color_map);
  window.set_view(options.view);
  if (options.time_ns) window.set_time_ns(*options.time_ns);
  window.show();
  return QApplication::exec();
}

} // namespace

int main(int argc, char **argv) {
  // --screenshot and --help need no display: without one, Qt's offscreen platform draws them.
  bool headless = false;
  for (int i = 1; i < argc; ++i)
    headless |= std::strncmp(argv[i], "--screenshot", 12) == 0 || std::strcmp(argv[i], "--help") == 0 ||
                std::strcmp(argv[i], "-h") == 0;
  if (headless && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY") &&
      qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
    qputenv("QT_QPA_PLATFORM", "offscreen");
  // Qt warns on stderr when XDG_RUNTIME_DIR is unset (containers, CI); --screenshot promises one line.
  if (qEnvironmentVariableIsEmpty("XDG_RUNTIME_DIR")) {
    const QByteArray dir = QDir::tempPath().toUtf8() + "/tilesim-viewer-runtime-" + QByteArray::number(getuid());
    if (QDir().mkpath(QString::fromUtf8(dir)) &&
        QFile::setPermissions(QString::fromUtf8(dir), QFile::ReadOwner | QFile::WriteOwner | QFile::ExeOwner))
      qputenv("XDG_RUNTIME_DIR", dir);
  }
  QApplication app(argc, argv);
  QApplication::setApplicationName("tilesim-viewer");
  tilesim::viz::ViewerOptions options;
  try {
    options = tilesim::viz::parse_viewer_options(QApplication::arguments());
  } catch (const std::exception &e) {
    std::cerr << "tilesim-viewer: " << e.what() << '\n';
    return 2;
  }
  if (options.help) {
    std::cout << tilesim::viz::viewer_help().toStdString() << "\n";
    return 0;
  }
  try {
    if (!options.screenshot.isEmpty()) return tilesim::viz::run_screenshot(options, std::cerr);
    return run_window(options);
  } catch (const std::exception &e) {
    // Anything the views did not turn into a message (a broken shipped GPU profile, ...).
    std::cerr << "tilesim-viewer: " << e.what() << '\n';
    return 1;
  }
}
