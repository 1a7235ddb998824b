#include "models/elementwise_spec.h"

#include <nlohmann/json.hpp>

#include <bit>
#include <string_view>

namespace tilesim {
namespace {

struct OpName {
  ElementwiseOp op;
  const char* name;
  int inputs;
};
constexpr OpName kOps[] = {{ElementwiseOp::add, "add", 2},
                           {ElementwiseOp::mul, "mul", 2},
                           {ElementwiseOp::relu, "relu", 1},
                           {ElementwiseOp::gelu, "gelu", 1}};

struct EpilogueName {
  GemmEpilogue epilogue;
  const char* name;
};
constexpr EpilogueName kEpilogues[] = {
    {GemmEpilogue::none, "none"}, {GemmEpilogue::bias_relu, "bias_relu"}, {GemmEpilogue::bias_gelu, "bias_gelu"}};

// 2^36 elements: 256 GiB of fp32, more than any GPU holds; beyond it a count is a typo.
constexpr long long kMaxElements = 1LL << 36;
// A CTA has at most 1024 threads (CUDA C++ Programming Guide, Technical Specifications); below a
// warp the lanes of the one warp idle.
constexpr int kMinBlock = 32, kMaxBlock = 1024;
// One load instruction moves at most 16 bytes per thread (ld.global.v4.b32, PTX ISA 9.7.9.8).
constexpr int kMaxVectorBytes = 16;

// "command": where a dataset spec came from, as the GEMM specs of validation/data carry it.
constexpr std::string_view kElementwiseKeys[] = {"name",   "kind",   "op",         "elements", "dtype",
                                                 "block",  "vector", "unroll",     "persistent", "command"};

} // namespace

std::string to_string(ElementwiseOp op) {
  for (const auto& o : kOps)
    if (o.op == op) return o.name;
  return "unknown";
}

int input_count(ElementwiseOp op) {
  for (const auto& o : kOps)
    if (o.op == op) return o.inputs;
  return 0;
}

std::string to_string(GemmEpilogue epilogue) {
  for (const auto& e : kEpilogues)
    if (e.epilogue == epilogue) return e.name;
  return "unknown";
}

GemmEpilogue parse_gemm_epilogue(const JsonFields& f) {
  const std::string name = f.string_or("epilogue", "none");
  for (const auto& e : kEpilogues)
    if (name == e.name) return e.epilogue;
  f.fail("epilogue", "unknown epilogue '" + name + "'", "use \"none\", \"bias_relu\" or \"bias_gelu\"");
}

void parse_elementwise_spec(const JsonFields& f, KernelSpec& s) {
  f.refuse_unknown_keys(kElementwiseKeys);
  ElementwiseShape& e = s.elementwise;
  const std::string op = f.string("op");
  bool known = false;
  for (const auto& o : kOps)
    if (op == o.name) e.op = o.op, known = true;
  if (!known) f.fail("op", "unknown operation '" + op + "'", "use \"add\", \"mul\", \"relu\" or \"gelu\"");

  e.elements = f.integer("elements", -kMaxElements, kMaxElements);
  if (e.elements <= 0)
    f.fail("elements", "is " + std::to_string(e.elements) + ", not a positive count", "give at least 1 element");

  if (s.a_dtype != Dtype::fp32 && s.a_dtype != Dtype::bf16 && s.a_dtype != Dtype::fp16)
    f.fail("dtype", "is " + to_string(s.a_dtype) + ", which element-wise kernels do not take",
           "use \"fp32\", \"bf16\" or \"fp16\"");
  s.b_dtype = s.c_dtype = s.a_dtype;
  const int bytes = dtype_bits(s.a_dtype) / 8;

  e.shape_named = f.has("block") || f.has("unroll");
  e.block = static_cast<int>(f.integer_or("block", 256, 1, kMaxBlock));
  if (!std::has_single_bit(static_cast<unsigned>(e.block)) || e.block < kMinBlock)
    f.fail("block", "is " + std::to_string(e.block) + ", not a power of two from 32 to 1024",
           "use 128, 256, 512 or 1024 threads");
  const int max_vector = kMaxVectorBytes / bytes;
  e.vector = static_cast<int>(f.integer_or("vector", max_vector, 1, 1 << 20));
  if (!std::has_single_bit(static_cast<unsigned>(e.vector)) || e.vector > max_vector)
    f.fail("vector", "is " + std::to_string(e.vector) + ", not a power of two of at most 16 bytes of " +
                         to_string(s.a_dtype),
           "use " + std::to_string(max_vector) + " (one 16-byte load per thread) or a smaller power of two");
  e.unroll = static_cast<int>(f.integer_or("unroll", 1, 1, 1 << 20));
  if (e.unroll != 1 && e.unroll != 2 && e.unroll != 4)
    f.fail("unroll", "is " + std::to_string(e.unroll) + ", not 1, 2 or 4", "use 1, 2 or 4 vectors per thread and step");
  s.persistent = f.boolean_or("persistent", false);
  // The GEMM fields have no meaning here; the simulator's ring holds one step per CTA.
  s.warps = e.block / 32;
  s.stages = 1;
  s.cluster = 1;
  s.load = LoadPath::cp_async;
}

nlohmann::json elementwise_spec_json(const KernelSpec& s) {
  const ElementwiseShape& e = s.elementwise;
  nlohmann::json j = {{"name", s.name},         {"kind", "elementwise"},         {"op", to_string(e.op)},
                      {"elements", e.elements}, {"dtype", to_string(s.a_dtype)}, {"vector", e.vector},
                      {"persistent", s.persistent}};
  if (e.shape_named) j["block"] = e.block, j["unroll"] = e.unroll; // else the launcher's pick, by the GPU
  return j;
}

} // namespace tilesim
