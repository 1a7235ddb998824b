// Element-wise kernel for Hopper: out[i] = op(x[i], y[i]) (add, mul) or op(x[i]) (relu, gelu) over
// fp32, bf16 or fp16 arrays. Each thread loads `vector` consecutive elements at once (16 bytes at
// most: one ld.global.v4), `unroll` such vectors per step, and a CTA of `block` threads covers
// block * vector * unroll elements per step; the last step is masked. Grid form: one CTA per step; persistent: as many CTAs as fit on the GPU
// at once, striding over the steps. Usable from plain C++: no CUDA types beyond cudaStream_t.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>

#include "kernels/common/kernel_error.h"
#include "models/kernel_spec.h"

namespace tilesim::kernels {

// What the traced runs record per CTA (kernels/elementwise/elementwise_trace.cuh), in %globaltimer ns.
struct CtaTrace {
  std::uint64_t start_ns;      // thread 0 entered the kernel
  std::uint64_t first_data_ns; // thread 0 had stored its first step: its loads had returned
  std::uint64_t end_ns;        // every thread of the CTA had issued its last store
  std::uint32_t sm;
  std::uint32_t unused;
};

struct ElementwiseProblem {
  ElementwiseOp op = ElementwiseOp::add;
  Dtype dtype = Dtype::fp32; // fp32, bf16 or fp16
  std::int64_t elements = 0; // >= 1
  int block = 256;           // threads per CTA: a power of two, 32..1024
  int vector = 4;            // elements per thread and load: a power of two, vector * bytes <= 16
  int unroll = 1;            // vectors per thread and step (1, 2 or 4), block * vector apart
  bool persistent = false;
  // true: block and unroll are the launcher's pick for this device (models/elementwise_launch_shape.h)
  bool launcher_shape = false;
};

// Empty when the kernel runs the problem, otherwise a message naming the field and the fix.
std::string elementwise_unsupported_reason(const ElementwiseProblem& problem);

// Bound to one problem and one set of device buffers (y is unused, may be null, for relu and
// gelu). Construction validates everything, sizes the grid, and throws KernelError.
class Elementwise {
public:
  Elementwise(const ElementwiseProblem& problem, const void* x, const void* y, void* out, int sm_count);
  void run(cudaStream_t stream) const;
  // The same kernel with per-CTA timestamps (fp32 in vectors of 4 only): `trace` is a device array
  // of grid_size() records.
  void run_traced(cudaStream_t stream, CtaTrace* trace) const;
  int grid_size() const { return grid_; }
  std::int64_t steps() const { return steps_; } // CTA steps of block * vector * unroll elements, the last masked
  const ElementwiseProblem& problem() const { return problem_; } // block and unroll as launched

private:
  ElementwiseProblem problem_;
  const void* x_;
  const void* y_;
  void* out_;
  std::int64_t steps_ = 0;
  int grid_ = 0;
};

} // namespace tilesim::kernels
