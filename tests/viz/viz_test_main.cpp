// The viewer's tests drive the real widgets on Qt's offscreen platform (no display needed).
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <QApplication>
#include <QDir>

int main(int argc, char **argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  // Recent files go to QSettings: keep the tests' out of the user's configuration.
  const QString config = QDir::tempPath() + "/tilesim_viz_tests_config";
  QDir(config).removeRecursively();
  qputenv("XDG_CONFIG_HOME", config.toUtf8());
  QApplication app(argc, argv);
  return Catch::Session().run(argc, argv);
}
