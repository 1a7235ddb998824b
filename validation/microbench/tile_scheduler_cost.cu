// What the kernels' tile scheduler costs: one thread calls tilesim::tile_at (models/launch_order.h,
// the function the GEMM's TileScheduler calls twice per work item) for work items spread over the
// grid, with the expert offsets in global memory as in the kernel, timed with clock64 per call.
// The host counts each call's loop trips with the same header, and a least-squares line through
// (trips, cycles) gives the per-call and per-trip cost the simulator charges. Output: JSON.
#include "check_cuda.cuh"
#include "models/launch_order.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <utility>
#include <vector>

namespace {

constexpr const char* kProgram = "tile_scheduler_cost";
constexpr int kSamples = 64;

__global__ void time_tile_at(tilesim::LaunchOrder order, tilesim::TileSpace space, const int* linear, int n,
                             long long* cycles, int* sink) {
  int acc = 0;
  for (int i = 0; i < n; ++i) {
    const long long t0 = clock64();
    const tilesim::TileIndex t = tilesim::tile_at(order, space, linear[i]);
    acc += t.row + t.col + t.expert;
    const long long t1 = clock64();
    cycles[i] = t1 - t0;
  }
  sink[0] = acc;
}

struct Case {
  const char* order_name;
  tilesim::LaunchOrder order;
  int experts, rows_per_expert, cols;
};

} // namespace

int main() {
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess) {
    std::fprintf(stderr, "%s: no CUDA device; run it on a GPU machine\n", kProgram);
    return 1;
  }
  using K = tilesim::LaunchOrderKind;
  std::vector<Case> cases;
  const std::pair<const char*, K> orders[] = {{"row_major", K::row_major}, {"grouped_m:8", K::grouped_m},
                                              {"morton", K::morton},       {"hilbert", K::hilbert},
                                              {"expert_major:8", K::expert_major}, {"interleaved", K::interleaved}};
  const int spaces[][3] = {{1, 64, 64}, {8, 16, 16}, {64, 4, 8}, {128, 1, 8}, {128, 1, 16}, {256, 1, 16}};
  for (const auto& [name, kind] : orders)
    for (const auto& sp : spaces) cases.push_back({name, {kind, 8}, sp[0], sp[1], sp[2]});

  int* d_offsets = nullptr;
  int* d_linear = nullptr;
  long long* d_cycles = nullptr;
  int* d_sink = nullptr;
  CHECK_CUDA(cudaMalloc(&d_offsets, 257 * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&d_linear, kSamples * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&d_cycles, kSamples * sizeof(long long)));
  CHECK_CUDA(cudaMalloc(&d_sink, sizeof(int)));

  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  int points = 0;
  std::printf("{\n \"gpu\": \"%s\", \"samples_per_case\": %d,\n \"cases\": [", prop.name, kSamples);
  for (std::size_t ci = 0; ci < cases.size(); ++ci) {
    const Case& c = cases[ci];
    std::vector<int> offsets(c.experts + 1);
    for (int e = 0; e <= c.experts; ++e) offsets[e] = e * c.rows_per_expert;
    tilesim::TileSpace host_space{offsets.data(), c.experts, offsets.back(), c.cols};
    tilesim::TileSpace device_space = host_space;
    device_space.row_offsets = d_offsets;
    const int tiles = tilesim::tile_count(host_space);
    std::vector<int> linear(kSamples);
    double trips = 0;
    for (int i = 0; i < kSamples; ++i) {
      linear[i] = static_cast<int>((static_cast<long long>(i) * 7919) % tiles);
      trips += static_cast<double>(tilesim::tile_at_trips(c.order, host_space, linear[i]));
    }
    trips /= kSamples;
    CHECK_CUDA(cudaMemcpy(d_offsets, offsets.data(), offsets.size() * sizeof(int), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(d_linear, linear.data(), kSamples * sizeof(int), cudaMemcpyHostToDevice));
    time_tile_at<<<1, 1>>>(c.order, device_space, d_linear, kSamples, d_cycles, d_sink); // warm-up: L1, i-cache
    time_tile_at<<<1, 1>>>(c.order, device_space, d_linear, kSamples, d_cycles, d_sink);
    CHECK_CUDA(cudaDeviceSynchronize());
    std::vector<long long> cycles(kSamples);
    CHECK_CUDA(cudaMemcpy(cycles.data(), d_cycles, kSamples * sizeof(long long), cudaMemcpyDeviceToHost));
    double mean = 0;
    for (long long v : cycles) mean += static_cast<double>(v);
    mean /= kSamples;
    std::sort(cycles.begin(), cycles.end());
    sx += trips, sy += mean, sxx += trips * trips, sxy += trips * mean, ++points;
    std::printf("%s\n  {\"order\": \"%s\", \"experts\": %d, \"tile_rows\": %d, \"tile_cols\": %d, \"mean_trips\": %.1f, "
                "\"mean_cycles\": %.1f, \"median_cycles\": %lld}",
                ci ? "," : "", c.order_name, c.experts, offsets.back(), c.cols, trips, mean, cycles[kSamples / 2]);
  }
  const double slope = (points * sxy - sx * sy) / (points * sxx - sx * sx);
  const double intercept = (sy - slope * sx) / points;
  std::printf("\n ],\n \"fit\": {\"cycles_per_call\": %.1f, \"cycles_per_loop_trip\": %.2f, "
              "\"method\": \"least squares of mean cycles against mean loop trips over the cases\"}\n}\n",
              intercept, slope);
  return 0;
}
