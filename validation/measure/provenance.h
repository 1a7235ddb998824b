// Where and how a measurement was taken: the exact command, the GPU, driver and runtime versions,
// the time (UTC) and the host.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace tilesim::measure {

// argv joined with POSIX shell quoting, so the command can be pasted back into a shell.
std::string shell_command(const std::vector<std::string>& argv);

// {command, gpu, driver, driver_api, cuda_runtime, date, hostname}
nlohmann::json provenance(const std::vector<std::string>& argv, int device);

} // namespace tilesim::measure
