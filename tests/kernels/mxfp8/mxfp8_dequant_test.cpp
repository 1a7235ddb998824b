// Scheme (b)'s E4M3 + E8M0 -> bf16 conversion (kernels/mxfp8/mxfp8_dequant.h), the kernel's own
// __host__ __device__ code run on the CPU: every one of the 256 element bytes at every one of the 256
// scale bytes, bit for bit against the OCP-spec reference (mxfp8_reference.h: decode in double,
// times 2^(scale - 127), rounded once to bf16; NaN scale or element gives NaN).
#include "kernels/mxfp8/mxfp8_dequant.h"
#include "kernels/mxfp8/mxfp8_reference.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>

namespace md = tilesim::kernels::mxfp8_dequant;
namespace ref = tilesim::kernels::mxfp8_reference;

namespace {

uint16_t reference_bits(uint8_t element, uint32_t scale) {
  if (scale == ref::kScaleNaN) return 0x7FFF;
  return ref::round_to_bf16(ref::decode_element(element, tilesim::Mxfp8Element::e4m3) *
                            std::ldexp(1.0, static_cast<int>(scale) - 127));
}

bool is_nan_bf16(uint32_t bits) { return (bits & 0x7F80u) == 0x7F80u && (bits & 0x7Fu) != 0; }

bool same(uint32_t got, uint16_t want) {
  return is_nan_bf16(want) ? is_nan_bf16(got) : (got & 0xFFFFu) == want;
}

// Mismatches over all 256 elements at one scale byte, each through both byte positions of a word,
// as the low and as the high half of the pair (its neighbour byte another element), through
// `convert`: the per-block choice, or a fixed number of steps as a whole warp takes it.
template <typename Convert> int mismatches(uint32_t scale, Convert convert) {
  const md::BlockScale s = md::block_scale(scale);
  int wrong = 0;
  for (int v = 0; v < 256; ++v)
    for (uint32_t b : {0u, 2u}) {
      const uint32_t lo = static_cast<uint32_t>(v), hi = static_cast<uint32_t>((v * 37 + 11) & 0xFF);
      const uint32_t word = (lo << (8 * b)) | (hi << (8 * (b + 1))) | (0x7Fu << (8 * (2 - b))); // the other pair: NaN bytes
      const uint32_t pair = convert(word, b, s);
      if (!same(pair & 0xFFFFu, reference_bits(static_cast<uint8_t>(lo), scale))) ++wrong;
      if (!same(pair >> 16, reference_bits(static_cast<uint8_t>(hi), scale))) ++wrong;
    }
  return wrong;
}

} // namespace

TEST_CASE("sign-replicating prmt as PTX prmt defines it", "[mxfp8_dequant]") {
  // Bytes 0x80 (negative) and 0x7F: selector b | (8|b) << 4 | ...: byte, its sign, next byte, its sign.
  CHECK(md::byte_perm_signed(0x00007F80u, 0x9180u) == 0x007FFF80u);
  CHECK(md::byte_perm_signed(0x7F800000u, 0xB3A2u) == 0x007FFF80u);
  CHECK(md::byte_perm_signed(0x44332211u, 0x3210u) == 0x44332211u);
}

TEST_CASE("placement puts E4M3 bits under a bf16 at 2^-120", "[mxfp8_dequant]") {
  // 1.0 in E4M3 is 0x38 (field 7): placed 0x0380 = 2^(7 - 127) = 2^-120; -0.5 is 0xB0 -> 0x8300.
  CHECK(md::place_pair(0x0000B038u, 0) == 0x83000380u);
  // Subnormal 0x01 (2^-9) -> bf16 subnormal 0x0010 (2^-129); NaN 0x7F / 0xFF -> a NaN pattern.
  CHECK(md::place_pair(0x00000001u, 0) == 0x00000010u);
  CHECK(md::place_pair(0xFF7F0000u, 2) == 0xFFF07FF0u);
}

TEST_CASE("a pair picked out of two words places as place_pair does on its word", "[mxfp8_dequant]") {
  // Selector nibbles 4-7 read hi: byte 4 is hi's byte 0.
  CHECK(md::byte_perm_signed(0x11111111u, 0x00007F80u, md::pair_selector(4)) == 0x007FFF80u);
  CHECK(md::place_pair_of(0x0000B038u, 0xFF7F0000u, md::pair_selector(0)) == 0x83000380u);
  CHECK(md::place_pair_of(0x0000B038u, 0xFF7F0000u, md::pair_selector(6)) == 0xFFF07FF0u);
  // Every byte pair, in either word and either half: the same bits as place_pair on that word.
  for (uint32_t v = 0; v < 0x10000u; ++v) {
    const uint32_t word = v * 0x10001u, other = ~word;
    for (uint32_t b = 0; b < 4; b += 2) {
      REQUIRE(md::place_pair_of(word, other, md::pair_selector(b)) == md::place_pair(word, b));
      REQUIRE(md::place_pair_of(other, word, md::pair_selector(b + 4)) == md::place_pair(word, b));
    }
  }
}

TEST_CASE("hand-worked multipliers", "[mxfp8_dequant]") {
  // Scale 2^0 (byte 127): multiplier 2^120, bf16 exponent field 247 = 0x7B80.
  CHECK(md::block_scale(127).first == 0x7B807B80u);
  CHECK(md::block_scale(127).second == 0x3F803F80u); // 1.0: a warp's second step leaves it exact
  CHECK_FALSE(md::block_scale(127).two_steps);
  CHECK(md::block_scale(134).first == 0x7F007F00u); // 2^127, still one step
  CHECK(md::block_scale(135).two_steps);
  CHECK(md::block_scale(135).second == 0x40004000u); // 2^(135 - 134) = 2
  CHECK(md::block_scale(255).second == 0x7FC07FC0u); // NaN scale
  // 1.0 x 2^0 = 1.0 (0x3F80); -0.5 x 2^3 = -4 (0xC080).
  CHECK(md::convert_pair(0x0000B038u, 0, md::block_scale(127)) == 0xBF003F80u);
  CHECK((md::convert_pair(0x000000B0u, 0, md::block_scale(130)) & 0xFFFFu) == 0xC080u);
}

TEST_CASE("every element byte at every scale byte matches the OCP reference bit for bit", "[mxfp8_dequant]") {
  const auto per_block = [](uint32_t w, uint32_t b, const md::BlockScale& s) { return md::convert_pair(w, b, s); };
  const auto two_steps = [](uint32_t w, uint32_t b, const md::BlockScale& s) {
    return md::convert_pair_steps<true>(w, b, s);
  };
  const auto one_step = [](uint32_t w, uint32_t b, const md::BlockScale& s) {
    return md::convert_pair_steps<false>(w, b, s);
  };
  int wrong = 0, wrong_two_steps = 0, wrong_one_step = 0, first_failing = -1;
  for (uint32_t scale = 0; scale < 256; ++scale) {
    const int w = mismatches(scale, per_block);
    if (w && first_failing < 0) first_failing = static_cast<int>(scale);
    wrong += w;
    wrong_two_steps += mismatches(scale, two_steps); // a warp with one large scale takes it for all
    if (scale <= md::kSingleMultiplyMaxScale) wrong_one_step += mismatches(scale, one_step);
  }
  INFO("first failing scale byte " << first_failing);
  CHECK(wrong == 0);
  CHECK(wrong_two_steps == 0);
  CHECK(wrong_one_step == 0);
  // One step is not enough past 2^7: 1.0 at scale 2^8 must not come out right by accident.
  CHECK(mismatches(135, one_step) > 0);
}

TEST_CASE("extreme scales: overflow to Inf, tiny values rounded once", "[mxfp8_dequant]") {
  // 448 (0x7E) x 2^127 (byte 254) is past bf16's range: +Inf; 0x01 (2^-9) x 2^-127 (byte 0) = 2^-136,
  // below bf16's smallest subnormal 2^-133 and under half of it: +0.
  CHECK((md::convert_pair(0x0000007Eu, 0, md::block_scale(254)) & 0xFFFFu) == 0x7F80u);
  CHECK((md::convert_pair(0x00000001u, 0, md::block_scale(0)) & 0xFFFFu) == 0x0000u);
  // 0x08 (2^-6, E4M3's smallest normal) x 2^-127 = 2^-133: bf16's smallest subnormal, exact.
  CHECK((md::convert_pair(0x00000008u, 0, md::block_scale(0)) & 0xFFFFu) == 0x0001u);
}
