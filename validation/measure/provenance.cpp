#include "validation/measure/provenance.h"

#include "validation/measure/measure_error.h"

#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <ctime>
#include <fstream>

#ifndef TILESIM_KERNEL_SOURCE_SHA256
#define TILESIM_KERNEL_SOURCE_SHA256 "unknown"
#endif

namespace tilesim::measure {
namespace {

std::string version_string(int v) { return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10); }

// The driver's own version string ("580.159.04"), from NVML when the library is there, else from
// the kernel module's /proc file; NVML is opened at run time so the harness never links it.
std::string driver_release() {
  if (void* nvml = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL)) {
    using Init = int (*)();
    using Version = int (*)(char*, unsigned);
    auto init = reinterpret_cast<Init>(dlsym(nvml, "nvmlInit_v2"));
    auto version = reinterpret_cast<Version>(dlsym(nvml, "nvmlSystemGetDriverVersion"));
    auto shutdown = reinterpret_cast<Init>(dlsym(nvml, "nvmlShutdown"));
    std::array<char, 96> text{};
    const bool ok = init && version && shutdown && init() == 0 && version(text.data(), text.size()) == 0;
    if (init && shutdown) shutdown();
    dlclose(nvml);
    if (ok) return text.data();
  }
  std::ifstream proc("/proc/driver/nvidia/version");
  std::string line;
  if (std::getline(proc, line)) {
    // "NVRM version: NVIDIA UNIX x86_64 Kernel Module  580.159.04  <date>"
    const auto at = line.find("Module");
    if (at != std::string::npos) {
      std::string rest = line.substr(at + 6);
      const auto b = rest.find_first_not_of(' ');
      const auto e = rest.find(' ', b);
      if (b != std::string::npos) return rest.substr(b, e == std::string::npos ? e : e - b);
    }
  }
  return "unknown";
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  std::array<char, 32> text{};
  std::strftime(text.data(), text.size(), "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text.data();
}

std::string host_name() {
  std::array<char, 256> text{};
  if (gethostname(text.data(), text.size() - 1) != 0) return "unknown";
  return text.data();
}

} // namespace

std::string shell_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& arg : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !arg.empty() && arg.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                             "0123456789_-+=./:,@%") == std::string::npos;
    if (plain) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
    out += '\'';
  }
  return out;
}

nlohmann::json provenance(const std::vector<std::string>& argv, int device) {
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties");
  int driver = 0, runtime = 0;
  check_cuda(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check_cuda(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  return {{"command", shell_command(argv)},
          {"gpu", prop.name},
          {"gpu_sms", prop.multiProcessorCount},
          {"gpu_l2_bytes", prop.l2CacheSize},
          {"driver", driver_release()},
          {"driver_cuda_api", version_string(driver)},
          {"cuda_runtime", version_string(runtime)},
          {"kernel_source_sha256", TILESIM_KERNEL_SOURCE_SHA256},
          {"date", utc_now()},
          {"hostname", host_name()}};
}

} // namespace tilesim::measure
