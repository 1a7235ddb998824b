#include "kernels/common/tensor_maps.h"

#include <cuda_runtime_api.h>
#include <cudaTypedefs.h> // PFN_cuTensorMapEncodeTiled

#include <string>

#include "kernels/common/kernel_error.h"

namespace tilesim::kernels {
namespace {

// The driver entry point through the runtime, so the library needs no -lcuda at link time.
PFN_cuTensorMapEncodeTiled_v12000 encode_tiled_entry() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = [] {
    void* symbol = nullptr;
    cudaDriverEntryPointQueryResult query{};
    const cudaError_t err =
        cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &symbol, 12000, cudaEnableDefault, &query);
    if (err != cudaSuccess || query != cudaDriverEntryPointSuccess || symbol == nullptr)
      throw KernelError(std::string("cudaGetDriverEntryPointByVersion(cuTensorMapEncodeTiled) failed: ") +
                        cudaGetErrorString(err) + " (query result " + std::to_string(int(query)) +
                        "); a driver for CUDA 12.0 or newer is required");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(symbol);
  }();
  return fn;
}

} // namespace

CUtensorMap make_bf16_tensor_map_2d(const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows,
                                    uint32_t box_cols) {
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols * 2}; // bytes between rows; dim 0 is contiguous
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult res = encode_tiled_entry()(
      &map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (res != CUDA_SUCCESS)
    throw KernelError("cuTensorMapEncodeTiled failed with CUresult " + std::to_string(int(res)) + " for a [" +
                      std::to_string(rows) + ", " + std::to_string(cols) + "] bf16 tensor, box " +
                      std::to_string(box_rows) + "x" + std::to_string(box_cols) +
                      " (base must be 16-byte aligned and cols a multiple of 8)");
  return map;
}

CUtensorMap make_byte_tensor_map_2d(const void* base, uint64_t rows, uint64_t cols, uint32_t box_rows,
                                    uint32_t box_cols) {
  if (box_cols != 64 && box_cols != 128)
    throw KernelError("make_byte_tensor_map_2d: box_cols = " + std::to_string(box_cols) + "; use 64 or 128 bytes");
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols};
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult res = encode_tiled_entry()(
      &map, CU_TENSOR_MAP_DATA_TYPE_UINT8, 2, const_cast<void*>(base), dims, strides, box, element_strides,
      CU_TENSOR_MAP_INTERLEAVE_NONE, box_cols == 64 ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_128B,
      CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
      CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (res != CUDA_SUCCESS)
    throw KernelError("cuTensorMapEncodeTiled failed with CUresult " + std::to_string(int(res)) + " for a [" +
                      std::to_string(rows) + ", " + std::to_string(cols) + "] byte tensor, box " +
                      std::to_string(box_rows) + "x" + std::to_string(box_cols) +
                      " (base must be 16-byte aligned and cols a multiple of 16)");
  return map;
}

} // namespace tilesim::kernels
