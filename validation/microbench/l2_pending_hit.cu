// When a second SM asks the L2 for a line whose fill from DRAM is still on its way, when does its
// data arrive: at the L2's hit latency, with the first request's fill, or after a fetch of its
// own? On an otherwise idle GPU with a cold L2, a leader SM loads 16 KB TMA boxes (the kernels'
// tensor map, 256-byte L2 promotion) one at a time on a fixed timetable, and a follower SM loads
// each same box `delay_ns` after the leader's issue. Both record, per box, the %globaltimer at
// issue and the latency to the box's landing in shared memory, in their own SM cycles (clock64)
// and in ns. The follower sits in another GPC than the leader, so that the GPC's request coalescer
// cannot merge its reads (l2_merging_pairs.cu), in the leader's L2 partition or the other one; a
// follower of the leader's own TPC, whose reads are merged, is the third case.
// Output: one JSON object on stdout.
#include "merging_probe_region.cuh"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr const char* kProgram = "l2_pending_hit";
namespace ptx = tilesim::kernels::ptx;
using microbench::kProbeBoxBytes;

constexpr int kBoxes = 32;
constexpr long long kSlotNs = 8000; // far longer than a box's DRAM latency: boxes never overlap
constexpr long long kLeadInNs = 20000;
using microbench::kFollower;
using microbench::kIdle;
using microbench::kLeader;

struct BoxTimes {
  unsigned long long issue_ns;
  unsigned latency_ns;
  unsigned latency_cycles;
};

__device__ void wait_until(uint64_t t) {
  while (ptx::global_timer_ns() < t) {
  }
}

// One CTA per SM (its shared memory says so). The leader sets the timetable's origin once every
// CTA has reached the start line; box j is loaded at origin + j * kSlotNs (+ delay_ns by the
// follower). `times` holds kBoxes entries for the leader, then kBoxes for the follower.
__global__ void timed_pair(const __grid_constant__ CUtensorMap map, const int8_t* role_of_sm, long long delay_ns,
                           unsigned* arrived, unsigned long long* origin, BoxTimes* times, unsigned* sink) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t full;
  uint8_t* box = microbench::aligned_1024(smem_raw);
  if (threadIdx.x != 0) return;
  const microbench::PairRole role = microbench::start_pair_walker(&map, &full, role_of_sm, arrived);
  if (role == kIdle) return;
  volatile unsigned long long* shared_origin = origin;
  if (role == kLeader) *shared_origin = ptx::global_timer_ns() + kLeadInNs;
  while (*shared_origin == 0) {
  }
  const uint64_t start = *shared_origin + (role == kFollower ? delay_ns : 0);
  BoxTimes* mine = times + (role == kFollower ? kBoxes : 0);
  for (int j = 0; j < kBoxes; ++j) {
    wait_until(start + static_cast<uint64_t>(j) * kSlotNs);
    const uint64_t issue_ns = ptx::global_timer_ns();
    const long long issue_cycles = clock64();
    ptx::mbarrier_arrive_expect_tx(&full, kProbeBoxBytes);
    microbench::load_probe_box(&map, box, j, &full);
    ptx::mbarrier_wait(&full, j & 1);
    const long long land_cycles = clock64();
    mine[j] = {issue_ns, static_cast<unsigned>(ptx::global_timer_ns() - issue_ns),
               static_cast<unsigned>(land_cycles - issue_cycles)};
  }
  if (box[threadIdx.x] == 0x5b) atomicAdd(sink, 1u); // keeps the loads observable
}

void print_times(const char* name, const BoxTimes* t) {
  std::printf("\"%s_issue_ns\": [", name);
  for (int j = 0; j < kBoxes; ++j) std::printf("%s%llu", j ? ", " : "", t[j].issue_ns);
  std::printf("], \"%s_latency_ns\": [", name);
  for (int j = 0; j < kBoxes; ++j) std::printf("%s%u", j ? ", " : "", t[j].latency_ns);
  std::printf("], \"%s_latency_cycles\": [", name);
  for (int j = 0; j < kBoxes; ++j) std::printf("%s%u", j ? ", " : "", t[j].latency_cycles);
  std::printf("]");
}

} // namespace

int main() {
  const cudaDeviceProp prop = microbench::first_device(kProgram);
  const int sms = prop.multiProcessorCount;
  const microbench::ProbeRegion region(prop, kProgram);
  int8_t* roles = nullptr;
  unsigned long long* origin = nullptr;
  BoxTimes* times = nullptr;
  CHECK_CUDA(cudaMalloc(&roles, sms));
  CHECK_CUDA(cudaMalloc(&origin, sizeof(unsigned long long)));
  CHECK_CUDA(cudaMalloc(&times, 2 * kBoxes * sizeof(BoxTimes)));
  const int smem = kProbeBoxBytes + 1024;
  CHECK_CUDA(cudaFuncSetAttribute(timed_pair, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));

  // SM 0 is in GPC 0 and L2 partition 0; SM 8 in GPC 4, partition 0; SM 2 in GPC 1, partition 1;
  // SM 1 shares SM 0's TPC (models/gpus/h100_sxm.json, sm.gpc and l2.sm_partition).
  std::vector<microbench::PairLaunch> launches{{0, -1, 0}};
  for (const int follower : {8, 2, 1})
    for (const long long delay : {0LL, 100LL, 200LL, 300LL, 400LL, 500LL, 600LL, 800LL, 1000LL, 1500LL, 3000LL})
      launches.push_back({0, follower, delay});
  std::printf("{\n \"gpu\": \"%s\", \"sms\": %d, \"box_bytes\": %d, \"boxes\": %d, \"slot_ns\": %lld,\n \"launches\": [", prop.name,
              sms, kProbeBoxBytes, kBoxes, kSlotNs);
  std::vector<BoxTimes> host(2 * kBoxes);
  for (size_t i = 0; i < launches.size(); ++i) {
    const microbench::PairLaunch& l = launches[i];
    microbench::upload_pair_roles(roles, sms, l, kProgram);
    CHECK_CUDA(cudaMemset(origin, 0, sizeof(unsigned long long)));
    CHECK_CUDA(cudaMemset(times, 0, 2 * kBoxes * sizeof(BoxTimes)));
    region.prepare_walk(sms, kProgram);
    timed_pair<<<sms, 32, smem>>>(region.map, roles, l.delay_ns, region.arrived, origin, times, region.sink);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    CHECK_CUDA(cudaMemcpy(host.data(), times, host.size() * sizeof(BoxTimes), cudaMemcpyDeviceToHost));
    std::printf("%s\n  {\"leader_sm\": %d, \"follower_sm\": %d, \"delay_ns\": %lld, ", i ? "," : "", l.leader, l.follower,
                l.delay_ns);
    print_times("leader", host.data());
    if (l.follower >= 0) {
      std::printf(", ");
      print_times("follower", host.data() + kBoxes);
    }
    std::printf("}");
  }
  std::printf("\n ]\n}\n");
  return 0;
}
