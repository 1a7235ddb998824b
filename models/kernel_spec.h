// A kernel spec: the JSON description of one GEMM launch that the simulator replays and the
// measurement harness runs. See README.md, "Kernel spec format".
#pragma once

#include "models/launch_order.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tilesim {

enum class Dtype { fp32, bf16, fp16, fp8_e4m3, fp8_e5m2, int8, mxfp8 };
enum class KernelKind { gemm, grouped_gemm };
enum class MatrixLayout { row, col };
enum class LoadPath { tma, cp_async };

int dtype_bits(Dtype dtype);
std::string to_string(Dtype dtype);

struct TileShape {
  int m = 0;
  int n = 0;
  int k = 0;
};

struct KernelSpec {
  std::string name;
  KernelKind kind = KernelKind::gemm;
  Dtype a_dtype = Dtype::bf16;
  Dtype b_dtype = Dtype::bf16;
  Dtype c_dtype = Dtype::bf16;
  std::vector<int> expert_tokens; // rows of A per expert; a dense GEMM has one entry, m
  int n = 0;
  int k = 0;
  MatrixLayout a_layout = MatrixLayout::row; // row: M x K, K contiguous
  MatrixLayout b_layout = MatrixLayout::row; // row: K x N (N contiguous); col: N x K (K contiguous)
  TileShape tile;
  int stages = 0;
  int warps = 0;
  LoadPath load = LoadPath::tma;
  bool persistent = false;
  // CTAs per thread-block cluster. With 2, consecutive work items pair up and the operand tile
  // the pair shares (same W tile, else same X tile) is loaded half by each CTA and multicast to both.
  int cluster = 1;
  LaunchOrder order;

  int experts() const { return static_cast<int>(expert_tokens.size()); }
  std::int64_t total_m() const;
  double flops() const; // 2 * sum(m_e) * n * k
  std::vector<int> tile_row_offsets() const; // experts + 1 prefix sums of ceil(m_e / tile.m)
  int tile_cols() const { return (n + tile.n - 1) / tile.n; }
};

// Throws SpecError naming `source` (a file name), the field and the fix.
KernelSpec parse_kernel_spec(const nlohmann::json& j, const std::string& source);
KernelSpec load_kernel_spec(const std::string& path);
nlohmann::json to_json(const KernelSpec& spec);

} // namespace tilesim
