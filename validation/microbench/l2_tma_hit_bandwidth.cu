// How fast does the L2 feed TMA box loads that hit in it, and what limits that rate: the whole
// L2, each partition, each GPC's port, or each SM? (issue 16, validation/NOTES.md.) The grouped
// GEMM's 128x128 persistent K step takes ~598 SM cycles on an H100 where its wgmma takes 512, and
// the traces put the GPCs of 18 SMs behind those of 16; the profile's single L2 bandwidth came
// from 1-D bulk copies (bulk_copy_bandwidth.cu), which reached 12.4 TB/s over a 4 MiB footprint
// and 7.7 TB/s from 16 MiB up.
//
// One CTA per SM (its shared memory says so), one thread issuing the GEMM's boxes (64 bf16 columns
// of 128 bytes, 128B swizzle, 256-byte L2 promotion, rows 16384 bytes apart as an A operand with
// K = 8192) into a ring of stages, as fast as they land: no consumer. The footprint is read once
// before each timed run, so every box hits. The SMs taking part are chosen by GPC and L2
// partition (the profile's measured maps, passed on the command line); a taking part CTA starts
// its walk `footprint / active` boxes after the previous one's, ranks interleaved over the GPCs,
// so no two SMs of one GPC read a line within thousands of lines of each other and the GPC's
// request coalescer merges nothing. In the cluster configurations the CTAs of a pair also load a
// shared box, each half of it multicast to both, as the GEMM loads its B tile.
//
// Every CTA records its start, end (%globaltimer) and SM cycles; printed per SM, with the bytes it
// received, and summed by GPC and partition. Output: one JSON object on stdout.
// Usage: l2_tma_hit_bandwidth GPC_OF_SM PARTITION_OF_SM (comma-separated, one entry per SM).
#include "check_cuda.cuh"
#include "kernels/common/ptx_wrappers.cuh"
#include "kernels/common/tensor_maps.h"

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace {

namespace ptx = tilesim::kernels::ptx;
constexpr const char* kProgram = "l2_tma_hit_bandwidth";
constexpr int kCols = 8192;            // bf16 columns: a 16384-byte row stride, the dense GEMMs' A at K = 8192
constexpr int kBoxCols = 64;           // 128 bytes: one 128B swizzle span
constexpr int kBoxesPerBand = kCols / kBoxCols;
constexpr int kMaxStages = 16;
constexpr int kSteps = 1024;           // boxes each CTA loads per timed run
constexpr int kRepeats = 5;
constexpr long long kMatrixBytes = 64LL << 20;
constexpr uint64_t kWaitLimitNs = 1000000000ULL; // a box lands within microseconds: 1 s means a hang
constexpr long long kWaitLimitCycles = 2000000000LL; // about 1 s

struct Walk {
  int own_rows;    // rows of the CTA's own box
  int shared_rows; // rows of the pair's shared box each CTA multicasts (0: no cluster)
  int stages;
  long long boxes; // boxes of own_rows in the footprint
  bool timer_watchdog;
};

struct CtaRecord {
  unsigned long long start_ns, end_ns, cycles;
  int sm, hung;
};

// The watchdog counts SM cycles, read only once a box has not landed yet. `timer_watchdog` reads
// %globaltimer in every wait instead, as tma_box_stream_bandwidth.cu does, to show whether that
// older form caps its walk (its L2-resident run landed one 32 KB box per ~565 ns on every SM).
__device__ bool wait_bounded(uint64_t* bar, uint32_t parity, bool timer_watchdog) {
  if (timer_watchdog) {
    const uint64_t deadline = ptx::global_timer_ns() + kWaitLimitNs;
    while (!ptx::mbarrier_try_wait(bar, parity))
      if (ptx::global_timer_ns() > deadline) return false;
    return true;
  }
  if (ptx::mbarrier_try_wait(bar, parity)) return true;
  const long long deadline = clock64() + kWaitLimitCycles;
  while (!ptx::mbarrier_try_wait(bar, parity))
    if (clock64() > deadline) return false;
  return true;
}

// Box `i` of the footprint as (column, row) coordinates: K-fastest, then the next band of rows.
__device__ int2 box_coords(long long i, int rows) {
  return make_int2(static_cast<int>(i % kBoxesPerBand) * kBoxCols, static_cast<int>(i / kBoxesPerBand) * rows);
}

// rank_of_sm[sm]: the CTA's place in the walk, -1 for an SM that sits out; `active` take part.
__global__ void __launch_bounds__(32, 1)
    hit_stream(const __grid_constant__ CUtensorMap own_map, const __grid_constant__ CUtensorMap half_map, Walk w,
               const int* rank_of_sm, int active, unsigned* arrived, CtaRecord* records) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ uint64_t full[kMaxStages], empty[kMaxStages];
  uint8_t* ring = smem_raw + ((1024 - (ptx::smem_addr(smem_raw) & 1023)) & 1023);
  const bool pair = w.shared_rows > 0;
  const uint32_t cta_in_pair = pair ? ptx::cluster_cta_rank() : 0;
  const int sm = static_cast<int>(ptx::sm_id());
  const int rank = rank_of_sm[sm];
  const int own_bytes = w.own_rows * kBoxCols * 2, half_bytes = w.shared_rows * kBoxCols * 2;
  const int stage_bytes = own_bytes + 2 * half_bytes;
  if (threadIdx.x == 0) {
    records[blockIdx.x].sm = sm; // where each blockIdx ran: the pairs' ranks come from it
    for (int s = 0; s < w.stages; ++s) {
      ptx::mbarrier_init(&full[s], 1);
      ptx::mbarrier_init(&empty[s], 2); // both CTAs of a pair released the stage
    }
    ptx::fence_barrier_init();
  }
  __syncwarp();
  if (pair) { // the partner's barriers exist before anything lands in or arrives on them
    ptx::cluster_arrive();
    ptx::cluster_wait();
  }
  if (threadIdx.x == 0 && rank >= 0) {
    ptx::prefetch_tensor_map(&own_map);
    if (pair) ptx::prefetch_tensor_map(&half_map);
    atomicAdd(arrived, 1u); // all CTAs are resident: start together
    while (atomicAdd(arrived, 0u) < static_cast<unsigned>(active)) {
    }
    const uint32_t partner_empty = pair ? ptx::map_to_cluster_rank(&empty[0], cta_in_pair ^ 1u) : 0;
    const long long own_start = rank * w.boxes / active;
    // The pair's shared box walks from the other half of the footprint, from the pair's first rank.
    const long long shared_boxes = w.boxes * w.own_rows / (2 * w.shared_rows > 0 ? 2 * w.shared_rows : 1);
    long long own_box = own_start;
    long long shared_box = pair ? ((rank - static_cast<long long>(cta_in_pair)) * w.boxes / active + w.boxes / 2) % shared_boxes : 0;
    int hung = 0;
    const long long c0 = clock64();
    const uint64_t g0 = ptx::global_timer_ns();
    for (long long j = 0; j < kSteps + w.stages && !hung; ++j) {
      const int s = static_cast<int>(j % w.stages);
      if (j >= w.stages) {
        if (!wait_bounded(&full[s], ((j - w.stages) / w.stages) & 1, w.timer_watchdog)) hung = 1;
        if (pair) {
          ptx::mbarrier_arrive(&empty[s]);
          ptx::mbarrier_arrive_cluster(partner_empty + s * static_cast<uint32_t>(sizeof(uint64_t)));
        }
      }
      if (j >= kSteps || hung) continue;
      if (pair && j >= w.stages && !wait_bounded(&empty[s], ((j / w.stages) - 1) & 1, w.timer_watchdog)) {
        hung = 1;
        continue;
      }
      uint8_t* stage = ring + static_cast<long long>(s) * stage_bytes;
      ptx::mbarrier_arrive_expect_tx(&full[s], stage_bytes);
      const int2 own = box_coords(own_box, w.own_rows);
      if (++own_box == w.boxes) own_box = 0;
      ptx::tma_load_2d(stage, &own_map, own.x, own.y, &full[s]);
      if (pair) {
        // Box rows of 2 * shared_rows; this CTA loads its half and multicasts it to both.
        const int2 b = box_coords(shared_box, 2 * w.shared_rows);
        if (++shared_box == shared_boxes) shared_box = 0;
        ptx::tma_load_2d_multicast(stage + own_bytes + cta_in_pair * half_bytes, &half_map, b.x,
                                   b.y + static_cast<int>(cta_in_pair) * w.shared_rows, &full[s], 0x3);
      }
    }
    const uint64_t g1 = ptx::global_timer_ns();
    records[blockIdx.x] = {g0, g1, static_cast<unsigned long long>(clock64() - c0), sm, hung};
  }
  __syncwarp();
  if (pair) { // keep this CTA's shared memory alive until the partner stopped writing into it
    ptx::cluster_arrive();
    ptx::cluster_wait();
  }
}

std::vector<int> parse_list(const char* text) {
  std::vector<int> v;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) v.push_back(std::stoi(item));
  return v;
}

struct Config {
  std::string name, note;
  long long footprint_bytes;
  int own_rows, shared_rows, stages;
  std::vector<bool> takes_part; // per SM
  bool timer_watchdog = false;
};

struct Device {
  int sms = 0;
  std::vector<int> gpc, partition;
  uint8_t* matrix = nullptr;
  int* ranks = nullptr;
  unsigned* arrived = nullptr;
  CtaRecord* records = nullptr;
};

// Ranks interleaved over the GPCs: the i-th SM of each GPC in turn.
std::vector<int> ranks_of(const Config& c, const Device& d, int& active) {
  std::vector<int> rank(d.sms, -1);
  const int gpcs = *std::max_element(d.gpc.begin(), d.gpc.end()) + 1;
  std::vector<std::vector<int>> by_gpc(gpcs);
  for (int sm = 0; sm < d.sms; ++sm)
    if (c.takes_part[sm]) by_gpc[d.gpc[sm]].push_back(sm);
  active = 0;
  for (std::size_t i = 0;; ++i) {
    bool any = false;
    for (const auto& g : by_gpc)
      if (i < g.size()) rank[g[i]] = active++, any = true;
    if (!any) break;
  }
  return rank;
}

void launch(const Config& c, const Device& d, const CUtensorMap& own, const CUtensorMap& half, const Walk& w,
            int active, int smem) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(d.sms);
  config.blockDim = dim3(32);
  config.dynamicSmemBytes = smem;
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim = {c.shared_rows > 0 ? 2u : 1u, 1, 1};
  config.attrs = &cluster;
  config.numAttrs = c.shared_rows > 0 ? 1 : 0;
  CHECK_CUDA(cudaMemset(d.arrived, 0, sizeof(unsigned)));
  CHECK_CUDA(cudaLaunchKernelEx(&config, hit_stream, own, half, w, static_cast<const int*>(d.ranks), active, d.arrived,
                                d.records));
  CHECK_CUDA(cudaDeviceSynchronize());
}

void run(const Config& c, const Device& d, bool first) {
  int active = 0;
  std::vector<int> rank = ranks_of(c, d, active);
  if (c.shared_rows > 0) { // pairs: ranked by blockIdx (a pair's CTAs consecutive); every SM takes part
    for (int sm = 0; sm < d.sms; ++sm) rank[sm] = -1;
    active = d.sms;
  }
  const Walk w{c.own_rows, c.shared_rows, c.stages, c.footprint_bytes / (c.own_rows * kBoxCols * 2), c.timer_watchdog};
  const int stage_bytes = (c.own_rows + 2 * c.shared_rows) * kBoxCols * 2;
  const int smem = c.stages * stage_bytes + 1024;
  const uint64_t rows = static_cast<uint64_t>(c.footprint_bytes / (kCols * 2));
  const CUtensorMap own = tilesim::kernels::make_bf16_tensor_map_2d(d.matrix, rows, kCols, c.own_rows, kBoxCols);
  const CUtensorMap half = tilesim::kernels::make_bf16_tensor_map_2d(
      d.matrix, rows, kCols, static_cast<uint32_t>(std::max(c.shared_rows, 8)), kBoxCols);
  CHECK_CUDA(cudaFuncSetAttribute(hit_stream, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  if (c.shared_rows > 0) {
    // Which SM runs which blockIdx is known after a launch: rank the pairs by blockIdx (each pair's
    // two CTAs consecutive), from a first launch in which nobody loads.
    CHECK_CUDA(cudaMemcpy(d.ranks, rank.data(), d.sms * sizeof(int), cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemset(d.records, 0, d.sms * sizeof(CtaRecord)));
    launch(c, d, own, half, w, 0, smem);
    std::vector<CtaRecord> where(d.sms);
    CHECK_CUDA(cudaMemcpy(where.data(), d.records, d.sms * sizeof(CtaRecord), cudaMemcpyDeviceToHost));
    for (int b = 0; b < d.sms; ++b) rank[where[b].sm] = b;
  }
  CHECK_CUDA(cudaMemcpy(d.ranks, rank.data(), d.sms * sizeof(int), cudaMemcpyHostToDevice));
  std::printf("%s\n  {\"name\": \"%s\", \"note\": \"%s\", \"footprint_bytes\": %lld, \"own_box_rows\": %d, "
              "\"shared_box_rows_multicast_per_cta\": %d, \"stages\": %d, \"box_cols_bf16\": %d, \"row_stride_bytes\": %d, "
              "\"active_sms\": %d, \"steps_per_cta\": %d, \"timer_watchdog\": %s, \"repeats\": [",
              first ? "" : ",", c.name.c_str(), c.note.c_str(), c.footprint_bytes, c.own_rows, c.shared_rows, c.stages,
              kBoxCols, kCols * 2, active, kSteps, c.timer_watchdog ? "true" : "false");
  std::vector<CtaRecord> rec(d.sms);
  for (int rep = 0; rep < kRepeats; ++rep) {
    CHECK_CUDA(cudaMemset(d.records, 0, d.sms * sizeof(CtaRecord)));
    launch(c, d, own, half, w, active, smem); // warms the footprint: the timed run's boxes all hit
    CHECK_CUDA(cudaMemset(d.records, 0, d.sms * sizeof(CtaRecord)));
    launch(c, d, own, half, w, active, smem);
    CHECK_CUDA(cudaMemcpy(rec.data(), d.records, d.sms * sizeof(CtaRecord), cudaMemcpyDeviceToHost));
    unsigned long long first_ns = ~0ULL, last_ns = 0;
    int hung = 0;
    std::vector<double> sm_bytes_per_ns(d.sms, 0.0), sm_mhz(d.sms, 0.0);
    for (const CtaRecord& r : rec) {
      if (r.end_ns == 0) continue; // sat out
      hung += r.hung;
      first_ns = std::min(first_ns, r.start_ns);
      last_ns = std::max(last_ns, r.end_ns);
      const double ns = static_cast<double>(r.end_ns - r.start_ns);
      sm_bytes_per_ns[r.sm] = static_cast<double>(kSteps) * stage_bytes / ns;
      sm_mhz[r.sm] = static_cast<double>(r.cycles) / ns * 1e3;
    }
    const int gpcs = *std::max_element(d.gpc.begin(), d.gpc.end()) + 1;
    std::vector<double> by_gpc(gpcs, 0.0), by_partition(2, 0.0);
    double total = 0, mhz = 0;
    for (int sm = 0; sm < d.sms; ++sm) {
      by_gpc[d.gpc[sm]] += sm_bytes_per_ns[sm];
      by_partition[d.partition[sm] & 1] += sm_bytes_per_ns[sm];
      total += sm_bytes_per_ns[sm];
      mhz = std::max(mhz, sm_mhz[sm]);
    }
    const double elapsed = static_cast<double>(last_ns - first_ns);
    std::printf("%s\n    {\"hung_ctas\": %d, \"elapsed_ns\": %.0f, \"received_tb_per_s\": %.4f, \"sum_of_sm_rates_tb_per_s\": %.4f, "
                "\"sm_clock_mhz\": %.0f, \"gpc_tb_per_s\": [",
                rep ? "," : "", hung, elapsed, static_cast<double>(active) * kSteps * stage_bytes / elapsed * 1e-3,
                total * 1e-3, mhz);
    for (int g = 0; g < gpcs; ++g) std::printf("%s%.4f", g ? ", " : "", by_gpc[g] * 1e-3);
    std::printf("], \"partition_tb_per_s\": [%.4f, %.4f], \"sm_bytes_per_ns\": [", by_partition[0] * 1e-3,
                by_partition[1] * 1e-3);
    for (int sm = 0; sm < d.sms; ++sm) std::printf("%s%.2f", sm ? ", " : "", sm_bytes_per_ns[sm]);
    std::printf("]}");
    std::fflush(stdout);
    if (hung) break;
  }
  std::printf("]}");
}

} // namespace

int main(int argc, char** argv) {
  const cudaDeviceProp prop = microbench::first_device(kProgram);
  if (argc != 3) {
    std::fprintf(stderr, "%s: usage: %s GPC_OF_SM PARTITION_OF_SM (comma-separated lists from the GPU profile)\n",
                 kProgram, kProgram);
    return 1;
  }
  Device d;
  d.sms = prop.multiProcessorCount;
  d.gpc = parse_list(argv[1]);
  d.partition = parse_list(argv[2]);
  if (static_cast<int>(d.gpc.size()) != d.sms || static_cast<int>(d.partition.size()) != d.sms) {
    std::fprintf(stderr, "%s: the GPC and partition lists need %d entries each (one per SM); got %zu and %zu\n",
                 kProgram, d.sms, d.gpc.size(), d.partition.size());
    return 1;
  }
  CHECK_CUDA(cudaMalloc(&d.matrix, kMatrixBytes));
  CHECK_CUDA(cudaMemset(d.matrix, 0x3c, kMatrixBytes));
  CHECK_CUDA(cudaMalloc(&d.ranks, d.sms * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&d.arrived, sizeof(unsigned)));
  CHECK_CUDA(cudaMalloc(&d.records, d.sms * sizeof(CtaRecord)));

  const auto sms_where = [&](auto keep) {
    std::vector<bool> v(d.sms);
    for (int sm = 0; sm < d.sms; ++sm) v[sm] = keep(sm);
    return v;
  };
  const auto all = sms_where([](int) { return true; });
  const long long mib = 1LL << 20;
  std::vector<Config> configs;
  for (const long long f : {4, 8, 16, 32})
    configs.push_back({"all_f" + std::to_string(f), "every SM, 16 KB boxes, 8 in flight", f * mib, 128, 0, 8, all});
  configs.push_back({"all_f16_timer_watchdog", "all_f16 with a %globaltimer read in every wait", 16 * mib, 128, 0, 8, all, true});
  configs.push_back({"all_f16_rows256_timer_watchdog", "32 KB boxes with a %globaltimer read in every wait", 16 * mib, 256, 0, 4, all, true});
  configs.push_back({"all_f16_s4", "every SM, 16 KB boxes, 4 in flight", 16 * mib, 128, 0, 4, all});
  configs.push_back({"all_f16_s16", "every SM, 16 KB boxes, 16 in flight (256 KB do not fit: 13)", 16 * mib, 128, 0, 13, all});
  configs.push_back({"all_f16_rows256", "every SM, 32 KB boxes, 4 in flight", 16 * mib, 256, 0, 4, all});
  configs.push_back({"all_f16_rows64", "every SM, 8 KB boxes, 16 in flight", 16 * mib, 64, 0, 16, all});
  for (int p = 0; p < 2; ++p)
    configs.push_back({"partition" + std::to_string(p) + "_f16", "the SMs of one L2 partition", 16 * mib, 128, 0, 8,
                       sms_where([&](int sm) { return d.partition[sm] == p; })});
  // One partition's SMs over a footprint that fits its half of the L2 easily, and one that does not.
  for (const long long f : {4, 32})
    configs.push_back({"partition0_f" + std::to_string(f), "the SMs of L2 partition 0", f * mib, 128, 0, 8,
                       sms_where([&](int sm) { return d.partition[sm] == 0; })});
  // Half of each GPC's SMs (its even-indexed TPC halves): as many SMs as one partition, over all GPCs.
  configs.push_back({"half_of_each_gpc_f16", "one SM of each TPC", 16 * mib, 128, 0, 8,
                     sms_where([](int sm) { return sm % 2 == 0; })});
  const int gpcs = *std::max_element(d.gpc.begin(), d.gpc.end()) + 1;
  for (int g = 0; g < gpcs; ++g)
    configs.push_back({"gpc" + std::to_string(g) + "_f16", "the SMs of one GPC alone", 16 * mib, 128, 0, 8,
                       sms_where([&](int sm) { return d.gpc[sm] == g; })});
  configs.push_back({"sm0_f16", "SM 0 alone", 16 * mib, 128, 0, 8, sms_where([](int sm) { return sm == 0; })});
  configs.push_back({"tpc0_f16", "SMs 0 and 1 (one TPC)", 16 * mib, 128, 0, 8, sms_where([](int sm) { return sm < 2; })});
  // The GEMM's K steps: 128x128 (own 16 KB A box, half of a 16 KB B box multicast) and 128x256.
  configs.push_back({"pairs_128x128_f16", "clusters of two: own 128-row box + 64-row half of a shared box, multicast",
                     16 * mib, 128, 64, 6, all});
  configs.push_back({"pairs_128x256_f16", "clusters of two: own 128-row box + 128-row half of a shared box, multicast",
                     16 * mib, 128, 128, 4, all});
  configs.push_back({"pairs_128x128_f32", "pairs_128x128 over 32 MiB", 32 * mib, 128, 64, 6, all});

  std::printf("{\n \"gpu\": \"%s\", \"sms\": %d, \"l2_bytes\": %d, \"l2_promotion\": \"256B\", \"swizzle\": \"128B\",\n"
              " \"rates_are\": \"bytes landed in the CTAs' shared memory (multicast counted in each CTA it lands in) per ns; "
              "received_tb_per_s over the latest end minus the earliest start, gpc/partition sums of each SM's own rate\",\n"
              " \"configs\": [",
              prop.name, d.sms, prop.l2CacheSize);
  for (std::size_t i = 0; i < configs.size(); ++i) run(configs[i], d, i == 0);
  std::printf("\n ]\n}\n");
  return 0;
}
