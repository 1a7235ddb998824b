// Host launcher of the MXFP8 grouped GEMM: validates the problem, builds the tile space and the
// tensor maps once, launches in clusters of two.
#include "kernels/mxfp8/mxfp8_gemm.h"

#include <algorithm>
#include <cstdint>

#include "kernels/common/expert_tiles.h"
#include "kernels/common/tensor_maps.h"
#include "kernels/mxfp8/mxfp8.h"
#include "kernels/mxfp8/mxfp8_dequantize_kernel.cuh"
#include "kernels/mxfp8/mxfp8_f16_pass.h"
#include "kernels/mxfp8/mxfp8_transposed_launch.h"

namespace tilesim::kernels {
namespace {

using namespace mxfp8_gemm;

void check_cuda(cudaError_t err, const char* call) {
  if (err != cudaSuccess) throw KernelError(std::string(call) + " failed: " + cudaGetErrorString(err));
}

void require(bool ok, const std::string& message) {
  if (!ok) throw KernelError("Mxfp8GemmProblem: " + message);
}

constexpr int kMinStages = 3;
constexpr int kMaxStages = 5; // 5 x (32 KB operands + 2.8 KB scales) + 32 KB epilogue fit the 227 KB opt-in

using KernelFunction = void (*)(TensorMaps, Params);

KernelFunction kernel_of(Mxfp8GemmScheme scheme) {
  return scheme == Mxfp8GemmScheme::dequantize ? mxfp8_gemm_kernel<DequantizeConsumers>
                                               : mxfp8_gemm_kernel<PromoteConsumers>;
}

int scheme_shared_bytes(Mxfp8GemmScheme scheme, int stages) {
  return scheme == Mxfp8GemmScheme::dequantize ? dequantize_shared_bytes(stages) : shared_bytes(stages);
}

cudaLaunchConfig_t launch_config(Mxfp8GemmScheme scheme, int grid, int stages, cudaStream_t stream,
                                 cudaLaunchAttribute* cluster) {
  static int enabled_bytes[2] = {0, 0}; // raise each kernel's opt-in once, to the largest ring asked for
  const int bytes = scheme_shared_bytes(scheme, stages);
  if (bytes > enabled_bytes[static_cast<int>(scheme)]) {
    check_cuda(cudaFuncSetAttribute(kernel_of(scheme), cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
               "cudaFuncSetAttribute(mxfp8_gemm_kernel, MaxDynamicSharedMemorySize)");
    enabled_bytes[static_cast<int>(scheme)] = bytes;
  }
  cluster->id = cudaLaunchAttributeClusterDimension;
  cluster->val.clusterDim = {static_cast<unsigned>(kClusterSize), 1, 1};
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(grid);
  config.blockDim = dim3(Shape::threads);
  config.dynamicSmemBytes = bytes;
  config.stream = stream;
  config.attrs = cluster;
  config.numAttrs = 1;
  return config;
}

int max_active_clusters(Mxfp8GemmScheme scheme, int stages) {
  cudaLaunchAttribute cluster{};
  const cudaLaunchConfig_t config = launch_config(scheme, kClusterSize, stages, nullptr, &cluster);
  int clusters = 0;
  check_cuda(cudaOccupancyMaxActiveClusters(&clusters, kernel_of(scheme), &config),
             "cudaOccupancyMaxActiveClusters(mxfp8_gemm_kernel)");
  if (clusters < 1)
    throw KernelError("cudaOccupancyMaxActiveClusters: no cluster of 2 CTAs with " +
                      std::to_string(scheme_shared_bytes(scheme, stages)) +
                      " bytes of shared memory fits; use fewer stages");
  return clusters;
}

bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

} // namespace

std::string mxfp8_gemm_unsupported_reason(int tile_m, int tile_n, int tile_k, int stages, Mxfp8GemmScheme scheme) {
  if (scheme == Mxfp8GemmScheme::transposed || scheme == Mxfp8GemmScheme::xpass || scheme == Mxfp8GemmScheme::xpass_f16)
    return mxfp8_transposed::unsupported_reason(tile_m, tile_n, tile_k, stages,
                                                scheme == Mxfp8GemmScheme::xpass       ? mxfp8_transposed::XForm::bf16
                                                : scheme == Mxfp8GemmScheme::xpass_f16 ? mxfp8_transposed::XForm::f16
                                                                                       : mxfp8_transposed::XForm::fp8);
  if (tile_m != kBlockM) return "tile_m = " + std::to_string(tile_m) + " is not supported; use 128";
  // A 256-wide tile would need 128 accumulators and 128 temporaries per thread: more than 232 registers.
  if (tile_n != kBlockN) return "tile_n = " + std::to_string(tile_n) + " is not supported; use 128";
  if (tile_k != kBlockK) return "tile_k = " + std::to_string(tile_k) + " is not supported; use 128 (four MX blocks)";
  if (scheme == Mxfp8GemmScheme::dequantize && stages != kDequantizeStages)
    return "stages = " + std::to_string(stages) + " is not supported by the dequantize scheme; use " +
           std::to_string(kDequantizeStages) + " (its two 32 KB bf16 copies of W share the 227 KB of shared memory)";
  if (stages < kMinStages || stages > kMaxStages)
    return "stages = " + std::to_string(stages) + " is not supported; use " + std::to_string(kMinStages) + ".." +
           std::to_string(kMaxStages) + " (shared memory holds at most that many)";
  return {};
}

std::string mxfp8_gemm_k_reason(int k) {
  if (k <= 0 || k % kScaleBlock != 0)
    return "k = " + std::to_string(k) + " is not a positive multiple of 32 (one E8M0 scale per 32 elements of K)";
  if (k % kBlockK != 0)
    return "k = " + std::to_string(k) + " is not a multiple of 128 (a stage's four MX blocks, one 128-byte swizzle "
           "row); pad K to " + std::to_string((k + kBlockK - 1) / kBlockK * kBlockK);
  return {};
}

struct Mxfp8GroupedGemm::Impl {
  Mxfp8GemmProblem problem;
  TensorMaps maps{};
  Params params{};
  mxfp8_transposed::Launch transposed; // the transposed schemes' maps, parameters and grid
  int* device_offsets = nullptr;
  void* x_copy = nullptr;      // xpass: X dequantised, [total_tokens, k] bf16; xpass_f16: f16, permuted
  const void* x = nullptr;     // xpass(_f16): the pass's FP8 X and its scales
  const void* x_scales = nullptr;
  const void* w_scales = nullptr; // xpass_f16: the pass reads W's scales for its rows' references
  uint16_t* row_info = nullptr;   // xpass_f16: X's rows' references, then W's (mxfp8_f16_pass_kernel.cuh)
  int64_t w_rows = 0;
  int sm_count = 0;
  int tiles = 0, grid = 0, total_tokens = 0;
};

Mxfp8GroupedGemm::Mxfp8GroupedGemm(const Mxfp8GemmProblem& problem, const void* x, const void* x_scales,
                                   const void* w, const void* w_scales, void* y, int sm_count)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.problem = problem;
  require(problem.scheme == Mxfp8GemmScheme::promote || problem.scheme == Mxfp8GemmScheme::dequantize ||
              problem.scheme == Mxfp8GemmScheme::transposed || problem.scheme == Mxfp8GemmScheme::xpass ||
              problem.scheme == Mxfp8GemmScheme::xpass_f16,
          "scheme is not an Mxfp8GemmScheme");
  const bool f16 = problem.scheme == Mxfp8GemmScheme::xpass_f16;
  const bool xpass = problem.scheme == Mxfp8GemmScheme::xpass || f16;
  const bool transposed = problem.scheme == Mxfp8GemmScheme::transposed || xpass;
  const int tile_m = transposed ? problem.tile_tokens : kBlockM, tile_n = transposed ? problem.tile_channels : kBlockN;
  const std::string reason = mxfp8_gemm_unsupported_reason(tile_m, tile_n, kBlockK, problem.stages, problem.scheme);
  require(reason.empty(), reason);
  require(mxfp8_gemm_k_reason(problem.k).empty(), mxfp8_gemm_k_reason(problem.k));
  require(problem.experts >= 1, "experts = " + std::to_string(problem.experts) + " must be >= 1");
  require(static_cast<int>(problem.tokens_per_expert.size()) == problem.experts,
          "tokens_per_expert has " + std::to_string(problem.tokens_per_expert.size()) + " entries, experts = " +
              std::to_string(problem.experts));
  require(problem.n >= 8 && problem.n % 8 == 0,
          "n = " + std::to_string(problem.n) + " must be a positive multiple of 8 (16-byte rows of Y)");
  require(static_cast<int>(problem.order.kind) >= 0 && problem.order.kind < LaunchOrderKind::count_,
          "order.kind is not a LaunchOrderKind");
  require(problem.order.group >= 1, "order.group = " + std::to_string(problem.order.group) + " must be >= 1");
  require(sm_count >= 1, "sm_count = " + std::to_string(sm_count) + " must be >= 1");

  const ExpertTiles space = expert_tiles(problem.tokens_per_expert, tile_m, problem.n, tile_n, "Mxfp8GemmProblem");
  m.total_tokens = space.total_tokens;
  m.tiles = space.tiles;
  if (transposed) {
    if (m.total_tokens > 0) {
      require(x && x_scales && w && w_scales && y, "x, x_scales, w, w_scales and y must be device pointers, got a null");
      require(aligned16(x) && aligned16(w), "x and w must be 16-byte aligned (TMA global addresses)");
      require(reinterpret_cast<std::uintptr_t>(x_scales) % 4 == 0 && reinterpret_cast<std::uintptr_t>(w_scales) % 4 == 0,
              "x_scales and w_scales must be 4-byte aligned (a stage's four scale bytes are one load)");
    }
    check_cuda(cudaMalloc(&m.device_offsets, space.offsets.size() * sizeof(int)), "cudaMalloc(offsets)");
    check_cuda(cudaMemcpy(m.device_offsets, space.offsets.data(), space.offsets.size() * sizeof(int),
                          cudaMemcpyHostToDevice),
               "cudaMemcpy(offsets)");
    if (xpass && m.total_tokens > 0) {
      check_cuda(cudaMalloc(&m.x_copy, static_cast<std::size_t>(m.total_tokens) * problem.k * 2), "cudaMalloc(bf16 X)");
      m.x = x;
      m.x_scales = x_scales;
      m.sm_count = sm_count;
    }
    if (f16 && m.total_tokens > 0) {
      m.w_scales = w_scales;
      m.w_rows = static_cast<int64_t>(problem.experts) * problem.n;
      check_cuda(cudaMalloc(&m.row_info, static_cast<std::size_t>(m.total_tokens + m.w_rows) * sizeof(uint16_t)),
                 "cudaMalloc(row references)");
    }
    m.transposed = mxfp8_transposed::make_launch(problem, space, m.device_offsets, xpass ? m.x_copy : x, x_scales, w,
                                                 w_scales, y, sm_count, m.row_info,
                                                 m.row_info ? m.row_info + m.total_tokens : nullptr);
    m.grid = m.transposed.grid;
    return;
  }
  const int pairs = (m.tiles + kClusterSize - 1) / kClusterSize;
  const int clusters = problem.persistent
                           ? std::max(1, std::min({sm_count / kClusterSize,
                                                   max_active_clusters(problem.scheme, problem.stages), pairs}))
                           : pairs;
  m.grid = kClusterSize * clusters;

  if (m.total_tokens > 0) {
    require(x && x_scales && w && w_scales && y, "x, x_scales, w, w_scales and y must be device pointers, got a null");
    require(aligned16(x) && aligned16(w) && aligned16(y), "x, w and y must be 16-byte aligned (TMA global addresses)");
    require(reinterpret_cast<std::uintptr_t>(x_scales) % 4 == 0 && reinterpret_cast<std::uintptr_t>(w_scales) % 4 == 0,
            "x_scales and w_scales must be 4-byte aligned (a stage's four scale bytes are one load)");
    const auto x_rows = static_cast<uint64_t>(m.total_tokens);
    const auto w_rows = static_cast<uint64_t>(problem.experts) * problem.n;
    const auto k = static_cast<uint64_t>(problem.k);
    m.maps.x = make_byte_tensor_map_2d(x, x_rows, k, kBlockM, kBlockK);
    m.maps.x_half = make_byte_tensor_map_2d(x, x_rows, k, kBlockM / 2, kBlockK);
    m.maps.w = make_byte_tensor_map_2d(w, w_rows, k, kBlockN, kBlockK);
    m.maps.w_half = make_byte_tensor_map_2d(w, w_rows, k, kBlockN / 2, kBlockK);
    m.maps.y = make_bf16_tensor_map_2d(y, x_rows, problem.n, 64, 64); // epilogue chunks
  }
  const std::vector<int>& offsets = space.offsets;
  check_cuda(cudaMalloc(&m.device_offsets, offsets.size() * sizeof(int)), "cudaMalloc(offsets)");
  check_cuda(cudaMemcpy(m.device_offsets, offsets.data(), offsets.size() * sizeof(int), cudaMemcpyHostToDevice),
             "cudaMemcpy(offsets)");
  m.params.x_scales = static_cast<const uint8_t*>(x_scales);
  m.params.w_scales = static_cast<const uint8_t*>(w_scales);
  m.params.x_rows = m.total_tokens;
  m.params.w_rows = problem.experts * problem.n;
  m.params.scale_cols = problem.k / kScaleBlock;
  GroupedGemmParams& p = m.params.gemm;
  p.order = problem.order;
  p.space = TileSpace{m.device_offsets, problem.experts, offsets[problem.experts], space.tile_cols};
  p.token_offsets = m.device_offsets + problem.experts + 1;
  p.y = static_cast<__nv_bfloat16*>(y);
  p.bias = nullptr;
  p.trace = nullptr;
  p.n = problem.n;
  p.k_blocks = problem.k / kBlockK;
  p.stages = problem.stages;
}

Mxfp8GroupedGemm::~Mxfp8GroupedGemm() {
  if (impl_ && impl_->device_offsets) cudaFree(impl_->device_offsets); // no throw from a destructor
  if (impl_ && impl_->x_copy) cudaFree(impl_->x_copy);
  if (impl_ && impl_->row_info) cudaFree(impl_->row_info);
}

void Mxfp8GroupedGemm::run(cudaStream_t stream, TileTrace* trace) const {
  const Impl& m = *impl_;
  if (m.row_info) {
    mxfp8_f16_pass(m.x, m.x_scales, m.w_scales, m.x_copy, m.row_info, m.row_info + m.total_tokens, m.total_tokens,
                   m.w_rows, m.problem.k, m.sm_count, stream);
  } else if (m.x_copy) {
    mxfp8_dequantize(Mxfp8Element::e4m3, m.x, m.x_scales, m.x_copy, m.total_tokens, m.problem.k, m.sm_count, stream);
  }
  run_gemm(stream, trace);
}

void Mxfp8GroupedGemm::run_gemm(cudaStream_t stream, TileTrace* trace) const {
  const Impl& m = *impl_;
  if (m.tiles == 0) return;
  if (m.problem.scheme == Mxfp8GemmScheme::transposed || m.problem.scheme == Mxfp8GemmScheme::xpass ||
      m.problem.scheme == Mxfp8GemmScheme::xpass_f16) {
    mxfp8_transposed::run(m.transposed, stream, trace);
    return;
  }
  Params params = m.params;
  params.gemm.trace = trace;
  cudaLaunchAttribute cluster{};
  const cudaLaunchConfig_t config = launch_config(m.problem.scheme, m.grid, params.gemm.stages, stream, &cluster);
  check_cuda(cudaLaunchKernelEx(&config, kernel_of(m.problem.scheme), m.maps, params),
             "cudaLaunchKernelEx(mxfp8_gemm_kernel)");
}

int Mxfp8GroupedGemm::tile_count() const { return impl_->tiles; }
int Mxfp8GroupedGemm::grid_size() const { return impl_->grid; }
int Mxfp8GroupedGemm::total_tokens() const { return impl_->total_tokens; }
double Mxfp8GroupedGemm::flops() const {
  return 2.0 * impl_->total_tokens * static_cast<double>(impl_->problem.n) * impl_->problem.k;
}

} // namespace tilesim::kernels
