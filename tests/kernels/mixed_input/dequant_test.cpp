// The mixed-input kernel's two byte-to-bf16 conversions (kernels/mixed_input/dequant.h), run on
// the CPU through the same __host__ __device__ code: bit-exact for all 256 byte values of int8
// and uint8 against the plain reference, with and without a group scale.
#include "kernels/mixed_input/dequant.h"

#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>

namespace dq = tilesim::kernels::dequant;

namespace {

// The pair (v, v + 1 mod 256) through `Path` from a word that holds v at byte b and v + 1 at b + 1.
template <dq::Conversion Path> uint32_t convert(uint8_t v, uint32_t b, bool is_signed, uint32_t zero_point) {
  const uint32_t lo = v, hi = uint8_t(v + 1);
  const uint32_t word = ((lo << (8 * b)) | (hi << (8 * (b + 1))) | (0xA5u << (8 * (2 - b)))) ^ dq::flip_mask(is_signed);
  const float zero = dq::effective_zero(is_signed, zero_point);
  return dq::convert_pair<Path>(word, b, zero, dq::kMagicValue + zero);
}

template <dq::Conversion Path> int mismatches(bool is_signed, uint32_t zero_point, uint32_t scale_bits) {
  int wrong = 0;
  for (int v = 0; v < 256; ++v)
    for (uint32_t b : {0u, 2u}) {
      uint32_t pair = convert<Path>(uint8_t(v), b, is_signed, zero_point);
      if (scale_bits != 0x3F80u) pair = dq::mul_bf16x2(pair, scale_bits * 0x10001u);
      const uint32_t want_lo = dq::reference_bf16(uint8_t(v), is_signed, zero_point, scale_bits);
      const uint32_t want_hi = dq::reference_bf16(uint8_t(v + 1), is_signed, zero_point, scale_bits);
      if ((pair & 0xFFFFu) != want_lo || (pair >> 16) != want_hi) ++wrong;
    }
  return wrong;
}

// Prefill tiles' unit path (v20): lane q picks bytes 2q, 2q + 1 of each 8-byte half of a 16-byte
// unit. The unit holds v, v + 1 there in the low half and v + 2, v + 3 in the high half, every
// other byte 0xA5; both halves' pairs, through int8's packed path or the fp32 path with `zero`.
int unit_mismatches(bool is_signed, uint32_t zero_point, uint32_t q) {
  int wrong = 0;
  for (int v = 0; v < 256; ++v) {
    uint8_t bytes[16];
    for (uint8_t& b : bytes) b = 0xA5;
    for (int j = 0; j < 2; ++j) {
      bytes[2 * q + j] = uint8_t(v + j);
      bytes[8 + 2 * q + j] = uint8_t(v + 2 + j);
    }
    uint32_t word[4];
    std::memcpy(word, bytes, sizeof word);
    for (int half = 0; half < 2; ++half) {
      const uint32_t picked = dq::byte_perm(word[2 * half], word[2 * half + 1], dq::pair_selector(q, is_signed));
      const uint32_t pair = is_signed ? dq::convert_pair_int8_bf16x2(picked)
                                      : dq::convert_pair_prmt(picked, 0, dq::kMagicValue + float(zero_point));
      for (int j = 0; j < 2; ++j) {
        const uint32_t want = dq::reference_bf16(uint8_t(v + 2 * half + j), is_signed, zero_point, 0x3F80u);
        if (((pair >> (16 * j)) & 0xFFFFu) != want) ++wrong;
      }
    }
  }
  return wrong;
}

} // namespace

TEST_CASE("prmt primitive picks bytes as PTX prmt does", "[dequant]") {
  // a = 0x33221100 (bytes 0-3), b = 0x77665544 (bytes 4-7)
  CHECK(dq::byte_perm(0x33221100u, 0x77665544u, 0x7540u) == 0x77554400u);
  CHECK(dq::byte_perm(0x33221100u, 0x77665544u, 0x3210u) == 0x33221100u);
  CHECK(dq::byte_perm(0x33221100u, 0x77665544u, 0x7632u) == 0x77663322u);
}

TEST_CASE("magic-number values by hand", "[dequant]") {
  // int8 -1 = 0xFF, flipped 0x7F = 127; 2^23 + 127 - (2^23 + 128) = -1 -> bf16 0xBF80.
  // int8 -128 = 0x80 -> flipped 0 -> -128 -> bf16 0xC300; 127 -> 0x42FE.
  const uint32_t word = (0xFFu | (0x80u << 8) | (0x7Fu << 16)) ^ dq::kSignFlip;
  const float magic = dq::kMagicValue + 128.0f;
  CHECK(dq::convert_pair_prmt(word, 0, magic) == (0xBF80u | (0xC300u << 16)));
  CHECK((dq::convert_pair_prmt(word, 2, magic) & 0xFFFFu) == 0x42FEu);
  // uint8 255 with zero point 0 -> 255 = 0x437F; 0 with zero point 255 -> -255 = 0xC37F.
  CHECK((dq::convert_pair_prmt(0xFFu, 0, dq::kMagicValue) & 0xFFFFu) == 0x437Fu);
  CHECK((dq::convert_pair_prmt(0x00u, 0, dq::kMagicValue + 255.0f) & 0xFFFFu) == 0xC37Fu);
}

TEST_CASE("both conversions are bit-exact for every byte value", "[dequant]") {
  for (uint32_t scale : {0x3F80u /* 1 */, 0x3C01u /* 0.00787 */, 0x4049u /* 3.140625 */}) {
    SECTION("int8, scale " + std::to_string(scale)) {
      CHECK(mismatches<dq::Conversion::prmt>(true, 0, scale) == 0);
      CHECK(mismatches<dq::Conversion::cvt>(true, 0, scale) == 0);
    }
    for (uint32_t zero : {0u, 1u, 127u, 128u, 255u})
      SECTION("uint8, zero " + std::to_string(zero) + ", scale " + std::to_string(scale)) {
        CHECK(mismatches<dq::Conversion::prmt>(false, zero, scale) == 0);
        CHECK(mismatches<dq::Conversion::cvt>(false, zero, scale) == 0);
      }
  }
}

TEST_CASE("prefill units: each lane's pair picked by its selector, then converted", "[dequant]") {
  // Lane 3's selectors: bytes 6, 7 to bytes 0, 1 (fp32 path) or 0, 2 (packed int8).
  CHECK(dq::pair_selector(3, false) == 0x76u);
  CHECK(dq::pair_selector(3, true) == 0x706u);
  // int8 -1 (0xFF) and -128 (0x80) at bytes 6, 7: 0x437F - 0x4380 = -1 -> 0xBF80; 0x4300 - 0x4380 = -128 -> 0xC300.
  CHECK(dq::convert_pair_int8_bf16x2(dq::byte_perm(0x11223344u, 0x80FF5566u, 0x706u)) == (0xBF80u | (0xC300u << 16)));
  // 127 (0x7F) and 0: 0x437F - 0x4300 = 127 -> 0x42FE; 0x4300 - 0x4300 = +0.
  CHECK(dq::convert_pair_int8_bf16x2(0x0000007Fu) == 0x42FEu);
  // uint8 255 and 1 at bytes 0, 1 (lane 0), zero point 1: 254 -> 0x437E, 0 -> +0.
  CHECK(dq::convert_pair_prmt(dq::byte_perm(0xEEDD01FFu, 0u, dq::pair_selector(0, false)), 0, dq::kMagicValue + 1.0f) ==
        0x437Eu);
  for (uint32_t q = 0; q < 4; ++q) {
    CHECK(unit_mismatches(true, 0, q) == 0);
    for (uint32_t zero : {0u, 1u, 127u, 128u, 255u}) CHECK(unit_mismatches(false, zero, q) == 0);
  }
}
