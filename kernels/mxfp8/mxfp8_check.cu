// mxfp8_check: the MXFP8 quantisers and the dequantiser against the CPU reference
// (mxfp8_reference.h, written from the OCP MX v1.0 formulas), bit for bit. Each case draws bf16
// values whose blocks span 2^-40..2^40 (so scales vary block to block) and plants adversarial
// blocks: all zero, one huge value among small ones, subnormals only, a NaN, +-Inf, the +-448 and
// 57344 boundaries, bf16's largest value. Outputs and guard regions after them are poisoned
// before the run. Every axis x scale rule x element type, shapes with and without column tails.
// Exit 0 pass, 1 fail, 77 no CUDA device (CTest skip).
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "kernels/common/check_kernels.cuh"
#include "kernels/mxfp8/mxfp8.h"
#include "kernels/mxfp8/mxfp8_reference.h"

namespace tk = tilesim::kernels;
namespace ref = tilesim::kernels::mxfp8_reference;
using tilesim::Mxfp8Axis;
using tilesim::Mxfp8Element;
using tilesim::Mxfp8QuantizeShape;
using tilesim::Mxfp8ScaleRule;
using tk::testing::check;

namespace {

constexpr std::size_t kGuard = 4096;
constexpr unsigned char kElementPoison = 0xFF, kScalePoison = 0xA5, kOutPoison = 0xFF;

std::uint16_t bf16_bits(float f) { // round to nearest even
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  u += 0x7FFF + ((u >> 16) & 1);
  return static_cast<std::uint16_t>(u >> 16);
}

// The value of adversarial pattern `kind` at position i of a block.
std::uint16_t adversarial(int kind, int i, std::mt19937_64 &rng) {
  std::uniform_real_distribution<float> small(-1.0f, 1.0f);
  switch (kind) {
  case 0:
    return 0; // all zero
  case 1:
    return i == 7 ? bf16_bits(-0x1p100f) : bf16_bits(small(rng)); // one huge value
  case 2:
    return static_cast<std::uint16_t>((rng() & 0x807F) | (i == 3 ? 1 : 0)); // subnormals only
  case 3:
    return i == 5 ? 0x7FC1 : bf16_bits(small(rng) * 8); // a NaN
  case 4:
    return i == 0 ? 0x7F80 : i == 1 ? 0xFF80 : bf16_bits(small(rng) * 1000); // +-Inf
  case 5: { // the E4M3 and E5M2 largest values, their neighbours, and the mid-points past them
    const float v[] = {448, -448, 450, 464, -480, 57344, 61440, 240, 232, 0.001953125f, 0.0009765625f};
    return bf16_bits(v[i % 11]);
  }
  case 6:
    return i == 31 ? 0x7F7F : bf16_bits(small(rng) * 0x1p120f); // bf16's largest value
  default:
    return bf16_bits(small(rng) * (i % 2 ? 1.75f : 0.0f)); // +-0 and ties
  }
}
constexpr int kPatterns = 8;

std::string describe(const Mxfp8QuantizeShape &s) {
  return tilesim::to_string(s.axis) + " " + tilesim::to_string(s.scale_rule) + " " + tilesim::to_string(s.element) +
         " " + std::to_string(s.rows) + "x" + std::to_string(s.cols);
}

struct DeviceBuffer {
  void *p = nullptr;
  explicit DeviceBuffer(std::size_t bytes, unsigned char poison) {
    check(cudaMalloc(&p, bytes), "cudaMalloc");
    check(cudaMemset(p, poison, bytes), "cudaMemset(poison)");
  }
  ~DeviceBuffer() { cudaFree(p); }
};

bool same_bf16(std::uint16_t a, std::uint16_t b) {
  const bool nan_a = (a & 0x7FFF) > 0x7F80, nan_b = (b & 0x7FFF) > 0x7F80;
  return nan_a || nan_b ? nan_a == nan_b : a == b;
}

int run_case(const Mxfp8QuantizeShape &s, int sm_count, std::mt19937_64 &rng) {
  const std::int64_t n = s.elements();
  std::vector<std::uint16_t> x(static_cast<std::size_t>(n));
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-40, 40);
  const bool rowwise = s.axis == Mxfp8Axis::rowwise;
  const std::int64_t lines = rowwise ? s.rows : s.cols, length = rowwise ? s.cols : s.rows;
  auto at = [&](std::int64_t line, std::int64_t k) -> std::uint16_t & {
    return rowwise ? x[line * s.cols + k] : x[k * s.cols + line];
  };
  for (std::int64_t line = 0; line < lines; ++line)
    for (std::int64_t b = 0; b < length / ref::kBlock; ++b) {
      const int block_number = static_cast<int>((line * (length / ref::kBlock) + b) % 23);
      const float magnitude = std::ldexp(1.0f, exponent(rng));
      for (int i = 0; i < ref::kBlock; ++i)
        at(line, b * ref::kBlock + i) =
            block_number < kPatterns ? adversarial(block_number, i, rng) : bf16_bits(unit(rng) * magnitude);
    }
  const ref::Quantized want = ref::quantize(x, s.rows, s.cols, s);

  const std::size_t scale_bytes = static_cast<std::size_t>(n / ref::kBlock);
  DeviceBuffer dx(n * 2, 0), de(n + kGuard, kElementPoison), ds(scale_bytes + kGuard, kScalePoison),
      dout(n * 2 + kGuard, kOutPoison);
  check(cudaMemcpy(dx.p, x.data(), n * 2, cudaMemcpyHostToDevice), "cudaMemcpy(x)");
  const std::string where = describe(s);
  try {
    tk::Mxfp8Quantize q(s, dx.p, de.p, ds.p, sm_count);
    q.run(nullptr);
    tk::mxfp8_dequantize(s.element, de.p, ds.p, dout.p, lines, length, sm_count, nullptr);
  } catch (const tk::KernelError &e) {
    std::printf("FAIL %s: %s\n", where.c_str(), e.what());
    return 1;
  }
  check(cudaDeviceSynchronize(), "mxfp8 kernels");
  std::vector<std::uint8_t> elements(n + kGuard), scales(scale_bytes + kGuard);
  std::vector<std::uint16_t> out(static_cast<std::size_t>(n) + kGuard / 2);
  check(cudaMemcpy(elements.data(), de.p, elements.size(), cudaMemcpyDeviceToHost), "cudaMemcpy(elements)");
  check(cudaMemcpy(scales.data(), ds.p, scales.size(), cudaMemcpyDeviceToHost), "cudaMemcpy(scales)");
  check(cudaMemcpy(out.data(), dout.p, out.size() * 2, cudaMemcpyDeviceToHost), "cudaMemcpy(out)");
  for (std::size_t i = 0; i < scale_bytes; ++i)
    if (scales[i] != want.scales[i]) {
      std::printf("FAIL %s: scale %zu is 0x%02x, expected 0x%02x\n", where.c_str(), i, scales[i], want.scales[i]);
      return 1;
    }
  for (std::int64_t i = 0; i < n; ++i)
    if (elements[i] != want.elements[i]) {
      std::printf("FAIL %s: element %lld is 0x%02x, expected 0x%02x (block scale 0x%02x)\n", where.c_str(),
                  static_cast<long long>(i), elements[i], want.elements[i], want.scales[i / ref::kBlock]);
      return 1;
    }
  const std::vector<std::uint16_t> back = ref::dequantize(want, lines, length, s.element);
  for (std::int64_t i = 0; i < n; ++i)
    if (!same_bf16(out[i], back[i])) {
      std::printf("FAIL %s: dequantised %lld is 0x%04x, expected 0x%04x\n", where.c_str(), static_cast<long long>(i),
                  out[i], back[i]);
      return 1;
    }
  for (std::size_t i = 0; i < kGuard; ++i)
    if (elements[n + i] != kElementPoison || scales[scale_bytes + i] != kScalePoison ||
        (i < kGuard / 2 && out[n + i] != 0xFFFF)) {
      std::printf("FAIL %s: wrote past the end (guard byte %zu)\n", where.c_str(), i);
      return 1;
    }
  std::printf("ok   %s\n", where.c_str());
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  const bool quick = argc > 1 && std::strcmp(argv[1], "--quick") == 0;
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("SKIP: no CUDA device (mxfp8_check needs an sm_90 GPU)\n");
    return 77;
  }
  int sm_count = 0;
  check(cudaDeviceGetAttribute(&sm_count, cudaDevAttrMultiProcessorCount, 0), "cudaDeviceGetAttribute");
  std::mt19937_64 rng(20);
  struct Shape {
    std::int64_t rows, cols;
  };
  // Rowwise: runs that end inside a CTA step (3 x 96, 97 x 1056). Colwise (128 x 128 tiles): tiles
  // cut short to 32 or 96 rows (32, 96) and to 8 or 32 columns (8, 32, 544, 1032, 520).
  const std::vector<Shape> rowwise = quick
                                         ? std::vector<Shape>{{3, 96}, {97, 1056}, {256, 7168}}
                                         : std::vector<Shape>{{1, 32}, {3, 96}, {97, 1056}, {256, 7168}, {1024, 2080}};
  const std::vector<Shape> colwise =
      quick ? std::vector<Shape>{{32, 8}, {96, 544}, {256, 7168}}
            : std::vector<Shape>{{32, 8}, {32, 32}, {96, 544}, {256, 1032}, {256, 7168}, {2048, 520}};
  int failures = 0, cases = 0;
  for (Mxfp8ScaleRule rule : {Mxfp8ScaleRule::floor, Mxfp8ScaleRule::round_up})
    for (Mxfp8Element element : {Mxfp8Element::e4m3, Mxfp8Element::e5m2})
      for (Mxfp8Axis axis : {Mxfp8Axis::rowwise, Mxfp8Axis::colwise})
        for (const Shape &sh : axis == Mxfp8Axis::rowwise ? rowwise : colwise) {
          failures += run_case({sh.rows, sh.cols, axis, rule, element}, sm_count, rng);
          ++cases;
        }
  // Shapes the kernels cannot cut into blocks are refused with a message, not launched.
  for (const auto &[s, what] :
       std::vector<std::pair<Mxfp8QuantizeShape, const char *>>{{{4, 48, Mxfp8Axis::rowwise}, "rowwise cols 48"},
                                                                {{48, 64, Mxfp8Axis::colwise}, "colwise rows 48"},
                                                                {{64, 12, Mxfp8Axis::colwise}, "colwise cols 12"},
                                                                {{0, 64, Mxfp8Axis::rowwise}, "zero rows"}}) {
    ++cases;
    if (tk::mxfp8_unsupported_reason(s).empty()) {
      std::printf("FAIL %s was accepted\n", what);
      ++failures;
    }
  }
  std::printf("%d of %d cases passed\n", cases - failures, cases);
  return failures == 0 ? 0 : 1;
}
