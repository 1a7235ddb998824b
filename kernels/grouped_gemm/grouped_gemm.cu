// Host launcher: validates the problem, builds the tile space and tensor maps once, launches.
#include "kernels/grouped_gemm/grouped_gemm.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "kernels/grouped_gemm/grouped_gemm_kernel.cuh"
#include "kernels/common/expert_tiles.h"
#include "kernels/common/tensor_maps.h"

namespace tilesim::kernels {
namespace {

void check_cuda(cudaError_t err, const char* call) {
  if (err != cudaSuccess) throw KernelError(std::string(call) + " failed: " + cudaGetErrorString(err));
}

// Shared memory a block may opt into on sm_90 (227 KB); the device's value is checked at run time.
constexpr int kMaxStagesN128 = 6;
constexpr int kMaxStagesN256 = 4;

int ceil_div(int a, int b) { return (a + b - 1) / b; }

template <int BlockN, GemmEpilogue Epilogue = GemmEpilogue::none> void enable_shared_memory(int stages) {
  static int enabled_bytes = 0; // raise the opt-in once per instantiation, to the largest asked
  const int bytes = TileShape<BlockN>::shared_bytes(stages, Epilogue);
  if (bytes <= enabled_bytes) return;
  check_cuda(cudaFuncSetAttribute(grouped_gemm_kernel<BlockN, Epilogue>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
             "cudaFuncSetAttribute(grouped_gemm_kernel, MaxDynamicSharedMemorySize)");
  enabled_bytes = bytes;
}

cudaLaunchConfig_t launch_config(int grid, int threads, int shared_bytes, cudaStream_t stream,
                                 cudaLaunchAttribute* cluster) {
  cluster->id = cudaLaunchAttributeClusterDimension;
  cluster->val.clusterDim.x = kClusterSize;
  cluster->val.clusterDim.y = 1;
  cluster->val.clusterDim.z = 1;
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = shared_bytes;
  config.stream = stream;
  config.attrs = cluster;
  config.numAttrs = 1;
  return config;
}

// Clusters of two that fit on the device at once with this ring depth.
template <int BlockN> int max_active_clusters(int stages) {
  enable_shared_memory<BlockN>(stages);
  cudaLaunchAttribute cluster{};
  const cudaLaunchConfig_t config =
      launch_config(kClusterSize, TileShape<BlockN>::threads, TileShape<BlockN>::shared_bytes(stages), nullptr, &cluster);
  int clusters = 0;
  check_cuda(cudaOccupancyMaxActiveClusters(&clusters, grouped_gemm_kernel<BlockN, GemmEpilogue::none>, &config),
             "cudaOccupancyMaxActiveClusters(grouped_gemm_kernel)");
  if (clusters < 1)
    throw KernelError("cudaOccupancyMaxActiveClusters: no cluster of 2 CTAs with " +
                      std::to_string(TileShape<BlockN>::shared_bytes(stages)) +
                      " bytes of shared memory fits; use fewer stages");
  return clusters;
}

template <int BlockN, GemmEpilogue Epilogue>
void launch(const TensorMaps& maps, const GroupedGemmParams& params, int grid, cudaStream_t stream) {
  enable_shared_memory<BlockN, Epilogue>(params.stages);
  cudaLaunchAttribute cluster{};
  const cudaLaunchConfig_t config = launch_config(grid, TileShape<BlockN>::threads,
                                                  TileShape<BlockN>::shared_bytes(params.stages, Epilogue), stream,
                                                  &cluster);
  check_cuda(cudaLaunchKernelEx(&config, grouped_gemm_kernel<BlockN, Epilogue>, maps, params),
             "cudaLaunchKernelEx(grouped_gemm_kernel)");
}

template <int BlockN>
void launch(const TensorMaps& maps, const GroupedGemmParams& params, GemmEpilogue epilogue, int grid,
            cudaStream_t stream) {
  switch (epilogue) {
  case GemmEpilogue::none: launch<BlockN, GemmEpilogue::none>(maps, params, grid, stream); break;
  case GemmEpilogue::bias_relu: launch<BlockN, GemmEpilogue::bias_relu>(maps, params, grid, stream); break;
  case GemmEpilogue::bias_gelu: launch<BlockN, GemmEpilogue::bias_gelu>(maps, params, grid, stream); break;
  }
}

void require(bool ok, const std::string& message) {
  if (!ok) throw KernelError("GroupedGemmProblem: " + message);
}

} // namespace

std::string grouped_gemm_unsupported_reason(int tile_m, int tile_n, int tile_k, int stages) {
  if (tile_m != 128) return "tile_m = " + std::to_string(tile_m) + " is not supported; use 128";
  if (tile_n != 128 && tile_n != 256) return "tile_n = " + std::to_string(tile_n) + " is not supported; use 128 or 256";
  if (tile_k != 64) return "tile_k = " + std::to_string(tile_k) + " is not supported; use 64";
  const int max_stages = tile_n == 128 ? kMaxStagesN128 : kMaxStagesN256;
  if (stages < 3 || stages > max_stages)
    return "stages = " + std::to_string(stages) + " is not supported for tile_n " + std::to_string(tile_n) +
           "; use 3.." + std::to_string(max_stages) + " (shared memory holds at most that many)";
  return {};
}

bool grouped_gemm_supported(int tile_m, int tile_n, int tile_k, int stages) {
  return grouped_gemm_unsupported_reason(tile_m, tile_n, tile_k, stages).empty();
}

struct GroupedGemm::Impl {
  GroupedGemmProblem problem;
  TensorMaps maps{};
  GroupedGemmParams params{};
  int* device_offsets = nullptr; // row_offsets (experts + 1) then token_offsets (experts + 1)
  int tiles = 0;
  int grid = 0;
  int total_tokens = 0;
};

GroupedGemm::GroupedGemm(const GroupedGemmProblem& problem, const void* x, const void* w, void* y, int sm_count,
                         const void* bias)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.problem = problem;
  const std::string reason =
      grouped_gemm_unsupported_reason(problem.tile_m, problem.tile_n, problem.tile_k, problem.stages);
  require(reason.empty(), reason);
  require(problem.experts >= 1, "experts = " + std::to_string(problem.experts) + " must be >= 1");
  require(static_cast<int>(problem.tokens_per_expert.size()) == problem.experts,
          "tokens_per_expert has " + std::to_string(problem.tokens_per_expert.size()) + " entries, experts = " +
              std::to_string(problem.experts));
  require(problem.n >= 8 && problem.n % 8 == 0,
          "n = " + std::to_string(problem.n) + " must be a positive multiple of 8 (16-byte row strides)");
  require(problem.k >= 8 && problem.k % 8 == 0,
          "k = " + std::to_string(problem.k) + " must be a positive multiple of 8 (16-byte row strides for TMA)");
  require(static_cast<int>(problem.order.kind) >= 0 && problem.order.kind < LaunchOrderKind::count_,
          "order.kind is not a LaunchOrderKind");
  require(problem.order.group >= 1, "order.group = " + std::to_string(problem.order.group) + " must be >= 1");
  require(sm_count >= 1, "sm_count = " + std::to_string(sm_count) + " must be >= 1");
  const bool fused = problem.epilogue != GemmEpilogue::none;
  require(fused == (bias != nullptr), fused ? "a fused epilogue needs the bias [experts, n]; got a null pointer"
                                            : "bias is given but epilogue is none; set epilogue or pass nullptr");
  require(reinterpret_cast<uintptr_t>(bias) % 4 == 0, "bias must be 4-byte aligned (bf16 pairs)");

  const ExpertTiles space = expert_tiles(problem.tokens_per_expert, problem.tile_m, problem.n, problem.tile_n,
                                         "GroupedGemmProblem");
  const std::vector<int>& offsets = space.offsets; // row_offsets | token_offsets
  const int tile_cols = space.tile_cols;
  m.total_tokens = space.total_tokens;
  m.tiles = space.tiles;
  // Work items go to clusters in pairs; an odd last item gets a partner that computes but does not store.
  const int pairs = ceil_div(m.tiles, kClusterSize);
  if (problem.persistent) {
    const int resident = problem.tile_n == 256 ? max_active_clusters<256>(problem.stages)
                                               : max_active_clusters<128>(problem.stages);
    m.grid = kClusterSize * std::max(1, std::min({sm_count / kClusterSize, resident, pairs}));
  } else {
    m.grid = kClusterSize * pairs;
  }

  if (m.total_tokens > 0) {
    require(x != nullptr && w != nullptr && y != nullptr, "x, w and y must be device pointers, got a null");
    require(reinterpret_cast<uintptr_t>(x) % 16 == 0 && reinterpret_cast<uintptr_t>(w) % 16 == 0 &&
                reinterpret_cast<uintptr_t>(y) % 16 == 0,
            "x, w and y must be 16-byte aligned (TMA global addresses)");
    const auto x_rows = static_cast<uint64_t>(m.total_tokens);
    const auto w_rows = static_cast<uint64_t>(problem.experts) * problem.n;
    m.maps.x = make_bf16_tensor_map_2d(x, x_rows, problem.k, problem.tile_m, problem.tile_k);
    m.maps.x_half = make_bf16_tensor_map_2d(x, x_rows, problem.k, problem.tile_m / 2, problem.tile_k);
    m.maps.w = make_bf16_tensor_map_2d(w, w_rows, problem.k, problem.tile_n, problem.tile_k);
    m.maps.w_half = make_bf16_tensor_map_2d(w, w_rows, problem.k, problem.tile_n / 2, problem.tile_k);
    m.maps.y = make_bf16_tensor_map_2d(y, x_rows, problem.n, 64, 64); // epilogue chunks
  }
  check_cuda(cudaMalloc(&m.device_offsets, offsets.size() * sizeof(int)), "cudaMalloc(offsets)");
  check_cuda(cudaMemcpy(m.device_offsets, offsets.data(), offsets.size() * sizeof(int), cudaMemcpyHostToDevice),
             "cudaMemcpy(offsets)");

  GroupedGemmParams& p = m.params;
  p.order = problem.order;
  p.space = TileSpace{m.device_offsets, problem.experts, offsets[problem.experts], tile_cols};
  p.token_offsets = m.device_offsets + problem.experts + 1;
  p.y = static_cast<__nv_bfloat16*>(y);
  p.bias = static_cast<const __nv_bfloat16*>(bias);
  p.trace = nullptr;
  p.n = problem.n;
  p.k_blocks = ceil_div(problem.k, problem.tile_k);
  p.stages = problem.stages;
}

GroupedGemm::~GroupedGemm() {
  if (impl_ && impl_->device_offsets) cudaFree(impl_->device_offsets); // no throw from a destructor
}

void GroupedGemm::run(cudaStream_t stream, TileTrace* trace) const {
  const Impl& m = *impl_;
  if (m.tiles == 0) return; // every expert empty: nothing to write
  GroupedGemmParams params = m.params;
  params.trace = trace;
  if (m.problem.tile_n == 256)
    launch<256>(m.maps, params, m.problem.epilogue, m.grid, stream);
  else
    launch<128>(m.maps, params, m.problem.epilogue, m.grid, stream);
}

int GroupedGemm::tile_count() const { return impl_->tiles; }
int GroupedGemm::grid_size() const { return impl_->grid; }
int GroupedGemm::total_tokens() const { return impl_->total_tokens; }
double GroupedGemm::flops() const {
  return 2.0 * impl_->total_tokens * static_cast<double>(impl_->problem.n) * impl_->problem.k;
}
const GroupedGemmProblem& GroupedGemm::problem() const { return impl_->problem; }

} // namespace tilesim::kernels
