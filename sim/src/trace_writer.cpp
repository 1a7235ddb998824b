#include "sim/trace_writer.h"

#include "models/output_file.h"
#include "models/spec_error.h"

#include <set>

namespace tilesim {
namespace {

nlohmann::json metadata(const char *name, int pid, int tid, nlohmann::json args) {
  nlohmann::json e{{"ph", "M"}, {"name", name}, {"pid", pid}, {"args", std::move(args)}};
  if (tid >= 0) e["tid"] = tid;
  return e;
}

nlohmann::json tile_args(const TileRecord &t) {
  nlohmann::json a{{"linear", t.linear}, {"expert", t.expert},     {"row", t.row},
                   {"col", t.col},       {"start_ns", t.start_ns}, {"end_ns", t.end_ns}};
  if (t.a_hit_sectors) a["a_hit_sectors"] = *t.a_hit_sectors;
  if (t.a_miss_sectors) a["a_miss_sectors"] = *t.a_miss_sectors;
  if (t.b_hit_sectors) a["b_hit_sectors"] = *t.b_hit_sectors;
  if (t.b_miss_sectors) a["b_miss_sectors"] = *t.b_miss_sectors;
  return a;
}

} // namespace

nlohmann::json chrome_trace(const std::vector<TraceProcess> &processes, const std::string &command) {
  nlohmann::json events = nlohmann::json::array();
  nlohmann::json results = nlohmann::json::array();
  for (std::size_t i = 0; i < processes.size(); ++i) {
    const TraceProcess &p = processes[i];
    const KernelResult &r = *p.result;
    if (r.tiles.empty())
      throw SpecError(p.file, "tiles", "has no per-tile records to put on a timeline",
                      "simulate with --out or --trace-out, or measure with --trace");
    const int pid = static_cast<int>(i) + 1;
    events.push_back(metadata("process_name", pid, -1, {{"name", p.name + " (" + r.source + ", " + r.order + ")"}}));
    events.push_back(metadata("process_sort_index", pid, -1, {{"sort_index", pid}}));
    std::set<int> sms;
    for (const TileRecord &t : r.tiles) sms.insert(t.sm);
    for (const int sm : sms) {
      events.push_back(metadata("thread_name", pid, sm, {{"name", "SM " + std::to_string(sm)}}));
      events.push_back(metadata("thread_sort_index", pid, sm, {{"sort_index", sm}}));
    }
    // Trace-event times are microseconds; nanosecond starts keep their fraction.
    for (const TileRecord &t : r.tiles)
      events.push_back({{"ph", "X"},
                        {"name", "tile " + std::to_string(t.row) + "," + std::to_string(t.col)},
                        {"cat", "tile"},
                        {"pid", pid},
                        {"tid", t.sm},
                        {"ts", t.start_ns / 1000},
                        {"dur", (t.end_ns - t.start_ns) / 1000},
                        {"args", tile_args(t)}});
    results.push_back({{"process", p.name},
                       {"file", p.file},
                       {"source", r.source},
                       {"gpu", r.gpu},
                       {"order", r.order},
                       {"time_ms", r.time_ms},
                       {"kernel", r.kernel.value("name", "")}});
  }
  nlohmann::json trace{{"traceEvents", events}, {"displayTimeUnit", "ns"}, {"otherData", {{"tilesim_results", results}}}};
  if (!command.empty()) trace["command"] = command;
  return trace;
}

void write_chrome_trace(const std::vector<TraceProcess> &processes, const std::string &path, const std::string &command) {
  write_output_file(path, chrome_trace(processes, command).dump() + '\n', "--trace-out");
}

} // namespace tilesim
