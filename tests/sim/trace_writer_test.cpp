#include "sim/trace_writer.h"

#include "models/spec_error.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>

using namespace tilesim;

namespace {

KernelResult three_tiles(const char *source) {
  KernelResult r;
  r.source = source;
  r.gpu = "h100";
  r.order = "row_major";
  r.kernel = {{"name", "t"}, {"kind", "gemm"}};
  r.tiles = {{0, 0, 0, 0, 2, 1000, 3500, {}, {}, {}, {}, {}, {}},
             {1, 0, 0, 1, 0, 0, 2500, {}, {}, {}, {}, {}, {}},
             {2, 0, 1, 0, 2, 3500, 6000, {}, {}, {}, {}, {}, {}}};
  if (std::string(source) == "simulated") r.tiles[0].a_hit_sectors = 12;
  return r;
}

std::vector<nlohmann::json> events(const nlohmann::json &trace, const std::string &ph, int pid) {
  std::vector<nlohmann::json> out;
  for (const auto &e : trace.at("traceEvents"))
    if (e.at("ph") == ph && e.at("pid") == pid) out.push_back(e);
  return out;
}

} // namespace

TEST_CASE("trace writer: a file Perfetto reads, loaded back slice by slice", "[trace]") {
  const KernelResult p = three_tiles("simulated"), m = three_tiles("measured");
  const std::string path = (std::filesystem::temp_directory_path() / "tilesim_trace_test.json").string();
  write_chrome_trace({{"predicted", &p, "p.json"}, {"measured", &m, "m.json"}}, path);
  std::ifstream in(path);
  const nlohmann::json trace = nlohmann::json::parse(in);
  std::remove(path.c_str());

  CHECK(trace.at("displayTimeUnit") == "ns");
  CHECK_FALSE(trace.contains("command")); // none given
  for (int pid : {1, 2}) {
    const auto slices = events(trace, "X", pid);
    REQUIRE(slices.size() == 3);
    // Tile (0,0) on SM 2 from 1000 to 3500 ns: ts 1 µs, dur 2.5 µs, on track (tid) 2.
    CHECK(slices[0].at("name") == "tile 0,0");
    CHECK(slices[0].at("tid") == 2);
    CHECK(slices[0].at("ts").get<double>() == Approx(1.0));
    CHECK(slices[0].at("dur").get<double>() == Approx(2.5));
    CHECK(slices[0].at("args").at("linear") == 0);
    CHECK(slices[1].at("tid") == 0);
    CHECK(slices[1].at("args").at("col") == 1);
    CHECK(slices[2].at("ts").get<double>() == Approx(3.5));
    // One named track per SM that ran a tile: SMs 0 and 2.
    int tracks = 0;
    for (const auto &e : events(trace, "M", pid))
      if (e.at("name") == "thread_name") ++tracks;
    CHECK(tracks == 2);
  }
  CHECK(events(trace, "X", 1)[0].at("args").at("a_hit_sectors") == 12);
  CHECK_FALSE(events(trace, "X", 2)[0].at("args").contains("a_hit_sectors"));
  const auto names = events(trace, "M", 2);
  CHECK(names[0].at("args").at("name") == "measured (measured, row_major)");
}

TEST_CASE("trace writer: the command that wrote the trace is kept beside its events", "[trace]") {
  const KernelResult m = three_tiles("measured");
  const nlohmann::json trace = chrome_trace({{"measured", &m, "m.json"}}, "tilesim-measure --kernel k.json --trace --trace-out t.json");
  CHECK(trace.at("command") == "tilesim-measure --kernel k.json --trace --trace-out t.json");
  CHECK(trace.at("traceEvents").size() == chrome_trace({{"measured", &m, "m.json"}}).at("traceEvents").size());
}

TEST_CASE("trace writer: a result without tiles names the file and the fix", "[trace]") {
  KernelResult r = three_tiles("measured");
  r.tiles.clear();
  CHECK_THROWS_WITH(chrome_trace({{"measured", &r, "m.json"}}),
                    "m.json: tiles: has no per-tile records to put on a timeline; simulate with --out or "
                    "--trace-out, or measure with --trace");
  CHECK_THROWS_AS(write_chrome_trace({{"predicted", &r, "p.json"}}, "/no/such/dir/t.json"), SpecError);
}
