#include "sim/gemm_epilogue.h"

#include <algorithm>

namespace tilesim {
namespace {

// Issue slots per element, counted from kernels/grouped_gemm/grouped_gemm_kernel.cuh's epilogue
// (epilogue_bias, epilogue_value) and kernels/common/activations.cuh: the bias, one shared-memory
// load per two elements (0.5) and two unpacking instructions per two (1), its add (1); ReLU one
// max (1); GELU five FP32 multiplies and FMAs plus one tanh.approx on the MUFU unit, which retires
// 16 results per SM cycle against 128 for FP32 (CUDA C++ Programming Guide, arithmetic
// instruction throughput, cc 9.0): 8 slots' worth.
constexpr double kBiasInstructions = 2.5;
constexpr double kReluInstructions = 1.0;
constexpr double kGeluInstructions = 5.0 + 8.0;

} // namespace

FusedEpilogue::FusedEpilogue(const KernelSpec& spec, Address bias_base) : spec_(spec), bias_base_(bias_base) {}

double FusedEpilogue::instructions_per_element() const {
  switch (spec_.epilogue) {
  case GemmEpilogue::none: return 0.0;
  case GemmEpilogue::bias_relu: return kBiasInstructions + kReluInstructions;
  case GemmEpilogue::bias_gelu: return kBiasInstructions + kGeluInstructions;
  }
  return 0.0;
}

void FusedEpilogue::bias_box(const TileIndex& t, std::vector<OperandBox>& out) const {
  if (!fused()) return;
  const int c_bytes = dtype_bits(spec_.c_dtype) / 8;
  const int n0 = t.col * spec_.tile.n;
  const int cols = std::min(spec_.tile.n, spec_.n - n0);
  const Address row = bias_base_ + (static_cast<Address>(t.expert) * spec_.n + n0) * c_bytes;
  out.push_back({Operand::b, {row, static_cast<ByteCount>(cols) * c_bytes, static_cast<ByteCount>(spec_.n) * c_bytes, 1}});
}

} // namespace tilesim
