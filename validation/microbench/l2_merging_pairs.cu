// Which second reads does the L2 serve without a tag lookup? l2_request_merging.cu showed that
// it skips lookups when many SMs read the same boxes one behind another, but not among small
// lockstep groups. This probe takes two SMs at a time, on an otherwise idle GPU: a leader walks
// the 8 MB region of 16 KB TMA boxes (the kernels' tensor map, 256-byte L2 promotion), and a
// follower walks the same boxes starting `delay_ns` later, one box in flight each. Varying the
// follower's SM (same TPC, same GPC, same partition, across; sm_gpc_map.cu says which) and the
// delay (0.25-64 us) separates distance from time; a launch with the leader alone gives the
// lookups without a follower.
// Output: one JSON object on stdout listing the launches in order (the ncu rows follow it).
#include "merging_probe_region.cuh"

#include <cstdint>
#include <cstdio>
#include <vector>

namespace {

constexpr const char* kProgram = "l2_merging_pairs";
namespace ptx = tilesim::kernels::ptx;
using microbench::kProbeBoxBytes;

constexpr int kBoxes = 512; // 8 MB
using microbench::kFollower;
using microbench::kIdle;

// One CTA per SM (its shared memory says so); `role_of_sm` picks who walks. All CTAs meet at a
// start line first, so the delay counts from a common moment.
__global__ void pair_walk(const __grid_constant__ CUtensorMap map, const int8_t* role_of_sm, long long delay_ns,
                          unsigned* arrived, unsigned* sink) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t full;
  uint8_t* box = microbench::aligned_1024(smem_raw);
  if (threadIdx.x != 0) return;
  const microbench::PairRole role = microbench::start_pair_walker(&map, &full, role_of_sm, arrived);
  if (role == kIdle) return;
  if (role == kFollower) {
    const uint64_t start = ptx::global_timer_ns();
    while (ptx::global_timer_ns() - start < static_cast<uint64_t>(delay_ns)) {
    }
  }
  for (int j = 0; j < kBoxes; ++j) {
    ptx::mbarrier_arrive_expect_tx(&full, kProbeBoxBytes);
    microbench::load_probe_box(&map, box, j, &full);
    ptx::mbarrier_wait(&full, j & 1);
  }
  if (box[threadIdx.x] == 0x5b) atomicAdd(sink, 1u); // keeps the loads observable
}

} // namespace

int main() {
  const cudaDeviceProp prop = microbench::first_device(kProgram);
  const int sms = prop.multiProcessorCount;
  const microbench::ProbeRegion region(prop, kProgram);
  int8_t* roles = nullptr;
  CHECK_CUDA(cudaMalloc(&roles, sms));
  const int smem = kProbeBoxBytes + 1024;
  CHECK_CUDA(cudaFuncSetAttribute(pair_walk, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));

  std::vector<microbench::PairLaunch> launches{{0, -1, 0}};
  for (int follower = 1; follower < 18; ++follower) launches.push_back({0, follower, 1000});
  for (const int follower : {32, 33, 48, 49, 64, 65, 80, 81, 96, 97, 112, 113, 120, 121, 122, 123, 124, 131})
    launches.push_back({0, follower, 1000});
  for (const int follower : {3, 4, 8, 18, 19, 34, 35, 66, 67, 82, 98, 114, 126})
    launches.push_back({2, follower, 1000});
  // SMs 120-123 join no cluster of 16 (sm_gpc_map.cu): which GPC's reads are merged with theirs?
  for (const int leader : {120, 122})
    for (const int follower : {leader + 1, 0, 2, 4, 6, 8, 10, 12, 14}) launches.push_back({leader, follower, 1000});
  for (const int follower : {1, 16})
    for (const long long delay : {0LL, 250LL, 500LL, 2000LL, 4000LL, 8000LL, 16000LL, 64000LL})
      launches.push_back({0, follower, delay});
  const long long box_sectors = kProbeBoxBytes / 32;
  std::printf("{\n \"gpu\": \"%s\", \"sms\": %d, \"box_bytes\": %d, \"boxes\": %d, \"in_flight\": 1,\n \"launches\": [", prop.name,
              sms, kProbeBoxBytes, kBoxes);
  for (size_t i = 0; i < launches.size(); ++i) {
    const microbench::PairLaunch& l = launches[i];
    microbench::upload_pair_roles(roles, sms, l, kProgram);
    region.prepare_walk(sms, kProgram);
    pair_walk<<<sms, 32, smem>>>(region.map, roles, l.delay_ns, region.arrived, region.sink);
    CHECK_CUDA(cudaGetLastError());
    CHECK_CUDA(cudaDeviceSynchronize());
    std::printf("%s\n  {\"leader_sm\": %d, \"follower_sm\": %d, \"delay_ns\": %lld, \"requested_sectors\": %lld}", i ? "," : "",
                l.leader, l.follower, l.delay_ns, (l.follower >= 0 ? 2 : 1) * kBoxes * box_sectors);
  }
  std::printf("\n ]\n}\n");
  return 0;
}
