// Speed of the simulator on one core: replays a kernel spec (default: the 8192^3 bf16 GEMM with
// 128x128x64 tiles) and prints wall time and L2 line lookups per second.
#include "models/gpu_profile.h"
#include "models/kernel_spec.h"
#include "models/spec_error.h"
#include "sim/gpu_simulator.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  const std::string spec_path =
      argc > 1 ? argv[1] : std::string(TILESIM_SOURCE_DIR) + "/models/kernels/dense_8192.json";
  const int repeats = argc > 2 ? std::max(1, std::stoi(argv[2])) : 3;
  try {
    const tilesim::GpuProfile gpu = tilesim::load_gpu_profile("h100");
    const tilesim::KernelSpec spec = tilesim::load_kernel_spec(spec_path);
    std::vector<double> seconds;
    long long lookups = 0;
    for (int i = 0; i < repeats; ++i) {
      const auto start = std::chrono::steady_clock::now();
      const auto r = tilesim::simulate(gpu, spec, {.record_tiles = false, .progress = {}});
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      lookups = r.extra["l2_line_lookups"].get<long long>();
    }
    std::sort(seconds.begin(), seconds.end());
    const double median = seconds[seconds.size() / 2];
    std::printf("%s on h100: median wall %.2f s over %d runs (min %.2f), %lld L2 line lookups, %.1f M lookups/s\n",
                spec.name.c_str(), median, repeats, seconds.front(), lookups, lookups / median / 1e6);
  } catch (const tilesim::SpecError& e) {
    std::fprintf(stderr, "tilesim_bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
