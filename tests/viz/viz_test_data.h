// Paths of the viewer tests' hand-made results (tests/viz/data/; values worked out in each test).
#pragma once

#include <QString>

namespace tilesim::viz::test {

inline QString data(const char *name) { return QString(TILESIM_SOURCE_DIR "/tests/viz/data/") + name; }
inline QString dataset(const char *name) {
  return QString(TILESIM_SOURCE_DIR "/validation/data/h100/measured/") + name;
}

} // namespace tilesim::viz::test
