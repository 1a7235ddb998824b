// Per-SM timelines in the Chrome trace-event format, for Perfetto (ui.perfetto.dev) and
// chrome://tracing: one process per result (predicted, measured), one track per SM, one complete
// ("X") slice per tile with its numbers as args. Written by `tilesim simulate --trace-out`,
// `tilesim compare --trace-out` and `tilesim-measure --trace --trace-out`.
#pragma once

#include "sim/kernel_result.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tilesim {

struct TraceProcess {
  std::string name;           // the process's label in the trace: "predicted", "measured"
  const KernelResult *result; // must have per-tile records
  std::string file;           // where the result came from, for error messages
};

// Throws SpecError naming the file and `tiles` when a result has no per-tile records. A non-empty
// `command` (what wrote the trace, e.g. tilesim-measure's command line) is kept at the top level,
// beside the events, so that a committed trace says how to reproduce it as a result file does.
nlohmann::json chrome_trace(const std::vector<TraceProcess> &processes, const std::string &command = "");
// Throws SpecError naming `path` when it cannot be written.
void write_chrome_trace(const std::vector<TraceProcess> &processes, const std::string &path,
                        const std::string &command = "");

} // namespace tilesim
