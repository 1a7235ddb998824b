// Where and how a measurement was taken: the exact command, the GPU, driver and runtime versions,
// the time (UTC) and the host.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tilesim::measure {

// argv joined with POSIX shell quoting, so the command can be pasted back into a shell.
std::string shell_command(const std::vector<std::string>& argv);

// {command, gpu, gpu_sms, gpu_l2_bytes, driver, driver_cuda_api, cuda_runtime, kernel_source_sha256,
//  date, hostname}
nlohmann::json provenance(const std::vector<std::string>& argv, int device);

} // namespace tilesim::measure
