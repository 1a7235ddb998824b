// Names of launch orders as written in kernel specs and on the CLI ("grouped_m:8", "hilbert").
#pragma once

#include "models/launch_order.h"

#include <string>
#include <vector>

namespace tilesim {

// Throws std::invalid_argument naming the accepted forms when `text` is not a launch order.
LaunchOrder parse_launch_order(const std::string& text);
std::string to_string(const LaunchOrder& order);

// Every order, with the default group for the grouped ones; the what-if "all" set.
std::vector<LaunchOrder> all_launch_orders(bool grouped_problem);

} // namespace tilesim
