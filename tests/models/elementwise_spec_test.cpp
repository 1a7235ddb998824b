#include "models/elementwise_launch_shape.h"
#include "models/elementwise_spec.h"
#include "models/kernel_spec.h"
#include "models/spec_error.h"
#include "tests/spec_error_text.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace tilesim;
using nlohmann::json;

namespace {

json vector_add() {
  return json::parse(R"({"name":"add","kind":"elementwise","op":"add","elements":16777216,"dtype":"fp32"})");
}

} // namespace

TEST_CASE("an element-wise spec takes 16-byte vectors, 256 threads and the grid form by default") {
  const KernelSpec s = parse_kernel_spec(vector_add(), "spec.json");
  CHECK(s.kind == KernelKind::elementwise);
  CHECK(s.elementwise.op == ElementwiseOp::add);
  CHECK(s.elementwise.elements == 16777216);
  CHECK(s.elementwise.block == 256);
  CHECK(s.elementwise.vector == 4); // 16 bytes of fp32
  CHECK(s.elementwise.unroll == 1);
  CHECK(s.elementwise.chunk() == 1024);
  CHECK_FALSE(s.persistent);
  CHECK(s.flops() == 16777216.0);
  CHECK(input_count(ElementwiseOp::add) == 2);
  CHECK(input_count(ElementwiseOp::gelu) == 1);

  json j = vector_add();
  j["dtype"] = "bf16";
  j["unroll"] = 2;
  j["persistent"] = true;
  const KernelSpec b = parse_kernel_spec(j, "spec.json");
  CHECK(b.elementwise.vector == 8); // 16 bytes of bf16
  CHECK(b.elementwise.chunk() == 256 * 8 * 2);
  CHECK(b.persistent);
}

TEST_CASE("an element-wise spec survives its JSON form") {
  json j = vector_add();
  j["op"] = "gelu";
  j["block"] = 128;
  j["vector"] = 2;
  const KernelSpec s = parse_kernel_spec(j, "spec.json");
  const KernelSpec again = parse_kernel_spec(to_json(s), "again.json");
  CHECK(again.elementwise.op == ElementwiseOp::gelu);
  CHECK(again.elementwise.block == 128);
  CHECK(again.elementwise.vector == 2);
  CHECK(again.elementwise.elements == s.elementwise.elements);
  CHECK(to_json(again) == to_json(s));
}

TEST_CASE("a spec that names neither block nor unroll leaves them to the launcher, and its JSON form says so") {
  const KernelSpec s = parse_kernel_spec(vector_add(), "spec.json");
  CHECK_FALSE(s.elementwise.shape_named);
  CHECK_FALSE(to_json(s).contains("block"));
  CHECK_FALSE(to_json(s).contains("unroll"));
  CHECK_FALSE(parse_kernel_spec(to_json(s), "again.json").elementwise.shape_named);
  json j = vector_add();
  j["unroll"] = 1; // naming either one names the shape, the other taking its default
  const KernelSpec named = parse_kernel_spec(j, "spec.json");
  CHECK(named.elementwise.shape_named);
  CHECK(to_json(named)["block"] == 256);
}

TEST_CASE("the launcher takes 64 x 4 x 4 where the 256 x 4 grid is one wave over half the threads, no CTA masked") {
  // H100: 132 SMs of 2048 threads, 8 CTAs of 256 a SM: a wave is 1056 CTAs of 1024 fp32 elements, half
  // of it 528. So 529 to 1056 whole CTAs: 541,696 to 1,081,344 elements, multiples of 1024.
  constexpr auto h100 = [](long long n) { return elementwise_launch_shape(n, Dtype::fp32, 4, false, 132, 2048); };
  CHECK(h100(1 << 20).block == 64);
  CHECK(h100(1 << 20).unroll == 4);
  CHECK(h100(786432).block == 64);
  CHECK(h100(541696).block == 64);   // 529 CTAs
  CHECK(h100(540672).block == 256);  // 528: half the threads, not more
  CHECK(h100(1081344).block == 64);  // 1056: the whole wave
  CHECK(h100(1082368).block == 256); // 1057: a second wave
  CHECK(h100(1082368).unroll == 1);
  CHECK(h100(1000003).block == 256); // a masked CTA: 64 x 4 x 4's tail is slower
  CHECK(h100(1047552 + 4).block == 256);
  CHECK(h100(1 << 16).block == 256);
  CHECK(h100(1 << 24).block == 256);
  // Only what was measured takes the rule: fp32 in 16-byte vectors, grid form.
  CHECK(elementwise_launch_shape(1 << 20, Dtype::fp32, 4, true, 132, 2048).block == 256);
  CHECK(elementwise_launch_shape(1 << 20, Dtype::fp32, 2, false, 132, 2048).block == 256);
  CHECK(elementwise_launch_shape(1 << 21, Dtype::bf16, 8, false, 132, 2048).block == 256);
  // B200 (148 SMs): the wave is 1184 CTAs, so 1,212,416 elements (1184 CTAs) is 64 x 4 x 4 there and
  // 606,208 (592, half) is not.
  CHECK(elementwise_launch_shape(1212416, Dtype::fp32, 4, false, 148, 2048).block == 64);
  CHECK(elementwise_launch_shape(606208, Dtype::fp32, 4, false, 148, 2048).block == 256);
}

TEST_CASE("bad element-wise specs name the field and the fix") {
  json j = vector_add();
  SECTION("zero elements") {
    j["elements"] = 0;
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("spec.json: elements: is 0, not a positive count"));
  }
  SECTION("negative elements") {
    j["elements"] = -5;
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("elements: is -5, not a positive count"));
  }
  SECTION("a block that is not a power of two") {
    j["block"] = 96;
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("block: is 96, not a power of two from 32 to 1024"));
  }
  SECTION("a block past the CTA limit") {
    j["block"] = 2048;
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("block:"));
  }
  SECTION("an unknown operation") {
    j["op"] = "sub";
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("op: unknown operation 'sub'; use \"add\", \"mul\", \"relu\" or \"gelu\""));
  }
  SECTION("a vector wider than 16 bytes") {
    j["vector"] = 8;
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("vector: is 8, not a power of two of at most 16 bytes of fp32"));
  }
  SECTION("an unroll the kernel has no instantiation for") {
    j["unroll"] = 3;
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("unroll: is 3, not 1, 2 or 4"));
  }
  SECTION("a dtype the kernel does not take") {
    j["dtype"] = "fp8_e4m3";
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("dtype: is fp8_e4m3"));
  }
  SECTION("a missing op") {
    j.erase("op");
    CHECK_THAT(testing::kernel_spec_error_of(j), Catch::Contains("op: is missing"));
  }
}

TEST_CASE("a GEMM's epilogue is none unless named, and an unknown one is refused") {
  const json gemm = json::parse(R"({"kind":"gemm","dtype":"bf16","m":256,"n":256,"k":256,
    "tile":{"m":128,"n":128,"k":64},"stages":4,"warps":8})");
  CHECK(parse_kernel_spec(gemm, "g.json").epilogue == GemmEpilogue::none);
  CHECK_FALSE(to_json(parse_kernel_spec(gemm, "g.json")).contains("epilogue"));
  json fused = gemm;
  fused["epilogue"] = "bias_gelu";
  const KernelSpec s = parse_kernel_spec(fused, "g.json");
  CHECK(s.epilogue == GemmEpilogue::bias_gelu);
  CHECK(parse_kernel_spec(to_json(s), "again.json").epilogue == GemmEpilogue::bias_gelu);
  fused["epilogue"] = "bias_tanh";
  CHECK_THAT(testing::kernel_spec_error_of(fused), Catch::Contains("epilogue: unknown epilogue 'bias_tanh'"));
}
