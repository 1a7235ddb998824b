#include "sim/kernel_result.h"

#include "models/json_fields.h"

#include <fstream>

namespace tilesim {
namespace {

template <typename T>
void put_optional(nlohmann::json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}

template <typename T>
std::optional<T> get_optional(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<T>();
}

} // namespace

nlohmann::json to_json(const KernelResult& r) {
  nlohmann::json tiles = nlohmann::json::array();
  for (const auto& t : r.tiles) {
    nlohmann::json jt{{"linear", t.linear}, {"expert", t.expert}, {"row", t.row},         {"col", t.col},
                      {"sm", t.sm},         {"start_ns", t.start_ns}, {"end_ns", t.end_ns}};
    put_optional(jt, "start_cycle", t.start_cycle);
    put_optional(jt, "end_cycle", t.end_cycle);
    put_optional(jt, "a_hit_sectors", t.a_hit_sectors);
    put_optional(jt, "a_miss_sectors", t.a_miss_sectors);
    put_optional(jt, "b_hit_sectors", t.b_hit_sectors);
    put_optional(jt, "b_miss_sectors", t.b_miss_sectors);
    tiles.push_back(std::move(jt));
  }
  return {{"schema", kResultSchema},
          {"source", r.source},
          {"gpu", r.gpu},
          {"order", r.order},
          {"kernel", r.kernel},
          {"time_ms", r.time_ms},
          {"tflops", r.tflops},
          {"l2_hit_rate", r.l2_hit_rate},
          {"dram_read_bytes", r.dram_read_bytes},
          {"dram_write_bytes", r.dram_write_bytes},
          {"l2_read_sectors", r.l2_read_sectors},
          {"tiles", tiles},
          {"provenance", r.provenance},
          {"extra", r.extra}};
}

KernelResult kernel_result_from_json(const nlohmann::json& j, const std::string& source_name) {
  const JsonFields f(j, source_name);
  if (f.string("schema") != kResultSchema)
    f.fail("schema", "is not " + std::string(kResultSchema), "write results with this version of tilesim");
  KernelResult r;
  r.source = f.string("source");
  r.gpu = f.string("gpu");
  r.order = f.string("order");
  r.kernel = f.object("kernel").has("kind") ? j.at("kernel") : nlohmann::json::object();
  r.time_ms = f.number("time_ms", 0, 1e9);
  r.tflops = f.number("tflops", 0, 1e9);
  r.l2_hit_rate = f.number("l2_hit_rate", 0, 1);
  r.dram_read_bytes = f.integer("dram_read_bytes", 0, 1LL << 60);
  r.dram_write_bytes = f.integer("dram_write_bytes", 0, 1LL << 60);
  r.l2_read_sectors = f.integer("l2_read_sectors", 0, 1LL << 60);
  if (j.contains("provenance")) r.provenance = j.at("provenance");
  if (j.contains("extra")) r.extra = j.at("extra");
  if (j.contains("tiles")) {
    for (const auto& jt : f.array("tiles")) {
      TileRecord t;
      t.linear = jt.value("linear", 0);
      t.expert = jt.value("expert", 0);
      t.row = jt.value("row", 0);
      t.col = jt.value("col", 0);
      t.sm = jt.value("sm", 0);
      t.start_ns = jt.value("start_ns", 0.0);
      t.end_ns = jt.value("end_ns", 0.0);
      t.start_cycle = get_optional<double>(jt, "start_cycle");
      t.end_cycle = get_optional<double>(jt, "end_cycle");
      t.a_hit_sectors = get_optional<long long>(jt, "a_hit_sectors");
      t.a_miss_sectors = get_optional<long long>(jt, "a_miss_sectors");
      t.b_hit_sectors = get_optional<long long>(jt, "b_hit_sectors");
      t.b_miss_sectors = get_optional<long long>(jt, "b_miss_sectors");
      r.tiles.push_back(t);
    }
  }
  return r;
}

KernelResult load_kernel_result(const std::string& path) {
  return kernel_result_from_json(read_json_file(path, "result"), path);
}

void save_kernel_result(const KernelResult& r, const std::string& path) {
  std::ofstream out(path);
  if (!out) throw SpecError(path, "--out", "cannot write the file", "check the folder exists and is writable");
  out << to_json(r).dump(1) << '\n';
}

} // namespace tilesim
