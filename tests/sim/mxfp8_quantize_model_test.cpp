#include "models/gpu_profile.h"
#include "models/kernel_spec.h"
#include "sim/kernel_model.h"

#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>

using namespace tilesim;

namespace {

KernelSpec quantiser(int rows, int cols, const char *axis) {
  nlohmann::json j{{"kind", "mxfp8_quantize"}, {"dtype", "bf16"}, {"rows", rows}, {"cols", cols}, {"axis", axis}};
  return parse_kernel_spec(j, "spec.json");
}
GpuProfile h100() { return load_gpu_profile(std::string(TILESIM_SOURCE_DIR) + "/models/gpus/h100_sxm.json"); }

} // namespace

TEST_CASE("mxfp8 quantiser model: a rowwise step reads 16 KiB and writes 8 KiB of elements plus 256 scale bytes") {
  const GpuProfile gpu = h100();
  const auto model = make_kernel_model(quantiser(16384, 7168, "rowwise"), gpu);
  CHECK(kernel_model_name(quantiser(32, 32, "rowwise"), gpu) == "mxfp8_quantize");
  CHECK(model->tile_count() == 16384 * 7168 / 8192); // 14336 steps of 256 threads x 4 x 8
  WorkItem item;
  item.tile = model->lookup_tile(3).tile;
  std::vector<OperandBox> boxes;
  model->load_boxes(item, 0, boxes);
  REQUIRE(boxes.size() == 1);
  CHECK(boxes[0].box.row_bytes == 16384);
  CHECK(boxes[0].box.rows == 1);
  const Box store = model->store_box(item.tile);
  CHECK(store.row_bytes == 8192 + 256);
  CHECK(store.base - boxes[0].box.base > 0); // the output lies after the input
  // 8 warps x 396 SASS instructions (round-up rule) over 4 schedulers.
  CHECK(model->element_cycles_per_k_step() == Approx(792.0));
  CHECK_FALSE(model->uses_tma());
  CHECK_FALSE(model->calls_tile_scheduler());
}

TEST_CASE("mxfp8 quantiser model: the dequantiser's direction reads 8 KiB plus 256 scale bytes and writes 16 KiB") {
  const GpuProfile gpu = h100();
  KernelSpec spec = quantiser(16384, 7168, "rowwise");
  const auto forward = make_kernel_model(spec, gpu);
  spec.mxfp8.dequantize = true;
  const auto back = make_kernel_model(spec, gpu);
  WorkItem item;
  item.tile = back->lookup_tile(3).tile;
  std::vector<OperandBox> loads, forward_loads;
  back->load_boxes(item, 0, loads);
  forward->load_boxes(item, 0, forward_loads);
  REQUIRE(loads.size() == 1);
  CHECK(loads[0].box.row_bytes == 8192 + 256);
  CHECK(loads[0].box.base == forward->store_box(item.tile).base); // where the quantiser writes
  const Box store = back->store_box(item.tile);
  CHECK(store.row_bytes == 16384);
  CHECK(store.base == forward_loads[0].box.base); // where the quantiser reads
}

TEST_CASE("mxfp8 quantiser model: a colwise step is a 128 x 128 tile, written as runs of the transposed rows") {
  const GpuProfile gpu = h100();
  const auto model = make_kernel_model(quantiser(96, 544, "colwise"), gpu);
  CHECK(model->tile_count() == 1 * 5); // ceil(96 / 128) row tiles x ceil(544 / 128) column tiles
  WorkItem item;
  item.tile = model->lookup_tile(4).tile; // rows 0..95 (the row tail), columns 512..543 (the column tail)
  std::vector<OperandBox> boxes;
  model->load_boxes(item, 0, boxes);
  REQUIRE(boxes.size() == 1);
  CHECK(boxes[0].box.row_bytes == 32 * 2);
  CHECK(boxes[0].box.row_stride == 544 * 2);
  CHECK(boxes[0].box.rows == 96);
  const Box store = model->store_box(item.tile);
  CHECK(store.row_bytes == 96); // 96 FP8 bytes of each of the 32 output rows 512..543
  CHECK(store.row_stride == 96);
  CHECK(store.rows == 32);
  CHECK(store.base - model->store_box(model->lookup_tile(0).tile).base == 512 * 96);
  CHECK(model->resources().shared_memory_bytes == 128 * 128 * 2);
  CHECK(model->resources().registers_per_thread == 64); // round-up rule
}

TEST_CASE("mxfp8 quantiser model: a colwise tile's stores are the kernel's 16-byte halves of each sector, then "
          "its scale bytes") {
  const GpuProfile gpu = h100();
  const auto model = make_kernel_model(quantiser(256, 544, "colwise"), gpu);
  std::vector<Box> boxes;
  // Tile 5: rows 128..255, columns 0..127. The elements of output row c start at c x 256 + 128.
  const TileIndex full = model->lookup_tile(5).tile;
  model->store_boxes(full, boxes);
  REQUIRE(boxes.size() == 8 + 1); // 128 bytes of each output row as 8 stores of 16, then the scales
  const Address elements = model->store_box(full).base;
  for (int piece = 0; piece < 8; ++piece) {
    CHECK(boxes[piece].base == elements + 16 * piece);
    CHECK(boxes[piece].row_bytes == 16); // one sector lookup per row: each sector twice in all
    CHECK(boxes[piece].row_stride == 256);
    CHECK(boxes[piece].rows == 128);
  }
  // Scales [544, 256 / 32]: the tile's 4 blocks of column c at c x 8 + 4, after the 544 x 256 elements.
  CHECK(boxes[8].base >= model->store_box(model->lookup_tile(0).tile).base + 544 * 256);
  CHECK(boxes[8].row_bytes == 4);
  CHECK(boxes[8].row_stride == 8);
  CHECK(boxes[8].rows == 128);
  std::vector<Box> first;
  model->store_boxes(model->lookup_tile(0).tile, first);
  CHECK(boxes[8].base - first[8].base == 4);
  // 9 x 128 = 1152 lookups for 512 sectors of elements and 128 of scales.

  // A column tail (tile 4: columns 512..543) writes 32 output rows.
  boxes.clear();
  model->store_boxes(model->lookup_tile(4).tile, boxes);
  REQUIRE(boxes.size() == 9);
  CHECK(boxes[0].rows == 32);
  CHECK(boxes[8].base - first[8].base == 512 * 8);

  // Rowwise, the one contiguous run.
  const auto rowwise = make_kernel_model(quantiser(256, 544, "rowwise"), gpu);
  boxes.clear();
  rowwise->store_boxes(rowwise->lookup_tile(0).tile, boxes);
  REQUIRE(boxes.size() == 1);
  CHECK(boxes[0].row_bytes == rowwise->store_box(rowwise->lookup_tile(0).tile).row_bytes);
}
