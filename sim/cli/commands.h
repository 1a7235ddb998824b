// The tilesim subcommands. Each parses its own options and returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace tilesim::cli {

using Args = std::vector<std::string>;

int simulate_command(const Args& args);
int whatif_command(const Args& args);
int gpus_command(const Args& args);
int compare_command(const Args& args);
int validate_command(const Args& args);

// The shipped default problem (models/kernels/default.json).
std::string default_kernel_path();

} // namespace tilesim::cli
