// The replay's predictions stay what they were before it was made faster (issue 13): each
// configuration of recorded_predictions.json (recorded by record_predictions.py from the commit
// it names) is simulated again and its time, DRAM bytes and L2 hit rate compared to the record.
#include "sim/gpu_simulator.h"

#include "models/gpu_profile.h"
#include "models/kernel_spec.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cmath>
#include <fstream>
#include <string>

using namespace tilesim;

namespace {

nlohmann::json recorded() {
  const std::string path = std::string(TILESIM_SOURCE_DIR) + "/tests/sim/recorded_predictions.json";
  std::ifstream in(path);
  REQUIRE(in.good());
  return nlohmann::json::parse(in);
}

double relative_error(double predicted, double reference) { return std::abs(predicted / reference - 1.0); }

} // namespace

TEST_CASE("predictions match those recorded before the replay was sped up", "[recorded]") {
  const nlohmann::json record = recorded();
  const nlohmann::json& tolerance = record.at("tolerance");
  REQUIRE(record.at("configurations").size() >= 6);
  for (const nlohmann::json& c : record.at("configurations")) {
    const std::string from = c.at("from").get<std::string>();
    SECTION(from + " on " + c.at("gpu").get<std::string>()) {
      const GpuProfile gpu = load_gpu_profile(c.at("gpu").get<std::string>());
      const KernelSpec spec = parse_kernel_spec(c.at("spec"), from);
      const KernelResult r = simulate(gpu, spec, {.record_tiles = false, .progress = {}});
      INFO("time " << r.time_ms << " ms, recorded " << c.at("time_ms").get<double>());
      CHECK(relative_error(r.time_ms, c.at("time_ms").get<double>()) <= tolerance.at("time_ms").get<double>());
      INFO("DRAM read " << r.dram_read_bytes << " B, recorded " << c.at("dram_read_bytes").get<double>());
      CHECK(relative_error(static_cast<double>(r.dram_read_bytes), c.at("dram_read_bytes").get<double>()) <=
            tolerance.at("dram_read_bytes").get<double>());
      CHECK(relative_error(static_cast<double>(r.dram_write_bytes), c.at("dram_write_bytes").get<double>()) <=
            tolerance.at("dram_write_bytes").get<double>());
      INFO("L2 hit rate " << r.l2_hit_rate << ", recorded " << c.at("l2_hit_rate").get<double>());
      CHECK(100 * std::abs(r.l2_hit_rate - c.at("l2_hit_rate").get<double>()) <=
            tolerance.at("l2_hit_rate_points").get<double>());
    }
  }
}
