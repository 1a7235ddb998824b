// The spec loader's refusals that keep a run meaningful (issue 17): unknown and duplicate keys,
// kind-specific fields, and counts that must be made in 64 bits.
#include "models/json_input.h"
#include "models/kernel_spec.h"
#include "models/spec_error.h"

#include "tests/spec_error_text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>

using namespace tilesim;
using nlohmann::json;

namespace {

json dense() {
  return json::parse(R"({"name":"g8","kind":"gemm","dtype":"bf16","m":8192,"n":8192,"k":8192,
    "layout":{"a":"row","b":"col"},"tile":{"m":128,"n":128,"k":64},"stages":4,"warps":8,"load":"tma",
    "persistent":true,"cluster":1,"order":"grouped_m:8"})");
}

json grouped() {
  json j = dense();
  j.erase("m");
  j["kind"] = "grouped_gemm";
  j["experts"] = json::parse("[300, 0, 129]");
  return j;
}

std::string error_of(const json& j) {
  return testing::spec_error_of([&] { parse_kernel_spec(j, "spec.json"); });
}

} // namespace

TEST_CASE("misspelt and unknown spec keys are refused, at every level") {
  // The issue's case: "persistant": true ran non-persistent without a word.
  json j = dense();
  j.erase("persistent");
  j["persistant"] = true;
  CHECK_THAT(error_of(j), Catch::StartsWith("spec.json: persistant: is not a known key; did you mean \"persistent\"?"));
  SECTION("inside tile, layout, routing and an expert") {
    json t = dense();
    t["tile"]["kk"] = 64;
    CHECK_THAT(error_of(t), Catch::Contains("tile.kk: is not a known key; did you mean \"k\""));
    t = dense();
    t["layout"]["c"] = "row";
    CHECK_THAT(error_of(t), Catch::Contains("layout.c: is not a known key"));
    t = grouped();
    t.erase("experts");
    t["routing"] = json::parse(R"({"tokens":4096,"topk":8,"experts":64})");
    CHECK_THAT(error_of(t), Catch::Contains("routing.topk: is not a known key; did you mean \"top_k\""));
    t = grouped();
    t["experts"] = json::parse(R"([{"m":128,"n":64}])");
    CHECK_THAT(error_of(t), Catch::Contains("experts[0].n: is not a known key"));
  }
  SECTION("comments are kept") {
    j = dense();
    j["comment"] = "why this shape";
    j["x-origin"] = {{"run", 3}};
    CHECK(error_of(j) == "no error");
  }
}

TEST_CASE("a duplicate spec key is refused, not last-wins") {
  CHECK_THROWS_WITH(parse_kernel_spec(parse_json_text(R"({"kind":"gemm","persistent":true,"persistent":false})", "spec.json",
                                                      "kernel spec"),
                                      "spec.json"),
                    "spec.json: persistent: appears twice in one object; keep one of the two");
}

TEST_CASE("fields of another kind are refused") {
  json j = dense();
  j["experts"] = json::array({1, 2});
  CHECK_THAT(error_of(j), Catch::Contains("spec.json: experts: is for grouped_gemm"));
  j = grouped();
  j["m"] = 4096;
  CHECK_THAT(error_of(j), Catch::Contains("spec.json: m: is for gemm"));
  j = grouped();
  j["routing"] = json::parse(R"({"tokens":64,"experts":4})");
  CHECK_THAT(error_of(j), Catch::Contains("routing: is given with experts"));
}

TEST_CASE("the tile count is counted in 64 bits and bounded") {
  // The issue's case: m = 2^20, n = 524296 with 16x8 tiles is 65536 x 65537 = 4,295,032,832 tiles,
  // which an int wrapped to 65536 and the simulator then reported at 20,780 TFLOP/s.
  json j = dense();
  j["m"] = 1048576;
  j["n"] = 524296;
  j["tile"] = {{"m", 16}, {"n", 8}, {"k", 64}};
  CHECK_THAT(error_of(j), Catch::Contains("tile.m: makes 4295032832 output tiles, more than the 4194304"));
  SECTION("the limit itself: 2^22 tiles load, one more row of them does not") {
    j["m"] = 2048 * 16;
    j["n"] = 2048 * 8;
    CHECK(error_of(j) == "no error");
    j["m"] = 2049 * 16;
    CHECK_THAT(error_of(j), Catch::Contains("makes 4196352 output tiles"));
  }
}

TEST_CASE("router work is bounded so a spec cannot hang the loader") {
  json j = grouped();
  j.erase("experts");
  j["routing"] = json::parse(R"({"tokens":1048576,"top_k":4096,"experts":4096})");
  CHECK_THAT(error_of(j), Catch::Contains("routing.tokens: times top_k"));
  j["routing"] = json::parse(R"({"tokens":1048576,"top_k":16,"experts":4096,"zipf_s":1.1})");
  CHECK_THAT(error_of(j), Catch::Contains("routing.tokens: times top_k"));
  j["routing"] = json::parse(R"({"tokens":4096,"top_k":8,"experts":256,"zipf_s":1.1})"); // DeepSeek-V3-like
  CHECK(error_of(j) == "no error");
}

TEST_CASE("a spec inside a result names its field path") {
  json j = dense();
  j["stages"] = 0;
  CHECK_THROWS_WITH(parse_kernel_spec(j, "r.json", "kernel"), Catch::StartsWith("r.json: kernel.stages: is 0"));
}

TEST_CASE("every committed kernel spec loads under the unknown-key check") {
  // A field someone adds to specs but not to its loader's key list shows up here first.
  int loaded = 0;
  for (const char* folder : {"/models/kernels", "/validation/data"})
    for (const auto& entry : std::filesystem::recursive_directory_iterator(std::string(TILESIM_SOURCE_DIR) + folder)) {
      if (entry.path().extension() != ".json" || entry.path().parent_path().filename() == "measured") continue;
      const json j = read_json_file(entry.path().string(), "kernel spec");
      if (!j.is_object() || !j.contains("kind") || j.contains("schema")) continue; // results carry their spec inside
      INFO(entry.path().string());
      CHECK_NOTHROW(parse_kernel_spec(j, entry.path().string()));
      ++loaded;
    }
  CHECK(loaded >= 5 + 132); // the shipped examples and the H100 dataset's specs
}
