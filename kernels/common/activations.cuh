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

// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
__device__ __forceinline__ float gelu_tanh(float x) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  constexpr float kCubic = 0.044715f;
  const float inner = kSqrt2OverPi * fmaf(kCubic * x * x, x, x);
  return 0.5f * x * (1.0f + tanh_approx(inner));
}

} // namespace tilesim::kernels
