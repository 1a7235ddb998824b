// The MXFP8 CPU reference (kernels/mxfp8/mxfp8_reference.h) on blocks worked out by hand from the
// OCP MX v1.0 and OFP8 v1.0 definitions. mxfp8_check holds the GPU kernels to this reference.
#include "kernels/mxfp8/mxfp8_reference.h"

#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <random>

using namespace tilesim;
namespace ref = tilesim::kernels::mxfp8_reference;

namespace {

std::uint16_t bf16(float f) { // exact for the values used here
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return static_cast<std::uint16_t>(u >> 16);
}

// A block whose first values are `head`, the rest `fill`.
ref::Block quantize(std::initializer_list<float> head, float fill, Mxfp8ScaleRule rule,
                    Mxfp8Element element = Mxfp8Element::e4m3) {
  std::uint16_t v[ref::kBlock];
  for (int i = 0; i < ref::kBlock; ++i) v[i] = bf16(fill);
  int i = 0;
  for (float h : head) v[i++] = bf16(h);
  return ref::quantize_block(v, 1, rule, element);
}

} // namespace

TEST_CASE("mxfp8 reference: scales by the floor and the round-up rule") {
  using R = Mxfp8ScaleRule;
  // amax 1: floor(log2 1) - 8 = -8 and ceil(log2(1/448)) = ceil(-8.81) = -8; 1 / 2^-8 = 256 = 2^8:
  // E4M3 exponent field 8 + 7 = 15, mantissa 0: 0x78.
  for (R rule : {R::floor, R::round_up}) {
    const ref::Block b = quantize({}, 1.0f, rule);
    CHECK(b.scale == 127 - 8);
    CHECK(b.elements[0] == 0x78);
  }
  // amax 448 = 1.75 * 2^8: both rules give s = 0; 448 is E4M3's largest value, 0x7E.
  CHECK(quantize({448}, 1, R::floor).scale == 127);
  CHECK(quantize({448}, 1, R::round_up).scale == 127);
  CHECK(quantize({448}, 1, R::floor).elements[0] == 0x7E);
  // amax 450: the floor rule keeps s = 0 and clips 450 to 448; the round-up rule takes s = 1 and
  // 225 rounds to 224 = 1.75 * 2^7 (field 14, mantissa 6): 0x76.
  CHECK(quantize({450}, 1, R::floor).elements[0] == 0x7E);
  CHECK(quantize({450}, 1, R::round_up).scale == 128);
  CHECK(quantize({450}, 1, R::round_up).elements[0] == 0x76);
  // 500 / 2 = 250 lies between 240 and 256 (quantum 16 above 128): nearer 256, 0x78.
  CHECK(quantize({500}, 1, R::round_up).elements[0] == 0x78);
  CHECK(quantize({-500}, 1, R::round_up).elements[0] == 0xF8);
  // E5M2: emax 15 (57344 = 1.75 * 2^15); 1 / 2^-15 = 2^15, field 30, mantissa 0: 0x78.
  CHECK(quantize({}, 1, R::floor, Mxfp8Element::e5m2).scale == 127 - 15);
  CHECK(quantize({}, 1, R::round_up, Mxfp8Element::e5m2).scale == 127 - 15);
  CHECK(quantize({}, 1, R::floor, Mxfp8Element::e5m2).elements[0] == 0x78);
  // 61440 (past 57344) with the floor rule: s = 0, saturated to 57344 = 0x7B.
  CHECK(quantize({61440}, 1, R::floor, Mxfp8Element::e5m2).elements[0] == 0x7B);
}

TEST_CASE("mxfp8 reference: round half to even, subnormal elements") {
  // amax 256 with the floor rule: s = 0, values unchanged. 1.0625 is halfway between 1 (0x38)
  // and 1.125 (0x39): even, 0x38; 1.1875 between 1.125 and 1.25 (0x3A): even, 0x3A.
  const ref::Block b = quantize({256, 1.0625f, 1.1875f, 0x1p-8f, 0x1.8p-9f, 0x1p-11f}, 0, Mxfp8ScaleRule::floor);
  CHECK(b.scale == 127);
  CHECK(b.elements[1] == 0x38);
  CHECK(b.elements[2] == 0x3A);
  CHECK(b.elements[3] == 0x02); // 2^-8 = 2 quanta of 2^-9: subnormal mantissa 2
  CHECK(b.elements[4] == 0x02); // 1.5 quanta: halfway, even 2
  CHECK(b.elements[5] == 0x00); // a quarter quantum: zero
}

TEST_CASE("mxfp8 reference: zeros, subnormal blocks, a huge value, NaN and Inf") {
  using R = Mxfp8ScaleRule;
  const ref::Block zero = quantize({}, 0, R::floor);
  CHECK(zero.scale == 0); // s = -127, E8M0's least
  CHECK(zero.elements[0] == 0x00);
  CHECK(quantize({-0.0f}, 0, R::round_up).elements[0] == 0x80);
  // bf16 subnormals only: 2^-130 (bits 0x0008). s clamps to -127; 2^-130 * 2^127 = 2^-3, field 4: 0x20.
  std::uint16_t sub[ref::kBlock] = {0x0008};
  const ref::Block s = ref::quantize_block(sub, 1, R::floor, Mxfp8Element::e4m3);
  CHECK(s.scale == 0);
  CHECK(s.elements[0] == 0x20);
  // 2^100 among ones: s = 92 by both rules (ceil(100 - 8.81) = 92); 1 * 2^-92 is far below 2^-10: zero.
  for (R rule : {R::floor, R::round_up}) {
    const ref::Block h = quantize({0x1p100f}, 1, rule);
    CHECK(h.scale == 127 + 92);
    CHECK(h.elements[0] == 0x78);
    CHECK(h.elements[1] == 0x00);
  }
  // A NaN or an Inf makes the scale NaN; the elements are the unscaled saturating casts.
  const ref::Block n = quantize({NAN, 1, INFINITY, -INFINITY}, 1000, R::round_up);
  CHECK(n.scale == 0xFF);
  CHECK(n.elements[0] == 0x7F);
  CHECK(n.elements[1] == 0x38);
  CHECK(n.elements[2] == 0x7E);
  CHECK(n.elements[3] == 0xFE);
  CHECK(n.elements[4] == 0x7E);
  CHECK(quantize({INFINITY}, 1, R::floor, Mxfp8Element::e5m2).elements[0] == 0x7B);
}

TEST_CASE("mxfp8 reference: decoding and rounding to bf16") {
  CHECK(ref::decode_element(0x7E, Mxfp8Element::e4m3) == 448.0);
  CHECK(std::isnan(ref::decode_element(0x7F, Mxfp8Element::e4m3)));
  CHECK(ref::decode_element(0x01, Mxfp8Element::e4m3) == 0x1p-9);
  CHECK(ref::decode_element(0x7B, Mxfp8Element::e5m2) == 57344.0);
  CHECK(std::isinf(ref::decode_element(0x7C, Mxfp8Element::e5m2)));
  CHECK(ref::round_to_bf16(896.0) == 0x4460);            // 1.75 * 2^9
  CHECK(ref::round_to_bf16(0x1.cp-119) == 0x0460);       // 448 * 2^-127: exponent field 8
  CHECK(ref::round_to_bf16(0x1p-136) == 0x0000);         // below half of bf16's least subnormal 2^-133
  CHECK(ref::round_to_bf16(0x1.cp128) == 0x7F80);        // 448 * 2^120 overflows: Inf
  CHECK(ref::round_to_bf16(1.0 + 0x1p-8) == 0x3F80);     // halfway: even
  CHECK(ref::round_to_bf16(1.0 + 3 * 0x1p-8) == 0x3F82); // halfway: even (up)
}

TEST_CASE("mxfp8 reference: quantise then dequantise stays within E4M3's precision (round-up rule, seed 20)") {
  std::mt19937_64 rng(20);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  const std::int64_t rows = 64, cols = 96;
  std::vector<std::uint16_t> x(rows * cols);
  for (auto &v : x) v = bf16(unit(rng) * std::ldexp(1.0f, static_cast<int>(rng() % 41) - 20));
  for (Mxfp8Axis axis : {Mxfp8Axis::rowwise, Mxfp8Axis::colwise}) {
    const Mxfp8QuantizeShape shape{rows, cols, axis, Mxfp8ScaleRule::round_up, Mxfp8Element::e4m3};
    const ref::Quantized q = ref::quantize(x, rows, cols, shape);
    const bool rowwise = axis == Mxfp8Axis::rowwise;
    const std::int64_t lines = rowwise ? rows : cols, length = rowwise ? cols : rows;
    const std::vector<std::uint16_t> back = ref::dequantize(q, lines, length, Mxfp8Element::e4m3);
    for (std::int64_t line = 0; line < lines; ++line)
      for (std::int64_t k = 0; k < length; ++k) {
        const double v = ref::bf16_to_double(rowwise ? x[line * cols + k] : x[k * cols + line]);
        const double scale = std::ldexp(1.0, q.scales[(line * length + k) / ref::kBlock] - 127);
        const double got = ref::bf16_to_double(back[line * length + k]);
        // E4M3 keeps 3 mantissa bits (half a quantum: 2^-4 relative), subnormals 2^-10 * scale
        // absolute; bf16's rounding adds 2^-8 relative.
        REQUIRE(std::fabs(got - v) <= std::fabs(v) * 0x1p-4 + 0x1p-10 * scale + std::fabs(got) * 0x1p-8);
      }
  }
}
