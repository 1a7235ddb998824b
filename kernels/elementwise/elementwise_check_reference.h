// The element-wise kernel's operations in double precision, the reference its checks compare to.
#pragma once

#include "kernels/common/activations_check.h"
#include "models/kernel_spec.h"

namespace tilesim::kernels {

inline double elementwise_reference(ElementwiseOp op, double a, double b) {
  switch (op) {
  case ElementwiseOp::add: return a + b;
  case ElementwiseOp::mul: return a * b;
  case ElementwiseOp::relu: return relu_reference(a);
  case ElementwiseOp::gelu: return gelu_tanh_reference(a);
  }
  return 0;
}

} // namespace tilesim::kernels
