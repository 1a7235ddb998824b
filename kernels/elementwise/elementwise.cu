// Host launcher of the element-wise kernel: picks block and unroll where the caller asks it to,
// validates the problem, picks the instantiation for (dtype, vector, op) and sizes the grid once.
#include "kernels/elementwise/elementwise.h"

#include <algorithm>
#include <limits>
#include <type_traits>

#include "kernels/elementwise/elementwise_kernel.cuh"
#include "models/elementwise_launch_shape.h"

namespace tilesim::kernels {
namespace {

void check_cuda(cudaError_t err, const char* call) {
  if (err != cudaSuccess) throw KernelError(std::string(call) + " failed: " + cudaGetErrorString(err));
}

// One launch: the problem's buffers and sizes, the grid, and the trace records (traced runs only).
struct Launch {
  const void* x;
  const void* y;
  void* out;
  std::int64_t elements;
  std::int64_t steps;
  int grid;
  int block;
  CtaTrace* trace;
};
using LaunchFn = void (*)(const Launch& l, cudaStream_t stream);

// One instantiation: how to launch it, and its address for the occupancy query.
struct KernelEntry {
  LaunchFn launch = nullptr;
  const void* function = nullptr;
};

template <typename T, int Vector, int Unroll, ElementwiseOp Op, typename Index, bool Traced, bool Strided>
KernelEntry entry() {
  const LaunchFn launch = [](const Launch& l, cudaStream_t stream) {
    elementwise_kernel<T, Vector, Unroll, Op, Index, Traced, Strided><<<l.grid, l.block, 0, stream>>>(
        static_cast<const T*>(l.x), static_cast<const T*>(l.y), static_cast<T*>(l.out), static_cast<Index>(l.elements),
        static_cast<Index>(l.steps), l.trace);
  };
  return {launch, reinterpret_cast<const void*>(&elementwise_kernel<T, Vector, Unroll, Op, Index, Traced, Strided>)};
}

// Picks the instantiation for the problem's run-time choices, one template argument at a time.
struct Choice {
  ElementwiseOp op;
  int vector;
  int unroll;
  bool wide_index;
  bool traced;
  bool strided; // the persistent form
};

// Traced instantiations exist for fp32 in 16-byte vectors only (the vector-add benchmark's).
template <typename T, int Vector, int Unroll, ElementwiseOp Op, typename Index>
KernelEntry entry_for_trace(const Choice& c) {
  if (!c.traced)
    return c.strided ? entry<T, Vector, Unroll, Op, Index, false, true>() : entry<T, Vector, Unroll, Op, Index, false, false>();
  if constexpr (std::is_same_v<T, float> && Vector == 4)
    return c.strided ? entry<T, Vector, Unroll, Op, Index, true, true>() : entry<T, Vector, Unroll, Op, Index, true, false>();
  return {};
}

template <typename T, int Vector, int Unroll, ElementwiseOp Op> KernelEntry entry_for_index(const Choice& c) {
  return c.wide_index ? entry_for_trace<T, Vector, Unroll, Op, std::int64_t>(c)
                      : entry_for_trace<T, Vector, Unroll, Op, std::int32_t>(c);
}

template <typename T, int Vector, int Unroll> KernelEntry entry_for_op(const Choice& c) {
  switch (c.op) {
  case ElementwiseOp::add: return entry_for_index<T, Vector, Unroll, ElementwiseOp::add>(c);
  case ElementwiseOp::mul: return entry_for_index<T, Vector, Unroll, ElementwiseOp::mul>(c);
  case ElementwiseOp::relu: return entry_for_index<T, Vector, Unroll, ElementwiseOp::relu>(c);
  case ElementwiseOp::gelu: return entry_for_index<T, Vector, Unroll, ElementwiseOp::gelu>(c);
  }
  return {};
}

template <typename T, int Vector> KernelEntry entry_for_unroll(const Choice& c) {
  switch (c.unroll) {
  case 1: return entry_for_op<T, Vector, 1>(c);
  case 2: return entry_for_op<T, Vector, 2>(c);
  case 4: return entry_for_op<T, Vector, 4>(c);
  }
  return {};
}

template <typename T> KernelEntry entry_for_vector(const Choice& c) {
  switch (c.vector) {
  case 1: return entry_for_unroll<T, 1>(c);
  case 2: return entry_for_unroll<T, 2>(c);
  case 4: return entry_for_unroll<T, 4>(c);
  case 8:
    if constexpr (sizeof(T) <= 2) return entry_for_unroll<T, 8>(c);
    break;
  }
  return {};
}

std::int64_t step_elements(const ElementwiseProblem& p) {
  return static_cast<std::int64_t>(p.block) * p.vector * p.unroll;
}

KernelEntry find_kernel(const ElementwiseProblem& p, bool traced) {
  // 32-bit indices while every index the kernel forms (up to the last step's end) fits.
  const bool wide = p.elements + step_elements(p) > std::numeric_limits<std::int32_t>::max();
  const Choice c{p.op, p.vector, p.unroll, wide, traced, p.persistent};
  switch (p.dtype) {
  case Dtype::fp32: return entry_for_vector<float>(c);
  case Dtype::bf16: return entry_for_vector<__nv_bfloat16>(c);
  case Dtype::fp16: return entry_for_vector<__half>(c);
  default: return {};
  }
}

int element_bytes(Dtype dtype) { return dtype == Dtype::fp32 ? 4 : 2; }
const char* dtype_name(Dtype dtype) { return dtype == Dtype::fp32 ? "fp32" : dtype == Dtype::bf16 ? "bf16" : "fp16"; }

} // namespace

std::string elementwise_unsupported_reason(const ElementwiseProblem& p) {
  if (p.dtype != Dtype::fp32 && p.dtype != Dtype::bf16 && p.dtype != Dtype::fp16)
    return "dtype " + std::to_string(static_cast<int>(p.dtype)) + " is not supported; use fp32, bf16 or fp16";
  if (p.elements < 1) return "elements = " + std::to_string(p.elements) + " must be >= 1";
  if (p.block < 32 || p.block > 1024 || (p.block & (p.block - 1)) != 0)
    return "block = " + std::to_string(p.block) + " must be a power of two from 32 to 1024";
  const int max_vector = 16 / element_bytes(p.dtype);
  if (p.vector < 1 || p.vector > max_vector || (p.vector & (p.vector - 1)) != 0)
    return "vector = " + std::to_string(p.vector) + " must be a power of two up to " + std::to_string(max_vector) +
           " (16 bytes of " + dtype_name(p.dtype) + ")";
  if (p.unroll != 1 && p.unroll != 2 && p.unroll != 4)
    return "unroll = " + std::to_string(p.unroll) + " must be 1, 2 or 4";
  const std::int64_t steps = (p.elements + step_elements(p) - 1) / step_elements(p);
  if (!p.persistent && steps > std::numeric_limits<int>::max())
    return "elements = " + std::to_string(p.elements) + " needs " + std::to_string(steps) +
           " CTAs, more than a grid holds; use the persistent form or a larger block or vector";
  return {};
}

Elementwise::Elementwise(const ElementwiseProblem& problem, const void* x, const void* y, void* out, int sm_count)
    : problem_(problem), x_(x), y_(y), out_(out) {
  if (problem.launcher_shape) {
    int device = 0, threads = 0;
    check_cuda(cudaGetDevice(&device), "cudaGetDevice");
    check_cuda(cudaDeviceGetAttribute(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, device),
               "cudaDeviceGetAttribute(cudaDevAttrMaxThreadsPerMultiProcessor)");
    const ElementwiseLaunchShape shape = elementwise_launch_shape(problem.elements, problem.dtype, problem.vector,
                                                                  problem.persistent, sm_count, threads);
    problem_.block = shape.block;
    problem_.unroll = shape.unroll;
  }
  const std::string reason = elementwise_unsupported_reason(problem_);
  if (!reason.empty()) throw KernelError("ElementwiseProblem: " + reason);
  const bool binary = is_binary(problem_.op);
  if (x == nullptr || out == nullptr || (binary && y == nullptr))
    throw KernelError("ElementwiseProblem: x, out (and y for add and mul) must be device pointers, got a null");
  const std::uintptr_t alignment = static_cast<std::uintptr_t>(problem_.vector) * element_bytes(problem_.dtype);
  for (const void* p : {x, binary ? y : x, static_cast<const void*>(out)})
    if (reinterpret_cast<std::uintptr_t>(p) % alignment != 0)
      throw KernelError("ElementwiseProblem: buffers must be aligned to vector * element bytes = " +
                        std::to_string(alignment) + "; use a smaller vector or aligned buffers");
  if (sm_count < 1) throw KernelError("ElementwiseProblem: sm_count = " + std::to_string(sm_count) + " must be >= 1");
  steps_ = (problem_.elements + step_elements(problem_) - 1) / step_elements(problem_);
  if (problem_.persistent) {
    int resident = 0;
    check_cuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, find_kernel(problem_, false).function,
                                                             problem_.block, 0),
               "cudaOccupancyMaxActiveBlocksPerMultiprocessor(elementwise_kernel)");
    grid_ = static_cast<int>(std::min<std::int64_t>(steps_, static_cast<std::int64_t>(sm_count) * std::max(resident, 1)));
  } else {
    grid_ = static_cast<int>(steps_);
  }
}

void Elementwise::run(cudaStream_t stream) const {
  const Launch l{x_, y_, out_, problem_.elements, steps_, grid_, problem_.block, nullptr};
  find_kernel(problem_, false).launch(l, stream);
  check_cuda(cudaGetLastError(), "elementwise_kernel launch");
}

void Elementwise::run_traced(cudaStream_t stream, CtaTrace* trace) const {
  const KernelEntry kernel = find_kernel(problem_, true);
  if (kernel.launch == nullptr) throw KernelError("ElementwiseProblem: traced runs take fp32 in vectors of 4");
  const Launch l{x_, y_, out_, problem_.elements, steps_, grid_, problem_.block, trace};
  kernel.launch(l, stream);
  check_cuda(cudaGetLastError(), "elementwise_kernel launch (traced)");
}

} // namespace tilesim::kernels
