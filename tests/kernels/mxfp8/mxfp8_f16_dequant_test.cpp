// Scheme xpass_f16's conversion (kernels/mxfp8/mxfp8_f16_dequant.h), the kernel's own __host__ __device__
// code run on the CPU: the K permutation, the rows' references, the multipliers by hand, and every E4M3
// element at every relative exponent d = s - ref + 7 from 7 down past f16's range, against the value
// element x 2^d rounded to the nearest f16 by a search over a table of every f16 (nothing shared with the
// header's rounding).
#include "kernels/mxfp8/mxfp8_f16_dequant.h"
#include "kernels/mxfp8/mxfp8_reference.h"

#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace mf = tilesim::kernels::mxfp8_f16;
namespace ref = tilesim::kernels::mxfp8_reference;

namespace {

// Every finite non-negative f16 value in increasing order; its index is its bit pattern.
const std::vector<double>& f16_values() {
  static const std::vector<double> values = [] {
    std::vector<double> v;
    for (int bits = 0; bits < 0x7C00; ++bits) {
      const int e = bits >> 10, m = bits & 0x3FF;
      v.push_back(e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25));
    }
    return v;
  }();
  return values;
}

// The nearest f16 to x (ties to the even pattern), by search: |x| below 65504 in every case tested.
uint32_t nearest_f16(double x) {
  const std::vector<double>& v = f16_values();
  const double a = std::fabs(x);
  const auto above = std::lower_bound(v.begin(), v.end(), a);
  uint32_t bits;
  if (above == v.begin()) bits = 0;
  else {
    const auto lo = static_cast<uint32_t>(above - v.begin() - 1), hi = lo + 1;
    const double dlo = a - v[lo], dhi = v[hi] - a;
    bits = dlo < dhi ? lo : dhi < dlo ? hi : (lo % 2 == 0 ? lo : hi);
    if (v[lo] == a) bits = lo;
  }
  return (std::signbit(x) ? 0x8000u : 0u) | bits;
}

bool is_nan_f16(uint32_t h) { return (h & 0x7C00u) == 0x7C00u && (h & 0x3FFu) != 0; }

} // namespace

TEST_CASE("xpass_f16: K order inside a 16-element group, worked by hand") {
  const int want[16] = {0, 1, 4, 5, 8, 9, 12, 13, 2, 3, 6, 7, 10, 11, 14, 15};
  for (int p = 0; p < 16; ++p) CHECK(mf::permuted_k(p) == want[p]);
}

TEST_CASE("xpass_f16: a row's reference is its largest scale that is not NaN; wide beyond 21 below it or with NaN") {
  const uint8_t narrow[] = {130, 109, 120};
  CHECK(mf::row_info(narrow, 3) == 130u); // 109 = 130 - 21: d = -14, still a normal multiplier
  const uint8_t wide[] = {130, 108};
  CHECK(mf::row_info(wide, 2) == (130u | mf::kWideFlag));
  const uint8_t nan[] = {127, 255, 120};
  CHECK(mf::row_info(nan, 3) == (127u | mf::kWideFlag));
  const uint8_t all_nan[] = {255, 255};
  CHECK(mf::row_info(all_nan, 2) == (0u | mf::kWideFlag));
}

TEST_CASE("xpass_f16: multipliers worked by hand") {
  // ref 127: s 127 is 2^7 (f16 0x5800), s 106 2^-14 (0x0400), both halves.
  CHECK(mf::narrow_multiplier(127u * 0x10001u, mf::narrow_offset(127)) == 0x58005800u);
  CHECK(mf::narrow_multiplier(106u * 0x10001u, mf::narrow_offset(127)) == 0x04000400u);
  // d = -15: 2^-10 (0x1400) then 2^-5 (0x2800); d = -24: 2^-10, 2^-14; d = -34: 2^-10, 2^-24 (the subnormal 1); d = -35: zero.
  CHECK(mf::wide_multipliers(105, 127).first == 0x14001400u);
  CHECK(mf::wide_multipliers(105, 127).second == 0x28002800u);
  CHECK(mf::wide_multipliers(96, 127).second == 0x04000400u);
  CHECK(mf::wide_multipliers(86, 127).second == 0x00010001u);
  CHECK(mf::wide_multipliers(85, 127).second == 0u);
  CHECK(mf::wide_multipliers(255, 127).first == 0x7E007E00u);
  CHECK(mf::wide_multipliers(120, 127).first == 0x3C003C00u); // d = 0: 1.0, then 1.0
}

TEST_CASE("xpass_f16: the narrow multiplier equals the general one on every reference and scale it is used for") {
  long long wrong = 0;
  for (uint32_t r = 0; r <= 254; ++r)
    for (uint32_t s = r >= mf::kNarrowSpan ? r - mf::kNarrowSpan : 0; s <= r; ++s) {
      const mf::WideMultipliers w = mf::wide_multipliers(s, r);
      if (mf::narrow_multiplier(s * 0x10001u, mf::narrow_offset(r)) != w.first || w.second != 0x3C003C00u) ++wrong;
    }
  CHECK(wrong == 0);
}

TEST_CASE("xpass_f16: every E4M3 element at every relative exponent, rounded once to the nearest f16") {
  const uint32_t r = 200;
  long long wrong = 0, checked = 0;
  for (int d = 7; d >= -45; --d) {
    const auto s = static_cast<uint32_t>(static_cast<int>(r) - 7 + d);
    const bool narrow = s + mf::kNarrowSpan >= r;
    for (uint32_t e = 0; e < 256; ++e) {
      const uint32_t word = e | (e ^ 0x80u) << 8 | e << 16 | (e ^ 0x80u) << 24; // both signs, both pairs
      uint32_t lo, hi;
      if (narrow) mf::convert_word(word, mf::narrow_multiplier(s * 0x10001u, mf::narrow_offset(r)), lo, hi);
      else mf::convert_word(word, mf::wide_multipliers(s, r), lo, hi);
      for (int i = 0; i < 4; ++i) {
        const uint32_t byte = (word >> (8 * i)) & 0xFF;
        const uint32_t got = ((i < 2 ? lo : hi) >> (16 * (i % 2))) & 0xFFFFu;
        const double v = ref::decode_element(static_cast<uint8_t>(byte), tilesim::Mxfp8Element::e4m3);
        const bool ok = std::isnan(v) ? is_nan_f16(got) : got == nearest_f16(v * std::ldexp(1.0, d));
        wrong += ok ? 0 : 1;
        ++checked;
      }
    }
  }
  CHECK(checked == 53 * 256 * 4);
  CHECK(wrong == 0);
  // A NaN scale turns every element NaN.
  uint32_t lo, hi;
  mf::convert_word(0x38383838u, mf::wide_multipliers(255, r), lo, hi);
  CHECK((is_nan_f16(lo & 0xFFFF) && is_nan_f16(hi >> 16)));
}
