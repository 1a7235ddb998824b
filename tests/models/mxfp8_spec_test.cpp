#include "models/kernel_spec.h"
#include "models/mxfp8_spec.h"

#include "tests/spec_error_text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace tilesim;
using nlohmann::json;

namespace {

json quantiser() {
  return json::parse(R"({"name":"q","kind":"mxfp8_quantize","dtype":"bf16","rows":16384,"cols":7168})");
}

} // namespace

TEST_CASE("an mxfp8_quantize spec: rowwise, round-up scales and E4M3 by default, and its JSON form") {
  const KernelSpec s = parse_kernel_spec(quantiser(), "spec.json");
  CHECK(s.kind == KernelKind::mxfp8_quantize);
  CHECK_FALSE(s.is_gemm());
  CHECK(s.mxfp8.rows == 16384);
  CHECK(s.mxfp8.cols == 7168);
  CHECK(s.mxfp8.axis == Mxfp8Axis::rowwise);
  CHECK(s.mxfp8.scale_rule == Mxfp8ScaleRule::round_up);
  CHECK(s.mxfp8.element == Mxfp8Element::e4m3);
  CHECK(s.flops() == 16384.0 * 7168.0);

  json j = quantiser();
  j["axis"] = "colwise";
  j["scale_rule"] = "floor";
  j["element"] = "e5m2";
  const KernelSpec again = parse_kernel_spec(to_json(parse_kernel_spec(j, "spec.json")), "again.json");
  CHECK(again.mxfp8.axis == Mxfp8Axis::colwise);
  CHECK(again.mxfp8.scale_rule == Mxfp8ScaleRule::floor);
  CHECK(again.mxfp8.element == Mxfp8Element::e5m2);
}

TEST_CASE("an mxfp8_quantize spec refuses what the quantiser cannot cut into blocks, naming the field") {
  json j = quantiser();
  j["cols"] = 7170;
  CHECK(testing::kernel_spec_error_of(j) ==
        "spec.json: cols: is 7170, not a multiple of 32 (the MX block) for rowwise blocks; pad it to 7200");
  j = quantiser();
  j["axis"] = "colwise";
  j["rows"] = 100;
  CHECK(testing::kernel_spec_error_of(j) ==
        "spec.json: rows: is 100, not a multiple of 32 (the MX block) for colwise blocks; pad it to 128");
  j["rows"] = 128;
  j["cols"] = 12;
  CHECK(testing::kernel_spec_error_of(j).find("cols: is 12, not a multiple of 8") != std::string::npos);
  j = quantiser();
  j["dtype"] = "fp16";
  CHECK(testing::kernel_spec_error_of(j).find("dtype: is fp16, which the MXFP8 quantiser does not take; use \"bf16\"") != std::string::npos);
  j = quantiser();
  j["element"] = "e2m1";
  CHECK(testing::kernel_spec_error_of(j).find("element: unknown value 'e2m1'; use \"e4m3\" or \"e5m2\"") != std::string::npos);
  j = quantiser();
  j["scale"] = "floor";
  CHECK(testing::kernel_spec_error_of(j).find("scale: is not a known key") != std::string::npos);
  j = quantiser();
  j["rows"] = 0;
  CHECK(testing::kernel_spec_error_of(j).find("rows") != std::string::npos);
}
