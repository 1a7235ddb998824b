#include "validation/measure/range_counters.h"

#include "validation/measure/measure_error.h"

#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <cuda_runtime_api.h>

#include <cstdint>

namespace tilesim::measure {
namespace {

// A zeroed CUPTI parameter struct with its structSize set, as every CUPTI profiler call expects.
template <typename Params> Params cupti_params(size_t struct_size) {
  Params p{};
  p.structSize = struct_size;
  return p;
}
#define CUPTI_PARAMS(Type) cupti_params<Type>(Type##_STRUCT_SIZE)

// A multi-pass config replays the launch once per pass; more than this means the metric list is
// far heavier than the handful the harness is meant for.
constexpr int kMaxPasses = 64;

// The current context through the runtime's driver entry point, so the harness never links libcuda
// (a binary that needs libcuda.so cannot even start on a machine without a driver).
CUcontext current_context() {
  using GetCurrent = CUresult (*)(CUcontext*);
  void* symbol = nullptr;
  cudaDriverEntryPointQueryResult query{};
  check_cuda(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &symbol, 12000, cudaEnableDefault, &query),
             "cudaGetDriverEntryPointByVersion(cuCtxGetCurrent)");
  if (query != cudaDriverEntryPointSuccess || symbol == nullptr)
    throw MeasureError(MeasureFailure::runtime, "cudaGetDriverEntryPointByVersion(cuCtxGetCurrent) found no symbol");
  check_cuda(cudaFree(nullptr), "cudaFree(nullptr) (create the primary context)");
  CUcontext ctx = nullptr;
  if (reinterpret_cast<GetCurrent>(symbol)(&ctx) != CUDA_SUCCESS || ctx == nullptr)
    throw MeasureError(MeasureFailure::runtime, "cuCtxGetCurrent returned no context");
  return ctx;
}

} // namespace

struct RangeCounterProfiler::Session {
  std::vector<std::string> metrics;
  std::vector<const char*> metric_names;
  std::string chip;
  CUcontext context = nullptr;
  std::vector<uint8_t> availability;
  std::vector<uint8_t> config;
  std::vector<uint8_t> counter_data;
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* range = nullptr;
  bool profiler_initialized = false;
  int passes = 0;
  int launches = 1;

  void initialize(int device) {
    auto init = CUPTI_PARAMS(CUpti_Profiler_Initialize_Params);
    check_cupti(cuptiProfilerInitialize(&init), "cuptiProfilerInitialize");
    profiler_initialized = true;

    auto chip_params = CUPTI_PARAMS(CUpti_Device_GetChipName_Params);
    chip_params.deviceIndex = static_cast<size_t>(device);
    check_cupti(cuptiDeviceGetChipName(&chip_params), "cuptiDeviceGetChipName");
    chip = chip_params.pChipName;

    auto avail = CUPTI_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
    avail.ctx = context;
    check_cupti(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability (size)");
    availability.resize(avail.counterAvailabilityImageSize);
    avail.pCounterAvailabilityImage = availability.data();
    check_cupti(cuptiProfilerGetCounterAvailability(&avail), "cuptiProfilerGetCounterAvailability");
  }

  void build_config() {
    auto host_init = CUPTI_PARAMS(CUpti_Profiler_Host_Initialize_Params);
    host_init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    host_init.pChipName = chip.c_str();
    host_init.pCounterAvailabilityImage = availability.data();
    check_cupti(cuptiProfilerHostInitialize(&host_init), "cuptiProfilerHostInitialize");
    host = host_init.pHostObject;

    auto add = CUPTI_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
    add.pHostObject = host;
    add.ppMetricNames = metric_names.data();
    add.numMetrics = metric_names.size();
    check_cupti(cuptiProfilerHostConfigAddMetrics(&add), "cuptiProfilerHostConfigAddMetrics");

    auto size = CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
    size.pHostObject = host;
    check_cupti(cuptiProfilerHostGetConfigImageSize(&size), "cuptiProfilerHostGetConfigImageSize");
    config.resize(size.configImageSize);
    auto image = CUPTI_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
    image.pHostObject = host;
    image.configImageSize = config.size();
    image.pConfigImage = config.data();
    check_cupti(cuptiProfilerHostGetConfigImage(&image), "cuptiProfilerHostGetConfigImage");

    auto pass_count = CUPTI_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
    pass_count.configImageSize = config.size();
    pass_count.pConfigImage = config.data();
    check_cupti(cuptiProfilerHostGetNumOfPasses(&pass_count), "cuptiProfilerHostGetNumOfPasses");
    passes = static_cast<int>(pass_count.numOfPasses);
  }

  void enable() {
    auto en = CUPTI_PARAMS(CUpti_RangeProfiler_Enable_Params);
    en.ctx = context;
    check_cupti(cuptiRangeProfilerEnable(&en), "cuptiRangeProfilerEnable");
    range = en.pRangeProfilerObject;

    auto size = CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
    size.pRangeProfilerObject = range;
    size.pMetricNames = metric_names.data();
    size.numMetrics = metric_names.size();
    size.maxNumOfRanges = static_cast<size_t>(launches);
    size.maxNumRangeTreeNodes = static_cast<uint32_t>(launches);
    check_cupti(cuptiRangeProfilerGetCounterDataSize(&size), "cuptiRangeProfilerGetCounterDataSize");
    counter_data.assign(size.counterDataSize, 0);
    auto init = CUPTI_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
    init.pRangeProfilerObject = range;
    init.counterDataSize = counter_data.size();
    init.pCounterData = counter_data.data();
    check_cupti(cuptiRangeProfilerCounterDataImageInitialize(&init), "cuptiRangeProfilerCounterDataImageInitialize");

    auto set = CUPTI_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
    set.pRangeProfilerObject = range;
    set.configSize = config.size();
    set.pConfig = config.data();
    set.counterDataImageSize = counter_data.size();
    set.pCounterDataImage = counter_data.data();
    set.range = CUPTI_UserRange;
    set.replayMode = CUPTI_UserReplay;
    set.maxRangesPerPass = static_cast<size_t>(launches);
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 1;
    check_cupti(cuptiRangeProfilerSetConfig(&set), "cuptiRangeProfilerSetConfig");
  }

  ~Session() { // best effort, never throws: the error that brought us here is the one to report
    if (range) {
      auto dis = CUPTI_PARAMS(CUpti_RangeProfiler_Disable_Params);
      dis.pRangeProfilerObject = range;
      cuptiRangeProfilerDisable(&dis);
    }
    if (host) {
      auto deinit = CUPTI_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
      deinit.pHostObject = host;
      cuptiProfilerHostDeinitialize(&deinit);
    }
    if (profiler_initialized) {
      auto deinit = CUPTI_PARAMS(CUpti_Profiler_DeInitialize_Params);
      cuptiProfilerDeInitialize(&deinit);
    }
  }
};

RangeCounterProfiler::RangeCounterProfiler(std::vector<std::string> metrics, int launches)
    : session_(std::make_unique<Session>()) {
  Session& s = *session_;
  if (launches < 1) throw MeasureError(MeasureFailure::usage, "--counter-launches must be >= 1");
  s.launches = launches;
  s.metrics = std::move(metrics);
  for (const auto& m : s.metrics) s.metric_names.push_back(m.c_str());
  int device = 0;
  check_cuda(cudaGetDevice(&device), "cudaGetDevice");
  s.context = current_context();
  s.initialize(device);
  s.build_config();
  if (s.passes > kMaxPasses)
    throw MeasureError(MeasureFailure::usage, "the counter list needs " + std::to_string(s.passes) +
                                                  " replay passes; ask for fewer metrics");
  s.enable();
}

RangeCounterProfiler::~RangeCounterProfiler() = default;

void RangeCounterProfiler::profile_one_range(const CounterLaunch& launch, int index) {
  Session& s = *session_;
  if (launch.before) launch.before();
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize (before a profiled launch)");
  const std::string name = "launch_" + std::to_string(index);
  auto push = CUPTI_PARAMS(CUpti_RangeProfiler_PushRange_Params);
  push.pRangeProfilerObject = s.range;
  push.pRangeName = name.c_str();
  check_cupti(cuptiRangeProfilerPushRange(&push), "cuptiRangeProfilerPushRange");
  launch.launch();
  check_cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize (after a profiled launch)");
  auto pop = CUPTI_PARAMS(CUpti_RangeProfiler_PopRange_Params);
  pop.pRangeProfilerObject = s.range;
  check_cupti(cuptiRangeProfilerPopRange(&pop), "cuptiRangeProfilerPopRange");
}

std::vector<std::map<std::string, double>> RangeCounterProfiler::evaluate_ranges() {
  Session& s = *session_;
  auto info = CUPTI_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
  info.pCounterDataImage = s.counter_data.data();
  info.counterDataImageSize = s.counter_data.size();
  check_cupti(cuptiRangeProfilerGetCounterDataInfo(&info), "cuptiRangeProfilerGetCounterDataInfo");
  if (info.numTotalRanges != static_cast<size_t>(s.launches))
    throw MeasureError(MeasureFailure::runtime, "the counter data holds " + std::to_string(info.numTotalRanges) +
                                                    " ranges, expected " + std::to_string(s.launches));
  std::vector<std::map<std::string, double>> out;
  std::vector<double> values(s.metric_names.size(), 0.0);
  for (size_t range = 0; range < info.numTotalRanges; ++range) {
    auto eval = CUPTI_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
    eval.pHostObject = s.host;
    eval.pCounterDataImage = s.counter_data.data();
    eval.counterDataImageSize = s.counter_data.size();
    eval.rangeIndex = range;
    eval.ppMetricNames = s.metric_names.data();
    eval.numMetrics = s.metric_names.size();
    eval.pMetricValues = values.data();
    check_cupti(cuptiProfilerHostEvaluateToGpuValues(&eval), "cuptiProfilerHostEvaluateToGpuValues");
    std::map<std::string, double>& launch = out.emplace_back();
    for (size_t i = 0; i < s.metrics.size(); ++i) launch[s.metrics[i]] = values[i];
  }
  return out;
}

CounterSamples RangeCounterProfiler::measure(const CounterLaunch& launch) {
  Session& s = *session_;
  bool all_submitted = false;
  int replays = 0;
  while (!all_submitted) {
    if (++replays > kMaxPasses)
      throw MeasureError(MeasureFailure::runtime, "cuptiRangeProfilerStop never reported all passes submitted");
    auto start = CUPTI_PARAMS(CUpti_RangeProfiler_Start_Params);
    start.pRangeProfilerObject = s.range;
    check_cupti(cuptiRangeProfilerStart(&start), "cuptiRangeProfilerStart");
    for (int i = 0; i < s.launches; ++i) profile_one_range(launch, i);
    auto stop = CUPTI_PARAMS(CUpti_RangeProfiler_Stop_Params);
    stop.pRangeProfilerObject = s.range;
    check_cupti(cuptiRangeProfilerStop(&stop), "cuptiRangeProfilerStop");
    all_submitted = stop.isAllPassSubmitted != 0;
  }
  auto decode = CUPTI_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
  decode.pRangeProfilerObject = s.range;
  check_cupti(cuptiRangeProfilerDecodeData(&decode), "cuptiRangeProfilerDecodeData");
  if (decode.numOfRangeDropped != 0)
    throw MeasureError(MeasureFailure::runtime, "cuptiRangeProfilerDecodeData dropped " +
                                                    std::to_string(decode.numOfRangeDropped) + " range(s)");
  CounterSamples out;
  out.launches = evaluate_ranges();
  out.passes = replays;
  out.chip = s.chip;
  return out;
}

} // namespace tilesim::measure
