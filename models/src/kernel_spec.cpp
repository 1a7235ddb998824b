#include "models/kernel_spec.h"

#include "models/json_fields.h"
#include "models/launch_order_names.h"
#include "models/routing.h"

#include <nlohmann/json.hpp>

#include <stdexcept>

namespace tilesim {
namespace {

constexpr long long kMaxDim = 1 << 20;          // rows, columns or depth of one operand
constexpr long long kMaxExperts = 4096;

struct DtypeName {
  Dtype dtype;
  const char* name;
  int bits;
};
constexpr DtypeName kDtypes[] = {{Dtype::fp32, "fp32", 32},   {Dtype::bf16, "bf16", 16},
                                 {Dtype::fp16, "fp16", 16},   {Dtype::fp8_e4m3, "fp8_e4m3", 8},
                                 {Dtype::fp8_e5m2, "fp8_e5m2", 8}, {Dtype::int8, "int8", 8},
                                 {Dtype::mxfp8, "mxfp8", 8}};

Dtype parse_dtype(const JsonFields& f, const char* key, const std::string& text) {
  for (const auto& d : kDtypes)
    if (text == d.name) return d.dtype;
  f.fail(key, "unknown dtype '" + text + "'", "use fp32, bf16, fp16, fp8_e4m3, fp8_e5m2, int8 or mxfp8");
}

MatrixLayout parse_layout(const JsonFields& f, const char* key) {
  const std::string s = f.string_or(key, "row");
  if (s == "row") return MatrixLayout::row;
  if (s == "col") return MatrixLayout::col;
  f.fail(key, "unknown layout '" + s + "'", "use \"row\" or \"col\"");
}

std::vector<int> read_experts(const JsonFields& f) {
  if (f.has("routing")) {
    const JsonFields r = f.object("routing");
    RoutingSpec routing;
    routing.tokens = static_cast<int>(r.integer("tokens", 1, kMaxDim));
    routing.experts = static_cast<int>(r.integer("experts", 1, kMaxExperts));
    routing.top_k = static_cast<int>(r.integer_or("top_k", 1, 1, routing.experts));
    routing.zipf_s = r.has("zipf_s") ? r.number("zipf_s", 0.0, 10.0) : 0.0;
    routing.seed = static_cast<std::uint64_t>(r.integer_or("seed", 1, 0, 1LL << 62));
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
    tokens.push_back(static_cast<int>(JsonFields(entry, f.source(), path).integer("m", 0, kMaxDim)));
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
}

} // namespace

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

double KernelSpec::flops() const { return 2.0 * static_cast<double>(total_m()) * n * k; }

std::vector<int> KernelSpec::tile_row_offsets() const {
  std::vector<int> offsets(expert_tokens.size() + 1, 0);
  for (size_t e = 0; e < expert_tokens.size(); ++e)
    offsets[e + 1] = offsets[e] + (expert_tokens[e] + tile.m - 1) / tile.m;
  return offsets;
}

KernelSpec parse_kernel_spec(const nlohmann::json& j, const std::string& source) {
  const JsonFields f(j, source);
  KernelSpec s;
  s.name = f.string_or("name", "kernel");
  const std::string kind = f.string("kind");
  if (kind == "gemm")
    s.kind = KernelKind::gemm;
  else if (kind == "grouped_gemm")
    s.kind = KernelKind::grouped_gemm;
  else
    f.fail("kind", "unknown kind '" + kind + "'", "use \"gemm\" or \"grouped_gemm\"");

  s.a_dtype = parse_dtype(f, "dtype", f.string("dtype"));
  s.b_dtype = f.has("b_dtype") ? parse_dtype(f, "b_dtype", f.string("b_dtype")) : s.a_dtype;
  s.c_dtype = f.has("c_dtype") ? parse_dtype(f, "c_dtype", f.string("c_dtype")) : Dtype::bf16;

  if (s.kind == KernelKind::gemm) {
    s.expert_tokens = {static_cast<int>(f.integer("m", 1, kMaxDim))};
  } else {
    s.expert_tokens = read_experts(f);
    if (s.total_m() == 0) f.fail("experts", "every expert has zero tokens", "give at least one expert m > 0");
  }
  s.n = static_cast<int>(f.integer("n", 1, kMaxDim));
  s.k = static_cast<int>(f.integer("k", 1, kMaxDim));

  if (f.has("layout")) {
    const JsonFields layout = f.object("layout");
    s.a_layout = parse_layout(layout, "a");
    s.b_layout = parse_layout(layout, "b");
  }
  const JsonFields t = f.object("tile");
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
  return s;
}

KernelSpec load_kernel_spec(const std::string& path) {
  return parse_kernel_spec(read_json_file(path, "kernel spec"), path);
}

nlohmann::json to_json(const KernelSpec& s) {
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
  if (s.kind == KernelKind::gemm)
    j["m"] = s.expert_tokens.front();
  else
    j["experts"] = experts;
  return j;
}

} // namespace tilesim
