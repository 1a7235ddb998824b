// E4M3 element pairs to f16 pairs for the MXFP8 GEMM's scheme xpass_f16 (kernels/mxfp8/NOTES.md,
// "f16 with a reference exponent a row"): f16 wgmma runs at bf16's rate on Hopper and takes the
// same register-A fragments, and cvt.rn.f16x2.e4m3x2 converts a pair in one instruction (NaN
// included), but f16 holds only 2^-24..65504, not an E8M0 scale's 2^-127..2^127. So each row (a
// channel of W, a token of X) takes a reference: its largest scale byte that is not NaN, `ref`.
// A block of scale byte s is converted as element x 2^(s - ref + 7), and the row's products are
// multiplied back by 2^(ref - 134) per operand in the epilogue (2^(ref - 127) / 2^7).
//   - Exact for s >= ref - 22: d = s - ref + 7 <= 7 keeps 448 x 2^7 = 57344 below f16's 65504,
//     and d >= -15 keeps E4M3's smallest subnormal 2^-9 at f16's 2^-24.
//   - A block further down (its row's scales span more than 22 binades) is rounded once to f16,
//     into its subnormals or to zero: each element is off by at most 2^-25 in the row's f16 units
//     (half the smallest subnormal), i.e. 2^(ref - 159) absolute, 2^-32 of the row's largest block
//     scale 2^(ref - 127). Two multiplies there (wide_multipliers): the first by 2^-10 is exact (E4M3
//     values are multiples of 2^-9), the second by 2^(d + 10) >= 2^-24 rounds once, so 2^d below
//     f16's range still rounds correctly.
//   - Scale byte 0xFF is NaN: the multiplier is f16 NaN, every element of the block NaN; the E4M3
//     NaN codes come out of cvt as f16 NaN, which the multiply keeps.
// Per pair: one cvt and one mul.rn.f16x2 where the row is narrow (no NaN scale, every scale >= ref - 21:
// a normal f16 2^d), its multiplier made in two integer instructions a block and row; two multiplies
// where it is wide.
//
// The K order inside each 16-element group is permuted: the lane that holds A-fragment K columns
// 2q, 2q + 1 and 8 + 2q, 9 + 2q (q = lane % 4) reads the group's word q (elements 4q .. 4q + 3) and
// puts its low pair at 2q, its high pair at 8 + 2q: one 32-bit load and two cvt a word, no byte
// selection. The pass writes X's f16 rows in the same order (permuted_k), so that wgmma's B, read
// in storage order, pairs every element of X with the same K of W.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "kernels/mixed_input/dequant.h"

namespace tilesim::kernels::mxfp8_f16 {

constexpr uint32_t kScaleNaN = 0xFF;
constexpr uint32_t kNarrowSpan = 21;   // scales ref - 21 .. ref give a normal f16 multiplier 2^-14 .. 2^7
constexpr int kEpilogueOffset = 134;   // the f16 value of scale s is element x 2^(s - 127) x 2^(134 - ref)
constexpr uint32_t kWideFlag = 0x100u; // row info: ref | kWideFlag where the row is not narrow

// The true K of storage position p (0..15) inside a 16-element group of the pass's X and of W's
// fragments: positions 0..7 hold the low pairs of the group's four words, 8..15 the high pairs.
constexpr int permuted_k(int p) { return p < 8 ? 4 * (p / 2) + p % 2 : 4 * ((p - 8) / 2) + 2 + p % 2; }

// One row's reference and whether it is wide, from its scale bytes (host form of the pass's
// row_info_kernel, mxfp8_f16_pass_kernel.cuh).
inline uint32_t row_info(const uint8_t* scales, int blocks) {
  uint32_t ref = 0;
  for (int b = 0; b < blocks; ++b)
    if (scales[b] != kScaleNaN && scales[b] > ref) ref = scales[b];
  bool wide = false;
  for (int b = 0; b < blocks; ++b) wide = wide || scales[b] == kScaleNaN || scales[b] + kNarrowSpan < ref;
  return ref | (wide ? kWideFlag : 0u);
}

// f16 bits of 2^e, normal or subnormal (e in -24 .. 15).
TILESIM_HOST_DEVICE uint32_t power_of_two_half(int e) {
  return e >= -14 ? static_cast<uint32_t>(e + 15) << 10 : 1u << (e + 24);
}

// A wide row's two multipliers of a block of scale byte s (both halves of each the same): their product is
// 2^(s - ref + 7) wherever that is an f16; below, 2^-10 then 2^(d + 10), or zero below 2^-34 (where every
// product rounds to zero); NaN for scale 0xFF.
struct WideMultipliers {
  uint32_t first;
  uint32_t second;
};

TILESIM_HOST_DEVICE WideMultipliers wide_multipliers(uint32_t s, uint32_t ref) {
  constexpr uint32_t kOne = 0x3C00u * 0x10001u, kTwoToMinus10 = 0x1400u * 0x10001u;
  if (s == kScaleNaN) return {0x7E00u * 0x10001u, kOne};
  const int d = static_cast<int>(s) - static_cast<int>(ref) + 7;
  if (d >= -14) return {power_of_two_half(d) * 0x10001u, kOne};
  if (d >= -34) return {kTwoToMinus10, power_of_two_half(d + 10) * 0x10001u};
  return {kTwoToMinus10, 0u};
}

// A narrow row's multipliers in one multiply-add: `doubled` = s | s << 16 (a prmt of the scale word),
// `offset` = narrow_offset(ref). Modulo 2^32, s x 1024 (1 + 2^16) + (22 - ref) x 1024 (1 + 2^16) is
// v (1 + 2^16) with v = (s - ref + 22) x 1024, which lies in 1024 .. 29 x 1024 for s in ref - 21 .. ref:
// f16 2^(s - ref + 7) in both halves.
TILESIM_HOST_DEVICE uint32_t narrow_offset(uint32_t ref) { return ((22u - ref) << 10) * 0x10001u; }
TILESIM_HOST_DEVICE uint32_t narrow_multiplier(uint32_t doubled, uint32_t offset) { return doubled * 1024u + offset; }

#if !defined(__CUDA_ARCH__)
inline double f16_to_double(uint32_t h) {
  const int exponent = (h >> 10) & 0x1F, mantissa = h & 0x3FF;
  const double sign = (h & 0x8000) ? -1.0 : 1.0;
  if (exponent == 0x1F) return mantissa ? NAN : sign * INFINITY;
  if (exponent == 0) return sign * std::ldexp(mantissa, -24);
  return sign * std::ldexp(1024 + mantissa, exponent - 25);
}

// v rounded once to f16, to nearest even (v is the exact product of two f16 values: a double holds it).
inline uint32_t round_to_f16(double v) {
  if (std::isnan(v)) return 0x7E00u;
  const uint32_t sign = std::signbit(v) ? 0x8000u : 0u;
  const double a = std::fabs(v);
  if (a >= 65520.0) return sign | 0x7C00u; // halfway to 2^16 and above round to Inf
  const int e = a < 0x1p-14 ? -14 : std::ilogb(a);
  const double q = std::nearbyint(std::ldexp(a, 10 - e)); // units of 2^(e - 10)
  const double rounded = std::ldexp(q, e - 10);
  if (rounded == 0.0) return sign;
  const int re = std::ilogb(rounded);
  if (re < -14) return sign | static_cast<uint32_t>(std::ldexp(rounded, 24));
  return sign | (static_cast<uint32_t>(re + 15) << 10) | (static_cast<uint32_t>(std::ldexp(rounded, 10 - re)) - 1024u);
}

// E4M3 (OFP8 v1.0 table 1) to f16, exact (every E4M3 value, subnormals m x 2^-9 included, is an f16
// normal); NaN codes to f16 NaN.
inline uint32_t e4m3_to_f16(uint32_t byte) {
  if ((byte & 0x7F) == 0x7F) return ((byte & 0x80u) << 8) | 0x7E00u;
  const int field = (byte >> 3) & 0xF, mantissa = byte & 7;
  const double magnitude = field == 0 ? std::ldexp(mantissa, -9) : std::ldexp(8 + mantissa, field - 10);
  return round_to_f16((byte & 0x80u) ? -magnitude : magnitude);
}
#endif

// cvt.rn.f16x2.e4m3x2 (PTX ISA 9.7.9.21) of a word's two bytes pairs: `lo` gets bytes 0, 1, `hi` bytes 2, 3.
TILESIM_HOST_DEVICE void cvt_f16x2_pairs(uint32_t word, uint32_t& lo, uint32_t& hi) {
#if defined(__CUDA_ARCH__)
  asm("{\n .reg .b16 l, h;\n mov.b32 {l, h}, %2;\n cvt.rn.f16x2.e4m3x2 %0, l;\n cvt.rn.f16x2.e4m3x2 %1, h;\n}"
      : "=r"(lo), "=r"(hi)
      : "r"(word));
#else
  lo = e4m3_to_f16(word & 0xFF) | e4m3_to_f16((word >> 8) & 0xFF) << 16;
  hi = e4m3_to_f16((word >> 16) & 0xFF) | e4m3_to_f16(word >> 24) << 16;
#endif
}

// mul.rn.f16x2 (PTX ISA 9.7.4.3), subnormals kept.
TILESIM_HOST_DEVICE uint32_t mul_f16x2(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  uint32_t out;
  asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(out) : "r"(a), "r"(b));
  return out;
#else
  return round_to_f16(f16_to_double(a & 0xFFFF) * f16_to_double(b & 0xFFFF)) |
         round_to_f16(f16_to_double(a >> 16) * f16_to_double(b >> 16)) << 16;
#endif
}

// A word of four E4M3 elements of one block as two f16x2 (`lo`: elements 0, 1; `hi`: 2, 3) scaled by `m`
// (a narrow row's multiplier).
TILESIM_HOST_DEVICE void convert_word(uint32_t word, uint32_t m, uint32_t& lo, uint32_t& hi) {
  cvt_f16x2_pairs(word, lo, hi);
  lo = mul_f16x2(lo, m);
  hi = mul_f16x2(hi, m);
}

// The same with a wide row's two multipliers.
TILESIM_HOST_DEVICE void convert_word(uint32_t word, const WideMultipliers& m, uint32_t& lo, uint32_t& hi) {
  cvt_f16x2_pairs(word, lo, hi);
  lo = mul_f16x2(mul_f16x2(lo, m.first), m.second);
  hi = mul_f16x2(mul_f16x2(hi, m.first), m.second);
}

} // namespace tilesim::kernels::mxfp8_f16
