#include "models/mxfp8_spec.h"

#include <nlohmann/json.hpp>

#include <string_view>

namespace tilesim {
namespace {

// OCP MX v1.0: one shared scale per block of 32 elements.
constexpr long long kBlock = 32;
// 2^36 elements: 128 GiB of bf16, more than any GPU holds; beyond it a count is a typo.
constexpr long long kMaxElements = 1LL << 36;
constexpr long long kMaxDim = 1LL << 31;

constexpr std::string_view kMxfp8Keys[] = {"name", "kind",       "dtype",   "rows",   "cols",
                                           "axis", "scale_rule", "element", "command"};

template <typename Enum> struct Named {
  Enum value;
  const char *name;
};
constexpr Named<Mxfp8Axis> kAxes[] = {{Mxfp8Axis::rowwise, "rowwise"}, {Mxfp8Axis::colwise, "colwise"}};
constexpr Named<Mxfp8ScaleRule> kRules[] = {{Mxfp8ScaleRule::floor, "floor"}, {Mxfp8ScaleRule::round_up, "round_up"}};
constexpr Named<Mxfp8Element> kElements[] = {{Mxfp8Element::e4m3, "e4m3"}, {Mxfp8Element::e5m2, "e5m2"}};
constexpr Named<BlockScaleScheme> kSchemes[] = {{BlockScaleScheme::promote, "promote"},
                                                {BlockScaleScheme::dequantize, "dequantize"},
                                                {BlockScaleScheme::transposed, "transposed"},
                                                {BlockScaleScheme::xpass, "xpass"},
                                                {BlockScaleScheme::xpass_f16, "xpass_f16"}};
constexpr std::string_view kBlockScaleKeys[] = {"scheme", "block", "element"};

template <typename Enum, std::size_t N> std::string name_of(const Named<Enum> (&names)[N], Enum value) {
  for (const auto &n : names)
    if (n.value == value) return n.name;
  return "unknown";
}

template <typename Enum, std::size_t N>
Enum parse_named(const JsonFields &f, const char *key, const Named<Enum> (&names)[N], Enum fallback) {
  if (!f.has(key)) return fallback;
  const std::string given = f.string(key);
  std::string choices;
  for (const auto &n : names) {
    if (given == n.name) return n.value;
    choices += std::string(choices.empty() ? "" : " or ") + "\"" + n.name + "\"";
  }
  f.fail(key, "unknown value '" + given + "'", "use " + choices);
}

} // namespace

std::string to_string(Mxfp8Axis axis) { return name_of(kAxes, axis); }
std::string to_string(Mxfp8ScaleRule rule) { return name_of(kRules, rule); }
std::string to_string(Mxfp8Element element) { return name_of(kElements, element); }
std::string to_string(BlockScaleScheme scheme) { return name_of(kSchemes, scheme); }

void parse_mxfp8_quantize_spec(const JsonFields &f, KernelSpec &s) {
  f.refuse_unknown_keys(kMxfp8Keys);
  if (s.a_dtype != Dtype::bf16)
    f.fail("dtype", "is " + to_string(s.a_dtype) + ", which the MXFP8 quantiser does not take", "use \"bf16\"");
  Mxfp8QuantizeShape &q = s.mxfp8;
  q.rows = f.integer("rows", 1, kMaxDim);
  q.cols = f.integer("cols", 1, kMaxDim);
  q.axis = parse_named(f, "axis", kAxes, Mxfp8Axis::rowwise);
  q.scale_rule = parse_named(f, "scale_rule", kRules, Mxfp8ScaleRule::round_up);
  q.element = parse_named(f, "element", kElements, Mxfp8Element::e4m3);
  // The quantised dimension is cut into whole blocks of 32; a partial block has no defined scale.
  const char *quantised = q.axis == Mxfp8Axis::rowwise ? "cols" : "rows";
  const long long along = q.axis == Mxfp8Axis::rowwise ? q.cols : q.rows;
  if (along % kBlock != 0)
    f.fail(quantised,
           "is " + std::to_string(along) + ", not a multiple of 32 (the MX block) for " + to_string(q.axis) + " blocks",
           "pad it to " + std::to_string((along + kBlock - 1) / kBlock * kBlock));
  // The column quantiser loads 16-byte vectors of 8 bf16 along a row.
  if (q.axis == Mxfp8Axis::colwise && q.cols % 8 != 0)
    f.fail("cols", "is " + std::to_string(q.cols) + ", not a multiple of 8 (16-byte rows) for colwise blocks",
           "pad it to " + std::to_string((q.cols + 7) / 8 * 8));
  if (q.elements() > kMaxElements)
    f.fail("rows", "rows x cols = " + std::to_string(q.elements()) + " elements, more than 2^36",
           "quantise the tensor in parts");
  s.b_dtype = s.a_dtype;
  s.c_dtype = q.element == Mxfp8Element::e4m3 ? Dtype::fp8_e4m3 : Dtype::fp8_e5m2;
  // The GEMM fields have no meaning here.
  s.warps = 8;
  s.stages = 1;
  s.cluster = 1;
  s.load = LoadPath::cp_async;
}

nlohmann::json mxfp8_quantize_spec_json(const KernelSpec &s) {
  const Mxfp8QuantizeShape &q = s.mxfp8;
  return {{"name", s.name},
          {"kind", "mxfp8_quantize"},
          {"dtype", to_string(s.a_dtype)},
          {"rows", q.rows},
          {"cols", q.cols},
          {"axis", to_string(q.axis)},
          {"scale_rule", to_string(q.scale_rule)},
          {"element", to_string(q.element)}};
}

void parse_block_scale(const JsonFields &f, KernelSpec &s) {
  if (!s.mxfp8_gemm()) {
    if (f.has("block_scale"))
      f.fail("block_scale", "is for GEMMs with MXFP8 operands", "drop it, or set \"dtype\": \"mxfp8\"");
    return;
  }
  // OCP MX v1.0: one E8M0 scale per block of 32 consecutive elements along K.
  if (s.k % kBlock != 0)
    f.fail("k", "is " + std::to_string(s.k) + ", not a multiple of 32: MXFP8 operands carry one scale per 32 elements of K",
           "pad k to " + std::to_string((s.k + kBlock - 1) / kBlock * kBlock));
  if (!f.has("block_scale")) return;
  const JsonFields b = f.object("block_scale");
  b.refuse_unknown_keys(kBlockScaleKeys);
  const long long block = b.integer_or("block", kBlock, 1, 1LL << 20);
  if (block != kBlock)
    b.fail("block", "is " + std::to_string(block) + ": an MX scale covers 32 elements of K (scales [rows, k / 32])",
           "use 32");
  s.block_scale.scheme = parse_named(b, "scheme", kSchemes, BlockScaleScheme::promote);
  s.block_scale.element = parse_named(b, "element", kElements, Mxfp8Element::e4m3);
}

nlohmann::json block_scale_json(const KernelSpec &s) {
  return {{"scheme", to_string(s.block_scale.scheme)}, {"block", kBlock}, {"element", to_string(s.block_scale.element)}};
}

} // namespace tilesim
