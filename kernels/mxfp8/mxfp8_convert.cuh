// The MXFP8 quantiser's per-block arithmetic on the GPU: the PTX conversions (one instruction
// each, PTX ISA 9.0 section 9.7.9.21 "cvt") and the E8M0 scale from the bits of a block's largest
// magnitude. The CPU reference (mxfp8_reference.h) reaches the same bytes from the specification's
// formulas with double arithmetic; mxfp8_check compares them bit for bit.
#pragma once

#include <cstdint>

#include "models/kernel_spec.h"

namespace tilesim::kernels::mxfp8 {

// cvt.rn.satfinite.e4m3x2.f32 / .e5m2x2.f32: two fp32 to two FP8 values, round to nearest even,
// saturating to the largest finite value (Inf too), NaN to NaN. `lo` lands in the low byte.
template <Mxfp8Element E> __device__ __forceinline__ std::uint16_t cvt_fp8x2(float lo, float hi) {
  std::uint16_t d;
  if constexpr (E == Mxfp8Element::e4m3)
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  else
    asm("cvt.rn.satfinite.e5m2x2.f32 %0, %1, %2;" : "=h"(d) : "f"(hi), "f"(lo));
  return d;
}

// cvt.rn.f16x2.e4m3x2 / .e5m2x2: two FP8 values to two fp16 (exact: both formats are subsets of fp16).
template <Mxfp8Element E> __device__ __forceinline__ std::uint32_t cvt_f16x2(std::uint16_t fp8x2) {
  std::uint32_t d;
  if constexpr (E == Mxfp8Element::e4m3)
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(d) : "h"(fp8x2));
  else
    asm("cvt.rn.f16x2.e5m2x2 %0, %1;" : "=r"(d) : "h"(fp8x2));
  return d;
}

// The block's E8M0 scale byte and the fp32 2^-s its values are multiplied by, from the bf16 bits
// of its largest magnitude (sign cleared; NaN bit patterns order above Inf, Inf above every finite
// value). amax = 1.m * 2^e: the floor rule's s = e - emax; the round-up rule's ceil(log2(amax /
// (1.75 * 2^emax))) is e - emax, plus one when the mantissa exceeds 1.75 (0x60 of 7 bits). Both
// E4M3 (448) and E5M2 (57344) have 1.75 as their largest normal's significand.
struct BlockScale {
  std::uint8_t byte;
  float multiplier; // 2^-s; 1 for a NaN scale
};

template <Mxfp8ScaleRule Rule, Mxfp8Element E> __device__ __forceinline__ BlockScale block_scale(std::uint32_t amax_bits) {
  constexpr int kEmax = E == Mxfp8Element::e4m3 ? 8 : 15;
  if (amax_bits >= 0x7F80u) return {0xFF, 1.0f}; // Inf or NaN in the block: the scale is NaN
  const int field = static_cast<int>(amax_bits >> 7);
  int s = field - 127 - kEmax;
  if constexpr (Rule == Mxfp8ScaleRule::round_up) s += (amax_bits & 0x7Fu) > 0x60u ? 1 : 0;
  if (field == 0 || s < -127) s = -127; // zero, subnormal, or below E8M0's range
  return {static_cast<std::uint8_t>(s + 127), __uint_as_float(static_cast<std::uint32_t>(127 - s) << 23)};
}

// max.NaN.bf16x2 of the magnitudes (PTX ISA 9.7.4.8): NaN-propagating, so a NaN is never lost.
__device__ __forceinline__ std::uint32_t abs_max_bf16x2(std::uint32_t acc, std::uint32_t v) {
  std::uint32_t d;
  asm("max.NaN.bf16x2 %0, %1, %2;" : "=r"(d) : "r"(acc), "r"(v & 0x7FFF7FFFu));
  return d;
}

// The larger of a bf16x2's two magnitudes, as bits (both halves already non-negative).
__device__ __forceinline__ std::uint32_t max_half(std::uint32_t pair) { return max(pair & 0xFFFFu, pair >> 16); }

__device__ __forceinline__ float bf16_lo(std::uint32_t pair) { return __uint_as_float(pair << 16); }
__device__ __forceinline__ float bf16_hi(std::uint32_t pair) { return __uint_as_float(pair & 0xFFFF0000u); }

} // namespace tilesim::kernels::mxfp8
