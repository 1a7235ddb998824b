// The profile loader's refusals (issue 17): unknown keys at every level, integer lists read
// without wrapping, an L2 the simulator can hold, and fields that must agree.
#include "models/gpu_profile.h"
#include "models/spec_error.h"

#include "tests/spec_error_text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <fstream>

using namespace tilesim;
using nlohmann::json;

namespace {

json h100_json() {
  std::ifstream in(gpu_profile_dir() + "/h100_sxm.json");
  return json::parse(in);
}

std::string error_of(const json& j) {
  return testing::spec_error_of([&] { parse_gpu_profile(j, "gpu.json"); });
}

} // namespace

TEST_CASE("every shipped profile parses under the unknown-key check") {
  for (const auto& name : shipped_gpu_names()) {
    INFO(name);
    CHECK_NOTHROW(load_gpu_profile(name));
  }
}

TEST_CASE("unknown profile keys are refused with a suggestion") {
  json j = h100_json();
  j["l2"]["size_byte"] = j["l2"]["size_bytes"];
  CHECK_THAT(error_of(j), Catch::StartsWith("gpu.json: l2.size_byte: is not a known key; did you mean \"size_bytes\"?"));
  j = h100_json();
  j["sm"]["count"]["sorce"] = "typo";
  CHECK_THAT(error_of(j), Catch::Contains("sm.count.sorce: is not a known key; did you mean \"source\""));
  j = h100_json();
  j["tensor_flops_per_cycle_per_sm"]["fp4"] = {{"value", 1}, {"source", "x"}};
  CHECK_THAT(error_of(j), Catch::Contains("tensor_flops_per_cycle_per_sm.fp4: is not a known key"));
  j = h100_json();
  j["comment"] = "free";
  CHECK(error_of(j) == "no error");
}

TEST_CASE("an SM list entry beyond int is refused, not wrapped into range") {
  json j = h100_json();
  j["sm"]["gpc"]["value"][3] = 4294967296LL + 2; // read through get<int>, this was GPC 2
  CHECK_THAT(error_of(j), Catch::Contains("sm.gpc.value[3]: is 4294967298, outside 0..131"));
  j = h100_json();
  j["l2"]["sm_partition"]["value"][0] = 1.5;
  CHECK_THAT(error_of(j), Catch::Contains("l2.sm_partition.value[0]: must be an integer"));
}

TEST_CASE("per-SM service factors: one per SM, each a number in 0.5..2") {
  json j = h100_json();
  j["l2"]["sm_service_factor"]["value"].erase(0);
  CHECK_THAT(error_of(j), Catch::Contains("l2.sm_service_factor.value: has 131 entries; give one per SM (132)"));
  j = h100_json();
  j["dram"]["sm_service_factor"]["value"][5] = 3.0;
  CHECK_THAT(error_of(j), Catch::Contains("dram.sm_service_factor.value[5]: is 3.0, outside 0.5..2"));
  j = h100_json();
  j["l2"]["sm_service_factor"]["value"][7] = "fast";
  CHECK_THAT(error_of(j), Catch::Contains("l2.sm_service_factor.value[7]: must be a number"));
  j = h100_json();
  j["dram"].erase("sm_service_factor"); // optional: every SM alike
  CHECK(error_of(j) == "no error");
  CHECK(load_gpu_profile("h100").l2.sm_service_factor.size() == 132);
}

TEST_CASE("an L2 the simulator cannot hold is refused by the loader, not by bad_alloc") {
  // The case: 1e12 bytes passed the loader's range and the cache's allocation threw bad_alloc.
  json j = h100_json();
  j["l2"]["size_bytes"]["value"] = 1e12;
  CHECK_THAT(error_of(j), Catch::Contains("l2.size_bytes.value: is 1000000000000.0, outside"));
  j["l2"]["size_bytes"]["value"] = 1 << 30;
  j["l2"]["slices"]["value"] = 64;
  CHECK(error_of(j) == "no error");
}

TEST_CASE("request coalescers the simulator cannot hold are refused") {
  json j = h100_json();
  for (int sm = 0; sm < 132; ++sm) j["sm"]["gpc"]["value"][sm] = sm; // 132 GPCs
  j["l2"]["coalescer_lines_per_gpc"]["value"] = 65536;                 // 8.6 Mi lines in all
  CHECK_THAT(error_of(j), Catch::Contains("l2.coalescer_lines_per_gpc: times the GPC count is more than 1 Mi lines"));
  j["l2"]["coalescer_lines_per_gpc"]["value"] = 4096; // 540,672 lines
  CHECK(error_of(j) == "no error");
}

TEST_CASE("profile fields that must agree") {
  json j = h100_json();
  j["sm"]["max_shared_memory_per_cta_bytes"]["value"] = 300 * 1024;
  CHECK_THAT(error_of(j), Catch::Contains("sm.max_shared_memory_per_cta_bytes: is more than shared_memory_bytes"));
  j = h100_json();
  j["sm"]["max_threads"]["value"] = 4096;
  CHECK_THAT(error_of(j), Catch::Contains("sm.max_threads: is more than 32 * max_warps"));
}

TEST_CASE("an unsupported dtype names the profile's file") {
  const GpuProfile a100 = load_gpu_profile("a100");
  CHECK_THROWS_WITH(a100.tensor_flops_per_cycle(Dtype::fp8_e4m3, Dtype::fp8_e4m3),
                    Catch::StartsWith(a100.source + ": tensor_flops_per_cycle_per_sm.fp8_e4m3"));
}

TEST_CASE("the mixed-input K-block costs: one per tile, looked up by tile, conversion and scales") {
  json j = h100_json();
  const GpuProfile p = parse_gpu_profile(j, "gpu.json");
  CHECK(p.mixed_input_k_block.of(16, false, false) == 645);
  CHECK(p.mixed_input_k_block.of(224, true, false) == 1503);
  CHECK(p.mixed_input_k_block.of(256, false, true) == 1363);
  CHECK(p.mixed_input_k_block.of(48, false, false) == 0); // not measured
  CHECK(p.mixed_input_k_block.stage_k(16) == 128);
  CHECK(p.mixed_input_k_block.stage_k(64) == 256); // two K blocks of 128 a stage
  CHECK(p.mixed_input_k_block.stage_k(224) == 64);
  CHECK(p.mixed_input_k_block.stage_k(48) == 0);
  j["mixed_input_k_block_cycles"]["value"]["cvt"].erase(0);
  CHECK_THAT(error_of(j), Catch::Contains("mixed_input_k_block_cycles.value.cvt: has 5 entries for 6 tile_m"));
  j = h100_json();
  j["mixed_input_k_block_cycles"]["value"]["tile_k"].erase(0);
  CHECK_THAT(error_of(j), Catch::Contains("mixed_input_k_block_cycles.value.tile_k: has 5 entries for 6 tile_m"));
  j = h100_json();
  j["mixed_input_k_block_cycles"]["value"]["prmt"][2] = 0;
  CHECK_THAT(error_of(j), Catch::Contains("mixed_input_k_block_cycles.value.prmt: holds a value that is not a cycle count"));
}

TEST_CASE("the MXFP8 stage costs: transposed ones by tile, 64 channels wherever transposed_tile_n is absent") {
  json j = h100_json();
  const GpuProfile p = parse_gpu_profile(j, "gpu.json");
  CHECK(p.mxfp8_stage.transposed_of(128, 64) == Approx(1059.2));
  CHECK(p.mxfp8_stage.transposed_of(128, 128) == Approx(1606.0));
  CHECK(p.mxfp8_stage.transposed_of(64, 128) == 0); // not measured
  j["mxfp8_stage_ns"]["value"].erase("transposed_tile_n");
  j["mxfp8_stage_ns"]["value"]["transposed_tile_m"] = {16, 128};
  j["mxfp8_stage_ns"]["value"]["transposed"] = {380.0, 1093.7};
  const GpuProfile narrow = parse_gpu_profile(j, "gpu.json");
  CHECK(narrow.mxfp8_stage.transposed_of(128, 64) == Approx(1093.7));
  CHECK(narrow.mxfp8_stage.transposed_of(128, 128) == 0);
  j = h100_json();
  j["mxfp8_stage_ns"]["value"]["transposed_tile_n"].erase(0);
  CHECK_THAT(error_of(j), Catch::Contains("mxfp8_stage_ns.value.transposed_tile_n: has 4 entries for 5 transposed_tile_m"));
}

TEST_CASE("tile scheduler costs by order: an order measured on its own costs its own pair, the others the common fit") {
  json j = h100_json();
  j["tile_scheduler"]["cycles_per_call"]["value"] = 2000;
  j["tile_scheduler"]["cycles_per_loop_trip"]["value"] = 10;
  j["tile_scheduler"]["hilbert"] = {{"cycles_per_call", {{"value", 250}, {"source", "a test"}}},
                                    {"cycles_per_loop_trip", {{"value", 110}, {"source", "a test"}}}};
  j["tile_scheduler"].erase("row_major");
  const GpuProfile p = parse_gpu_profile(j, "gpu.json");
  CHECK(p.tile_scheduler.cost(LaunchOrderKind::hilbert).cycles_per_call == 250);
  CHECK(p.tile_scheduler.cost(LaunchOrderKind::hilbert).cycles_per_loop_trip == 110);
  CHECK(p.tile_scheduler.cost(LaunchOrderKind::row_major).cycles_per_call == 2000);
  CHECK(p.tile_scheduler.cost(LaunchOrderKind::row_major).cycles_per_loop_trip == 10);
  j["tile_scheduler"]["hilbert"]["cycles_per_call"]["value"] = -1;
  CHECK_THAT(error_of(j), Catch::Contains("tile_scheduler.hilbert.cycles_per_call.value"));
  j = h100_json();
  j["tile_scheduler"]["grouped_m:8"] = j["tile_scheduler"]["grouped_m"];
  CHECK_THAT(error_of(j), Catch::Contains("tile_scheduler.grouped_m:8: is not a known key"));
}

TEST_CASE("the tiled GEMM's measured costs are optional and bounded") {
  json j = h100_json();
  CHECK(parse_gpu_profile(j, "gpu.json").tiled_gemm.cta_start_exit_cycles > 0);
  j.erase("tiled_gemm");
  const GpuProfile without = parse_gpu_profile(j, "gpu.json");
  CHECK(without.tiled_gemm.epilogue_cycles_per_output_kib == 0);
  CHECK(without.tiled_gemm.cta_start_exit_cycles == 0);
  CHECK(without.tiled_gemm.cta_first_load_cycles == 0);
  CHECK(without.tiled_gemm.epilogue_tail_cycles == 0);
  j = h100_json();
  j["tiled_gemm"].erase("cta_first_load_cycles"); // optional within the section
  j["tiled_gemm"].erase("epilogue_tail_cycles");
  CHECK(parse_gpu_profile(j, "gpu.json").tiled_gemm.cta_first_load_cycles == 0);
  CHECK(parse_gpu_profile(j, "gpu.json").tiled_gemm.epilogue_tail_cycles == 0);
  j["tiled_gemm"]["cta_first_load_cycles"] = {{"value", -1}, {"source", "a test"}};
  CHECK_THAT(error_of(j), Catch::Contains("tiled_gemm.cta_first_load_cycles.value"));
  j = h100_json();
  j["tiled_gemm"]["epilogue_tail_cycles"] = {{"value", -1}, {"source", "a test"}};
  CHECK_THAT(error_of(j), Catch::Contains("tiled_gemm.epilogue_tail_cycles.value"));
  j = h100_json();
  j["tiled_gemm"]["epilogue_cycles_per_output_kib"]["value"] = -5;
  CHECK_THAT(error_of(j), Catch::Contains("tiled_gemm.epilogue_cycles_per_output_kib.value"));
  j = h100_json();
  j["tiled_gemm"].erase("cta_start_exit_cycles");
  CHECK_THAT(error_of(j), Catch::Contains("tiled_gemm.cta_start_exit_cycles: is missing"));
}
