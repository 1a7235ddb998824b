// A C entry point to the element-wise kernel for kernels/elementwise/bench_baselines.py (ctypes), so
// that our kernel, Triton's and torch's are timed by the same code on the same tensors, interleaved.
#include <cstdio>
#include <exception>

#include "kernels/elementwise/elementwise.h"

extern "C" {

// op: 0 add, 1 mul, 2 relu, 3 gelu; dtype: 0 fp32, 1 bf16, 2 fp16. Enqueues one run on `stream`
// (e.g. torch.cuda.current_stream().cuda_stream); returns 0, or 1 with the message in `error`.
int tilesim_elementwise_run(int op, int dtype, const void* x, const void* y, void* out, long long elements, int block,
                            int vector, int unroll, int persistent, int sm_count, void* stream, char* error,
                            int error_len) {
  try {
    tilesim::kernels::ElementwiseProblem p;
    p.op = static_cast<tilesim::ElementwiseOp>(op);
    const tilesim::Dtype dtypes[] = {tilesim::Dtype::fp32, tilesim::Dtype::bf16, tilesim::Dtype::fp16};
    if (dtype < 0 || dtype > 2 || op < 0 || op > 3) throw tilesim::kernels::KernelError("op or dtype out of range");
    p.dtype = dtypes[dtype];
    p.elements = elements;
    p.block = block;
    p.vector = vector;
    p.unroll = unroll;
    p.persistent = persistent != 0;
    tilesim::kernels::Elementwise(p, x, y, out, sm_count).run(static_cast<cudaStream_t>(stream));
    return 0;
  } catch (const std::exception& e) {
    if (error && error_len > 0) std::snprintf(error, error_len, "%s", e.what());
    return 1;
  }
}
}
