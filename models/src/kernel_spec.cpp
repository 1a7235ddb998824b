#include "models/kernel_spec.h"

#include "models/elementwise_spec.h"
#include "models/mxfp8_spec.h"
#include "models/json_fields.h"
#include "models/launch_order_names.h"
#include "models/routing.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace tilesim {
namespace {

constexpr long long kMaxDim = 1 << 20;          // rows, columns or depth of one operand
constexpr long long kMaxExperts = 4096;
// Work items of one launch: a tile index is an int everywhere (launch_order.h, the kernels'
// scheduler), and the simulator keeps a record per tile; 4 Mi tiles is a 32768^2 grid.
constexpr long long kMaxTiles = 1LL << 22;
// Router work (tokens x top_k draws over the experts' weights): a few seconds at most.
constexpr long long kMaxRoutingDraws = 1LL << 24;
constexpr long long kMaxRoutingWork = 1LL << 31;

// "command": free text, the command that wrote the spec (validation/data/h100/specs).
// The keys of a GEMM spec, each object's in one place: a key missing here is refused as unknown.
constexpr std::string_view kGemmSpecKeys[] = {"name",   "kind",   "dtype",   "b_dtype",    "c_dtype", "m",
                                              "experts", "routing", "n",     "k",          "layout",  "tile",
                                              "stages", "warps",  "load",    "persistent", "cluster", "order",
                                              "epilogue", "quant", "block_scale", "command"};
constexpr std::string_view kQuantKeys[] = {"scale_group", "zero_points", "conversion", "store"};
constexpr std::string_view kLayoutKeys[] = {"a", "b"};
constexpr std::string_view kTileKeys[] = {"m", "n", "k"};
constexpr std::string_view kRoutingKeys[] = {"tokens", "top_k", "experts", "zipf_s", "seed"};
constexpr std::string_view kExpertKeys[] = {"m"};

struct DtypeName {
  Dtype dtype;
  const char* name;
  int bits;
};
constexpr DtypeName kDtypes[] = {{Dtype::fp32, "fp32", 32},   {Dtype::bf16, "bf16", 16},
                                 {Dtype::fp16, "fp16", 16},   {Dtype::fp8_e4m3, "fp8_e4m3", 8},
                                 {Dtype::fp8_e5m2, "fp8_e5m2", 8}, {Dtype::int8, "int8", 8}, {Dtype::uint8, "uint8", 8},
                                 {Dtype::mxfp8, "mxfp8", 8}, {Dtype::mxfp4, "mxfp4", 4}};

Dtype parse_dtype(const JsonFields& f, const char* key, const std::string& text) {
  for (const auto& d : kDtypes)
    if (text == d.name) return d.dtype;
  f.fail(key, "unknown dtype '" + text + "'", "use fp32, bf16, fp16, fp8_e4m3, fp8_e5m2, int8, uint8, mxfp8 or mxfp4");
}

MatrixLayout parse_layout(const JsonFields& f, const char* key) {
  const std::string s = f.string_or(key, "row");
  if (s == "row") return MatrixLayout::row;
  if (s == "col") return MatrixLayout::col;
  f.fail(key, "unknown layout '" + s + "'", "use \"row\" or \"col\"");
}

std::vector<int> read_experts(const JsonFields& f) {
  if (f.has("routing")) {
    if (f.has("experts")) f.fail("routing", "is given with experts", "give one of experts and routing");
    const JsonFields r = f.object("routing");
    r.refuse_unknown_keys(kRoutingKeys);
    RoutingSpec routing;
    routing.tokens = static_cast<int>(r.integer("tokens", 1, kMaxDim));
    routing.experts = static_cast<int>(r.integer("experts", 1, kMaxExperts));
    routing.top_k = static_cast<int>(r.integer_or("top_k", 1, 1, routing.experts));
    routing.zipf_s = r.has("zipf_s") ? r.number("zipf_s", 0.0, 10.0) : 0.0;
    routing.seed = static_cast<std::uint64_t>(r.integer_or("seed", 1, 0, 1LL << 62));
    const long long draws = static_cast<long long>(routing.tokens) * routing.top_k;
    if (draws > kMaxRoutingDraws || (routing.zipf_s > 0 && draws * routing.experts > kMaxRoutingWork))
      r.fail("tokens", "times top_k (times experts, when zipf_s > 0) is more routing than tilesim draws",
             "keep tokens*top_k within " + std::to_string(kMaxRoutingDraws) + " and tokens*top_k*experts within " +
                 std::to_string(kMaxRoutingWork));
    return route_tokens(routing);
  }
  const auto& list = f.array("experts");
  if (list.empty()) f.fail("experts", "is empty", "give at least one expert, e.g. [{\"m\": 2048}]");
  if (list.size() > static_cast<size_t>(kMaxExperts))
    f.fail("experts", "has more than 4096 entries", "split the problem");
  std::vector<int> tokens;
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string path = f.field("experts") + "[" + std::to_string(i) + "]";
    const nlohmann::json entry = list[i].is_number() ? nlohmann::json{{"m", list[i]}} : list[i];
    const JsonFields expert(entry, f.source(), path);
    expert.refuse_unknown_keys(kExpertKeys);
    tokens.push_back(static_cast<int>(expert.integer("m", 0, kMaxDim)));
  }
  return tokens;
}

void check_tile(const JsonFields& t, const KernelSpec& s) {
  // wgmma issues M in steps of 64 per warpgroup (down to 16 for mma.sync-style tiles), N in steps
  // of 8 up to 256, and K in 32-byte steps (PTX ISA 9.7.15, wgmma.mma_async shapes).
  if (s.tile.m % 16 != 0 || s.tile.m > 256)
    t.fail("m", "is " + std::to_string(s.tile.m) + ", not a multiple of 16 up to 256", "use 64, 128 or 256");
  if (s.tile.n % 8 != 0 || s.tile.n > 256)
    t.fail("n", "is " + std::to_string(s.tile.n) + ", not a multiple of 8 up to 256", "use 64, 128 or 256");
  const int k_bytes = s.tile.k * dtype_bits(s.a_dtype) / 8;
  if (k_bytes % 32 != 0 || s.tile.k > 512)
    t.fail("k", "is " + std::to_string(s.tile.k) + ", not a multiple of 32 bytes of " + to_string(s.a_dtype) +
                    " up to 512",
           "use 64 for 16-bit types or 128 for 8-bit types");
  // Counted in 64 bits: m = 2^20, n = 2^19 + 8 with 16x8 tiles is 2^32 tiles, which wraps an int to 65536.
  long long rows = 0;
  for (int m : s.expert_tokens) rows += (m + s.tile.m - 1) / s.tile.m;
  const long long tiles = rows * ((s.n + s.tile.n - 1) / s.tile.n);
  if (tiles > kMaxTiles)
    t.fail("m", "makes " + std::to_string(tiles) + " output tiles, more than the " + std::to_string(kMaxTiles) +
                    " one launch may have",
           "use larger tiles or split the problem");
}

// "quant" of a mixed-input GEMM (bf16 x int8/uint8): refused on any other dtype pair, and the
// combinations the kernel cannot run are refused here with the fix.
WeightQuant parse_weight_quant(const JsonFields& f, const KernelSpec& s) {
  if (s.b_dtype == Dtype::uint8 && s.a_dtype != Dtype::bf16)
    f.fail("b_dtype", "uint8 weights pair only with bf16 activations (dtype is " + to_string(s.a_dtype) + ")",
           "use \"dtype\": \"bf16\" or \"b_dtype\": \"" + to_string(s.a_dtype) + "\"");
  if (!s.mixed_input()) {
    if (f.has("quant"))
      f.fail("quant", "is for mixed-input GEMMs (dtype bf16 with b_dtype int8 or uint8)", "drop it");
    return {};
  }
  WeightQuant q;
  if (f.has("quant")) {
    const JsonFields j = f.object("quant");
    j.refuse_unknown_keys(kQuantKeys);
    q.scale_group = static_cast<int>(j.integer_or("scale_group", 0, 0, 1 << 20));
    if (q.scale_group != 0 && q.scale_group != 128)
      j.fail("scale_group", "is " + std::to_string(q.scale_group) + "; scales go per output channel or per 128 of K",
             "use 0 (per channel) or 128");
    if (q.scale_group != 0 && s.k % q.scale_group != 0)
      j.fail("scale_group", "does not divide k = " + std::to_string(s.k), "use a k that is a multiple of 128, or 0");
    q.zero_points = j.boolean_or("zero_points", false);
    const std::string conversion = j.string_or("conversion", "prmt");
    if (conversion == "prmt")
      q.conversion = WeightConversion::prmt;
    else if (conversion == "cvt")
      q.conversion = WeightConversion::cvt;
    else
      j.fail("conversion", "unknown conversion '" + conversion + "'", "use \"prmt\" or \"cvt\"");
    const std::string store = j.string_or("store", "elements");
    if (store != "elements" && store != "tma")
      j.fail("store", "unknown store '" + store + "'", "use \"elements\" or \"tma\"");
    q.tma_store = store == "tma";
    if (q.tma_store && s.tile.n != 128)
      j.fail("store",
             "is \"tma\" on a " + std::to_string(s.tile.n) +
                 "-channel tile; the kernel stores through TMA on 128-channel tiles only",
             "use tile.n 128 or \"store\": \"elements\"");
  }
  if (s.b_dtype == Dtype::uint8 && !q.zero_points)
    f.fail("quant", "uint8 weights need per-channel zero points", "add \"quant\": {\"zero_points\": true}");
  if (s.b_dtype == Dtype::int8 && q.zero_points)
    f.fail("quant", "int8 weights are symmetric: they take no zero points", "drop zero_points or use uint8");
  return q;
}

} // namespace

std::string to_string(WeightConversion conversion) { return conversion == WeightConversion::prmt ? "prmt" : "cvt"; }

int dtype_bits(Dtype dtype) {
  for (const auto& d : kDtypes)
    if (d.dtype == dtype) return d.bits;
  return 0;
}

std::string to_string(Dtype dtype) {
  for (const auto& d : kDtypes)
    if (d.dtype == dtype) return d.name;
  return "unknown";
}

std::int64_t KernelSpec::total_m() const {
  std::int64_t m = 0;
  for (int t : expert_tokens) m += t;
  return m;
}

double KernelSpec::flops() const {
  if (kind == KernelKind::elementwise) return static_cast<double>(elementwise.elements);
  if (kind == KernelKind::mxfp8_quantize) return static_cast<double>(mxfp8.elements());
  return 2.0 * static_cast<double>(total_m()) * n * k;
}

std::vector<int> KernelSpec::tile_row_offsets() const {
  std::vector<int> offsets(expert_tokens.size() + 1, 0);
  for (size_t e = 0; e < expert_tokens.size(); ++e)
    offsets[e + 1] = offsets[e] + (expert_tokens[e] + tile.m - 1) / tile.m;
  return offsets;
}

KernelSpec parse_kernel_spec(const nlohmann::json& j, const std::string& source, const std::string& field) {
  const JsonFields f(j, source, field);
  KernelSpec s;
  s.source = source;
  s.name = f.string_or("name", "kernel");
  const std::string kind = f.string("kind");
  if (kind == "gemm")
    s.kind = KernelKind::gemm;
  else if (kind == "grouped_gemm")
    s.kind = KernelKind::grouped_gemm;
  else if (kind == "elementwise")
    s.kind = KernelKind::elementwise;
  else if (kind == "mxfp8_quantize")
    s.kind = KernelKind::mxfp8_quantize;
  else
    f.fail("kind", "unknown kind '" + kind + "'",
           "use \"gemm\", \"grouped_gemm\", \"elementwise\" or \"mxfp8_quantize\"");

  s.a_dtype = parse_dtype(f, "dtype", f.string("dtype"));
  if (s.kind == KernelKind::elementwise) {
    parse_elementwise_spec(f, s);
    return s;
  }
  if (s.kind == KernelKind::mxfp8_quantize) {
    parse_mxfp8_quantize_spec(f, s);
    return s;
  }
  f.refuse_unknown_keys(kGemmSpecKeys);
  s.b_dtype = f.has("b_dtype") ? parse_dtype(f, "b_dtype", f.string("b_dtype")) : s.a_dtype;
  s.c_dtype = f.has("c_dtype") ? parse_dtype(f, "c_dtype", f.string("c_dtype")) : Dtype::bf16;

  if (s.kind == KernelKind::gemm) {
    for (const char* key : {"experts", "routing"})
      if (f.has(key)) f.fail(key, "is for grouped_gemm; a gemm takes m", "drop it or write \"kind\": \"grouped_gemm\"");
    s.expert_tokens = {static_cast<int>(f.integer("m", 1, kMaxDim))};
  } else {
    if (f.has("m")) f.fail("m", "is for gemm; a grouped_gemm takes experts or routing", "drop it");
    s.expert_tokens = read_experts(f);
    if (s.total_m() == 0) f.fail("experts", "every expert has zero tokens", "give at least one expert m > 0");
  }
  s.n = static_cast<int>(f.integer("n", 1, kMaxDim));
  s.k = static_cast<int>(f.integer("k", 1, kMaxDim));

  if (f.has("layout")) {
    const JsonFields layout = f.object("layout");
    layout.refuse_unknown_keys(kLayoutKeys);
    s.a_layout = parse_layout(layout, "a");
    s.b_layout = parse_layout(layout, "b");
  }
  const JsonFields t = f.object("tile");
  t.refuse_unknown_keys(kTileKeys);
  s.tile = {static_cast<int>(t.integer("m", 1, 1024)), static_cast<int>(t.integer("n", 1, 1024)),
            static_cast<int>(t.integer("k", 1, 1024))};
  check_tile(t, s);
  s.stages = static_cast<int>(f.integer("stages", 1, 16));
  s.warps = static_cast<int>(f.integer("warps", 1, 32));
  if (s.warps % 4 != 0) f.fail("warps", "is " + std::to_string(s.warps) + ", not whole warpgroups", "use 4, 8 or 12");

  const std::string load = f.string_or("load", "tma");
  if (load == "tma")
    s.load = LoadPath::tma;
  else if (load == "cp_async")
    s.load = LoadPath::cp_async;
  else
    f.fail("load", "unknown load path '" + load + "'", "use \"tma\" or \"cp_async\"");
  s.persistent = f.boolean_or("persistent", false);
  s.cluster = static_cast<int>(f.integer_or("cluster", 1, 1, 2));
  try {
    s.order = parse_launch_order(f.string_or("order", "row_major"));
  } catch (const std::invalid_argument& e) {
    f.fail("order", e.what(), "");
  }
  s.epilogue = parse_gemm_epilogue(f);
  s.quant = parse_weight_quant(f, s);
  parse_block_scale(f, s);
  return s;
}

KernelSpec load_kernel_spec(const std::string& path) {
  return parse_kernel_spec(read_json_file(path, "kernel spec"), path);
}

nlohmann::json to_json(const KernelSpec& s) {
  if (s.kind == KernelKind::elementwise) return elementwise_spec_json(s);
  if (s.kind == KernelKind::mxfp8_quantize) return mxfp8_quantize_spec_json(s);
  nlohmann::json experts = nlohmann::json::array();
  for (int m : s.expert_tokens) experts.push_back({{"m", m}});
  nlohmann::json j{{"name", s.name},
                   {"kind", s.kind == KernelKind::gemm ? "gemm" : "grouped_gemm"},
                   {"dtype", to_string(s.a_dtype)},
                   {"b_dtype", to_string(s.b_dtype)},
                   {"c_dtype", to_string(s.c_dtype)},
                   {"n", s.n},
                   {"k", s.k},
                   {"layout",
                    {{"a", s.a_layout == MatrixLayout::row ? "row" : "col"},
                     {"b", s.b_layout == MatrixLayout::row ? "row" : "col"}}},
                   {"tile", {{"m", s.tile.m}, {"n", s.tile.n}, {"k", s.tile.k}}},
                   {"stages", s.stages},
                   {"warps", s.warps},
                   {"load", s.load == LoadPath::tma ? "tma" : "cp_async"},
                   {"persistent", s.persistent},
                   {"cluster", s.cluster},
                   {"order", to_string(s.order)}};
  if (s.epilogue != GemmEpilogue::none) j["epilogue"] = to_string(s.epilogue);
  if (s.mixed_input())
    j["quant"] = {{"scale_group", s.quant.scale_group},
                  {"zero_points", s.quant.zero_points},
                  {"conversion", to_string(s.quant.conversion)}};
  if (s.mixed_input() && s.quant.tma_store) j["quant"]["store"] = "tma"; // absent: "elements", as before the field
  if (s.mxfp8_gemm()) j["block_scale"] = block_scale_json(s);
  if (s.kind == KernelKind::gemm)
    j["m"] = s.expert_tokens.front();
  else
    j["experts"] = experts;
  return j;
}

} // namespace tilesim
