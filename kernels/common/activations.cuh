// Activations shared by the element-wise kernel and the grouped GEMM's fused epilogue, so both
// compute the same function: ReLU, and GELU in its tanh form (Hendrycks & Gimpel 2016, eq. 2;
// torch.nn.functional.gelu(approximate="tanh")).
#pragma once

namespace tilesim::kernels {

// tanh.approx.f32 (PTX ISA 9.7.4.9, sm_75+): one MUFU instruction, max relative error 2^-10.987.
__device__ __forceinline__ float tanh_approx(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float relu(float x) { return fmaxf(x, 0.0f); }

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), written as h + h tanh(x (a + b x^2)) with
// h = x / 2, a = sqrt(2/pi), b = 0.044715 a: five FP32 instructions and one MUFU tanh instead of
// seven and one. In the fused GEMM epilogue the two consumers' 32768 tanh per 128 x 256 tile
// already keep the MUFU busy for 2048 cycles (16 per SM cycle), and each instruction more is an
// issue slot on the warp schedulers (the epilogue runs while the tensor cores wait).
__device__ __forceinline__ float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  constexpr float kCubicTerm = 0.044715f * 0.7978845608028654f;
  const float half = 0.5f * x;
  return fmaf(half, tanh_approx(x * fmaf(kCubicTerm, x * x, kSqrt2OverPi)), half);
}

} // namespace tilesim::kernels
