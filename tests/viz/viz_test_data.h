// Paths of the viewer tests' hand-made results (tests/viz/data/; values worked out in each test).
#pragma once

#include <QString>

#include <catch2/catch.hpp>

// Failed checks on QStrings print the text.
namespace Catch {
template <> struct StringMaker<QString> {
  static std::string convert(const QString &s) { return '"' + s.toStdString() + '"'; }
};
} // namespace Catch

namespace tilesim::viz::test {

inline QString data(const char *name) { return QString(TILESIM_SOURCE_DIR "/tests/viz/data/") + name; }
inline QString dataset(const char *name) {
  return QString(TILESIM_SOURCE_DIR "/validation/data/h100/measured/") + name;
}

} // namespace tilesim::viz::test
