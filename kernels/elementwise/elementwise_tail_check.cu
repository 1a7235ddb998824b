// elementwise_tail_check: the element-wise kernel's step (elementwise_step, the same
// __host__ __device__ code the kernel runs) on the CPU, no GPU needed. For every size from 1 to
// three steps and a few odd sizes around 1M, every thread of every step of the grid form runs its
// step into an output poisoned with NaN and followed by a guard of NaNs; each element must be
// written with x + y (fp32; bf16 rounded once) and the guard left alone. Shapes: 1, 2 and 4
// vectors of 1, 2 and 4 fp32 and of 8 bf16, blocks of 32 and 64. Reads past the end are
// compute-sanitizer's to find (elementwise_check under memcheck, on a GPU). Exit 0 pass, 1 fail.
#include <cmath>
#include <cstdio>
#include <cstring>
#include <vector>

#include "kernels/elementwise/elementwise_kernel.cuh"

namespace tk = tilesim::kernels;
using tilesim::ElementwiseOp;

namespace {

constexpr int kGuard = 64;

float value_of(float v) { return v; }
float value_of(__nv_bfloat16 v) { return __bfloat162float(v); }

// Runs every thread of every step over n elements; returns the first wrong element or guard index,
// or -1.
template <typename T, int Vector, int Unroll> long long first_fault(int block, int n) {
  std::vector<T> x(n + kGuard), y(n + kGuard), out(n + kGuard);
  for (int i = 0; i < n + kGuard; ++i) {
    x[i] = tk::from_float<T>(static_cast<float>(i % 251) * 0.25f);
    y[i] = tk::from_float<T>(static_cast<float>(i % 13) - 6.0f);
    out[i] = tk::from_float<T>(NAN);
  }
  const int stride = block * Vector;
  const int steps = (n + stride * Unroll - 1) / (stride * Unroll);
  for (int step = 0; step < steps; ++step)
    for (int thread = 0; thread < block; ++thread)
      tk::elementwise_step<T, Vector, Unroll, ElementwiseOp::add, int>(x.data(), y.data(), out.data(), n, step, thread,
                                                                       stride);
  for (int i = 0; i < n; ++i) {
    const T want = tk::from_float<T>(value_of(x[i]) + value_of(y[i]));
    if (std::memcmp(&out[i], &want, sizeof(T)) != 0) return i;
  }
  for (int i = n; i < n + kGuard; ++i)
    if (!std::isnan(value_of(out[i]))) return i;
  return -1;
}

template <typename T, int Vector, int Unroll> int check_shape(const char* dtype) {
  int failures = 0;
  std::vector<int> sizes;
  for (int block : {32, 64}) {
    sizes.clear();
    for (int n = 1; n <= 3 * block * Vector * Unroll + 1; ++n) sizes.push_back(n);
    for (int n : {999999, 1000001, 1000002, 1000003, 1048575}) sizes.push_back(n);
    for (int n : sizes) {
      const long long fault = first_fault<T, Vector, Unroll>(block, n);
      if (fault >= 0) {
        std::printf("FAIL %s block=%d vector=%d unroll=%d n=%d: element %lld %s\n", dtype, block, Vector, Unroll, n,
                    fault, fault < n ? "is wrong or unwritten" : "(past the end) was written");
        ++failures;
      }
    }
  }
  return failures;
}

} // namespace

int main() {
  int failures = 0;
  failures += check_shape<float, 1, 1>("fp32") + check_shape<float, 1, 4>("fp32");
  failures += check_shape<float, 2, 2>("fp32") + check_shape<float, 4, 1>("fp32");
  failures += check_shape<float, 4, 2>("fp32") + check_shape<float, 4, 4>("fp32");
  failures += check_shape<__nv_bfloat16, 8, 1>("bf16") + check_shape<__nv_bfloat16, 8, 4>("bf16");
  std::printf(failures == 0 ? "elementwise tail: every shape and size exact\n" : "%d shapes and sizes failed\n",
              failures);
  return failures == 0 ? 0 : 1;
}
