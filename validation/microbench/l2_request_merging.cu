// Does the L2 look a line up once per request, or once for requests that arrive together?
// The GEMMs say it may skip some: on dense 4096^3 persistent row_major the SMs request 41.9 M
// sectors by TMA (l1tex__m_xbar2l1tex_read_sectors_..._tma_ld, multicast counted once) while the L2
// counts 34.6 M read lookups from them (lts__t_sectors_srcunit_tex_op_read), although the 256-byte
// promotion adds lookups (data/h100/microbench/l2_counter_by_order.csv).
//
// Probe: every SM (one CTA each, released together by a grid-wide start flag) walks the same
// 8 MB region of 16 KB boxes (2-D TMA loads, 128 rows x 64 bf16, the kernels' own tensor map with
// its 256-byte L2 promotion), `in_flight` boxes in flight as the GEMM producer keeps its stages.
// CTA c loads box (i + c * lag) mod boxes at step i, so
//  - CTAs c and c + boxes / lag (when that divides) load the same box at the same step: lag 0 puts
//    all 132 in lockstep, lag 8 pairs, 16 fours, 32 eights, 64 sixteens, 128 thirty-threes;
//  - CTA c asks for a box `lag` steps after CTA c + 1 did (lags 1-6: a box takes an SM ~0.3 us
//    at the L2's rate, so the second request comes while the first may still be in flight).
// Every launch requests the same sectors; run under ncu (run_l2_request_merging.sh), the L2's
// lookups per requested sector show which requests are merged. The L2 is flushed before each.
// Output: one JSON object on stdout listing the launches in order (the ncu rows follow it).
#include "merging_probe_region.cuh"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr const char* kProgram = "l2_request_merging";
namespace ptx = tilesim::kernels::ptx;
using microbench::kProbeBoxBytes;

constexpr int kMaxInFlight = 8;

__global__ void shared_walk(const __grid_constant__ CUtensorMap map, int boxes, int steps, int lag, int in_flight,
                            unsigned* arrived, unsigned* sink) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t full[kMaxInFlight];
  uint8_t* ring = microbench::aligned_1024(smem_raw);
  if (threadIdx.x != 0) return;
  for (int s = 0; s < in_flight; ++s) ptx::mbarrier_init(&full[s], 1);
  ptx::fence_barrier_init();
  ptx::prefetch_tensor_map(&map);
  microbench::wait_at_start_line(arrived);
  const int first = static_cast<int>((static_cast<long long>(blockIdx.x) * lag) % boxes);
  for (int i = 0; i < steps + in_flight; ++i) {
    const int s = i % in_flight;
    if (i >= in_flight) ptx::mbarrier_wait(&full[s], ((i / in_flight) - 1) & 1);
    if (i < steps) {
      ptx::mbarrier_arrive_expect_tx(&full[s], kProbeBoxBytes);
      microbench::load_probe_box(&map, ring + s * kProbeBoxBytes, (first + i) % boxes, &full[s]);
    }
  }
  if (ring[threadIdx.x] == 0x5b) atomicAdd(sink, 1u); // keeps the loads observable
}

} // namespace

int main() {
  const cudaDeviceProp prop = microbench::first_device(kProgram);
  const int sms = prop.multiProcessorCount;
  const microbench::ProbeRegion region(prop, kProgram);
  const int smem = kMaxInFlight * kProbeBoxBytes + 1024;
  CHECK_CUDA(cudaFuncSetAttribute(shared_walk, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));

  // 8 MB region (512 boxes): fits one L2 partition's half of the 50 MB either way.
  const int boxes = 512;
  const int steps = boxes; // each CTA reads the whole region once
  struct Launch {
    int lag, in_flight;
  };
  std::vector<Launch> launches;
  for (const int lag : {0, 8, 16, 32, 64, 128}) launches.push_back({lag, 4}); // lockstep groups
  for (const int in_flight : {1, 2, 4, 8})                                     // one CTA behind the next
    for (const int lag : {1, 2, 3, 4, 6, 12}) launches.push_back({lag, in_flight});
  std::printf("{\n \"gpu\": \"%s\", \"sms\": %d, \"box_bytes\": %d, \"boxes\": %d, \"steps_per_cta\": %d,\n"
              " \"requested_sectors_per_launch\": %lld,\n \"launches\": [",
              prop.name, sms, kProbeBoxBytes, boxes, steps, static_cast<long long>(sms) * steps * (kProbeBoxBytes / 32));
  for (size_t i = 0; i < launches.size(); ++i) {
    region.prepare_walk(sms, kProgram);
    shared_walk<<<sms, 32, smem>>>(region.map, boxes, steps, launches[i].lag, launches[i].in_flight, region.arrived, region.sink);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    std::printf("%s\n  {\"lag_boxes\": %d, \"in_flight\": %d}", i ? "," : "", launches[i].lag, launches[i].in_flight);
  }
  std::printf("\n ]\n}\n");
  return 0;
}
