// The CPU reference of the MXFP8 quantiser and dequantiser, written from the OCP Microscaling
// Formats (MX) v1.0 specification with plain double arithmetic (log2, floor, ceil, nearbyint), so
// that it shares nothing with the kernels' bit manipulation and cvt instructions (mxfp8_convert.cuh).
//
// A block of 32 values V_i gets the shared scale X = 2^s, stored as the E8M0 byte s + 127:
//   floor rule (OCP MX v1.0, section 6.3): s = floor(log2(max |V_i|)) - emax_elem, emax_elem the
//     exponent of the element type's largest normal (E4M3: 448 = 1.75 * 2^8, 8; E5M2: 57344, 15);
//   round-up rule: s = ceil(log2(max |V_i| / max_elem)), so that no element saturates.
// s is clamped to E8M0's range [-127, 127]; an all-zero block has s = -127. Elements are V_i / X
// rounded to nearest even, saturated to +-max_elem (OCP FP8's saturating conversion). A block that
// holds a NaN or an Inf gets the scale NaN (0xFF), which decodes every element of the block as NaN
// (OCP MX v1.0, section 5.3); its elements are then the saturating casts of the unscaled V_i.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "models/kernel_spec.h"

namespace tilesim::kernels::mxfp8_reference {

constexpr int kBlock = 32;
constexpr std::uint8_t kScaleNaN = 0xFF;

struct ElementFormat {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  double max_normal;
  int emax; // exponent of max_normal
};
inline ElementFormat format_of(Mxfp8Element e) {
  // OCP 8-bit Floating Point Specification (OFP8) v1.0, table 1.
  return e == Mxfp8Element::e4m3 ? ElementFormat{4, 3, 7, 448.0, 8} : ElementFormat{5, 2, 15, 57344.0, 15};
}

inline double bf16_to_double(std::uint16_t bits) {
  const std::uint32_t u = static_cast<std::uint32_t>(bits) << 16;
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

// The E8M0 exponent s of a block whose largest magnitude is `amax` (finite).
inline int scale_exponent(double amax, Mxfp8ScaleRule rule, Mxfp8Element element) {
  if (amax == 0.0) return -127;
  const ElementFormat f = format_of(element);
  const double s = rule == Mxfp8ScaleRule::floor ? std::floor(std::log2(amax)) - f.emax
                                                 : std::ceil(std::log2(amax / f.max_normal));
  return static_cast<int>(std::fmin(127.0, std::fmax(-127.0, s)));
}

// x rounded to nearest even on the element type's grid, saturated, encoded. NaN -> 0x7F.
inline std::uint8_t encode_element(double x, Mxfp8Element element) {
  if (std::isnan(x)) return 0x7F;
  const ElementFormat f = format_of(element);
  const std::uint8_t sign = std::signbit(x) ? 0x80 : 0x00;
  double a = std::fmin(std::fabs(x), f.max_normal); // saturating (Inf too)
  const int min_exponent = 1 - f.bias;               // of the smallest normal
  int e = a == 0.0 ? min_exponent : std::ilogb(a);
  if (e < min_exponent) e = min_exponent; // subnormal: the smallest normal's quantum
  const double quantum = std::ldexp(1.0, e - f.mantissa_bits);
  const double q = std::nearbyint(a / quantum); // round half to even (default rounding mode)
  const double rounded = q * quantum;
  if (rounded == 0.0) return sign;
  int re = std::ilogb(rounded);
  if (re < min_exponent) // subnormal: exponent field 0, mantissa counts quanta of 2^(min_exponent - m)
    return sign | static_cast<std::uint8_t>(rounded / std::ldexp(1.0, min_exponent - f.mantissa_bits));
  const int mantissa = static_cast<int>(rounded / std::ldexp(1.0, re - f.mantissa_bits)) - (1 << f.mantissa_bits);
  return sign | static_cast<std::uint8_t>(((re + f.bias) << f.mantissa_bits) | mantissa);
}

inline double decode_element(std::uint8_t bits, Mxfp8Element element) {
  const ElementFormat f = format_of(element);
  const double sign = (bits & 0x80) ? -1.0 : 1.0;
  const int field = (bits >> f.mantissa_bits) & ((1 << f.exponent_bits) - 1);
  const int mantissa = bits & ((1 << f.mantissa_bits) - 1);
  const int all_ones = (1 << f.exponent_bits) - 1;
  if (element == Mxfp8Element::e4m3 && field == all_ones && mantissa == 7) return NAN;
  if (element == Mxfp8Element::e5m2 && field == all_ones) return mantissa == 0 ? sign * INFINITY : NAN;
  if (field == 0) return sign * std::ldexp(mantissa, 1 - f.bias - f.mantissa_bits);
  return sign * std::ldexp(mantissa + (1 << f.mantissa_bits), field - f.bias - f.mantissa_bits);
}

// x rounded to nearest even bf16 (8 significant bits, exponents -126..127, subnormals to 2^-133).
inline std::uint16_t round_to_bf16(double x) {
  if (std::isnan(x)) return 0x7FFF;
  const std::uint16_t sign = std::signbit(x) ? 0x8000 : 0;
  const double a = std::fabs(x);
  const int e = a == 0.0 ? -126 : std::max(std::ilogb(a), -126);
  const double quantum = std::ldexp(1.0, e - 7);
  const double rounded = std::nearbyint(a / quantum) * quantum;
  if (rounded >= std::ldexp(1.0, 128)) return sign | 0x7F80; // overflow: Inf
  const float f = static_cast<float>(rounded);               // exact: 8 bits in range
  std::uint32_t u;
  std::memcpy(&u, &f, 4);
  return sign | static_cast<std::uint16_t>(u >> 16);
}

struct Block {
  std::uint8_t scale = 0;
  std::uint8_t elements[kBlock] = {};
};

// One block of 32 bf16 values.
inline Block quantize_block(const std::uint16_t* values, int stride, Mxfp8ScaleRule rule, Mxfp8Element element) {
  Block b;
  double amax = 0.0;
  bool finite = true;
  for (int i = 0; i < kBlock; ++i) {
    const double v = bf16_to_double(values[i * stride]);
    if (!std::isfinite(v)) finite = false;
    else amax = std::fmax(amax, std::fabs(v));
  }
  const int s = finite ? scale_exponent(amax, rule, element) : 0;
  b.scale = finite ? static_cast<std::uint8_t>(s + 127) : kScaleNaN;
  for (int i = 0; i < kBlock; ++i)
    b.elements[i] = encode_element(bf16_to_double(values[i * stride]) / std::ldexp(1.0, s), element);
  return b;
}

// The quantised tensor: rowwise, elements [rows, cols] and scales [rows, cols / 32]; colwise, the
// transpose: elements [cols, rows] and scales [cols, rows / 32].
struct Quantized {
  std::vector<std::uint8_t> elements;
  std::vector<std::uint8_t> scales;
};

inline Quantized quantize(const std::vector<std::uint16_t>& x, std::int64_t rows, std::int64_t cols,
                          const Mxfp8QuantizeShape& shape) {
  Quantized q;
  q.elements.resize(static_cast<std::size_t>(rows * cols));
  q.scales.resize(static_cast<std::size_t>(rows * cols / kBlock));
  const bool rowwise = shape.axis == Mxfp8Axis::rowwise;
  const std::int64_t lines = rowwise ? rows : cols, length = rowwise ? cols : rows;
  for (std::int64_t line = 0; line < lines; ++line)
    for (std::int64_t start = 0; start < length; start += kBlock) {
      const std::uint16_t* first = rowwise ? &x[line * cols + start] : &x[start * cols + line];
      const Block b = quantize_block(first, rowwise ? 1 : static_cast<int>(cols), shape.scale_rule, shape.element);
      q.scales[line * (length / kBlock) + start / kBlock] = b.scale;
      for (int i = 0; i < kBlock; ++i) q.elements[line * length + start + i] = b.elements[i];
    }
  return q;
}

// bf16 [lines, length] from elements [lines, length] and scales [lines, length / 32].
inline std::vector<std::uint16_t> dequantize(const Quantized& q, std::int64_t lines, std::int64_t length,
                                             Mxfp8Element element) {
  std::vector<std::uint16_t> out(static_cast<std::size_t>(lines * length));
  for (std::int64_t i = 0; i < lines * length; ++i) {
    const std::uint8_t scale = q.scales[i / kBlock];
    out[i] = scale == kScaleNaN ? 0x7FFF : round_to_bf16(decode_element(q.elements[i], element) * std::ldexp(1.0, scale - 127));
  }
  return out;
}

} // namespace tilesim::kernels::mxfp8_reference
