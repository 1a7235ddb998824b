// The "quant" part of a kernel spec (models/src/kernel_spec.cpp, parse_weight_quant): mixed-input
// GEMMs (bf16 x int8/uint8) and the combinations their kernel cannot run.
#include "models/kernel_spec.h"
#include "models/spec_error.h"
#include "tests/spec_error_text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace tilesim;
using nlohmann::json;

namespace {

json decode() {
  return json::parse(R"({"name":"d","kind":"gemm","dtype":"bf16","b_dtype":"int8","m":16,"n":8192,"k":8192,
    "layout":{"a":"row","b":"col"},"tile":{"m":16,"n":64,"k":128},"stages":12,"warps":20,"load":"tma",
    "persistent":true,"order":"row_major"})");
}

} // namespace

TEST_CASE("a bf16 x int8 spec is mixed-input with per-channel scales and the prmt conversion by default",
          "[quant]") {
  const KernelSpec s = parse_kernel_spec(decode(), "spec.json");
  CHECK(s.mixed_input());
  CHECK(s.quant.scale_group == 0);
  CHECK_FALSE(s.quant.zero_points);
  CHECK(s.quant.conversion == WeightConversion::prmt);
  CHECK(dtype_bits(s.b_dtype) == 8);
}

TEST_CASE("quant round-trips through to_json", "[quant]") {
  json j = decode();
  j["b_dtype"] = "uint8";
  j["quant"] = {{"scale_group", 128}, {"zero_points", true}, {"conversion", "cvt"}};
  const KernelSpec s = parse_kernel_spec(to_json(parse_kernel_spec(j, "a.json")), "b.json");
  CHECK(s.b_dtype == Dtype::uint8);
  CHECK(s.quant.scale_group == 128);
  CHECK(s.quant.zero_points);
  CHECK(s.quant.conversion == WeightConversion::cvt);
  CHECK_FALSE(s.quant.tma_store);
  j["tile"] = {{"m", 224}, {"n", 128}, {"k", 64}};
  j["quant"]["store"] = "tma";
  CHECK(parse_kernel_spec(to_json(parse_kernel_spec(j, "a.json")), "b.json").quant.tma_store);
}

TEST_CASE("bad mixed-input specs name the field and the fix", "[quant]") {
  json j = decode();
  SECTION("k not a multiple of the group") {
    j["k"] = 4160;
    j["quant"] = {{"scale_group", 128}};
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("quant.scale_group") && Catch::Contains("does not divide k = 4160"));
  }
  SECTION("a group size the kernel does not have") {
    j["quant"] = {{"scale_group", 64}};
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("quant.scale_group") && Catch::Contains("use 0 (per channel) or 128"));
  }
  SECTION("uint8 without zero points") {
    j["b_dtype"] = "uint8";
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("uint8 weights need per-channel zero points"));
  }
  SECTION("int8 with zero points") {
    j["quant"] = {{"zero_points", true}};
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("int8 weights are symmetric"));
  }
  SECTION("an unsupported pair of dtypes") {
    j["dtype"] = "fp16";
    j["b_dtype"] = "uint8";
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("b_dtype") && Catch::Contains("only with bf16 activations"));
  }
  SECTION("quant on a GEMM that converts nothing") {
    j["b_dtype"] = "bf16";
    j["tile"]["k"] = 64;
    j["quant"] = {{"scale_group", 128}};
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("quant") && Catch::Contains("drop it"));
  }
  SECTION("an unknown conversion") {
    j["quant"] = {{"conversion", "lut"}};
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("quant.conversion") && Catch::Contains("use \"prmt\" or \"cvt\""));
  }
  SECTION("an unknown store") {
    j["quant"] = {{"store", "stmatrix"}};
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("quant.store") && Catch::Contains("use \"elements\" or \"tma\""));
  }
  SECTION("the TMA store on a 64-channel tile") {
    j["quant"] = {{"store", "tma"}};
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("quant.store") && Catch::Contains("use tile.n 128"));
  }
  SECTION("an unknown quant key") {
    j["quant"] = {{"zero_point", true}};
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("zero_point"));
  }
}
