#include "sim/gemm_operands.h"

#include "sim/device_heap.h"

#include <algorithm>

namespace tilesim {
namespace {

// Bytes of `elements` values of `bits` each (4-bit types pack two to a byte).
ByteCount bytes_of(long long elements, int bits) { return (elements * bits + 7) / 8; }

} // namespace

GemmOperands::GemmOperands(const KernelSpec& spec) : spec_(spec) {
  token_offsets_.assign(spec.expert_tokens.size() + 1, 0);
  for (size_t e = 0; e < spec.expert_tokens.size(); ++e)
    token_offsets_[e + 1] = token_offsets_[e] + spec.expert_tokens[e];
  a_bits_ = dtype_bits(spec.a_dtype);
  b_bits_ = dtype_bits(spec.b_dtype);
  c_bits_ = dtype_bits(spec.c_dtype);
  const Address a_size = bytes_of(spec.total_m() * spec.k, a_bits_);
  const Address b_size = bytes_of(static_cast<long long>(spec.experts()) * spec.n * spec.k, b_bits_);
  const Address c_size = bytes_of(spec.total_m() * spec.n, c_bits_);
  a_base_ = kHeapBase;
  b_base_ = align_allocation(a_base_ + a_size);
  c_base_ = align_allocation(b_base_ + b_size);
  end_ = align_allocation(c_base_ + c_size);
}

long long GemmOperands::first_row(const TileIndex& t) const {
  return token_offsets_[t.expert] + static_cast<long long>(t.local_row) * spec_.tile.m;
}

void GemmOperands::tile_boxes(const TileIndex& t, int k, std::vector<OperandBox>& out) const {
  const int k0 = k * spec_.tile.k;
  const int k_len = std::min(spec_.tile.k, spec_.k - k0);
  const long long m0 = first_row(t);
  // At most the rows left in the matrix; none for the idle half of a 2-SM tile past the last row.
  const long long total_m = token_offsets_.back(); // spec_.total_m() sums every expert: not per box
  const int a_rows = static_cast<int>(std::clamp<long long>(total_m - m0, 0, spec_.tile.m));
  if (spec_.a_layout == MatrixLayout::row)
    out.push_back({Operand::a, {a_base_ + static_cast<Address>(bytes_of(m0 * spec_.k + k0, a_bits_)),
                                bytes_of(k_len, a_bits_), bytes_of(spec_.k, a_bits_), a_rows}});
  else
    out.push_back({Operand::a, {a_base_ + static_cast<Address>(bytes_of(static_cast<long long>(k0) * total_m + m0, a_bits_)),
                                bytes_of(a_rows, a_bits_), bytes_of(total_m, a_bits_), k_len}});
  const int n0 = t.col * spec_.tile.n;
  const int n_len = std::min(spec_.tile.n, spec_.n - n0);
  const Address b_expert = b_base_ + static_cast<Address>(bytes_of(static_cast<long long>(t.expert) * spec_.n * spec_.k, b_bits_));
  if (spec_.b_layout == MatrixLayout::col)
    out.push_back({Operand::b, {b_expert + static_cast<Address>(bytes_of(static_cast<long long>(n0) * spec_.k + k0, b_bits_)),
                                bytes_of(k_len, b_bits_), bytes_of(spec_.k, b_bits_), n_len}});
  else
    out.push_back({Operand::b, {b_expert + static_cast<Address>(bytes_of(static_cast<long long>(k0) * spec_.n + n0, b_bits_)),
                                bytes_of(n_len, b_bits_), bytes_of(spec_.n, b_bits_), k_len}});
}

void GemmOperands::split_shared_tile(const WorkItem& item, size_t first, std::vector<OperandBox>& out) const {
  if (!item.has_partner) return;
  const TileIndex& t = item.tile;
  const TileIndex& p = item.partner;
  const bool share_b = p.expert == t.expert && p.col == t.col;
  const bool share_a = !share_b && p.row == t.row;
  if (!share_a && !share_b) return;
  Box& shared = out[first + (share_b ? 1 : 0)].box;
  // Halves split the M (or N) extent: box rows for K-contiguous layouts, row bytes otherwise.
  const bool k_contiguous = share_b ? spec_.b_layout == MatrixLayout::col : spec_.a_layout == MatrixLayout::row;
  if (k_contiguous) {
    const int half = (shared.rows + 1) / 2;
    if (item.rank == 1) shared.base += static_cast<Address>(half) * shared.row_stride;
    shared.rows = item.rank == 0 ? half : shared.rows - half;
  } else {
    const ByteCount half = (shared.row_bytes / 2 + 15) / 16 * 16; // TMA boxes are 16-byte multiples
    if (item.rank == 1) shared.base += static_cast<Address>(half);
    shared.row_bytes = item.rank == 0 ? half : shared.row_bytes - half;
  }
}

Box GemmOperands::store_box(const TileIndex& t) const {
  const int local_m0 = t.local_row * spec_.tile.m;
  const int rows = std::max(0, std::min(spec_.tile.m, spec_.expert_tokens[t.expert] - local_m0));
  const long long m0 = token_offsets_[t.expert] + local_m0;
  const int n0 = t.col * spec_.tile.n;
  const int cols = std::min(spec_.tile.n, spec_.n - n0);
  return {c_base_ + static_cast<Address>(bytes_of(m0 * spec_.n + n0, c_bits_)), bytes_of(cols, c_bits_),
          bytes_of(spec_.n, c_bits_), rows};
}

} // namespace tilesim
