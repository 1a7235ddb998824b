// The tiled (grouped) GEMM: C_e = A_e * B_e per expert, A rows stacked by expert, one output tile
// per CTA work item, a ring of `stages` shared-memory buffers fed by TMA boxes or cp.async.
#include "sim/kernel_model.h"

#include "models/spec_error.h"

#include <algorithm>

namespace tilesim {
namespace {

// cudaMalloc hands out 2 MiB-aligned regions; the operands are placed one after another.
constexpr Address kHeapBase = Address{1} << 40;
constexpr Address kAllocationAlignment = Address{2} << 20;

Address align_up(Address a) { return (a + kAllocationAlignment - 1) / kAllocationAlignment * kAllocationAlignment; }

// Thread instructions per element, counted from the instruction sequences, not measured (an
// estimate to replace with a microbenchmark): the epilogue converts two fp32 accumulators to one
// bf16x2 (cvt.rn.bf16x2.f32, 0.5), stores 8 elements per st.global.v4 (0.125), plus address
// arithmetic; a converted operand element costs one unpack/convert and half a pack (prmt), the
// sequence of the seed article on mixed-input GEMMs (Google Research, "Mixed-input matrix
// multiplication performance optimizations", 2024).
constexpr double kEpilogueInstructionsPerElement = 1.0;
constexpr double kConversionInstructionsPerElement = 1.5;
constexpr int kBarrierBytes = 1024; // mbarriers and the tile scheduler's slot

class GemmModel final : public KernelModel {
public:
  GemmModel(const KernelSpec& spec, const GpuProfile& gpu) : spec_(spec), offsets_(spec.tile_row_offsets()) {
    space_ = {offsets_.data(), spec.experts(), offsets_.back(), spec.tile_cols()};
    token_offsets_.assign(spec.expert_tokens.size() + 1, 0);
    for (size_t e = 0; e < spec.expert_tokens.size(); ++e)
      token_offsets_[e + 1] = token_offsets_[e] + spec.expert_tokens[e];

    a_bytes_ = dtype_bits(spec.a_dtype) / 8;
    b_bytes_ = dtype_bits(spec.b_dtype) / 8;
    c_bytes_ = dtype_bits(spec.c_dtype) / 8;
    const Address a_size = static_cast<Address>(spec.total_m()) * spec.k * a_bytes_;
    const Address b_size = static_cast<Address>(spec.experts()) * spec.n * spec.k * b_bytes_;
    a_base_ = kHeapBase;
    b_base_ = align_up(a_base_ + a_size);
    c_base_ = align_up(b_base_ + b_size);

    const double rate = gpu.tensor_flops_per_cycle(spec.a_dtype, spec.b_dtype);
    mma_cycles_ = 2.0 * spec.tile.m * spec.tile.n * spec.tile.k / rate;
    const double issue_per_cycle = 32.0 * gpu.sm.warp_schedulers;
    element_cycles_ = spec.a_dtype == spec.b_dtype
                          ? 0.0
                          : kConversionInstructionsPerElement * spec.tile.n * spec.tile.k / issue_per_cycle;
    epilogue_cycles_ = kEpilogueInstructionsPerElement * spec.tile.m * spec.tile.n / issue_per_cycle;

    resources_.threads = spec.warps * 32;
    // Tiled GEMMs keep their accumulators in registers and are built to use every register of the SM
    // (allocation granularity: 8 per thread).
    resources_.registers_per_thread =
        std::min(gpu.sm.max_registers_per_thread, gpu.sm.registers / resources_.threads / 8 * 8);
    resources_.shared_memory_bytes =
        spec.stages * (spec.tile.m * spec.tile.k * a_bytes_ + spec.tile.n * spec.tile.k * b_bytes_) + kBarrierBytes;
    if (resources_.shared_memory_bytes > gpu.sm.max_shared_memory_per_cta_bytes)
      throw SpecError(spec.name, "stages",
                      std::to_string(spec.stages) + " stages of a " + std::to_string(spec.tile.m) + "x" +
                          std::to_string(spec.tile.n) + "x" + std::to_string(spec.tile.k) + " tile need " +
                          std::to_string(resources_.shared_memory_bytes) + " bytes of shared memory, " + gpu.name +
                          " allows " + std::to_string(gpu.sm.max_shared_memory_per_cta_bytes) + " per CTA",
                      "use fewer stages or a smaller tile");
    if (resources_.threads > gpu.sm.max_threads)
      throw SpecError(spec.name, "warps", std::to_string(spec.warps) + " warps exceed the SM's thread limit",
                      "use fewer warps");
  }

  int tile_count() const override { return tilesim::tile_count(space_); }
  TileLookup lookup_tile(int linear) const override {
    TileLookup l;
    l.loop_trips = tile_at_trips(spec_.order, space_, linear, &l.tile);
    return l;
  }
  int k_steps() const override { return (spec_.k + spec_.tile.k - 1) / spec_.tile.k; }

  void load_boxes(const WorkItem& item, int k, std::vector<OperandBox>& out) const override {
    const TileIndex& t = item.tile;
    const size_t first = out.size();
    tile_boxes(t, k, out);
    // The kernels' tensor maps ask for 256-byte L2 promotion (kernels/common/tensor_maps.cu).
    if (uses_tma())
      for (size_t i = first; i < out.size(); ++i) out[i].box.l2_promotion_256b = true;
    if (!item.has_partner) return;
    // In a cluster the shared operand tile is loaded half by each CTA and multicast to both
    // (kernels/grouped_gemm/grouped_gemm_kernel.cuh): W first, else X.
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

  void tile_boxes(const TileIndex& t, int k, std::vector<OperandBox>& out) const {
    const int k0 = k * spec_.tile.k;
    const int k_len = std::min(spec_.tile.k, spec_.k - k0);
    // A: the tile's rows of the stacked token matrix. The box is not clipped at the expert's
    // last row (the next expert's rows are loaded and masked at the store), only at the matrix.
    const long long m0 = token_offsets_[t.expert] + static_cast<long long>(t.local_row) * spec_.tile.m;
    const int a_rows = static_cast<int>(std::min<long long>(spec_.tile.m, spec_.total_m() - m0));
    if (spec_.a_layout == MatrixLayout::row)
      out.push_back({Operand::a, {a_base_ + static_cast<Address>(m0 * spec_.k + k0) * a_bytes_,
                                  static_cast<ByteCount>(k_len) * a_bytes_, static_cast<ByteCount>(spec_.k) * a_bytes_,
                                  a_rows}});
    else
      out.push_back({Operand::a, {a_base_ + static_cast<Address>(static_cast<long long>(k0) * spec_.total_m() + m0) * a_bytes_,
                                  static_cast<ByteCount>(a_rows) * a_bytes_,
                                  static_cast<ByteCount>(spec_.total_m()) * a_bytes_, k_len}});
    // B: expert e's [K, N] (row) or [N, K] (col) matrix.
    const int n0 = t.col * spec_.tile.n;
    const int n_len = std::min(spec_.tile.n, spec_.n - n0);
    const Address b_expert = b_base_ + static_cast<Address>(t.expert) * spec_.n * spec_.k * b_bytes_;
    if (spec_.b_layout == MatrixLayout::col)
      out.push_back({Operand::b, {b_expert + (static_cast<Address>(n0) * spec_.k + k0) * b_bytes_,
                                  static_cast<ByteCount>(k_len) * b_bytes_, static_cast<ByteCount>(spec_.k) * b_bytes_,
                                  n_len}});
    else
      out.push_back({Operand::b, {b_expert + (static_cast<Address>(k0) * spec_.n + n0) * b_bytes_,
                                  static_cast<ByteCount>(n_len) * b_bytes_, static_cast<ByteCount>(spec_.n) * b_bytes_,
                                  k_len}});
  }

  Box store_box(const TileIndex& t) const override {
    const int local_m0 = t.local_row * spec_.tile.m;
    const int rows = std::min(spec_.tile.m, spec_.expert_tokens[t.expert] - local_m0);
    const long long m0 = token_offsets_[t.expert] + local_m0;
    const int n0 = t.col * spec_.tile.n;
    const int cols = std::min(spec_.tile.n, spec_.n - n0);
    return {c_base_ + (static_cast<Address>(m0) * spec_.n + n0) * c_bytes_, static_cast<ByteCount>(cols) * c_bytes_,
            static_cast<ByteCount>(spec_.n) * c_bytes_, rows};
  }

  Cycle mma_cycles_per_k_step() const override { return mma_cycles_; }
  Cycle element_cycles_per_k_step() const override { return element_cycles_; }
  Cycle epilogue_cycles() const override { return epilogue_cycles_; }
  CtaResources resources() const override { return resources_; }
  bool uses_tma() const override { return spec_.load == LoadPath::tma; }

private:
  KernelSpec spec_;
  std::vector<int> offsets_;
  std::vector<long long> token_offsets_;
  TileSpace space_;
  int a_bytes_ = 2, b_bytes_ = 2, c_bytes_ = 2;
  Address a_base_ = 0, b_base_ = 0, c_base_ = 0;
  Cycle mma_cycles_ = 0, element_cycles_ = 0, epilogue_cycles_ = 0;
  CtaResources resources_;
};

} // namespace

std::unique_ptr<KernelModel> make_gemm_model(const KernelSpec& spec, const GpuProfile& gpu) {
  return std::make_unique<GemmModel>(spec, gpu);
}

} // namespace tilesim
