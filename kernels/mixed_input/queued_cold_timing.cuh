// Times one GPU call as the GPU runs it: from a cold L2 and with the call already queued when the
// start event fires, so the host's launch latency (~5-7 us a call at decode sizes, on both sides
// of a 28 us kernel) stays out of the figure.
//
// Events recorded around a call on an idle stream also time the host: the start event fires at
// once, then the GPU waits for the launch to arrive. Here a "lead" kernel goes first: it reads a
// buffer twice the L2's size (the dataset's cold start: every candidate reads its weights from
// DRAM, the int8 ones as well as cuBLAS's bf16 ones), and one thread keeps it running for
// `hold_ns` from its start, by which time the host has enqueued the start event, the call and the
// stop event behind it. What remains in the figure is the GPU's gap between two kernels of a
// stream, the same for every candidate. Each timing reports whether the call really was queued:
// the start event must still be pending when the call's launch returns.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <functional>

#include "kernels/common/check_kernels.cuh"
#include "kernels/common/ptx_wrappers.cuh"

namespace tilesim::kernels::testing {

__global__ void lead_kernel(const int4* data, std::size_t count, int* sink, uint64_t hold_ns) {
  const uint64_t start = ptx::global_timer_ns();
  int acc = 0;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x) {
    const int4 v = data[i];
    acc ^= v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x7fffffff) *sink = acc; // keeps the loads; practically never stores
  if (blockIdx.x == 0 && threadIdx.x == 0)
    while (ptx::global_timer_ns() - start < hold_ns) {
    }
}

struct QueuedTime {
  float ms;
  bool queued; // the start event had not fired when the call's launch returned
};

class QueuedColdTimer {
public:
  // hold_ns: how long the lead kernel runs at least; it must exceed the host's time to enqueue the
  // start event and the call (cuBLAS's heuristics included), which `queued` checks every time.
  QueuedColdTimer(int device, uint64_t hold_ns) : hold_ns_(hold_ns) {
    int l2_bytes = 0;
    check(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device), "cudaDeviceGetAttribute(L2 size)");
    count_ = 2 * std::size_t(l2_bytes) / sizeof(int4);
    check(cudaMalloc(&scratch_, count_ * sizeof(int4)), "cudaMalloc(L2 flush buffer)");
    check(cudaMalloc(&sink_, sizeof(int)), "cudaMalloc(L2 flush sink)");
    check(cudaMemset(scratch_, 0x5a, count_ * sizeof(int4)), "cudaMemset(L2 flush buffer)");
    check(cudaEventCreate(&start_), "cudaEventCreate");
    check(cudaEventCreate(&stop_), "cudaEventCreate");
  }
  ~QueuedColdTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
    cudaFree(scratch_);
    cudaFree(sink_);
  }
  QueuedColdTimer(const QueuedColdTimer&) = delete;
  QueuedColdTimer& operator=(const QueuedColdTimer&) = delete;

  // `call` launches on the default stream, as every candidate of the bench does.
  QueuedTime time(const std::function<void()>& call) const {
    lead_kernel<<<1024, 256>>>(scratch_, count_, sink_, hold_ns_);
    check(cudaGetLastError(), "lead_kernel launch");
    check(cudaEventRecord(start_), "cudaEventRecord");
    call();
    const cudaError_t pending = cudaEventQuery(start_);
    if (pending == cudaErrorNotReady)
      (void)cudaGetLastError(); // the answer hoped for, not an error for the next launch check to find
    else
      check(pending, "cudaEventQuery");
    check(cudaEventRecord(stop_), "cudaEventRecord");
    check(cudaEventSynchronize(stop_), "cudaEventSynchronize");
    QueuedTime t{0.0f, pending == cudaErrorNotReady};
    check(cudaEventElapsedTime(&t.ms, start_, stop_), "cudaEventElapsedTime");
    return t;
  }

private:
  uint64_t hold_ns_;
  std::size_t count_ = 0;
  int4* scratch_ = nullptr;
  int* sink_ = nullptr;
  cudaEvent_t start_{}, stop_{};
};

} // namespace tilesim::kernels::testing
