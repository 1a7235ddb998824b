// Byte weights to bf16 pairs in registers: the conversions the mixed-input kernel runs between
// the shared-memory load and the tensor core. __host__ __device__ so the same code is tested
// bit-exactly on the CPU (tests/kernels/mixed_input/dequant_test.cpp) and on the GPU
// (mixed_input_check); only the three primitives below have a device and a host spelling.
//
// A 32-bit word holds four weight bytes. Both paths produce the bf16x2 {value(byte b),
// value(byte b + 1)} (low half first: the lower K index of a wgmma A-fragment register), where
// value(q) = q - zero for uint8 and the plain signed value for int8.
//
// Fast path ("prmt", the magic-number technique of the mixed-input article, Google Research 2024,
// adapted to bf16): prmt puts a byte under the mantissa of the fp32 2^23 (bits 0x4B0000qq), whose
// unit in the last place is 1, so the float is exactly 2^23 + q; one subtraction of 2^23 + zero
// leaves the exact integer q - zero; any integer of magnitude <= 256 has at most 8 significant
// bits, so its fp32 bits end in 16 zero bits and the upper half of the word IS its bf16: one prmt
// packs two of them. int8 takes the same path after flipping each byte's top bit (q + 128, a uint8)
// with zero 128. bf16 has only 8 significant bits, too few to hold 2^7 + q for all 256 q, which
// is why the magic number lives in fp32 rather than in bf16 as the fp16 version does.
// Per two values: 2 prmt + 2 fadd + 1 prmt (+ the flip, one lop3 per word).
//
// Naive path ("cvt"): byte -> int -> float with I2F (cvt.rn.f32.{s8,u8}), subtract, and one
// cvt.rn.bf16x2.f32 per pair: I2F issues at a quarter of the ALU rate on Hopper.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define TILESIM_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define TILESIM_HOST_DEVICE inline
#endif

namespace tilesim::kernels::dequant {

enum class Conversion : int { prmt = 0, cvt = 1 };

constexpr uint32_t kMagicF32 = 0x4B000000u; // 2^23 as fp32 bits: its mantissa's unit is 1
constexpr float kMagicValue = 8388608.0f;
constexpr uint32_t kSignFlip = 0x80808080u; // int8 -> uint8 (q + 128) in every byte

// --- primitives: one instruction each on the device, the same bits on the host ---

// prmt.b32 (PTX ISA 9.7.8.7, default mode): byte i of the result is byte selector[4i+3:4i] of
// the eight bytes {b, a} (a = bytes 0-3).
TILESIM_HOST_DEVICE uint32_t byte_perm(uint32_t a, uint32_t b, uint32_t selector) {
#if defined(__CUDA_ARCH__)
  return __byte_perm(a, b, selector);
#else
  const uint64_t bytes = (static_cast<uint64_t>(b) << 32) | a;
  uint32_t out = 0;
  for (int i = 0; i < 4; ++i) out |= static_cast<uint32_t>((bytes >> (8 * ((selector >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return out;
#endif
}

TILESIM_HOST_DEVICE float bits_to_float(uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

TILESIM_HOST_DEVICE uint32_t float_to_bits(float f) {
#if defined(__CUDA_ARCH__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
#endif
}

// fp32 -> bf16 bits, round to nearest even (finite inputs).
TILESIM_HOST_DEVICE uint32_t bf16_bits_rn(float f) {
  const uint32_t u = float_to_bits(f);
  return (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
}

// cvt.rn.bf16x2.f32 (9.7.9.21): {lo, hi} rounded to nearest even; the PTX operand order is hi, lo.
TILESIM_HOST_DEVICE uint32_t pack_bf16x2_rn(float lo, float hi) {
#if defined(__CUDA_ARCH__)
  uint32_t out;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(out) : "f"(hi), "f"(lo));
  return out;
#else
  return bf16_bits_rn(lo) | (bf16_bits_rn(hi) << 16);
#endif
}

TILESIM_HOST_DEVICE float bf16_to_float(uint32_t bits16) { return bits_to_float(bits16 << 16); }

// mul.rn.bf16x2 (9.7.4.2): both halves multiplied, each rounded to nearest even once. The product
// of two bf16 is exact in fp32 (8 x 8 significant bits), so rounding it once gives the same bits.
TILESIM_HOST_DEVICE uint32_t mul_bf16x2(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  uint32_t out;
  asm("mul.rn.bf16x2 %0, %1, %2;" : "=r"(out) : "r"(a), "r"(b));
  return out;
#else
  return pack_bf16x2_rn(bf16_to_float(a & 0xFFFFu) * bf16_to_float(b & 0xFFFFu),
                        bf16_to_float(a >> 16) * bf16_to_float(b >> 16));
#endif
}

// sub.rn.bf16x2 (9.7.4.2, sm_90): both halves a - b, each rounded to nearest even once. The host
// spelling subtracts in fp32, exact wherever the difference has at most 24 significant bits (every
// use here: differences of small integers).
TILESIM_HOST_DEVICE uint32_t sub_bf16x2(uint32_t a, uint32_t b) {
#if defined(__CUDA_ARCH__)
  uint32_t out;
  asm("sub.rn.bf16x2 %0, %1, %2;" : "=r"(out) : "r"(a), "r"(b));
  return out;
#else
  return pack_bf16x2_rn(bf16_to_float(a & 0xFFFFu) - bf16_to_float(b & 0xFFFFu),
                        bf16_to_float(a >> 16) - bf16_to_float(b >> 16));
#endif
}

// lop3.b32 (9.7.8.6) with the function (a & b) | c: one instruction where the compiler, left to
// itself, spent two on the constants (v20's SASS).
TILESIM_HOST_DEVICE uint32_t and_or(uint32_t a, uint32_t b, uint32_t c) {
#if defined(__CUDA_ARCH__)
  uint32_t out;
  asm("lop3.b32 %0, %1, %2, %3, 0xEA;" : "=r"(out) : "r"(a), "r"(b), "r"(c));
  return out;
#else
  return (a & b) | c;
#endif
}

// --- the two conversions ---

// What the kernel applies to a loaded word before converting it: the sign flip for int8.
TILESIM_HOST_DEVICE uint32_t flip_mask(bool is_signed) { return is_signed ? kSignFlip : 0u; }

// The zero every value is taken from, after the flip: 128 for int8, the channel's zero point for uint8.
TILESIM_HOST_DEVICE float effective_zero(bool is_signed, uint32_t zero_point) {
  return is_signed ? 128.0f : static_cast<float>(zero_point);
}

// Fast path. `flipped` = word ^ flip_mask; `magic_zero` = 2^23 + effective_zero; byte b in {0, 2}.
TILESIM_HOST_DEVICE uint32_t convert_pair_prmt(uint32_t flipped, uint32_t b, float magic_zero) {
  // Selector nibbles: byte b of the word, then bytes 4, 5, 7 of {kMagicF32, word}: 0x00, 0x00, 0x4B.
  const float lo = bits_to_float(byte_perm(flipped, kMagicF32, 0x7540u | b)) - magic_zero;
  const float hi = bits_to_float(byte_perm(flipped, kMagicF32, 0x7540u | (b + 1))) - magic_zero;
  // Bytes 2, 3 of lo then bytes 2, 3 of hi: the upper halves, which are exact bf16 here.
  return byte_perm(float_to_bits(lo), float_to_bits(hi), 0x7632u);
}

// Prefill tiles from whole 16-byte units (NOTES.md v20): lane q of a row needs bytes 2q and 2q + 1
// of each 8-byte half of the unit, and byte_perm(half's low word, its high word, selector) brings
// them to bytes 0 and 1 (the fp32 path, which then converts byte b = 0) or 0 and 2 (int8 as packed
// bf16, below): the lane's own selector does what k_block's lane-dependent addresses did.
TILESIM_HOST_DEVICE uint32_t pair_selector(uint32_t q, bool packed_int8) {
  return packed_int8 ? (2 * q) | ((2 * q + 1) << 8) : (2 * q) | ((2 * q + 1) << 4);
}

// int8 as packed bf16, the pair at bytes 0 and 2 (pair_selector's packed form; NOTES.md v18, v20).
// Bits 0x43qq are 2^7 with q's low 7 bits as the mantissa (unit 1) and q's top bit as the
// exponent's lowest: one lop3 keeps the low bits under 0x43 (128 + low), another only the top bit
// (0x4300 or 0x4380: 128 or 256), and the signed byte, low - 128 top, is their difference, one
// sub.bf16x2 for the pair, exact (|value| <= 128 has at most 8 significant bits). No flip: per
// pair the prmt, 2 lop3 and the sub, against the fp32 path's flip, 2 prmt, 2 fadd and pack.
TILESIM_HOST_DEVICE uint32_t convert_pair_int8_bf16x2(uint32_t spread) {
  return sub_bf16x2(and_or(spread, 0x007F007Fu, 0x43004300u), and_or(spread, 0x00800080u, 0x43004300u));
}

// Naive path, on the same flipped word and effective zero: I2F of each byte, subtract, cvt pack.
TILESIM_HOST_DEVICE uint32_t convert_pair_cvt(uint32_t flipped, uint32_t b, float zero) {
  const float lo = static_cast<float>(static_cast<int>((flipped >> (8 * b)) & 0xFFu)) - zero;
  const float hi = static_cast<float>(static_cast<int>((flipped >> (8 * (b + 1))) & 0xFFu)) - zero;
  return pack_bf16x2_rn(lo, hi);
}

template <Conversion Path>
TILESIM_HOST_DEVICE uint32_t convert_pair(uint32_t flipped, uint32_t b, float zero, float magic_zero) {
  if constexpr (Path == Conversion::prmt)
    return convert_pair_prmt(flipped, b, magic_zero);
  else
    return convert_pair_cvt(flipped, b, zero);
}

// The CPU reference: the bf16 bits of dequant(q) = (value(q) - zero) * scale, scale a bf16
// (bits), rounded once. value() is the plain signed or unsigned reading of the byte.
inline uint32_t reference_bf16(uint8_t byte, bool is_signed, uint32_t zero_point, uint32_t scale_bits) {
  const int q = is_signed ? static_cast<int>(static_cast<int8_t>(byte)) : static_cast<int>(byte);
  const float value = static_cast<float>(q - (is_signed ? 0 : static_cast<int>(zero_point)));
  const float scaled = static_cast<float>(static_cast<double>(value) * bf16_to_float(scale_bits));
  return bf16_bits_rn(scaled);
}

} // namespace tilesim::kernels::dequant
