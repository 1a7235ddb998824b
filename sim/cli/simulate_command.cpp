#include "sim/cli/commands.h"

#include "models/gpu_profile.h"
#include "models/launch_order_names.h"
#include "models/output_file.h"
#include "models/spec_error.h"
#include "sim/gpu_simulator.h"
#include "sim/trace_writer.h"

#include <boost/program_options.hpp>

#include <cstdio>
#include <iostream>

namespace tilesim::cli {

int simulate_command(const Args& args) {
  namespace po = boost::program_options;
  std::string gpu_name, kernel_path, order_text, out_path, trace_path;
  po::options_description options("tilesim simulate --gpu h100 --kernel spec.json [--order grouped_m:8] [--out result.json]");
  options.add_options()("help,h", "this help")(
      "gpu", po::value(&gpu_name)->default_value("h100"), "GPU profile: h100, h200, a100, b200 or a profile JSON path; b200@750: at a 750 W power limit")(
      "kernel", po::value(&kernel_path)->required(), "kernel spec JSON")(
      "order", po::value(&order_text), "launch order, overriding the spec's (e.g. grouped_m:8, hilbert)")(
      "out", po::value(&out_path), "write the full result (tilesim.result/1 JSON, per-tile records) here")(
      "trace-out", po::value(&trace_path), "write the per-SM timeline here (Chrome trace-event JSON for Perfetto)");
  if (!parse_options(args, options)) return 0;
  if (!out_path.empty()) check_output_path(out_path, "--out");
  if (!trace_path.empty()) check_output_path(trace_path, "--trace-out");

  const GpuProfile gpu = load_gpu_profile(gpu_name);
  KernelSpec spec = load_kernel_spec(kernel_path);
  if (!order_text.empty()) {
    try {
      spec.order = parse_launch_order(order_text);
    } catch (const std::invalid_argument& e) {
      throw SpecError("--order", order_text, e.what(), "");
    }
  }
  const KernelResult r = simulate(gpu, spec, {.record_tiles = !out_path.empty() || !trace_path.empty(), .progress = {}});
  std::printf("%s on %s, order %s: %.4f ms, %.1f TFLOP/s, L2 hit rate %.1f%%, DRAM read %.3f GB, write %.3f GB, "
              "L2 read sectors %lld\n",
              spec.name.c_str(), gpu.name.c_str(), r.order.c_str(), r.time_ms, r.tflops, 100 * r.l2_hit_rate,
              r.dram_read_bytes / 1e9, r.dram_write_bytes / 1e9, r.l2_read_sectors);
  std::printf("tensor cores busy %.0f%%, DRAM busy %.0f%%, %d CTA(s) per SM (limited by %s)\n",
              100 * r.extra["tensor_busy_fraction"].get<double>(), 100 * r.extra["dram_busy_fraction"].get<double>(),
              r.extra["ctas_per_sm"].get<int>(), r.extra["occupancy_limited_by"].get<std::string>().c_str());
  if (r.extra.contains("launched_before")) // MXFP8 xpass: the dequantiser's pass over X, timed with the GEMM
    std::printf("of which %s, launched before it: %.4f ms, DRAM read %.3f GB, write %.3f GB\n",
                r.extra["launched_before"]["kernel"].value("name", "").c_str(),
                r.extra["launched_before"]["time_ms"].get<double>(),
                r.extra["launched_before"]["dram_read_bytes"].get<double>() / 1e9,
                r.extra["launched_before"]["dram_write_bytes"].get<double>() / 1e9);
  if (gpu.power_limit_w > 0)
    std::printf("at a %g W power limit: SM clock %.0f MHz under sustained tensor load (models/power_limit.h)\n",
                gpu.power_limit_w, gpu.sm.clock_mhz);
  if (!out_path.empty()) save_kernel_result(r, out_path);
  if (!trace_path.empty()) write_chrome_trace({{"predicted", &r, kernel_path}}, trace_path);
  return 0;
}

} // namespace tilesim::cli
