// Where a (grouped) GEMM's operands live and which boxes one tile's K step reads: A's rows
// stacked by expert, B one [K, N] (row) or [N, K] (col) matrix per expert, C stacked like A, each
// in its own allocation. Shared by the GEMM kernel models (Hopper's and Blackwell's).
#pragma once

#include "sim/kernel_model.h"

#include <vector>

namespace tilesim {

class GemmOperands {
public:
  explicit GemmOperands(const KernelSpec& spec);

  // Appends tile t's A box, then its B box, for K step k. A is not clipped at the expert's last
  // row (the next expert's rows are loaded and masked at the store), only at the matrix's end.
  void tile_boxes(const TileIndex& t, int k, std::vector<OperandBox>& out) const;
  // In a cluster of two, the operand tile the pair shares (the same W tile, else the same X
  // tile) is loaded half by each CTA: halves that box among out[first], out[first + 1].
  void split_shared_tile(const WorkItem& item, size_t first, std::vector<OperandBox>& out) const;
  Box store_box(const TileIndex& t) const;
  // The first row of tile t in the stacked token matrix.
  long long first_row(const TileIndex& t) const;
  // The first free address after C, 2 MiB aligned (for further tensors such as block scales).
  Address end() const { return end_; }

private:
  const KernelSpec& spec_;
  std::vector<long long> token_offsets_;
  int a_bits_ = 16, b_bits_ = 16, c_bits_ = 16;
  Address a_base_ = 0, b_base_ = 0, c_base_ = 0, end_ = 0;
};

} // namespace tilesim
