#include "models/launch_order_names.h"

#include <array>
#include <charconv>
#include <stdexcept>

namespace tilesim {
namespace {

struct OrderName {
  LaunchOrderKind kind;
  const char* name;
  bool takes_group;
};

constexpr std::array<OrderName, 9> kOrderNames{{
    {LaunchOrderKind::row_major, "row_major", false},
    {LaunchOrderKind::column_major, "column_major", false},
    {LaunchOrderKind::grouped_m, "grouped_m", true},
    {LaunchOrderKind::grouped_n, "grouped_n", true},
    {LaunchOrderKind::serpentine, "serpentine", false},
    {LaunchOrderKind::morton, "morton", false},
    {LaunchOrderKind::hilbert, "hilbert", false},
    {LaunchOrderKind::expert_major, "expert_major", true},
    {LaunchOrderKind::interleaved, "interleaved", false},
}};

constexpr int kDefaultGroup = 8;

std::string accepted_forms() {
  std::string s;
  for (const auto& o : kOrderNames) {
    if (!s.empty()) s += ", ";
    s += o.name;
    if (o.takes_group) s += "[:G]";
  }
  return s;
}

} // namespace

LaunchOrder parse_launch_order(const std::string& text) {
  const auto colon = text.find(':');
  const std::string name = text.substr(0, colon);
  for (const auto& o : kOrderNames) {
    if (name != o.name) continue;
    LaunchOrder order{o.kind, kDefaultGroup};
    if (colon == std::string::npos) return order;
    if (!o.takes_group)
      throw std::invalid_argument("launch order '" + text + "' takes no ':G' group; write '" + name + "'");
    const std::string g = text.substr(colon + 1);
    int group = 0;
    const auto [end, ec] = std::from_chars(g.data(), g.data() + g.size(), group);
    if (ec != std::errc{} || end != g.data() + g.size() || group < 1 || group > 4096)
      throw std::invalid_argument("launch order '" + text + "': group must be an integer in 1..4096");
    order.group = group;
    return order;
  }
  throw std::invalid_argument("unknown launch order '" + text + "'; use one of " + accepted_forms());
}

std::string to_string(const LaunchOrder& order) {
  for (const auto& o : kOrderNames)
    if (o.kind == order.kind)
      return o.takes_group ? std::string(o.name) + ":" + std::to_string(order.group) : o.name;
  return "unknown";
}

std::vector<LaunchOrder> all_launch_orders(bool grouped_problem) {
  std::vector<LaunchOrder> orders;
  for (const auto& o : kOrderNames) {
    const bool grouped_only = o.kind == LaunchOrderKind::expert_major || o.kind == LaunchOrderKind::interleaved;
    if (grouped_only && !grouped_problem) continue;
    orders.push_back({o.kind, kDefaultGroup});
  }
  return orders;
}

} // namespace tilesim
