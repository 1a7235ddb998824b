// mixed_input_check: the mixed-input GEMM on the GPU.
//  1. Both conversions, on the device, for all 256 byte values of int8 and of uint8 (several zero
//     points), with and without a group scale: bit-exact against dequant::reference_bf16.
//  2. The GEMM against an fp32 reference of X * dequant(W)^T on fresh random data with poisoned
//     outputs: int8 and uint8, per-channel and per-128 scales, both conversions, every tile shape,
//     decode and prefill shapes, ragged and zero-token experts, N and K tails, every launch order,
//     persistent and one CTA per tile; 128-channel tiles with either epilogue (element stores, or
//     shared memory and a TMA store, with ragged experts' last tiles falling back to the former).
//  3. Bad problems are refused with a KernelError naming the field.
// Without a GPU: prints "SKIP: no CUDA device (...)" and exits 77 (CTest shows it skipped).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/mixed_input/dequant.h"
#include "kernels/mixed_input/mixed_input_testing.cuh"
#include "models/launch_order_names.h"

namespace tk = tilesim::kernels;
namespace dq = tilesim::kernels::dequant;
using tk::testing::check;

namespace {

// out[v] for byte v: the bf16 of the pair (v, v) through the given path, low half.
template <dq::Conversion Path>
__global__ void convert_all_bytes(bool is_signed, uint32_t zero_point, uint32_t scale_bits, uint32_t* out) {
  const uint32_t v = threadIdx.x;
  const uint32_t word = (v | (v << 8) | (v << 16) | (v << 24)) ^ dq::flip_mask(is_signed);
  const float zero = dq::effective_zero(is_signed, zero_point);
  uint32_t pair = dq::convert_pair<Path>(word, 2 * (v & 1), zero, dq::kMagicValue + zero);
  if (scale_bits) pair = dq::mul_bf16x2(pair, scale_bits * 0x10001u);
  out[v] = pair;
}

int check_conversions() {
  int failures = 0;
  uint32_t* d_out = nullptr;
  check(cudaMalloc(&d_out, 256 * sizeof(uint32_t)), "cudaMalloc(conversion out)");
  for (bool is_signed : {true, false})
    for (uint32_t zero : {0u, 1u, 128u, 200u, 255u}) {
      if (is_signed && zero != 0) continue;
      for (uint32_t scale_bits : {0u, 0x3C01u /* 0.0079 */, 0x4049u /* 3.14 */})
        for (int path = 0; path < 2; ++path) {
          if (path == 0)
            convert_all_bytes<dq::Conversion::prmt><<<1, 256>>>(is_signed, zero, scale_bits, d_out);
          else
            convert_all_bytes<dq::Conversion::cvt><<<1, 256>>>(is_signed, zero, scale_bits, d_out);
          check(cudaGetLastError(), "convert_all_bytes launch");
          uint32_t got[256];
          check(cudaMemcpy(got, d_out, sizeof got, cudaMemcpyDeviceToHost), "cudaMemcpy(conversion out)");
          int wrong = 0;
          for (int v = 0; v < 256; ++v) {
            const uint32_t want = dq::reference_bf16(uint8_t(v), is_signed, zero, scale_bits ? scale_bits : 0x3F80u);
            if ((got[v] & 0xFFFF) != want || (got[v] >> 16) != want) ++wrong;
          }
          std::printf("%s conversion %-4s %-5s zero=%3u scale=0x%04X: %d of 256 byte values differ\n",
                      wrong ? "FAIL" : "PASS", path == 0 ? "prmt" : "cvt", is_signed ? "int8" : "uint8", zero,
                      scale_bits, wrong);
          failures += wrong ? 1 : 0;
        }
    }
  cudaFree(d_out);
  return failures;
}

struct Case {
  std::string name;
  std::vector<int> tokens;
  int n, k;
  int sample_stride;
};

struct Config {
  int tile_tokens, stages;
  tk::WeightType weight;
  int scale_group;
  tk::ConversionPath conversion;
  bool persistent;
  tilesim::LaunchOrder order;
  int stage_blocks = 1; // K blocks a ring stage carries (2 and 4 on 64-channel tiles only)
  bool tma_store = false; // the TMA-store epilogue (128-channel tiles only)
};

int run_config(const Case& c, const Config& cfg, int sm_count, uint64_t seed) {
  tk::MixedInputProblem p;
  p.experts = static_cast<int>(c.tokens.size());
  p.tokens_per_expert = c.tokens;
  p.n = c.n;
  p.k = c.k;
  p.weight = cfg.weight;
  p.scale_group = cfg.scale_group;
  p.conversion = cfg.conversion;
  p.tile_tokens = cfg.tile_tokens;
  p.tile_n = cfg.tile_tokens >= 128 ? 128 : 64;
  p.tile_k = cfg.stage_blocks * tk::mixed_input_block_k(p.tile_n);
  p.stages = cfg.stages;
  p.persistent = cfg.persistent;
  p.order = cfg.order;
  p.tma_store = cfg.tma_store;
  char label[256];
  std::snprintf(label, sizeof label, "%-12s %s g%-3d %-4s %3dx%dx%d s%-2d %-3s %-14s %s", c.name.c_str(),
                cfg.weight == tk::WeightType::int8 ? "int8 " : "uint8", cfg.scale_group,
                cfg.conversion == tk::ConversionPath::prmt ? "prmt" : "cvt", p.tile_tokens, p.tile_n, p.tile_k, p.stages,
                p.tma_store ? "tma" : "", tilesim::to_string(cfg.order).c_str(), cfg.persistent ? "persistent" : "grid");
  try {
    tk::testing::MixedInputOperands ops(p, seed);
    tk::MixedInputGemm gemm(p, ops.buffers(), sm_count);
    ops.poison();
    gemm.run(nullptr, nullptr);
    check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after mixed_input_gemm");
    const tk::testing::CheckResult r = tk::testing::check_output(ops, p, c.sample_stride);
    std::printf("%s %s rel_err=%.3e unwritten=%llu guard_changed=%llu tiles=%d grid=%d\n", r.ok() ? "PASS" : "FAIL",
                label, r.rel_err, r.unwritten, r.guard_changed, gemm.tile_count(), gemm.grid_size());
    return r.ok() ? 0 : 1;
  } catch (const tk::KernelError& e) {
    std::printf("FAIL %s KernelError: %s\n", label, e.what());
    return 1;
  }
}

// A problem the launcher must refuse, with the message naming `field`.
int expect_refusal(const char* what, tk::MixedInputProblem p, tk::MixedInputBuffers b, const char* field) {
  try {
    tk::MixedInputGemm gemm(p, b, 132);
    std::printf("FAIL refusal %s: accepted\n", what);
    return 1;
  } catch (const tk::KernelError& e) {
    const bool named = std::strstr(e.what(), field) != nullptr;
    std::printf("%s refusal %s: %s\n", named ? "PASS" : "FAIL", what, e.what());
    return named ? 0 : 1;
  }
}

int check_refusals() {
  tk::MixedInputProblem p;
  p.tokens_per_expert = {16};
  p.n = 256;
  p.k = 512;
  tk::testing::MixedInputOperands ops(p, 1);
  const tk::MixedInputBuffers good = ops.buffers();
  int failures = 0;
  tk::MixedInputProblem q = p;
  q.scale_group = 128;
  q.k = 320;
  failures += expect_refusal("k not a multiple of the group", q, good, "scale_group");
  tk::MixedInputBuffers b = good;
  b.scale_count -= 1;
  failures += expect_refusal("scales of the wrong length", p, b, "scales");
  b = good;
  b.scales = nullptr;
  failures += expect_refusal("scales missing", p, b, "scales");
  q = p;
  q.weight = tk::WeightType::uint8;
  failures += expect_refusal("uint8 without zero points", q, good, "zero");
  q = p;
  q.tile_tokens = 48;
  failures += expect_refusal("unsupported tile", q, good, "tile_tokens");
  q = p;
  q.tile_k = 256;
  failures += expect_refusal("2 K blocks a stage on a 16-token tile", q, good, "tile_k");
  q = p;
  q.tile_tokens = 64;
  q.tile_k = 384;
  failures += expect_refusal("3 K blocks a stage", q, good, "tile_k");
  q.tile_k = 512;
  q.stages = 4;
  failures += expect_refusal("4 stages of 512 K at 64 tokens (shared memory)", q, good, "stages");
  q = p;
  q.tma_store = true;
  failures += expect_refusal("the TMA-store epilogue on a 64-channel tile", q, good, "tma_store");
  q.tile_tokens = 224;
  q.tile_n = 128;
  q.stages = 5;
  failures += expect_refusal("5 stages of 224 tokens beside the TMA store's buffers", q, good, "stages");
  return failures;
}

} // namespace

int main(int argc, char** argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device (mixed_input_check needs an sm_90a GPU)\n");
    return 77;
  }
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  if (prop.major != 9) {
    std::printf("SKIP: %s is sm_%d%d; the kernel is built for sm_90a\n", prop.name, prop.major, prop.minor);
    return 77;
  }
  int failures = check_conversions();
  failures += check_refusals();

  using tilesim::parse_launch_order;
  const auto i8 = tk::WeightType::int8, u8 = tk::WeightType::uint8;
  const auto fast = tk::ConversionPath::prmt, naive = tk::ConversionPath::cvt;
  const std::vector<Case> cases = {
      {"decode_m1", {1}, 1024, 2048, 1},
      {"decode_m13", {13}, 1000, 1040, 1},  // N and K tails
      {"decode_m64", {64}, 2048, 4096, 1},
      {"prefill", {700}, 1152, 1024, 7},
      {"grouped", {300, 0, 129, 1, 0, 77}, 520, 768, 3},
  };
  const char* orders[] = {"row_major", "column_major", "grouped_m:8", "grouped_n:4", "serpentine",
                          "morton",    "hilbert",      "expert_major:4", "interleaved"};
  uint64_t seed = 100;
  for (const Case& c : cases) {
    const int max_tokens = *std::max_element(c.tokens.begin(), c.tokens.end());
    std::vector<int> tiles = max_tokens <= 16 ? std::vector<int>{16, 32}
                             : max_tokens <= 64 ? std::vector<int>{16, 64}
                                                : std::vector<int>{32, 128, 224, 256};
    for (int tile : tiles)
      for (auto weight : {i8, u8})
        for (int group : {0, 128}) {
          if (group && c.k % 128) continue;
          for (auto conversion : {fast, naive})
            for (int stage_blocks : {1, 2, 4}) // K tails end in a stage partly filled (decode_m13: 9 blocks)
              for (bool tma_store : {false, true}) {
                if (tile >= 128 && stage_blocks > 1) continue;
                if (tile < 128 && tma_store) continue;
                // 4 stages, or 2 where shared memory holds no more (64x64x512); more than one K block
                // a stage on 64-token tiles only: check_refusals covers the refusals.
                const int tile_k = stage_blocks * tk::mixed_input_block_k(tile >= 128 ? 128 : 64);
                int stages = tile >= 128 ? 3 : 4;
                if (!tk::mixed_input_unsupported_reason(tile, tile >= 128 ? 128 : 64, tile_k, stages, tma_store).empty())
                  stages = 2;
                if (!tk::mixed_input_unsupported_reason(tile, tile >= 128 ? 128 : 64, tile_k, stages, tma_store).empty())
                  continue;
                failures += run_config(c, {tile, stages, weight, group, conversion, true,
                                           parse_launch_order("grouped_m:8"), stage_blocks, tma_store},
                                       prop.multiProcessorCount, ++seed);
              }
        }
    if (quick) continue;
    for (const char* order : orders)
      for (bool persistent : {true, false})
        for (int stage_blocks : {1, 2})
          for (bool tma_store : {false, true}) {
            if (tiles.back() != 64 && stage_blocks > 1) continue; // 64-token tiles only
            if (tma_store && tiles.back() < 128) continue;
            // The TMA store on the prefill tile, 224 tokens (grouped: ragged experts fall back).
            const int tile = tma_store ? 224 : tiles.back();
            failures += run_config(c, {tile, 4, i8, 0, fast, persistent, parse_launch_order(order), stage_blocks, tma_store},
                                   prop.multiProcessorCount, ++seed);
          }
  }
  std::printf("%s: %d failure(s)\n", failures ? "FAILED" : "ALL PASSED", failures);
  return failures ? 1 : 0;
}
