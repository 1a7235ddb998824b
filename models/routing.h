// Token-to-expert routing for grouped GEMM specs: per-expert token counts from a router model,
// deterministic for a given seed on every machine (the harness on the GPU and the simulator here
// must build the same problem).
#pragma once

#include <cstdint>
#include <vector>

namespace tilesim {

struct RoutingSpec {
  int tokens = 0;
  int top_k = 1;
  int experts = 1;
  double zipf_s = 0.0; // 0: balanced (every expert gets tokens*top_k/experts, remainder to the first)
  std::uint64_t seed = 1;
};

// Each token picks top_k distinct experts; with zipf_s > 0 expert i (in a seeded random
// permutation) is drawn with weight 1/(rank+1)^zipf_s.
std::vector<int> route_tokens(const RoutingSpec& routing);

} // namespace tilesim
