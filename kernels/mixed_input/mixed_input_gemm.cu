// Host launcher of the mixed-input GEMM: validates the problem and its buffers, builds the tile
// space and tensor maps once, picks the compiled instantiation, launches.
#include "kernels/mixed_input/mixed_input_gemm.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "kernels/common/expert_tiles.h"
#include "kernels/common/tensor_maps.h"
#include "kernels/mixed_input/mixed_input_kernel.cuh"

namespace tilesim::kernels {
namespace {

using mixed_input::Params;
using mixed_input::StoreMap;
using mixed_input::TensorMaps;
using mixed_input::TileShape;

void check_cuda(cudaError_t err, const char* call) {
  if (err != cudaSuccess) throw KernelError(std::string(call) + " failed: " + cudaGetErrorString(err));
}

void require(bool ok, const std::string& message) {
  if (!ok) throw KernelError("MixedInputProblem: " + message);
}

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// 227 KB is the most shared memory a block may opt into on sm_90.
constexpr int kMaxSharedBytes = 227 * 1024;
constexpr int kGroupSize = 128;

template <int T, int N, int SB, dequant::Conversion Path, bool TS = false> struct Instance {
  using Shape = TileShape<T, N, SB, TS>;
  static void enable_shared_memory(int bytes) {
    static int enabled = 0; // raised once per instantiation, to the largest asked
    if (bytes <= enabled) return;
    check_cuda(cudaFuncSetAttribute(mixed_input::mixed_input_gemm_kernel<T, N, SB, Path, TS>,
                                    cudaFuncAttributeMaxDynamicSharedMemorySize, bytes),
               "cudaFuncSetAttribute(mixed_input_gemm_kernel, MaxDynamicSharedMemorySize)");
    enabled = bytes;
  }
  static int resident_per_sm(int stages) {
    enable_shared_memory(Shape::shared_bytes(stages));
    int blocks = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, mixed_input::mixed_input_gemm_kernel<T, N, SB, Path, TS>,
                                                             Shape::threads, Shape::shared_bytes(stages)),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor(mixed_input_gemm_kernel)");
    return blocks;
  }
  static void launch(const TensorMaps& maps, const Params& p, const StoreMap& store, int grid, cudaStream_t stream) {
    enable_shared_memory(Shape::shared_bytes(p.stages));
    mixed_input::mixed_input_gemm_kernel<T, N, SB, Path, TS>
        <<<grid, Shape::threads, Shape::shared_bytes(p.stages), stream>>>(maps, p, store);
    check_cuda(cudaGetLastError(), "mixed_input_gemm_kernel launch");
  }
};

int block_k(int tile_n) { return mixed_input_block_k(tile_n); } // TileShape::block_k
int stage_k(const MixedInputProblem& p) { return p.tile_k ? p.tile_k : block_k(p.tile_n); }

// Tiles whose ring stages may carry 2 or 4 K blocks (TileShape::stage_blocks, each count its own
// instantiation): 64-token tiles only. 16-token ones gained nothing on the decode shapes from it
// (kernels/mixed_input/NOTES.md, stage K fixed at compile time).
bool multi_block_stages(int tile_tokens) { return tile_tokens == 64; }

// f(Instance<T, N, 1, 2 or 4, Path>{}) by the problem's K blocks a stage.
template <int T, int N, dequant::Conversion Path, class F> auto by_stage_blocks(const MixedInputProblem& p, F&& f) {
  switch (stage_k(p) / block_k(N)) {
  case 2: return f(Instance<T, N, 2, Path>{});
  case 4: return f(Instance<T, N, 4, Path>{});
  default: return f(Instance<T, N, 1, Path>{});
  }
}

// f(Instance<T, 128, 1, Path, false or true>{}) by the problem's epilogue (128-channel tiles).
template <int T, dequant::Conversion Path, class F> auto by_epilogue(const MixedInputProblem& p, F&& f) {
  return p.tma_store ? f(Instance<T, 128, 1, Path, true>{}) : f(Instance<T, 128, 1, Path, false>{});
}

// Calls f(Instance<...>{}) for the problem's compiled instantiation.
template <class F> auto dispatch(const MixedInputProblem& p, F&& f) {
  const bool prmt = p.conversion == ConversionPath::prmt;
  constexpr auto fast = dequant::Conversion::prmt;
  constexpr auto naive = dequant::Conversion::cvt;
  switch (p.tile_tokens) {
  case 16: return prmt ? f(Instance<16, 64, 1, fast>{}) : f(Instance<16, 64, 1, naive>{});
  case 32: return prmt ? f(Instance<32, 64, 1, fast>{}) : f(Instance<32, 64, 1, naive>{});
  case 64: return prmt ? by_stage_blocks<64, 64, fast>(p, f) : by_stage_blocks<64, 64, naive>(p, f);
  case 128: return prmt ? by_epilogue<128, fast>(p, f) : by_epilogue<128, naive>(p, f);
  case 224: return prmt ? by_epilogue<224, fast>(p, f) : by_epilogue<224, naive>(p, f);
  default: return prmt ? by_epilogue<256, fast>(p, f) : by_epilogue<256, naive>(p, f);
  }
}
int stage_bytes(int tile_tokens, int tile_n, int tile_k) { return (tile_tokens * 2 + tile_n) * tile_k; }
int reduce_bytes(int tile_tokens, int tile_n) { // TileShape::reduce_bytes
  return tile_n == 64 ? (mixed_input_consumers(tile_tokens, tile_n) - 1) * tile_tokens * 256 : 0;
}
int staging_bytes(int tile_tokens, bool tma_store) { return tma_store ? 2 * tile_tokens * 128 : 0; } // TileShape's, both consumers

} // namespace

std::string mixed_input_unsupported_reason(int tile_tokens, int tile_n, int tile_k, int stages, bool tma_store) {
  const bool small = tile_tokens == 16 || tile_tokens == 32 || tile_tokens == 64;
  const bool large = tile_tokens == 128 || tile_tokens == 224 || tile_tokens == 256;
  if (!small && !large)
    return "tile_tokens (tile m) = " + std::to_string(tile_tokens) +
           " is not supported; use 16, 32, 64, 128, 224 or 256";
  if (small && tile_n != 64)
    return "tile_n = " + std::to_string(tile_n) + " with " + std::to_string(tile_tokens) +
           "-token tiles is not supported; use 64 (consumer warpgroups splitting K)";
  if (large && tile_n != 128)
    return "tile_n = " + std::to_string(tile_n) + " with " + std::to_string(tile_tokens) +
           "-token tiles is not supported; use 128 (two consumer warpgroups of 64 channels)";
  const int bk = block_k(tile_n);
  const bool multi = multi_block_stages(tile_tokens);
  if (tile_k != bk && (!multi || (tile_k != 2 * bk && tile_k != 4 * bk)))
    return "tile_k = " + std::to_string(tile_k) + " with " + std::to_string(tile_tokens) + "x" +
           std::to_string(tile_n) + " tiles is not supported; use " +
           (multi ? "128, 256 or 512 (1, 2 or 4 K blocks of 128 a stage)" : std::to_string(bk));
  if (tma_store && tile_n != 128)
    return "tma_store with " + std::to_string(tile_tokens) + "x" + std::to_string(tile_n) +
           " tiles is not supported; use it on 128-channel tiles (128, 224 or 256 tokens) only";
  // Split K (64-channel tiles): stage s always serves consumer s % consumers, so that each stage's
  // phases are one consumer's blocks in order and a parity wait can never see a lap-old phase.
  const int consumers = mixed_input_consumers(tile_tokens, tile_n);
  if (tile_n == 64 && stages % consumers != 0)
    return "stages = " + std::to_string(stages) + " is not supported for " + std::to_string(tile_tokens) +
           "x64 tiles; use a multiple of " + std::to_string(consumers) + " (that many consumers split K, one per stage in turn)";
  const int max_stages = std::min(
      16, (kMaxSharedBytes - 1024 - reduce_bytes(tile_tokens, tile_n) - staging_bytes(tile_tokens, tma_store)) /
              (stage_bytes(tile_tokens, tile_n, tile_k) + 16));
  if (stages < 2 || stages > max_stages)
    return "stages = " + std::to_string(stages) + " is not supported for " + std::to_string(tile_tokens) + "x" +
           std::to_string(tile_n) + "x" + std::to_string(tile_k) + (tma_store ? " tiles with tma_store" : " tiles") +
           "; use 2.." + std::to_string(max_stages) + " (shared memory holds at most that many)";
  return {};
}

struct MixedInputGemm::Impl {
  MixedInputProblem problem;
  TensorMaps maps{};
  StoreMap store{}; // the TMA-store epilogue's Y map (tma_store only)
  Params params{};
  int* device_offsets = nullptr; // row_offsets (experts + 1) then token_offsets (experts + 1)
  int tiles = 0;
  int grid = 0;
  int total_tokens = 0;
};

std::size_t MixedInputGemm::scale_count(const MixedInputProblem& p) {
  const std::size_t channels = static_cast<std::size_t>(p.experts) * static_cast<std::size_t>(p.n);
  return p.scale_group ? channels * static_cast<std::size_t>(p.k / p.scale_group) : channels;
}

std::size_t MixedInputGemm::zero_count(const MixedInputProblem& p) {
  return p.weight == WeightType::uint8 ? static_cast<std::size_t>(p.experts) * static_cast<std::size_t>(p.n) : 0;
}

MixedInputGemm::MixedInputGemm(const MixedInputProblem& problem, const MixedInputBuffers& buffers, int sm_count)
    : impl_(std::make_unique<Impl>()) {
  Impl& m = *impl_;
  m.problem = problem;
  const std::string reason =
      mixed_input_unsupported_reason(problem.tile_tokens, problem.tile_n, stage_k(problem), problem.stages, problem.tma_store);
  require(reason.empty(), reason);
  require(problem.experts >= 1, "experts = " + std::to_string(problem.experts) + " must be >= 1");
  require(static_cast<int>(problem.tokens_per_expert.size()) == problem.experts,
          "tokens_per_expert has " + std::to_string(problem.tokens_per_expert.size()) + " entries, experts = " +
              std::to_string(problem.experts));
  require(problem.n >= 8 && problem.n % 8 == 0,
          "n = " + std::to_string(problem.n) + " must be a positive multiple of 8 (16-byte rows of Y)");
  require(problem.k >= 16 && problem.k % 16 == 0,
          "k = " + std::to_string(problem.k) + " must be a positive multiple of 16 (16-byte rows of W for TMA)");
  require(problem.scale_group == 0 || problem.scale_group == kGroupSize,
          "scale_group = " + std::to_string(problem.scale_group) + " is not supported; use 0 (per channel) or 128");
  require(problem.scale_group == 0 || problem.k % problem.scale_group == 0,
          "k = " + std::to_string(problem.k) + " is not a multiple of scale_group " +
              std::to_string(problem.scale_group) + "; use a k that is, or per-channel scales (0)");
  require(problem.weight == WeightType::int8 || problem.weight == WeightType::uint8,
          "weight is neither int8 nor uint8");
  require(static_cast<int>(problem.order.kind) >= 0 && problem.order.kind < LaunchOrderKind::count_,
          "order.kind is not a LaunchOrderKind");
  require(problem.order.group >= 1, "order.group = " + std::to_string(problem.order.group) + " must be >= 1");
  require(sm_count >= 1, "sm_count = " + std::to_string(sm_count) + " must be >= 1");

  const std::size_t want_scales = scale_count(problem), want_zeros = zero_count(problem);
  require(buffers.scales != nullptr && buffers.scale_count == want_scales,
          "scales has " + std::to_string(buffers.scales ? buffers.scale_count : 0) + " elements, expected " +
              std::to_string(want_scales) + " (experts x n" + (problem.scale_group ? " x k / 128)" : ")"));
  if (problem.weight == WeightType::uint8)
    require(buffers.zeros != nullptr && buffers.zero_count == want_zeros,
            "uint8 weights need zero points: zeros has " + std::to_string(buffers.zeros ? buffers.zero_count : 0) +
                " elements, expected " + std::to_string(want_zeros) + " (experts x n)");
  else
    require(buffers.zeros == nullptr, "int8 weights are symmetric: pass no zero points (zeros = nullptr)");

  const ExpertTiles space = expert_tiles(problem.tokens_per_expert, problem.tile_tokens, problem.n, problem.tile_n,
                                         "MixedInputProblem");
  const std::vector<int>& offsets = space.offsets; // row_offsets | token_offsets
  const int tile_cols = space.tile_cols;
  m.total_tokens = space.total_tokens;
  m.tiles = space.tiles;
  const int resident =
      dispatch(problem, [&](auto instance) { return decltype(instance)::resident_per_sm(problem.stages); });
  require(resident >= 1, "no CTA with " + std::to_string(problem.stages) + " stages fits on an SM; use fewer stages");
  m.grid = problem.persistent ? std::max(1, std::min(m.tiles, sm_count * resident)) : m.tiles;

  if (m.total_tokens > 0) {
    require(buffers.x != nullptr && buffers.w != nullptr && buffers.y != nullptr,
            "x, w and y must be device pointers, got a null");
    require(reinterpret_cast<uintptr_t>(buffers.x) % 16 == 0 && reinterpret_cast<uintptr_t>(buffers.w) % 16 == 0 &&
                reinterpret_cast<uintptr_t>(buffers.y) % 16 == 0,
            "x, w and y must be 16-byte aligned (TMA global addresses)");
    m.maps.x = make_bf16_tensor_map_2d(buffers.x, static_cast<uint64_t>(m.total_tokens), problem.k,
                                       problem.tile_tokens, 64);
    m.maps.w = make_byte_tensor_map_2d(buffers.w, static_cast<uint64_t>(problem.experts) * problem.n, problem.k,
                                       problem.tile_n, block_k(problem.tile_n));
    if (problem.tma_store) { // Y in boxes of a consumer's 64 channels x the tile's tokens
      m.store.y = make_bf16_tensor_map_2d(buffers.y, static_cast<uint64_t>(m.total_tokens), problem.n,
                                          problem.tile_tokens, 64);
      m.store.total_tokens = m.total_tokens;
    }
  }
  check_cuda(cudaMalloc(&m.device_offsets, offsets.size() * sizeof(int)), "cudaMalloc(offsets)");
  check_cuda(cudaMemcpy(m.device_offsets, offsets.data(), offsets.size() * sizeof(int), cudaMemcpyHostToDevice),
             "cudaMemcpy(offsets)");

  Params& p = m.params;
  p.order = problem.order;
  p.space = TileSpace{m.device_offsets, problem.experts, offsets[problem.experts], tile_cols};
  p.token_offsets = m.device_offsets + problem.experts + 1;
  p.scales = static_cast<const uint16_t*>(buffers.scales);
  p.zeros = static_cast<const uint8_t*>(buffers.zeros);
  p.y = static_cast<__nv_bfloat16*>(buffers.y);
  p.trace = nullptr;
  p.n = problem.n;
  p.k_blocks = ceil_div(problem.k, block_k(problem.tile_n));
  p.groups = problem.scale_group ? problem.k / problem.scale_group : 0;
  p.stages = problem.stages;
  p.signed_weights = problem.weight == WeightType::int8;
}

MixedInputGemm::~MixedInputGemm() {
  if (impl_ && impl_->device_offsets) cudaFree(impl_->device_offsets); // no throw from a destructor
}

void MixedInputGemm::run(cudaStream_t stream, TileTrace* trace) const {
  const Impl& m = *impl_;
  if (m.tiles == 0) return; // every expert empty: nothing to write
  Params params = m.params;
  params.trace = trace;
  dispatch(m.problem, [&](auto instance) { decltype(instance)::launch(m.maps, params, m.store, m.grid, stream); });
}

int MixedInputGemm::tile_count() const { return impl_->tiles; }
int MixedInputGemm::grid_size() const { return impl_->grid; }
int MixedInputGemm::total_tokens() const { return impl_->total_tokens; }
double MixedInputGemm::flops() const {
  return 2.0 * impl_->total_tokens * static_cast<double>(impl_->problem.n) * impl_->problem.k;
}
const MixedInputProblem& MixedInputGemm::problem() const { return impl_->problem; }

} // namespace tilesim::kernels
