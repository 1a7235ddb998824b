// A kernel spec: the JSON description of one GEMM launch that the simulator replays and the
// measurement harness runs. See README.md, "Kernel spec format".
#pragma once

#include "models/launch_order.h"

#include <nlohmann/json_fwd.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace tilesim {

enum class Dtype { fp32, bf16, fp16, fp8_e4m3, fp8_e5m2, int8, mxfp8, uint8, mxfp4 };
enum class KernelKind { gemm, grouped_gemm, elementwise, mxfp8_quantize };
enum class MatrixLayout { row, col };
enum class LoadPath { tma, cp_async };

int dtype_bits(Dtype dtype);
std::string to_string(Dtype dtype);

// An element-wise kernel (kind "elementwise"): out[i] = op(x[i]) or op(x[i], y[i]) over `elements`,
// `block` threads per CTA, each thread loading `unroll` vectors of `vector` consecutive elements per
// step. Grid form: one CTA per step of block * vector * unroll elements, the last one masked;
// persistent: a grid-stride loop over as many CTAs as fit on the GPU at once.
enum class ElementwiseOp { add, mul, relu, gelu };
std::string to_string(ElementwiseOp op);
int input_count(ElementwiseOp op); // arrays read per element: 2 for add and mul, 1 for relu and gelu

struct ElementwiseShape {
  ElementwiseOp op = ElementwiseOp::add;
  std::int64_t elements = 0;
  int block = 256;
  int vector = 0;
  int unroll = 1;
  // false: the spec names neither block nor unroll, and the launcher picks them by the GPU
  // (models/elementwise_launch_shape.h); block and unroll then hold 256 x 1 until it does.
  bool shape_named = true;
  std::int64_t chunk() const { return static_cast<std::int64_t>(block) * vector * unroll; } // elements per CTA step
};

// An MXFP8 quantiser (kind "mxfp8_quantize", kernels/mxfp8/): a bf16 [rows, cols] tensor to FP8
// elements with one E8M0 scale per 32 consecutive elements (OCP MX v1.0). rowwise: blocks along a
// row, output [rows, cols]; colwise: blocks down a column, output transposed [cols, rows].
enum class Mxfp8Axis { rowwise, colwise };
enum class Mxfp8ScaleRule { floor, round_up }; // OCP's 2^(floor(log2 amax) - emax), or 2^ceil(log2(amax / max))
enum class Mxfp8Element { e4m3, e5m2 };
std::string to_string(Mxfp8Axis axis);
std::string to_string(Mxfp8ScaleRule rule);
std::string to_string(Mxfp8Element element);

struct Mxfp8QuantizeShape {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  Mxfp8Axis axis = Mxfp8Axis::rowwise;
  Mxfp8ScaleRule scale_rule = Mxfp8ScaleRule::round_up;
  Mxfp8Element element = Mxfp8Element::e4m3;
  // Rowwise only: the way back (mxfp8_dequantize: elements and scales in, bf16 out), the MXFP8 xpass
  // scheme's pass over X; set by the simulator, never by a spec file.
  bool dequantize = false;
  std::int64_t elements() const { return rows * cols; }
};

// How a GEMM with MXFP8 operands on tensor cores without block scaling (Hopper) applies its
// scales (kernels/mxfp8/NOTES.md): promote each 32-wide block's FP8 product on the CUDA cores, or
// dequantise the operands exactly to bf16 and run bf16 MMAs, either as Y = X W^T (dequantize) or as
// Y^T = W X^T with the tokens on the MMA's N (transposed: tile.m tokens x 64 channels, for the few
// tokens per expert of decode), or that on 128 x 128 tiles after a pass that dequantises X to bf16
// once (xpass: the kernels convert only W), or that in f16 relative to a reference exponent a row
// (xpass_f16: f16 wgmma, the pass converting X and finding every row's reference). "block_scale" in the spec.
enum class BlockScaleScheme { promote, dequantize, transposed, xpass, xpass_f16 };
std::string to_string(BlockScaleScheme scheme);

struct BlockScale {
  BlockScaleScheme scheme = BlockScaleScheme::promote;
  Mxfp8Element element = Mxfp8Element::e4m3;
};

// What a GEMM does to its fp32 accumulator before the store: nothing, or adds a per-column bias
// (one row of n per expert, c_dtype) and applies ReLU or GELU (tanh form).
enum class GemmEpilogue { none, bias_relu, bias_gelu };
std::string to_string(GemmEpilogue epilogue);

// A mixed-input GEMM (dtype bf16, b_dtype int8 or uint8: weights dequantised in registers,
// kernels/mixed_input/): how W's bytes become bf16 values. "quant" in the spec.
enum class WeightConversion { prmt, cvt }; // magic-number bytes-to-float, or I2F per element
std::string to_string(WeightConversion conversion);

struct WeightQuant {
  int scale_group = 0;      // 0: one bf16 scale per output channel; 128: one per channel and 128 of K
  bool zero_points = false; // one uint8 zero point per output channel (uint8 weights need them)
  WeightConversion conversion = WeightConversion::prmt;
  // How the epilogue writes Y: each element with its own 2-byte store ("elements"), or, on
  // 128-channel tiles, through shared memory and one TMA store a consumer ("tma").
  bool tma_store = false;
};

struct TileShape {
  int m = 0;
  int n = 0;
  int k = 0;
};

struct KernelSpec {
  std::string source; // the file it was read from, for error messages; not part of the spec
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
  GemmEpilogue epilogue = GemmEpilogue::none;
  WeightQuant quant; // mixed-input GEMMs only
  BlockScale block_scale; // MXFP8 GEMMs (dtype mxfp8) only
  ElementwiseShape elementwise; // kind elementwise only; the GEMM fields are then unused
  Mxfp8QuantizeShape mxfp8; // kind mxfp8_quantize only

  int experts() const { return static_cast<int>(expert_tokens.size()); }
  std::int64_t total_m() const;
  double flops() const; // 2 * sum(m_e) * n * k; elementwise: one operation per element
  std::vector<int> tile_row_offsets() const; // experts + 1 prefix sums of ceil(m_e / tile.m)
  int tile_cols() const { return (n + tile.n - 1) / tile.n; }
  bool is_gemm() const { return kind == KernelKind::gemm || kind == KernelKind::grouped_gemm; }
  bool mxfp8_gemm() const { return is_gemm() && a_dtype == Dtype::mxfp8 && b_dtype == Dtype::mxfp8; }
  bool mixed_input() const { return a_dtype == Dtype::bf16 && (b_dtype == Dtype::int8 || b_dtype == Dtype::uint8); }
};

// Throws SpecError naming `source` (a file name), the field (under `field`, where the spec is
// part of another file: a result's "kernel") and the fix.
KernelSpec parse_kernel_spec(const nlohmann::json& j, const std::string& source, const std::string& field = "");
KernelSpec load_kernel_spec(const std::string& path);
nlohmann::json to_json(const KernelSpec& spec);

} // namespace tilesim
