#include "models/kernel_spec.h"
#include "models/spec_error.h"
#include "tests/spec_error_text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

#include <numeric>

using namespace tilesim;
using nlohmann::json;

namespace {

json dense() {
  return json::parse(R"({"name":"g8","kind":"gemm","dtype":"bf16","m":8192,"n":8192,"k":8192,
    "layout":{"a":"row","b":"row"},"tile":{"m":128,"n":128,"k":64},"stages":4,"warps":8,"load":"tma",
    "persistent":true,"order":"grouped_m:8"})");
}

} // namespace

TEST_CASE("the issue's example spec parses verbatim") {
  const KernelSpec s = parse_kernel_spec(dense(), "spec.json");
  CHECK(s.name == "g8");
  CHECK(s.kind == KernelKind::gemm);
  CHECK(s.total_m() == 8192);
  CHECK(s.tile.k == 64);
  CHECK(s.persistent);
  CHECK(s.order.kind == LaunchOrderKind::grouped_m);
  CHECK(s.order.group == 8);
  CHECK(s.flops() == Approx(2.0 * 8192.0 * 8192.0 * 8192.0));
  CHECK(s.tile_row_offsets() == std::vector<int>{0, 64});
}

TEST_CASE("grouped specs: an expert list, a compact list, or a router model") {
  json j = dense();
  j.erase("m");
  j["kind"] = "grouped_gemm";
  SECTION("expert objects with zero-token experts") {
    j["experts"] = json::parse(R"([{"m":300},{"m":0},{"m":129}])");
    const KernelSpec s = parse_kernel_spec(j, "spec.json");
    CHECK(s.experts() == 3);
    CHECK(s.tile_row_offsets() == std::vector<int>{0, 3, 3, 5});
  }
  SECTION("bare numbers") {
    j["experts"] = json::parse("[1, 2, 3]");
    CHECK(parse_kernel_spec(j, "spec.json").total_m() == 6);
  }
  SECTION("balanced routing gives every expert tokens*top_k/experts") {
    j["routing"] = json::parse(R"({"tokens":4096,"top_k":8,"experts":256})");
    const KernelSpec s = parse_kernel_spec(j, "spec.json");
    CHECK(s.experts() == 256);
    CHECK(s.expert_tokens.front() == 128);
    CHECK(s.expert_tokens.back() == 128);
  }
  SECTION("skewed routing keeps the total, is deterministic and uneven") {
    j["routing"] = json::parse(R"({"tokens":4096,"top_k":8,"experts":64,"zipf_s":1.2,"seed":3})");
    const KernelSpec a = parse_kernel_spec(j, "spec.json");
    const KernelSpec b = parse_kernel_spec(j, "spec.json");
    CHECK(a.expert_tokens == b.expert_tokens);
    CHECK(a.total_m() == 4096 * 8);
    const auto [lo, hi] = std::minmax_element(a.expert_tokens.begin(), a.expert_tokens.end());
    CHECK(*hi > 4 * *lo);
    CHECK(*hi <= 4096); // a token visits an expert at most once
  }
}

TEST_CASE("malformed specs name the field") {
  json j = dense();
  SECTION("missing field") {
    j.erase("n");
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("spec.json: n: is missing"));
  }
  SECTION("mistyped field") {
    j["k"] = "8192";
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("k: must be an integer"));
  }
  SECTION("zero or negative sizes") {
    j["m"] = 0;
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("m: is 0, outside 1.."));
    j["m"] = -5;
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("m: is -5"));
  }
  SECTION("unknown dtype") {
    j["dtype"] = "bf17";
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("dtype: unknown dtype 'bf17'"));
  }
  SECTION("unknown order") {
    j["order"] = "spiral";
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("order: unknown launch order 'spiral'"));
  }
  SECTION("absurd stage count") {
    j["stages"] = 1000;
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("stages: is 1000, outside 1..16"));
  }
  SECTION("impossible tile") {
    j["tile"]["m"] = 100;
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("tile.m: is 100, not a multiple of 16"));
    j["tile"]["m"] = 128;
    j["tile"]["k"] = 8;
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("tile.k"));
  }
  SECTION("warps not in warpgroups") {
    j["warps"] = 6;
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("warps: is 6"));
  }
  SECTION("unknown kind and layout") {
    j["layout"]["b"] = "diagonal";
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("layout.b: unknown layout"));
    j["kind"] = "conv";
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("kind: unknown kind 'conv'"));
  }
  SECTION("grouped: no experts, an empty list, all-zero experts, a negative expert") {
    j.erase("m");
    j["kind"] = "grouped_gemm";
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("experts: is missing"));
    j["experts"] = json::array();
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("experts: is empty"));
    j["experts"] = json::parse(R"([{"m":0},{"m":0}])");
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("every expert has zero tokens"));
    j["experts"] = json::parse(R"([{"m":4},{"m":-1}])");
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("experts[1].m: is -1"));
  }
  SECTION("not a JSON object, not JSON at all, a missing file") {
    CHECK_THAT(testing::kernel_spec_error_of(json::array()), Catch::Contains("is not a JSON object"));
    CHECK_THROWS_WITH(load_kernel_spec(TILESIM_SOURCE_DIR "/CMakeLists.txt"), Catch::Contains("is not valid JSON"));
    CHECK_THROWS_WITH(load_kernel_spec("/nonexistent/spec.json"), Catch::Contains("/nonexistent/spec.json: kernel spec: cannot be read"));
  }
}

TEST_CASE("every shipped kernel spec loads") {
  for (const char* name : {"default", "deepseek_v3_up_balanced", "deepseek_v3_up_skewed", "mixtral_up", "dense_8192"}) {
    INFO(name);
    CHECK_NOTHROW(load_kernel_spec(std::string(TILESIM_SOURCE_DIR) + "/models/kernels/" + name + ".json"));
  }
}
