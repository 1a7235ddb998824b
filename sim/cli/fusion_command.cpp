// tilesim fusion: a GEMM followed by a separate element-wise kernel (bias + ReLU or GELU over its
// output) against the GEMM with that epilogue fused, predicted time and DRAM bytes of each.
#include "sim/cli/commands.h"

#include "models/elementwise_spec.h"
#include "models/gpu_profile.h"
#include "models/output_file.h"
#include "models/spec_error.h"
#include "sim/gpu_simulator.h"

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include <cstdio>

namespace tilesim::cli {
namespace {

struct Predicted {
  std::string what;
  double time_ms = 0;
  double dram_read = 0, dram_write = 0;
};

Predicted predict(const GpuProfile& gpu, const KernelSpec& spec, const std::string& what) {
  const KernelResult r = simulate(gpu, spec, {.record_tiles = false, .progress = {}});
  return {what, r.time_ms, static_cast<double>(r.dram_read_bytes), static_cast<double>(r.dram_write_bytes)};
}

// The separate kernel that applies the epilogue to the GEMM's output: one element per output
// value in c_dtype, read and written once (the bias, one row of n per expert, is a rounding error
// of that traffic and is left out).
KernelSpec unfused_elementwise(const KernelSpec& gemm, GemmEpilogue epilogue, int block) {
  KernelSpec s;
  s.name = gemm.name + "_epilogue";
  s.kind = KernelKind::elementwise;
  s.a_dtype = s.b_dtype = s.c_dtype = gemm.c_dtype;
  s.elementwise.op = epilogue == GemmEpilogue::bias_gelu ? ElementwiseOp::gelu : ElementwiseOp::relu;
  s.elementwise.elements = gemm.total_m() * gemm.n;
  s.elementwise.block = block;
  s.elementwise.vector = 16 / (dtype_bits(gemm.c_dtype) / 8);
  s.warps = block / 32;
  s.stages = 1;
  s.cluster = 1;
  s.load = LoadPath::cp_async;
  return s;
}

} // namespace

int fusion_command(const Args& args) {
  namespace po = boost::program_options;
  std::string gpu_name, kernel_path, epilogue_name, out_path;
  int block = 256;
  po::options_description options(
      "tilesim fusion --gpu h100 --kernel gemm.json [--epilogue bias_relu|bias_gelu] [--out fusion.json]\n"
      "Predicts the GEMM followed by an element-wise kernel over its output against the GEMM with the\n"
      "epilogue fused; every kernel starts from a cold L2, as tilesim-measure measures them");
  options.add_options()("help,h", "this help")(
      "gpu", po::value(&gpu_name)->default_value("h100"), "GPU profile: h100, h200, a100, b200 or a profile JSON path")(
      "kernel", po::value(&kernel_path)->required(), "GEMM kernel spec JSON (kind gemm or grouped_gemm)")(
      "epilogue", po::value(&epilogue_name)->default_value("bias_relu"), "bias_relu or bias_gelu")(
      "block", po::value(&block)->default_value(256), "threads per CTA of the separate element-wise kernel")(
      "out", po::value(&out_path), "write the predictions here (JSON)");
  if (!parse_options(args, options)) return 0;
  require_nonempty("--kernel", kernel_path, "give a GEMM kernel spec path");
  if (!out_path.empty()) check_output_path(out_path, "--out");

  const GpuProfile gpu = load_gpu_profile(gpu_name);
  KernelSpec gemm = load_kernel_spec(kernel_path);
  if (gemm.kind != KernelKind::gemm && gemm.kind != KernelKind::grouped_gemm)
    throw SpecError(kernel_path, "kind", "is not a GEMM; fusion needs the GEMM that produces the input",
                    "give a gemm or grouped_gemm spec");
  const nlohmann::json option{{"epilogue", epilogue_name}};
  const GemmEpilogue epilogue = parse_gemm_epilogue(JsonFields(option, "--epilogue"));
  if (epilogue == GemmEpilogue::none)
    throw SpecError("--epilogue", "none", "there is nothing to fuse", "use bias_relu or bias_gelu");
  if (block < 32 || block > 1024 || (block & (block - 1)) != 0)
    throw SpecError("--block", std::to_string(block), "is not a power of two from 32 to 1024", "use 128, 256 or 512");

  gemm.epilogue = GemmEpilogue::none;
  const Predicted plain = predict(gpu, gemm, "GEMM");
  const Predicted separate = predict(gpu, unfused_elementwise(gemm, epilogue, block), "element-wise " + to_string(epilogue));
  gemm.epilogue = epilogue;
  const Predicted fused = predict(gpu, gemm, "GEMM + fused " + to_string(epilogue));
  const Predicted unfused{"unfused total", plain.time_ms + separate.time_ms, plain.dram_read + separate.dram_read,
                          plain.dram_write + separate.dram_write};

  std::printf("%s on %s: %s fused or not (kernel durations; each kernel cold in L2)\n", gemm.name.c_str(),
              gpu.name.c_str(), to_string(epilogue).c_str());
  std::printf("%-30s %10s %14s %15s\n", "", "time ms", "DRAM read GB", "DRAM write GB");
  for (const Predicted* p : {&plain, &separate, &unfused, &fused})
    std::printf("%-30s %10.4f %14.3f %15.3f\n", p->what.c_str(), p->time_ms, p->dram_read / 1e9, p->dram_write / 1e9);
  const double saved_bytes = (unfused.dram_read + unfused.dram_write) - (fused.dram_read + fused.dram_write);
  std::printf("fusing saves %.4f ms (%.1f%%) and %.3f GB of DRAM traffic, plus one kernel launch (%.1f us back to "
              "back on this profile)\n",
              unfused.time_ms - fused.time_ms, 100.0 * (unfused.time_ms - fused.time_ms) / unfused.time_ms,
              saved_bytes / 1e9, gpu.launch.kernel_launch_overhead_us);
  if (!out_path.empty()) {
    nlohmann::json j{{"gpu", gpu.name}, {"kernel", gemm.name}, {"epilogue", to_string(epilogue)}};
    for (const Predicted* p : {&plain, &separate, &unfused, &fused})
      j["predictions"].push_back(
          {{"what", p->what}, {"time_ms", p->time_ms}, {"dram_read_bytes", p->dram_read}, {"dram_write_bytes", p->dram_write}});
    j["launch_overhead_us"] = gpu.launch.kernel_launch_overhead_us;
    write_output_file(out_path, j.dump(1) + '\n', "--out");
  }
  return 0;
}

} // namespace tilesim::cli
