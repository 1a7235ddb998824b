#include "models/routing.h"

#include <cmath>
#include <numeric>
#include <random>

namespace tilesim {
namespace {

// std::mt19937_64's output sequence is fixed by the standard; the standard's distributions are
// not, so draws are made from raw output here.
double uniform01(std::mt19937_64& rng) { return static_cast<double>(rng() >> 11) * 0x1.0p-53; }

std::vector<int> balanced(const RoutingSpec& r) {
  const long long assignments = static_cast<long long>(r.tokens) * r.top_k;
  std::vector<int> counts(r.experts, static_cast<int>(assignments / r.experts));
  for (long long i = 0; i < assignments % r.experts; ++i) ++counts[i];
  return counts;
}

} // namespace

std::vector<int> route_tokens(const RoutingSpec& r) {
  if (r.zipf_s <= 0.0) return balanced(r);
  std::mt19937_64 rng(r.seed);
  std::vector<int> rank(r.experts);
  std::iota(rank.begin(), rank.end(), 0);
  for (int i = r.experts - 1; i > 0; --i) std::swap(rank[i], rank[rng() % (i + 1)]);
  std::vector<double> weight(r.experts);
  for (int e = 0; e < r.experts; ++e) weight[e] = 1.0 / std::pow(rank[e] + 1.0, r.zipf_s);

  std::vector<int> counts(r.experts, 0);
  std::vector<double> w(r.experts);
  for (int t = 0; t < r.tokens; ++t) {
    w = weight;
    double total = std::accumulate(w.begin(), w.end(), 0.0);
    for (int pick = 0; pick < r.top_k; ++pick) {
      double x = uniform01(rng) * total;
      int e = 0;
      while (e < r.experts - 1 && (w[e] == 0.0 || x >= w[e])) {
        x -= w[e];
        ++e;
      }
      while (w[e] == 0.0) e = (e + 1) % r.experts; // rounding landed past the last positive weight
      ++counts[e];
      total -= w[e];
      w[e] = 0.0; // without replacement: a token visits an expert once
    }
  }
  return counts;
}

} // namespace tilesim
