// tilesim-measure: runs one kernel spec on the GPU and writes the measured result (the schema the
// simulator writes, source = "measured"). Every failure is one line on stderr and a non-zero exit.
#include "models/output_file.h"
#include "models/spec_error.h"
#include "sim/kernel_result.h"
#include "sim/trace_writer.h"
#include "validation/measure/measure_error.h"
#include "validation/measure/measurement.h"

#include <boost/program_options.hpp>

#include <iostream>

namespace po = boost::program_options;
using tilesim::measure::MeasureError;
using tilesim::measure::MeasureFailure;

namespace {

enum ExitCode { kOk = 0, kRuntime = 1, kUsage = 2, kNoDevice = 3, kNoPermission = 4, kUnsupported = 5 };

int exit_code(MeasureFailure f) {
  switch (f) {
  case MeasureFailure::no_device: return kNoDevice;
  case MeasureFailure::no_permission: return kNoPermission;
  case MeasureFailure::unsupported: return kUnsupported;
  case MeasureFailure::usage: return kUsage;
  case MeasureFailure::runtime: return kRuntime;
  }
  return kRuntime;
}

po::options_description describe(tilesim::measure::MeasureOptions& o, std::string& out, std::string& order,
                                 std::string& trace_out) {
  po::options_description d("tilesim-measure: time and count one kernel spec on the GPU\nOptions");
  d.add_options()("help,h", "print this help")
      ("kernel", po::value(&o.kernel_path), "kernel spec JSON (models/kernel_spec.h format)")
      ("order", po::value(&order), "launch order overriding the spec's, e.g. grouped_m:8, hilbert")
      ("runs", po::value(&o.runs)->default_value(20), "timed runs (median reported), L2 flushed before each")
      ("warmup", po::value(&o.warmup)->default_value(3), "untimed runs first")
      ("trace", po::bool_switch(&o.trace), "one more run with the per-tile trace; tiles go in the result")
      ("trace-out", po::value(&trace_out), "with --trace: also write the per-SM timeline here (Chrome trace-event JSON)")
      ("counter-launches", po::value(&o.counter_launches)->default_value(5),
       "profiled launches (L2 flushed before each); counters are their median")
      ("no-counters", "skip the hardware counters (time only)")
      ("launch-only", po::bool_switch(&o.launch_only),
       "no CUPTI: warm-up + runs flushed launches for ncu/nsys to profile; writes no result")
      ("copy-bytes", po::value(&o.copy_bytes), "measure a streaming copy of this many bytes instead of a spec")
      ("device", po::value(&o.device)->default_value(0), "CUDA device index")
      ("seed", po::value(&o.seed)->default_value(1), "seed of the random bf16 inputs")
      ("out", po::value(&out), "result JSON to write");
  return d;
}

} // namespace

int main(int argc, char** argv) {
  tilesim::measure::MeasureOptions options;
  options.argv.assign(argv, argv + argc);
  std::string out, order, trace_out;
  try {
    const po::options_description desc = describe(options, out, order, trace_out);
    po::variables_map vm;
    po::store(po::parse_command_line(argc, argv, desc), vm);
    po::notify(vm);
    if (vm.count("help")) {
      std::cout << desc << "\nExit codes: 0 ok, 1 CUDA/CUPTI failure, 2 bad spec or options, 3 no GPU, "
                           "4 no counter permission, 5 counters unsupported here\n";
      return kOk;
    }
    if (options.kernel_path.empty() == (options.copy_bytes == 0))
      throw MeasureError(MeasureFailure::usage, "give exactly one of --kernel SPEC.json and --copy-bytes N");
    if (options.launch_only) {
      tilesim::measure::launch_for_external_profiler(options);
      return kOk;
    }
    if (out.empty()) throw MeasureError(MeasureFailure::usage, "--out is required (the result JSON to write)");
    if (options.runs < 1 || options.warmup < 0 || options.counter_launches < 1)
      throw MeasureError(MeasureFailure::usage, "--runs and --counter-launches must be >= 1, --warmup >= 0");
    if (!trace_out.empty() && !options.trace)
      throw MeasureError(MeasureFailure::usage, "--trace-out needs --trace (the per-tile run it writes)");
    // A measurement takes minutes; an output it cannot write is refused before it starts.
    tilesim::check_output_path(out, "--out");
    if (!trace_out.empty()) tilesim::check_output_path(trace_out, "--trace-out");
    if (!order.empty()) options.order = order;
    options.counters = vm.count("no-counters") == 0;
    const tilesim::KernelResult result = tilesim::measure::measure_kernel(options);
    tilesim::save_kernel_result(result, out);
    if (!trace_out.empty())
      tilesim::write_chrome_trace({{"measured", &result, out}}, trace_out, result.provenance.value("command", ""));
    std::cerr << "tilesim-measure: " << result.order << ": " << result.time_ms << " ms, " << result.tflops
              << " TFLOP/s, L2 hit " << result.l2_hit_rate << ", DRAM read " << result.dram_read_bytes
              << " B -> " << out << '\n';
    return kOk;
  } catch (const MeasureError& e) {
    std::cerr << "tilesim-measure: " << e.what() << '\n';
    return exit_code(e.failure());
  } catch (const tilesim::SpecError& e) {
    std::cerr << "tilesim-measure: " << e.what() << '\n';
    return kUsage;
  } catch (const po::error& e) {
    std::cerr << "tilesim-measure: " << e.what() << "; see --help\n";
    return kUsage;
  } catch (const std::exception& e) {
    std::cerr << "tilesim-measure: " << e.what() << '\n';
    return kRuntime;
  }
}
