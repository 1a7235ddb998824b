#include "sim/cli/commands.h"

#include "models/gpu_profile.h"

#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>

namespace tilesim::cli {

int gpus_command(const Args& args) {
  namespace po = boost::program_options;
  po::options_description options("tilesim gpus: the shipped GPU profiles (" + gpu_profile_dir() + ")");
  options.add_options()("help,h", "this help");
  if (!parse_options(args, options)) return 0;
  std::printf("%-6s %-28s %5s %7s %8s %9s %9s %9s %8s\n", "name", "GPU", "SMs", "MHz", "L2 MiB", "HBM TB/s",
              "BF16 TF/s", "FP8 TF/s", "power W");
  for (const auto& name : shipped_gpu_names()) {
    const GpuProfile p = load_gpu_profile(name);
    const double tf = p.sm.count * p.sm.clock_mhz * 1e6 / 1e12;
    const std::string power = p.power.max_limit_w > 0 ? std::to_string(static_cast<int>(p.power.max_limit_w)) : "-";
    std::printf("%-6s %-28s %5d %7.0f %8.1f %9.2f %9.0f %9.0f %8s\n", p.name.c_str(), p.display_name.c_str(), p.sm.count,
                p.sm.clock_mhz, p.l2.size_bytes / 1048576.0, p.dram.bandwidth_bytes_per_s / 1e12, tf * p.tensor.bf16,
                tf * p.tensor.fp8, power.c_str());
  }
  std::printf("power W: the board limit MHz is sustained at; a profile with one takes a lower limit as --gpu b200@750\n");
  return 0;
}

} // namespace tilesim::cli
