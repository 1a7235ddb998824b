// Headless rendering: open the files, pick the view, metric and time, render the window to a PNG.
#pragma once

#include "viz/viewer_options.h"

#include <ostream>

namespace tilesim::viz {

// Needs a QApplication. Returns the exit code: 0 when the PNG was written; 1 after one line on
// `err` naming the file, the field and the fix (a bad result, an unwritable PNG).
int run_screenshot(const ViewerOptions &options, std::ostream &err);

} // namespace tilesim::viz
