// E4M3 element pairs with their block's E8M0 scale folded in, to bf16 pairs: the conversion of the
// MXFP8 GEMM's scheme (b) (kernels/mxfp8/NOTES.md), exact wherever the scaled value is a bf16.
// __host__ __device__ so that the CPU test (tests/kernels/mxfp8/mxfp8_dequant_test.cpp) checks the
// kernel's own code bit for bit against the OCP-spec reference (mxfp8_reference.h).
//
// An E4M3 byte s.eeee.mmm put under a bf16 with its sign at bit 15 and its 7 exponent+mantissa
// bits at bits 10..4 reads as the bf16 s.0000eeee.mmm0000: the same significand, and an exponent
// field smaller by 127 - 7 = 120, so its value is the element times 2^-120 (an E4M3 subnormal,
// field 0, becomes a bf16 subnormal of the same significand: still exact). One packed bf16
// multiply by 2^(120 + scale - 127) = 2^(scale_byte - 7) then gives element x 2^(scale_byte - 127)
// rounded once (exact unless below bf16's subnormal range). Edges (OCP MX v1.0 section 5.3, OFP8
// v1.0 table 1):
//   - the multiplier is a bf16 only for scale bytes up to 134; above, two multiplies (2^127, then
//     2^(scale_byte - 134)), overflowing to Inf as a round-to-nearest cast does;
//   - scale byte 0xFF is NaN: the multiplier is NaN, every element of the block NaN;
//   - element s.1111.111 is NaN: its placed bits are 0x07F0, the one pattern whose low 7 bits
//     carry into bit 11 when 0x10 is added; that carry times 15 fills bits 14..11, making 0x7FF0, a
//     NaN, which the multiply keeps.
// Per pair: 1 prmt, 1 shift, 1 and (placement), 1 add, 1 and, 1 multiply-add (NaN), 1 bf16x2 mul.
#pragma once

#include <cstdint>

#include "kernels/mixed_input/dequant.h"

namespace tilesim::kernels::mxfp8_dequant {

// prmt.b32 over the word pair {lo, hi} with sign replication (PTX ISA 9.7.8.7, default mode):
// selector nibbles 0-3 pick a byte of lo, 4-7 of hi, and nibble bit 3 fills the result byte with the
// sign (bit 7) of the byte it picks (a lane picking its pair out of a 16-byte unit in the one prmt
// that places it).
TILESIM_HOST_DEVICE uint32_t byte_perm_signed(uint32_t lo, uint32_t hi, uint32_t selector) {
#if defined(__CUDA_ARCH__)
  uint32_t out;
  asm("prmt.b32 %0, %1, %2, %3;" : "=r"(out) : "r"(lo), "r"(hi), "r"(selector));
  return out;
#else
  const uint64_t pair = (static_cast<uint64_t>(hi) << 32) | lo;
  uint32_t out = 0;
  for (int i = 0; i < 4; ++i) {
    const uint32_t nibble = (selector >> (4 * i)) & 0xF;
    const uint32_t byte = static_cast<uint32_t>(pair >> (8 * (nibble & 7))) & 0xFF;
    out |= ((nibble & 8) ? ((byte & 0x80) ? 0xFFu : 0u) : byte) << (8 * i);
  }
  return out;
#endif
}

// The same over one word: nibbles 4-7 pick a byte of the immediate 0.
TILESIM_HOST_DEVICE uint32_t byte_perm_signed(uint32_t a, uint32_t selector) {
#if defined(__CUDA_ARCH__)
  uint32_t out; // not __byte_perm: the intrinsic takes only the low 3 bits of each selector nibble
  asm("prmt.b32 %0, %1, 0, %2;" : "=r"(out) : "r"(a), "r"(selector));
  return out;
#else
  return byte_perm_signed(a, 0u, selector); // prmt's second word is the immediate 0
#endif
}

constexpr uint32_t kSingleMultiplyMaxScale = 134; // 2^(134 - 7) = 2^127, bf16's largest power of two
constexpr uint32_t kScaleNaN = 0xFF;

// The block's multipliers as bf16x2 (both halves the same): `first`, then `second`, which is 1.0
// for scale bytes up to kSingleMultiplyMaxScale (so that a warp that takes two steps for some
// block's sake gets every block exact) and the rest of the scale above it (then first = 2^127).
struct BlockScale {
  uint32_t first;
  uint32_t second;
  bool two_steps;
};

// 2^(scale_byte - 7) as bf16x2: the one multiplier of a block whose scale byte is at most
// kSingleMultiplyMaxScale.
TILESIM_HOST_DEVICE uint32_t single_multiplier(uint32_t scale_byte) { return ((scale_byte + 120u) << 7) * 0x10001u; }

TILESIM_HOST_DEVICE BlockScale block_scale(uint32_t scale_byte) {
  if (scale_byte <= kSingleMultiplyMaxScale) return {single_multiplier(scale_byte), 0x3F803F80u, false};
  const uint32_t second = scale_byte == kScaleNaN ? 0x7FC0u : (scale_byte - 7u) << 7;
  return {0x7F00u * 0x10001u, second * 0x10001u, true};
}

// The prmt selector of bytes b and b + 1 (b even): byte b, its sign, byte b + 1, its sign, so that each
// half is the byte sign-extended to 16 bits.
TILESIM_HOST_DEVICE uint32_t pair_selector(uint32_t b) {
  return b | ((8u | b) << 4) | ((b + 1u) << 8) | ((9u | b) << 12);
}

// A sign-extended byte pair placed as bf16x2 element x 2^-120, NaN elements as NaN.
TILESIM_HOST_DEVICE uint32_t place_extended(uint32_t extended) {
  const uint32_t placed = (extended << 4) & 0x87F087F0u;
  const uint32_t nan_carry = (placed + 0x00100010u) & 0x08000800u;
  return nan_carry * 15u + placed;
}

// Bytes b and b + 1 (b in {0, 2}) of `word` placed as bf16x2 element x 2^-120, NaN elements as NaN.
TILESIM_HOST_DEVICE uint32_t place_pair(uint32_t word, uint32_t b) {
  return place_extended(byte_perm_signed(word, pair_selector(b)));
}

// place_pair on bytes b, b + 1 of the word pair {lo, hi} (b in {0, 2, 4, 6}), `selector` pair_selector(b).
TILESIM_HOST_DEVICE uint32_t place_pair_of(uint32_t lo, uint32_t hi, uint32_t selector) {
  return place_extended(byte_perm_signed(lo, hi, selector));
}

// TwoSteps false: exact for scale bytes up to kSingleMultiplyMaxScale; true: for every scale byte.
template <bool TwoSteps> TILESIM_HOST_DEVICE uint32_t convert_pair_steps(uint32_t word, uint32_t b, const BlockScale& s) {
  const uint32_t scaled = dequant::mul_bf16x2(place_pair(word, b), s.first);
  return TwoSteps ? dequant::mul_bf16x2(scaled, s.second) : scaled;
}

TILESIM_HOST_DEVICE uint32_t convert_pair(uint32_t word, uint32_t b, const BlockScale& s) {
  return s.two_steps ? convert_pair_steps<true>(word, b, s) : convert_pair_steps<false>(word, b, s);
}

} // namespace tilesim::kernels::mxfp8_dequant
