// What a fused epilogue (bias + ReLU or GELU, kernels/grouped_gemm/) adds to a GEMM tile: the
// bias row segment the tile reads, and per-element work on the warp schedulers.
#pragma once

#include "sim/kernel_model.h"

namespace tilesim {

class FusedEpilogue {
public:
  // The bias ([experts, n], c_dtype) is its own allocation at `bias_base`.
  FusedEpilogue(const KernelSpec& spec, Address bias_base);
  bool fused() const { return spec_.epilogue != GemmEpilogue::none; }
  // Issue slots per output element beyond the plain epilogue's; 0 without a fused epilogue.
  double instructions_per_element() const;
  // Appends the tile's bias segment (one row of tile.n values) as an operand-B box.
  void bias_box(const TileIndex& t, std::vector<OperandBox>& out) const;

private:
  const KernelSpec& spec_;
  Address bias_base_;
};

} // namespace tilesim
