#include "validation/measure/measurement.h"

#include "models/kernel_spec.h"
#include "models/launch_order_names.h"
#include "validation/measure/device_fill.h"
#include "validation/measure/kernel_activity_recorder.h"
#include "validation/measure/measure_error.h"
#include "validation/measure/provenance.h"
#include "validation/measure/range_counters.h"
#include "validation/measure/workload.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <stdexcept>

namespace tilesim::measure {
namespace {

constexpr const char* kHitRate = "lts__t_sector_hit_rate.pct";
constexpr const char* kL2ReadSectors = "lts__t_sectors_srcunit_tex_op_read.sum";
constexpr const char* kDramRead = "dram__bytes_read.sum";
constexpr const char* kDramWrite = "dram__bytes_write.sum";
constexpr const char* kSmClock = "sm__cycles_elapsed.avg.per_second";

class Stream {
public:
  Stream() { check_cuda(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreateWithFlags"); }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

private:
  cudaStream_t stream_ = nullptr;
};

std::unique_ptr<MeasuredWorkload> make_workload(const MeasureOptions& o, cudaStream_t stream) {
  if (o.copy_bytes > 0) return make_streaming_copy_workload(o.copy_bytes, o.seed, stream);
  KernelSpec spec = load_kernel_spec(o.kernel_path);
  if (o.order) {
    try {
      spec.order = parse_launch_order(*o.order);
    } catch (const std::invalid_argument& e) {
      throw MeasureError(MeasureFailure::usage, std::string("--order: ") + e.what());
    }
  }
  if (spec.kind == KernelKind::elementwise) return make_elementwise_workload(spec, o.device, o.seed, stream);
  if (spec.kind == KernelKind::mxfp8_quantize) return make_mxfp8_quantize_workload(spec, o.device, o.seed, stream);
  if (spec.mixed_input()) return make_mixed_input_workload(spec, o.device, o.seed, stream);
  if (spec.mxfp8_gemm()) return make_mxfp8_gemm_workload(spec, o.device, o.seed, stream);
  return make_grouped_gemm_workload(spec, o.device, o.seed, stream);
}

struct RunTimes {
  std::vector<double> ms; // one per timed run: first kernel start to last kernel end
  int kernels_per_run = 0;
};

// Splits the activity records into runs at each L2 flush kernel (every run is flush, then work).
RunTimes split_runs(const std::vector<KernelActivity>& kernels, int runs) {
  RunTimes out;
  std::uint64_t first = 0, last = 0;
  int in_run = -1; // kernels seen in the current run; -1 before the first flush
  auto close_run = [&] {
    if (in_run > 0) out.ms.push_back(static_cast<double>(last - first) * 1e-6);
    if (in_run > 0) out.kernels_per_run = std::max(out.kernels_per_run, in_run);
  };
  for (const auto& k : kernels) {
    if (k.name == kL2FlushKernelName) {
      close_run();
      in_run = 0;
      continue;
    }
    if (in_run < 0) continue;
    if (in_run == 0 || k.start_ns < first) first = k.start_ns;
    if (in_run == 0 || k.end_ns > last) last = k.end_ns;
    ++in_run;
  }
  close_run();
  if (static_cast<int>(out.ms.size()) != runs)
    throw MeasureError(MeasureFailure::runtime, "CUPTI recorded " + std::to_string(out.ms.size()) +
                                                    " timed runs, expected " + std::to_string(runs));
  return out;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

RunTimes time_cold_runs(MeasuredWorkload& work, const L2Flusher& flusher, int runs, cudaStream_t stream) {
  KernelActivityRecorder recorder;
  recorder.start();
  for (int i = 0; i < runs; ++i) {
    flusher.flush(stream);
    work.launch(stream);
  }
  return split_runs(recorder.stop(), runs);
}

// Counters are the median over the profiled launches; every launch's values stay in extra.
void fill_counters(KernelResult& r, const CounterSamples& c) {
  std::map<std::string, double> medians;
  nlohmann::json samples = nlohmann::json::object();
  for (const auto& name : counter_metrics()) {
    std::vector<double> values;
    for (const auto& launch : c.launches) values.push_back(launch.at(name));
    medians[name] = median(values);
    samples[name] = values;
  }
  r.l2_hit_rate = medians.at(kHitRate) / 100.0;
  r.dram_read_bytes = std::llround(medians.at(kDramRead));
  r.dram_write_bytes = std::llround(medians.at(kDramWrite));
  r.l2_read_sectors = std::llround(medians.at(kL2ReadSectors));
  r.extra["counters"] = medians;
  r.extra["counter_samples"] = samples;
  r.extra["counter_launches"] = c.launches.size();
  r.extra["counter_passes"] = c.passes;
  r.extra["counter_chip"] = c.chip;
  r.extra["counter_method"] = "CUPTI range profiler, user range + user replay around each launch, L2 flushed "
                              "before each launch; median over the launches";
  r.extra["sm_clock_mhz"] = medians.at(kSmClock) * 1e-6;
}

void select_device(int device) {
  const int devices = require_cuda_device();
  if (device < 0 || device >= devices)
    throw MeasureError(MeasureFailure::usage, "--device " + std::to_string(device) + ": only " +
                                                  std::to_string(devices) + " CUDA device(s) here");
  check_cuda(cudaSetDevice(device), "cudaSetDevice");
}

void cold_launches(MeasuredWorkload& work, const L2Flusher& flusher, int count, cudaStream_t stream) {
  for (int i = 0; i < count; ++i) {
    flusher.flush(stream);
    work.launch(stream);
  }
  check_cuda(cudaStreamSynchronize(stream), "cudaStreamSynchronize (after untimed launches)");
}

} // namespace

const std::vector<std::string>& counter_metrics() {
  static const std::vector<std::string> metrics{kHitRate, kL2ReadSectors, kDramRead, kDramWrite,
                                                "lts__t_sectors.sum", kSmClock};
  return metrics;
}

void launch_for_external_profiler(const MeasureOptions& o) {
  select_device(o.device);
  Stream stream;
  L2Flusher flusher(o.device);
  std::unique_ptr<MeasuredWorkload> work = make_workload(o, stream.get());
  cold_launches(*work, flusher, o.warmup + o.runs, stream.get());
  work->check_output();
}

KernelResult measure_kernel(const MeasureOptions& o) {
  select_device(o.device);
  Stream stream;
  L2Flusher flusher(o.device);
  std::unique_ptr<MeasuredWorkload> work = make_workload(o, stream.get());
  cold_launches(*work, flusher, o.warmup, stream.get());

  KernelResult r;
  r.source = "measured";
  r.kernel = work->kernel_json();
  r.order = work->order_name();
  r.provenance = provenance(o.argv, o.device);
  r.gpu = r.provenance.at("gpu").get<std::string>();
  r.extra["output_check"] = work->check_output();

  const RunTimes times = time_cold_runs(*work, flusher, o.runs, stream.get());
  r.time_ms = median(times.ms);
  r.tflops = r.time_ms > 0 ? work->flops() / (r.time_ms * 1e-3) / 1e12 : 0.0;
  r.extra["timing"] = {{"method", "CUPTI activity (CONCURRENT_KERNEL) start..end of the measured kernel(s)"},
                       {"l2", "cold: L2 flushed (2x L2 of streaming reads) before every run"},
                       {"runs", o.runs},
                       {"warmup", o.warmup},
                       {"kernels_per_run", times.kernels_per_run},
                       {"min_ms", *std::min_element(times.ms.begin(), times.ms.end())},
                       {"median_ms", r.time_ms},
                       {"max_ms", *std::max_element(times.ms.begin(), times.ms.end())},
                       {"all_ms", times.ms}};

  if (o.counters) {
    RangeCounterProfiler profiler(counter_metrics(), o.counter_launches);
    fill_counters(r, profiler.measure({[&] { flusher.flush(stream.get()); }, [&] { work->launch(stream.get()); }}));
  } else {
    r.extra["counters"] = "skipped (--no-counters)";
  }

  if (o.trace) {
    flusher.flush(stream.get());
    r.tiles = work->run_traced(stream.get());
  }
  return r;
}

} // namespace tilesim::measure
