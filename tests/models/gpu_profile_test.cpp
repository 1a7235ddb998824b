#include "models/gpu_profile.h"
#include "models/spec_error.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>

using namespace tilesim;

namespace {

std::string write_temp(const nlohmann::json& j) {
  const std::string path = "/tmp/tilesim_profile_test.json";
  std::ofstream(path) << j.dump();
  return path;
}

nlohmann::json h100_json() {
  std::ifstream in(gpu_profile_dir() + "/h100_sxm.json");
  return nlohmann::json::parse(in);
}

} // namespace

TEST_CASE("shipped profiles load, and their tensor rates match their datasheets") {
  CHECK(shipped_gpu_names() == std::vector<std::string>{"a100", "b200", "h100", "h200"});
  const GpuProfile h100 = load_gpu_profile("h100");
  CHECK(h100.sm.count == 132);
  CHECK(h100.l2.size_bytes == 50 * 1024 * 1024);
  // H100 SXM5 datasheet: 989.4 dense BF16 TFLOP/s = 132 SMs x 4096 FLOP/cycle x 1830 MHz.
  CHECK(h100.tensor.bf16 * 132 * 1830e6 == Approx(989.4e12).epsilon(0.01));
  const GpuProfile a100 = load_gpu_profile("a100");
  // A100 SXM4 datasheet: 312 dense BF16 TFLOP/s at 1410 MHz over 108 SMs.
  CHECK(a100.tensor.bf16 * a100.sm.count * 1410e6 == Approx(312e12).epsilon(0.01));
  CHECK_THROWS_WITH(a100.tensor_flops_per_cycle(Dtype::fp8_e4m3, Dtype::fp8_e4m3), Catch::Contains("not supported"));
}

TEST_CASE("malformed profiles name the field") {
  auto j = h100_json();
  SECTION("a bare number without its source") {
    j["sm"]["count"] = 132;
    CHECK_THROWS_WITH(load_gpu_profile_file(write_temp(j)), Catch::Contains("sm.count: is not a JSON object"));
  }
  SECTION("an empty source") {
    j["l2"]["ways"]["source"] = "";
    CHECK_THROWS_WITH(load_gpu_profile_file(write_temp(j)), Catch::Contains("l2.ways.source: is empty"));
  }
  SECTION("a negative bandwidth") {
    j["dram"]["bandwidth_bytes_per_s"]["value"] = -1;
    CHECK_THROWS_WITH(load_gpu_profile_file(write_temp(j)), Catch::Contains("dram.bandwidth_bytes_per_s.value"));
  }
  SECTION("a missing section") {
    j.erase("tma");
    CHECK_THROWS_WITH(load_gpu_profile_file(write_temp(j)), Catch::Contains("tma: is missing"));
  }
  SECTION("a request coalescer of partial sets, or without the GPC map it works by") {
    j["l2"]["coalescer_ways"]["value"] = 3;
    CHECK_THROWS_WITH(load_gpu_profile_file(write_temp(j)), Catch::Contains("l2.coalescer_lines_per_gpc: is not a multiple"));
    j["l2"]["coalescer_ways"]["value"] = 4;
    j["sm"].erase("gpc");
    CHECK_THROWS_WITH(load_gpu_profile_file(write_temp(j)), Catch::Contains("l2.coalescer_lines_per_gpc: needs sm.gpc"));
  }
  SECTION("a GPC port of no rate, or without the GPC map it works by") {
    j["l2"]["gpc_port_bytes_per_s"]["value"] = 0;
    CHECK_THROWS_WITH(load_gpu_profile_file(write_temp(j)), Catch::Contains("l2.gpc_port_bytes_per_s.value"));
    j["l2"]["gpc_port_bytes_per_s"]["value"] = 1.287e12;
    j["l2"].erase("coalescer_lines_per_gpc");
    j["sm"].erase("gpc");
    CHECK_THROWS_WITH(load_gpu_profile_file(write_temp(j)), Catch::Contains("l2.gpc_port_bytes_per_s: needs sm.gpc"));
  }
  SECTION("an unknown GPU name") {
    CHECK_THROWS_WITH(load_gpu_profile("v100"), Catch::Contains("no such GPU profile"));
  }
}
