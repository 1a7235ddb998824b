// The MXFP8 GEMM's reference on the CPU: one output element as the exact sum, in double, of the
// products of the dequantised operands (element x 2^(scale - 127), OCP MX v1.0), written from the
// format and sharing nothing with the kernel's scale handling. A NaN scale (0xFF) or element makes
// the sum NaN. Also the sum of |products|, which bounds the fp32 accumulation error.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "kernels/mxfp8/mxfp8_reference.h"

namespace tilesim::kernels::mxfp8_reference {

struct DotProduct {
  double value = 0.0;
  double magnitude = 0.0; // sum of |products|
};

// x_row, w_row: k E4M3 elements; x_scales, w_scales: k / 32 E8M0 scales.
inline DotProduct dequantised_dot(const std::uint8_t* x_row, const std::uint8_t* x_scales, const std::uint8_t* w_row,
                                  const std::uint8_t* w_scales, int k) {
  static const std::array<double, 256> e4m3 = [] {
    std::array<double, 256> t{};
    for (int bits = 0; bits < 256; ++bits) t[bits] = decode_element(static_cast<std::uint8_t>(bits), Mxfp8Element::e4m3);
    return t;
  }();
  DotProduct d;
  for (int b = 0; b < k / kBlock; ++b) {
    if (x_scales[b] == kScaleNaN || w_scales[b] == kScaleNaN) return {NAN, NAN};
    const double scale = std::ldexp(1.0, x_scales[b] - 127 + w_scales[b] - 127);
    for (int i = b * kBlock; i < (b + 1) * kBlock; ++i) {
      const double p = e4m3[x_row[i]] * e4m3[w_row[i]] * scale;
      d.value += p;
      d.magnitude += std::fabs(p);
    }
  }
  return d;
}

// Whether a bf16 output agrees with the reference: within bf16's rounding of the value (2^-8
// relative) plus 2^-11 of the magnitude: the FP8 tensor core adds a block's 32 products with fewer
// bits than fp32 (DeepGEMM reports about 14 for Hopper), and fp32 adds the blocks (2^-24 each). On
// the H100, with random E4M3 codes (products spanning 2^-18..2^17), 50 of 339,456 outputs were off
// by up to 2^-12 of the magnitude against a first bound of 2^-13 (kernels/mxfp8/NOTES.md); a block
// scaled wrongly by 2x moves the sum by about its own share, 2^-5 of the magnitude at k = 1024.
// NaN only where the reference is NaN.
inline double tolerance(const DotProduct& want) {
  return 0x1p-8 * std::fabs(want.value) + 0x1p-11 * want.magnitude + 1e-37;
}

inline bool agrees(double got, const DotProduct& want) {
  if (std::isnan(want.value)) return std::isnan(got);
  if (std::isinf(got) || std::isnan(got)) return false;
  return std::fabs(got - want.value) <= tolerance(want);
}

} // namespace tilesim::kernels::mxfp8_reference
