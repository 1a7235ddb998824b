// Which SMs share a GPC? CUDA guarantees that the CTAs of one thread-block cluster run on one GPC,
// so launches of clusters of 2-16 CTAs (one CTA per SM, by its shared memory), each CTA writing
// its %smid, join SMs into groups: SMs ever seen in one cluster share a GPC (union-find over all
// launches). Prints the GPC of every SM, numbered by the lowest SM id in it, as JSON.
#include "check_cuda.cuh"
#include "kernels/common/ptx_wrappers.cuh"

#include <cuda_runtime.h>

#include <cstdio>
#include <numeric>
#include <vector>

namespace {

constexpr const char* kProgram = "sm_gpc_map";
constexpr int kSharedBytes = 200 * 1024; // one CTA per SM

__global__ void record_sm(int* sm_of_block) {
  extern __shared__ int keep_resident[];
  if (threadIdx.x == 0) {
    keep_resident[0] = static_cast<int>(tilesim::kernels::ptx::sm_id());
    sm_of_block[blockIdx.x] = keep_resident[0];
  }
}

int find(std::vector<int>& parent, int x) {
  while (parent[x] != x) x = parent[x] = parent[parent[x]];
  return x;
}

} // namespace

int main() {
  const cudaDeviceProp prop = microbench::first_device(kProgram);
  const int sms = prop.multiProcessorCount;
  CHECK_CUDA(cudaFuncSetAttribute(record_sm, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
  CHECK_CUDA(cudaFuncSetAttribute(record_sm, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
  int* d_sm = nullptr;
  CHECK_CUDA(cudaMalloc(&d_sm, sms * sizeof(int)));
  std::vector<int> parent(sms);
  std::iota(parent.begin(), parent.end(), 0);
  std::printf("{\n \"gpu\": \"%s\", \"sms\": %d,\n \"launches\": [", prop.name, sms);
  bool first = true;
  for (const int size : {2, 4, 8, 16}) {
    cudaLaunchConfig_t config{};
    cudaLaunchAttribute cluster{};
    cluster.id = cudaLaunchAttributeClusterDimension;
    cluster.val.clusterDim = {static_cast<unsigned>(size), 1, 1};
    config.blockDim = dim3(32);
    config.dynamicSmemBytes = kSharedBytes;
    config.attrs = &cluster;
    config.numAttrs = 1;
    config.gridDim = dim3(size);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, record_sm, &config) != cudaSuccess || clusters == 0) {
      cudaGetLastError();
      continue;
    }
    config.gridDim = dim3(static_cast<unsigned>(clusters * size));
    for (int repeat = 0; repeat < 20; ++repeat) {
      CHECK_CUDA(cudaMemset(d_sm, 0xff, sms * sizeof(int)));
      CHECK_CUDA(cudaLaunchKernelEx(&config, record_sm, d_sm));
      CHECK_CUDA(cudaDeviceSynchronize());
      std::vector<int> sm_of_block(clusters * size);
      CHECK_CUDA(cudaMemcpy(sm_of_block.data(), d_sm, sm_of_block.size() * sizeof(int), cudaMemcpyDeviceToHost));
      for (int b = 0; b < clusters * size; ++b)
        parent[find(parent, sm_of_block[b])] = find(parent, sm_of_block[b - b % size]);
    }
    std::printf("%s{\"cluster_size\": %d, \"clusters\": %d, \"repeats\": 20}", first ? "" : ", ", size, clusters);
    first = false;
  }
  std::vector<int> gpc(sms, -1);
  int gpcs = 0;
  for (int sm = 0; sm < sms; ++sm) {
    const int root = find(parent, sm);
    if (gpc[root] < 0) gpc[root] = gpcs++;
    gpc[sm] = gpc[root];
  }
  std::printf("],\n \"gpcs\": %d,\n \"gpc_of_sm\": [", gpcs);
  for (int sm = 0; sm < sms; ++sm) std::printf("%s%d", sm ? ", " : "", gpc[sm]);
  std::printf("]\n}\n");
  return 0;
}
