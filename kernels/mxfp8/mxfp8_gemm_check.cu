// mxfp8_gemm_check: the MXFP8 grouped GEMM, every scheme (promote, dequantize, transposed, xpass, xpass_f16), against the CPU
// reference of the dequantised operands (mxfp8_gemm_reference.h), every output element; and the
// dequantize scheme's conversion on the GPU, every element byte at every scale byte, bit for bit
// against the OCP-spec reference (the CPU test runs the same code on the host), and xpass_f16's, every element byte at
// every relative exponent, bit for bit against the same code on the host (which the CPU test checks against the
// nearest f16). Random E4M3 elements (every finite code), random
// E8M0 scales per 32-block (2^-8..2^8, or adversarial: 2^-40..2^40, whole blocks of zeros with the
// 2^-127 scale the quantiser gives them, a NaN scale that must turn its row to NaN), NaN element
// codes that must turn their rows and columns to NaN, ragged and zero-token experts, M and N tails,
// several launch orders, persistent (on every SM, or on 3 so that each CTA runs several tiles) and
// one CTA per tile, every ring depth; Y poisoned (NaN) before each run. Then the refusals: k not a multiple of 32 or 128,
// an unsupported ring depth. The CPU reference's own hand-worked case runs first, with or without
// a GPU. Exit 0 pass, 1 fail, 77 no CUDA device (CTest skip).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/check_kernels.cuh"
#include "kernels/mxfp8/mxfp8_dequant.h"
#include "kernels/mxfp8/mxfp8_f16_dequant.h"
#include "kernels/mxfp8/mxfp8_gemm.h"
#include "kernels/mxfp8/mxfp8_gemm_reference.h"
#include "models/launch_order_names.h"

namespace tk = tilesim::kernels;
namespace ref = tilesim::kernels::mxfp8_reference;
using tk::testing::check;

namespace {

// unit_*: that operand all 1.0, every scale 2^0; nan_elements: moderate scales and a few NaN element
// codes (0x7F, 0xFF), whose rows of X and columns of W must come out NaN; span22: scales 2^-11..2^11, so
// that many rows hold blocks exactly 22 binades below their largest (xpass_f16's last exact block, on
// its wide path).
enum class Scales { moderate, adversarial, unit_x, unit_w, nan_elements, span22 };

struct Case {
  const char* name;
  std::vector<int> tokens;
  int n, k;
  const char* order;
  bool persistent;
  int stages;
  Scales scales;
  bool quick;
  tk::Mxfp8GemmScheme scheme = tk::Mxfp8GemmScheme::promote;
  int tile_tokens = 16; // the transposed scheme's tokens per tile
  int tile_channels = 64; // and its channels (128: the 128 x 128 kernel)
  int sm_limit = 0;       // persistent CTAs on at most this many SMs (0: all), so that each runs several tiles
};

struct Operands {
  std::vector<std::uint8_t> x, x_scales, w, w_scales;
};

std::uint8_t random_e4m3(std::mt19937_64& rng) {
  const auto b = static_cast<std::uint8_t>(rng());
  return (b & 0x7F) == 0x7F ? static_cast<std::uint8_t>(b - 1) : b; // 0x7F and 0xFF are NaN
}

Operands make_operands(const Case& c, int total, std::mt19937_64& rng) {
  const int experts = static_cast<int>(c.tokens.size()), blocks = c.k / ref::kBlock;
  Operands o;
  o.x.resize(static_cast<std::size_t>(total) * c.k);
  o.w.resize(static_cast<std::size_t>(experts) * c.n * c.k);
  for (auto& v : o.x) v = c.scales == Scales::unit_x ? 0x38 : random_e4m3(rng); // E4M3 1.0
  for (auto& v : o.w) v = c.scales == Scales::unit_w ? 0x38 : random_e4m3(rng);
  const int spread = c.scales == Scales::adversarial                                     ? 40
                     : c.scales == Scales::span22                                        ? 11
                     : c.scales == Scales::moderate || c.scales == Scales::nan_elements ? 8
                                                                                         : 0;
  const auto scale = [&] { return static_cast<std::uint8_t>(127 - spread + static_cast<int>(rng() % (2 * spread + 1))); };
  o.x_scales.resize(static_cast<std::size_t>(total) * blocks);
  o.w_scales.resize(static_cast<std::size_t>(experts) * c.n * blocks);
  for (auto& v : o.x_scales) v = scale();
  for (auto& v : o.w_scales) v = scale();
  if (c.scales == Scales::adversarial && total > 3) {
    for (int b = 0; b < blocks; b += 3) { // every third block of row 1 all zero, scale 2^-127
      o.x_scales[static_cast<std::size_t>(1) * blocks + b] = 0;
      std::memset(&o.x[static_cast<std::size_t>(1) * c.k + b * ref::kBlock], 0, ref::kBlock);
    }
    o.x_scales[static_cast<std::size_t>(2) * blocks + blocks / 2] = ref::kScaleNaN; // row 2: NaN
    o.w_scales[static_cast<std::size_t>(3) * blocks] = 127 + 100; // column 3's first block 2^100 ...
    for (int r = 0; r < total; ++r) o.x_scales[static_cast<std::size_t>(r) * blocks] = 127 - 100; // ... X's 2^-100
  }
  if (c.scales == Scales::nan_elements && experts > 1 && c.tokens[0] > 100 && c.n > 70 && c.k >= 1024) {
    // 128 x 128 tiles: X rows 5 and 100 (either consumer's half of X's tokens), K 300 and 40 (first
    // K half of a stage); W channel 10 of expert 0 (first consumer, first K half) and channel 70 of
    // expert 1 (second consumer, second K half: K 1000 is 104 into its stage).
    o.x[static_cast<std::size_t>(5) * c.k + 300] = 0x7F;
    o.x[static_cast<std::size_t>(100) * c.k + 40] = 0xFF;
    o.w[static_cast<std::size_t>(10) * c.k + 20] = 0xFF;
    o.w[(static_cast<std::size_t>(1) * c.n + 70) * c.k + 1000] = 0x7F;
  }
  return o;
}

template <typename T> T* to_device(const std::vector<T>& host) {
  T* d = nullptr;
  check(cudaMalloc(&d, std::max<std::size_t>(host.size(), 1) * sizeof(T)), "cudaMalloc");
  check(cudaMemcpy(d, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice), "cudaMemcpy(H2D)");
  return d;
}

double bf16_value(std::uint16_t bits) { return ref::bf16_to_double(bits); }

// xpass_f16 (kernels/mxfp8/mxfp8_f16_dequant.h): an element of a block more than 22 binades below its row's
// largest scale is rounded once to f16 relative to the row, off by at most 2^(ref - 159); the bound on what
// that moves a dot product: the sum over K of dx |w| + |x| dw + dx dw. Zero where both rows span <= 22 binades.
double f16_rounding_bound(const std::uint8_t* x, const std::uint8_t* xs, const std::uint8_t* w, const std::uint8_t* ws,
                          int k) {
  namespace mf = tilesim::kernels::mxfp8_f16;
  const int blocks = k / ref::kBlock;
  const std::uint32_t rx = mf::row_info(xs, blocks) & 0xFF, rw = mf::row_info(ws, blocks) & 0xFF;
  double bound = 0.0;
  for (int b = 0; b < blocks; ++b) {
    const double dx = xs[b] + 22 < rx ? std::ldexp(1.0, static_cast<int>(rx) - 159) : 0.0;
    const double dw = ws[b] + 22 < rw ? std::ldexp(1.0, static_cast<int>(rw) - 159) : 0.0;
    if (dx == 0.0 && dw == 0.0) continue;
    for (int i = b * ref::kBlock; i < (b + 1) * ref::kBlock; ++i) {
      const double xv = std::fabs(ref::decode_element(x[i], tilesim::Mxfp8Element::e4m3)) * std::ldexp(1.0, xs[b] - 127);
      const double wv = std::fabs(ref::decode_element(w[i], tilesim::Mxfp8Element::e4m3)) * std::ldexp(1.0, ws[b] - 127);
      bound += dx * wv + xv * dw + dx * dw;
    }
  }
  return bound;
}

bool run_case(const Case& c, int sm_count, std::mt19937_64& rng) {
  const int experts = static_cast<int>(c.tokens.size()), blocks = c.k / ref::kBlock;
  std::vector<int> offsets(experts + 1, 0);
  for (int e = 0; e < experts; ++e) offsets[e + 1] = offsets[e] + c.tokens[e];
  const int total = offsets[experts];
  const Operands o = make_operands(c, total, rng);
  auto* x = to_device(o.x);
  auto* xs = to_device(o.x_scales);
  auto* w = to_device(o.w);
  auto* ws = to_device(o.w_scales);
  std::uint16_t* y = nullptr;
  const std::size_t y_count = static_cast<std::size_t>(total) * c.n;
  check(cudaMalloc(&y, std::max<std::size_t>(y_count, 1) * 2), "cudaMalloc(Y)");
  check(cudaMemset(y, 0xFF, y_count * 2), "cudaMemset(Y poison)");
  tk::Mxfp8GemmProblem p;
  p.experts = experts;
  p.tokens_per_expert = c.tokens;
  p.n = c.n;
  p.k = c.k;
  p.stages = c.stages;
  p.persistent = c.persistent;
  p.order = tilesim::parse_launch_order(c.order);
  p.scheme = c.scheme;
  p.tile_tokens = c.tile_tokens;
  p.tile_channels = c.tile_channels;
  std::vector<std::uint16_t> got(y_count);
  try {
    tk::Mxfp8GroupedGemm gemm(p, x, xs, w, ws, y, c.sm_limit > 0 ? std::min(c.sm_limit, sm_count) : sm_count);
    gemm.run(nullptr, nullptr);
    check(cudaDeviceSynchronize(), "mxfp8_gemm_kernel");
  } catch (const tk::KernelError& e) {
    std::printf("FAIL %s: %s\n", c.name, e.what());
    return false;
  }
  check(cudaMemcpy(got.data(), y, y_count * 2, cudaMemcpyDeviceToHost), "cudaMemcpy(Y)");
  long long bad = 0, nan_rows_ok = 0, rounded = 0;
  std::vector<long long> bad_by_expert(experts, 0); // where the wrong outputs are, printed on a failure
  double worst = 0.0;
  for (int e = 0; e < experts; ++e)
    for (int r = offsets[e]; r < offsets[e + 1]; ++r)
      for (int col = 0; col < c.n; ++col) {
        const std::size_t wr = static_cast<std::size_t>(e) * c.n + col;
        const ref::DotProduct want =
            ref::dequantised_dot(&o.x[static_cast<std::size_t>(r) * c.k], &o.x_scales[static_cast<std::size_t>(r) * blocks],
                                 &o.w[wr * c.k], &o.w_scales[wr * blocks], c.k);
        const double v = bf16_value(got[static_cast<std::size_t>(r) * c.n + col]);
        if (std::isnan(want.value) && std::isnan(v)) ++nan_rows_ok;
        const double extra = c.scheme == tk::Mxfp8GemmScheme::xpass_f16 && !std::isnan(want.value)
                                 ? f16_rounding_bound(&o.x[static_cast<std::size_t>(r) * c.k],
                                                      &o.x_scales[static_cast<std::size_t>(r) * blocks], &o.w[wr * c.k],
                                                      &o.w_scales[wr * blocks], c.k)
                                 : 0.0;
        rounded += extra > 0.0 ? 1 : 0;
        const bool agrees = extra > 0.0 ? !std::isnan(v) && !std::isinf(v) &&
                                              std::fabs(v - want.value) <= ref::tolerance(want) + extra
                                        : ref::agrees(v, want);
        if (!agrees) {
          if (bad < 3)
            std::printf("  %s: Y[%d, %d] = %.9g, reference %.9g (|products| %.3g)\n", c.name, r, col, v, want.value,
                        want.magnitude);
          ++bad;
          ++bad_by_expert[e];
        } else if (!std::isnan(want.value)) {
          worst = std::max(worst, std::fabs(v - want.value) / (ref::tolerance(want) + extra));
        }
      }
  for (void* ptr : {static_cast<void*>(x), static_cast<void*>(xs), static_cast<void*>(w), static_cast<void*>(ws),
                    static_cast<void*>(y)})
    cudaFree(ptr);
  std::printf("%s %s: %zu outputs, %lld wrong, %lld NaN as expected, worst error %.2f of the tolerance",
              bad ? "FAIL" : "ok", c.name, y_count, bad, nan_rows_ok, worst);
  if (c.scheme == tk::Mxfp8GemmScheme::xpass_f16) std::printf(", %lld with f16 rounding in the bound", rounded);
  std::printf("\n");
  if (bad) {
    std::printf("  wrong outputs by expert:");
    for (int e = 0; e < experts; ++e) std::printf(" %lld", bad_by_expert[e]);
    std::printf("\n");
  }
  return bad == 0;
}

// The refusals are KernelError naming the field, before anything touches the device buffers.
bool refuses(int k, int stages, const char* expect, tk::Mxfp8GemmScheme scheme = tk::Mxfp8GemmScheme::promote,
             int tile_tokens = 16, int tile_channels = 64) {
  tk::Mxfp8GemmProblem p;
  p.tokens_per_expert = {128};
  p.n = 128;
  p.k = k;
  p.stages = stages;
  p.scheme = scheme;
  p.tile_tokens = tile_tokens;
  p.tile_channels = tile_channels;
  try {
    tk::Mxfp8GroupedGemm gemm(p, nullptr, nullptr, nullptr, nullptr, nullptr, 132);
  } catch (const tk::KernelError& e) {
    const bool ok = std::strstr(e.what(), expect) != nullptr;
    std::printf("%s refusal k=%d stages=%d: %s\n", ok ? "ok" : "FAIL", k, stages, e.what());
    return ok;
  }
  std::printf("FAIL refusal k=%d stages=%d: accepted\n", k, stages);
  return false;
}

// One block of 32: X all 1.0 (E4M3 0x38) at scale 2^1, W all 0.5 (0x30) at 2^-1: 32 x 2 x 0.25 = 16.
bool reference_hand_worked() {
  std::vector<std::uint8_t> x(32, 0x38), w(32, 0x30);
  const std::uint8_t xs = 128, ws = 126;
  const ref::DotProduct d = ref::dequantised_dot(x.data(), &xs, w.data(), &ws, 32);
  const bool ok = d.value == 16.0 && d.magnitude == 16.0 && ref::agrees(16.0, d) && !ref::agrees(16.25, d);
  std::printf("%s CPU reference, hand-worked block: %g (want 16)\n", ok ? "ok" : "FAIL", d.value);
  return ok;
}

// Element byte 2t and 2t + 1 at scale byte blockIdx.x, through both byte positions of a word.
__global__ void convert_every_byte(std::uint32_t* out) {
  namespace md = tilesim::kernels::mxfp8_dequant;
  const std::uint32_t lo = 2 * threadIdx.x, hi = lo + 1, word = lo | hi << 8 | lo << 16 | hi << 24;
  const md::BlockScale s = md::block_scale(blockIdx.x);
  out[2 * (blockIdx.x * 128 + threadIdx.x)] = md::convert_pair(word, 0, s);
  out[2 * (blockIdx.x * 128 + threadIdx.x) + 1] = md::convert_pair(word, 2, s);
}

bool conversion_every_byte() {
  std::uint32_t* d = nullptr;
  check(cudaMalloc(&d, 256 * 256 * 4), "cudaMalloc(conversion)");
  check(cudaMemset(d, 0xFF, 256 * 256 * 4), "cudaMemset(conversion poison)");
  convert_every_byte<<<256, 128>>>(d);
  check(cudaDeviceSynchronize(), "convert_every_byte");
  std::vector<std::uint32_t> got(256 * 128 * 2);
  check(cudaMemcpy(got.data(), d, got.size() * 4, cudaMemcpyDeviceToHost), "cudaMemcpy(conversion)");
  cudaFree(d);
  const auto is_nan = [](std::uint32_t b) { return (b & 0x7F80u) == 0x7F80u && (b & 0x7Fu) != 0; };
  long long wrong = 0;
  for (int scale = 0; scale < 256; ++scale)
    for (int v = 0; v < 256; ++v) {
      const std::uint16_t want = scale == ref::kScaleNaN
                                     ? 0x7FFF
                                     : ref::round_to_bf16(ref::decode_element(static_cast<std::uint8_t>(v),
                                                                             tilesim::Mxfp8Element::e4m3) *
                                                          std::ldexp(1.0, scale - 127));
      for (int b = 0; b < 2; ++b) {
        const std::uint32_t pair = got[2 * (scale * 128 + v / 2) + b];
        const std::uint32_t half = (v % 2 ? pair >> 16 : pair) & 0xFFFFu;
        if (is_nan(want) ? !is_nan(half) : half != want) {
          if (wrong < 3) std::printf("  conversion: element 0x%02X scale %d: 0x%04X, reference 0x%04X\n", v, scale, half, want);
          ++wrong;
        }
      }
    }
  std::printf("%s dequantize conversion on the GPU: 256 elements x 256 scales x 2 byte positions, %lld wrong\n",
              wrong ? "FAIL" : "ok", wrong);
  return wrong == 0;
}

// xpass_f16's conversion of element bytes 4t .. 4t + 3 at relative exponent d = blockIdx.x - 45 (scale ref - 7 + d,
// ref 200; block 53: the NaN scale), on the narrow path where the kernel takes it, else the wide one.
constexpr std::uint32_t kF16Ref = 200;
constexpr int kF16Exponents = 53;

__host__ __device__ void f16_convert_case(std::uint32_t block, std::uint32_t t, std::uint32_t& lo, std::uint32_t& hi) {
  namespace mf = tilesim::kernels::mxfp8_f16;
  const std::uint32_t word = 4 * t | (4 * t + 1) << 8 | (4 * t + 2) << 16 | (4 * t + 3) << 24;
  const std::uint32_t s = block == kF16Exponents ? mf::kScaleNaN : kF16Ref - 7 + block - 45;
  if (s != mf::kScaleNaN && s + mf::kNarrowSpan >= kF16Ref)
    mf::convert_word(word, mf::narrow_multiplier(s * 0x10001u, mf::narrow_offset(kF16Ref)), lo, hi);
  else
    mf::convert_word(word, mf::wide_multipliers(s, kF16Ref), lo, hi);
}

__global__ void f16_convert_every_byte(std::uint32_t* out) {
  f16_convert_case(blockIdx.x, threadIdx.x, out[2 * (blockIdx.x * 64 + threadIdx.x)],
                   out[2 * (blockIdx.x * 64 + threadIdx.x) + 1]);
}

bool f16_conversion_every_byte() {
  const int blocks = kF16Exponents + 1;
  std::uint32_t* d = nullptr;
  check(cudaMalloc(&d, blocks * 64 * 8), "cudaMalloc(f16 conversion)");
  check(cudaMemset(d, 0xFF, blocks * 64 * 8), "cudaMemset(f16 conversion poison)");
  f16_convert_every_byte<<<blocks, 64>>>(d);
  check(cudaDeviceSynchronize(), "f16_convert_every_byte");
  std::vector<std::uint32_t> got(blocks * 64 * 2);
  check(cudaMemcpy(got.data(), d, got.size() * 4, cudaMemcpyDeviceToHost), "cudaMemcpy(f16 conversion)");
  cudaFree(d);
  long long wrong = 0;
  for (int b = 0; b < blocks; ++b)
    for (int t = 0; t < 64; ++t) {
      std::uint32_t lo, hi;
      f16_convert_case(b, t, lo, hi);
      // Each half bit for bit, but a NaN for a NaN whatever its payload (cvt gives 0x7FFF, the host 0x7E00).
      const auto is_nan = [](std::uint32_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0; };
      const auto same = [&](std::uint32_t g, std::uint32_t w) {
        for (int half = 0; half < 2; ++half) {
          const std::uint32_t gh = g >> (16 * half) & 0xFFFFu, wh = w >> (16 * half) & 0xFFFFu;
          if (is_nan(wh) ? !is_nan(gh) : gh != wh) return false;
        }
        return true;
      };
      if (!same(got[2 * (b * 64 + t)], lo) || !same(got[2 * (b * 64 + t) + 1], hi)) {
        if (wrong < 3)
          std::printf("  f16 conversion: bytes 0x%02X.. exponent block %d: 0x%08X 0x%08X, host 0x%08X 0x%08X\n", 4 * t, b,
                      got[2 * (b * 64 + t)], got[2 * (b * 64 + t) + 1], lo, hi);
        ++wrong;
      }
    }
  std::printf("%s xpass_f16 conversion on the GPU: 256 elements x %d relative exponents and the NaN scale, %lld wrong\n",
              wrong ? "FAIL" : "ok", kF16Exponents, wrong);
  return wrong == 0;
}

} // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0); // each line out before a timeout could cut the run short
  const bool quick = argc > 1 && std::string(argv[1]) == "--quick";
  if (!reference_hand_worked()) return 1;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device (mxfp8_gemm_check needs an sm_90 GPU)\n");
    return 77;
  }
  int sms = 0;
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");
  const std::vector<Case> cases = {
      {"dense 256x256x512 row_major", {256}, 256, 512, "row_major", true, 4, Scales::moderate, true},
      {"ragged E=6 n=384 k=1024 grouped_m:8", {0, 1, 130, 257, 64, 128}, 384, 1024, "grouped_m:8", true, 4,
       Scales::moderate, true},
      {"ragged E=6 hilbert one CTA per tile", {0, 1, 130, 257, 64, 128}, 384, 1024, "hilbert", false, 3,
       Scales::moderate, false},
      {"n tail 300x200x512 column_major 5 stages", {300}, 200, 512, "column_major", true, 5, Scales::moderate, false},
      {"E=8 x 160 n=384 k=2048 interleaved", std::vector<int>(8, 160), 384, 2048, "interleaved", true, 4,
       Scales::moderate, false},
      {"adversarial scales E=2 n=256 k=1024 grouped_n:4", {130, 70}, 256, 1024, "grouped_n:4", true, 4,
       Scales::adversarial, true},
      {"adversarial scales, one CTA per tile, expert_major:2", {200, 0, 57}, 256, 1536, "expert_major:2", false, 5,
       Scales::adversarial, false},
  };
  const auto deq = tk::Mxfp8GemmScheme::dequantize;
  const std::vector<Case> dequantize_cases = {
      // One tile, one operand all 1.0 at scale 2^0: Y is the other operand's row sums (each part alone).
      {"dequantize unit X 128x128x128", {128}, 128, 128, "row_major", true, 3, Scales::unit_x, true, deq},
      {"dequantize unit W 128x128x128", {128}, 128, 128, "row_major", true, 3, Scales::unit_w, true, deq},
      {"dequantize dense 256x256x512 row_major", {256}, 256, 512, "row_major", true, 3, Scales::moderate, true, deq},
      {"dequantize ragged E=6 n=384 k=1024 grouped_m:8", {0, 1, 130, 257, 64, 128}, 384, 1024, "grouped_m:8", true,
       3, Scales::moderate, true, deq},
      {"dequantize odd k-blocks 300x200x640 hilbert one CTA per tile", {300}, 200, 640, "hilbert", false, 3,
       Scales::moderate, true, deq},
      {"dequantize E=8 x 160 n=384 k=2048 interleaved", std::vector<int>(8, 160), 384, 2048, "interleaved", true, 3,
       Scales::moderate, false, deq},
      {"dequantize adversarial scales E=2 n=256 k=1024 grouped_n:4", {130, 70}, 256, 1024, "grouped_n:4", true, 3,
       Scales::adversarial, true, deq},
      {"dequantize adversarial scales, one CTA per tile, expert_major:2", {200, 0, 57}, 256, 1536, "expert_major:2",
       false, 3, Scales::adversarial, false, deq},
  };
  const auto tr = tk::Mxfp8GemmScheme::transposed;
  const std::vector<Case> transposed_cases = {
      {"transposed unit X 16x64x128", {16}, 64, 128, "row_major", true, 4, Scales::unit_x, true, tr, 16},
      {"transposed unit W 16x64x128", {16}, 64, 128, "row_major", true, 4, Scales::unit_w, true, tr, 16},
      {"transposed decode E=8 x 16 n=256 k=1024 grouped_m:4", std::vector<int>(8, 16), 256, 1024, "grouped_m:4", true,
       8, Scales::moderate, true, tr, 16},
      // 5 K blocks a tile: the consumers' turns move from tile to tile.
      {"transposed ragged E=6 n=200 k=640 hilbert one CTA per tile", {0, 1, 17, 40, 5, 16}, 200, 640, "hilbert", false,
       4, Scales::moderate, true, tr, 16},
      {"transposed ragged E=6 n=200 k=640 persistent 16 stages", {0, 1, 17, 40, 5, 16}, 200, 640, "serpentine", true,
       16, Scales::moderate, false, tr, 16},
      {"transposed 32 tokens E=4 n=128 k=1024 interleaved", {32, 50, 3, 31}, 128, 1024, "interleaved", true, 8,
       Scales::moderate, true, tr, 32},
      {"transposed 64 tokens E=3 n=192 k=768 column_major", {64, 100, 1}, 192, 768, "column_major", true, 4,
       Scales::moderate, true, tr, 64},
      {"transposed 128 tokens E=3 n=128 k=1024 grouped_n:4", {128, 200, 7}, 128, 1024, "grouped_n:4", true, 4,
       Scales::moderate, true, tr, 128},
      {"transposed adversarial scales E=3 n=128 k=1024", {20, 0, 37}, 128, 1024, "expert_major:2", true, 8,
       Scales::adversarial, true, tr, 16},
      {"transposed adversarial scales 128 tokens one CTA per tile", {130, 70}, 256, 1024, "row_major", false, 2,
       Scales::adversarial, false, tr, 128},
      // 128 x 128 tiles: each consumer's 64 channels and half of X's tokens, one part alone at a time.
      {"transposed 128x128 unit X 128x128x128", {128}, 128, 128, "row_major", true, 4, Scales::unit_x, true, tr, 128,
       128},
      {"transposed 128x128 unit W 128x128x128", {128}, 128, 128, "row_major", true, 4, Scales::unit_w, true, tr, 128,
       128},
      // Ragged experts, an n tail inside the second consumer's channels, 5 K blocks a tile (the three bf16
      // copies of X and the two fragment halves rotate across tiles), more tiles than CTAs.
      {"transposed 128x128 ragged E=5 n=232 k=640 grouped_n:4", {128, 1, 200, 0, 77}, 232, 640, "grouped_n:4", true, 3,
       Scales::moderate, true, tr, 128, 128},
      {"transposed 128x128 E=4 x 128 n=512 k=2048 one CTA per tile", std::vector<int>(4, 128), 512, 2048, "hilbert",
       false, 4, Scales::moderate, false, tr, 128, 128},
      {"transposed 128x128 adversarial scales E=2 n=256 k=1024", {130, 70}, 256, 1024, "row_major", true, 2,
       Scales::adversarial, true, tr, 128, 128},
      // NaN element codes in both halves of X's tokens, both consumers' channels and both halves of a
      // stage's K: their rows and columns NaN, the rest exact. Persistent CTAs on 3 SMs run 2-3 tiles
      // of 8 K blocks each, so the bf16 X copies and the ring rotate across tiles (the cases above run
      // one tile per CTA).
      {"transposed 128x128 NaN elements E=3 n=256 k=1024 3 persistent CTAs", {128, 130, 70}, 256, 1024, "grouped_m:4",
       true, 3, Scales::nan_elements, true, tr, 128, 128, 3},
      {"transposed 128x128 NaN elements E=3 n=256 k=1024 one tile per CTA", {128, 130, 70}, 256, 1024, "grouped_m:4",
       true, 3, Scales::nan_elements, false, tr, 128, 128},
      {"transposed 128x128 E=3 n=256 k=1024 3 persistent CTAs", {128, 130, 70}, 256, 1024, "grouped_m:4", true, 3,
       Scales::moderate, false, tr, 128, 128, 3},
      {"transposed 128x128 E=4 x 128 n=256 k=1024 3 persistent CTAs", std::vector<int>(4, 128), 256, 1024, "grouped_m:4",
       true, 3, Scales::moderate, false, tr, 128, 128, 3},
  };
  // xpass: the dequantiser's pass over X, then the 128 x 128 transposed tile on its bf16 X; the 128 x 128
  // cases again (one operand all 1.0, ragged experts with an n tail and a zero-token expert, adversarial and
  // NaN scales, NaN element codes, persistent CTAs running several tiles so that the ring's stages are
  // released across tiles, one CTA per tile), at 2, 3 and 4 stages.
  const auto xp = tk::Mxfp8GemmScheme::xpass;
  const std::vector<Case> xpass_cases = {
      {"xpass unit X 128x128x128", {128}, 128, 128, "row_major", true, 4, Scales::unit_x, true, xp, 128, 128},
      {"xpass unit W 128x128x128", {128}, 128, 128, "row_major", true, 4, Scales::unit_w, true, xp, 128, 128},
      {"xpass ragged E=5 n=232 k=640 grouped_n:4", {128, 1, 200, 0, 77}, 232, 640, "grouped_n:4", true, 3,
       Scales::moderate, true, xp, 128, 128},
      {"xpass E=4 x 128 n=512 k=2048 one CTA per tile", std::vector<int>(4, 128), 512, 2048, "hilbert", false, 4,
       Scales::moderate, false, xp, 128, 128},
      {"xpass adversarial scales E=2 n=256 k=1024", {130, 70}, 256, 1024, "row_major", true, 2, Scales::adversarial,
       true, xp, 128, 128},
      {"xpass adversarial scales E=3 n=256 k=1536 3 persistent CTAs", {200, 0, 57}, 256, 1536, "expert_major:2", true, 3,
       Scales::adversarial, true, xp, 128, 128, 3},
      {"xpass NaN elements E=3 n=256 k=1024 3 persistent CTAs", {128, 130, 70}, 256, 1024, "grouped_m:4", true, 3,
       Scales::nan_elements, true, xp, 128, 128, 3},
      {"xpass NaN elements E=3 n=256 k=1024 one tile per CTA", {128, 130, 70}, 256, 1024, "grouped_m:4", false, 2,
       Scales::nan_elements, false, xp, 128, 128},
      {"xpass E=4 x 128 n=256 k=1024 3 persistent CTAs 4 stages", std::vector<int>(4, 128), 256, 1024, "grouped_m:4",
       true, 4, Scales::moderate, true, xp, 128, 128, 3},
      {"xpass E=3 n=256 k=1152 2 persistent CTAs 2 stages", {128, 130, 70}, 256, 1152, "serpentine", true, 2,
       Scales::moderate, false, xp, 128, 128, 2},
  };
  // xpass_f16: the pass converting X to f16 relative to each token's largest scale and finding every row's, then the
  // 128 x 128 tile with f16 wgmma: xpass's cases, plus rows that span exactly 22 binades (the wide path, still exact).
  const auto xh = tk::Mxfp8GemmScheme::xpass_f16;
  std::vector<std::string> f16_names; // "xpass_f16 ..." for xpass's "xpass ..."
  for (const Case& c : xpass_cases) f16_names.push_back(std::string("xpass_f16") + (c.name + 5));
  std::vector<Case> f16_cases = xpass_cases;
  for (std::size_t i = 0; i < f16_cases.size(); ++i) {
    f16_cases[i].scheme = xh;
    f16_cases[i].name = f16_names[i].c_str();
  }
  f16_cases.push_back({"xpass_f16 rows spanning 22 binades E=3 n=256 k=1024 3 persistent CTAs", {128, 130, 70}, 256, 1024,
                       "grouped_m:4", true, 3, Scales::span22, true, xh, 128, 128, 3});
  // The narrower tiles for few tokens an expert (wgmma N 16, 32, 64; deeper rings): ragged experts with empty ones and
  // an n tail, persistent CTAs on 3 SMs running several tiles, adversarial and NaN scales, NaN element codes and the
  // 22-binade rows, at the ring depths the launcher allows.
  const std::vector<Case> f16_narrow_cases = {
      {"xpass_f16 16 tokens decode E=8 x 16 n=256 k=1024 grouped_m:4", std::vector<int>(8, 16), 256, 1024, "grouped_m:4",
       true, 8, Scales::moderate, true, xh, 16, 128},
      {"xpass_f16 16 tokens ragged E=6 n=200 k=640 hilbert one CTA per tile", {0, 1, 17, 40, 5, 16}, 200, 640, "hilbert",
       false, 4, Scales::moderate, true, xh, 16, 128},
      {"xpass_f16 16 tokens adversarial scales E=3 n=128 k=1024 11 stages 3 persistent CTAs", {20, 0, 37}, 128, 1024,
       "expert_major:2", true, 11, Scales::adversarial, true, xh, 16, 128, 3},
      {"xpass_f16 16 tokens NaN elements E=3 n=256 k=1024 3 persistent CTAs", {16, 30, 7}, 256, 1024, "grouped_m:4", true,
       6, Scales::nan_elements, true, xh, 16, 128, 3},
      {"xpass_f16 16 tokens rows spanning 22 binades E=3 n=256 k=1024 3 persistent CTAs", {16, 30, 7}, 256, 1024,
       "grouped_m:4", true, 8, Scales::span22, true, xh, 16, 128, 3},
      {"xpass_f16 32 tokens E=4 n=128 k=1024 interleaved 9 stages", {32, 50, 3, 31}, 128, 1024, "interleaved", true, 9,
       Scales::moderate, true, xh, 32, 128},
      {"xpass_f16 64 tokens E=3 n=192 k=768 column_major 7 stages", {64, 100, 1}, 192, 768, "column_major", true, 7,
       Scales::moderate, true, xh, 64, 128},
  };
  // The 256-channel tile (two m64 blocks a consumer against one X stage): xpass's cases again at 2 or 3 stages (its
  // ring's most), the 22-binade rows, and n = 384 / 200, where a tile's second consumer (or its second block) lies
  // wholly or partly past n.
  std::vector<std::string> wide_names;
  for (const Case& c : xpass_cases) wide_names.push_back(std::string("xpass_f16 128x256") + (c.name + 5));
  std::vector<Case> f16_wide_cases = xpass_cases;
  for (std::size_t i = 0; i < f16_wide_cases.size(); ++i) {
    f16_wide_cases[i].scheme = xh;
    f16_wide_cases[i].name = wide_names[i].c_str();
    f16_wide_cases[i].tile_channels = 256;
    f16_wide_cases[i].stages = std::min(f16_wide_cases[i].stages, 3);
  }
  f16_wide_cases.push_back({"xpass_f16 128x256 rows spanning 22 binades E=3 n=256 k=1024 3 persistent CTAs",
                            {128, 130, 70}, 256, 1024, "grouped_m:4", true, 3, Scales::span22, true, xh, 128, 256, 3});
  f16_wide_cases.push_back({"xpass_f16 128x256 E=3 n=384 k=1024 hilbert 2 persistent CTAs", {128, 200, 57}, 384, 1024,
                            "hilbert", true, 3, Scales::moderate, true, xh, 128, 256, 2});
  f16_wide_cases.push_back({"xpass_f16 128x256 NaN elements E=2 n=200 k=768 one tile per CTA", {90, 128}, 200, 768,
                            "row_major", false, 2, Scales::nan_elements, true, xh, 128, 256});
  std::mt19937_64 rng(20);
  bool ok = conversion_every_byte();
  ok = f16_conversion_every_byte() && ok;
  for (const Case& c : cases)
    if (!quick || c.quick) ok = run_case(c, sms, rng) && ok;
  for (const Case& c : dequantize_cases)
    if (!quick || c.quick) ok = run_case(c, sms, rng) && ok;
  for (const Case& c : transposed_cases)
    if (!quick || c.quick) ok = run_case(c, sms, rng) && ok;
  for (const Case& c : xpass_cases)
    if (!quick || c.quick) ok = run_case(c, sms, rng) && ok;
  for (const Case& c : f16_cases)
    if (!quick || c.quick) ok = run_case(c, sms, rng) && ok;
  for (const Case& c : f16_narrow_cases)
    if (!quick || c.quick) ok = run_case(c, sms, rng) && ok;
  for (const Case& c : f16_wide_cases)
    if (!quick || c.quick) ok = run_case(c, sms, rng) && ok;
  ok = refuses(1000, 4, "multiple of 32") && ok;
  ok = refuses(544, 4, "multiple of 128") && ok;
  ok = refuses(1024, 6, "stages = 6") && ok;
  ok = refuses(1024, 4, "not supported by the dequantize scheme", deq) && ok;
  ok = refuses(1024, 6, "use a multiple of 4", tr) && ok;
  ok = refuses(1024, 5, "use 2..4", tr, 128, 128) && ok;
  ok = refuses(1024, 4, "or 128 with 128 tokens", tr, 64, 128) && ok;
  ok = refuses(1024, 5, "not supported by the xpass scheme; use 2..4", xp, 128, 128) && ok;
  ok = refuses(1024, 4, "use tile_m 128 and tile_n 128", xp, 16, 64) && ok;
  ok = refuses(1024, 5, "not supported by the xpass_f16 scheme; use 2..4", xh, 128, 128) && ok;
  ok = refuses(1024, 4, "not supported by the xpass_f16 scheme; use tile_m 16, 32, 64 or 128", xh, 128, 64) && ok;
  ok = refuses(1024, 4, "not supported by the xpass_f16 scheme; use tile_m 16, 32, 64 or 128", xh, 48, 128) && ok;
  ok = refuses(1024, 12, "not supported by the xpass_f16 scheme; use 2..11", xh, 16, 128) && ok;
  ok = refuses(1024, 4, "not supported by the xpass_f16 scheme; use 2..3 (a stage is 32 KB", xh, 128, 256) && ok;
  ok = refuses(1024, 3, "or 128 x 256 (two consumers of 128 channels)", xh, 64, 256) && ok;
  std::printf("%s\n", ok ? "PASS" : "FAIL");
  return ok ? 0 : 1;
}
