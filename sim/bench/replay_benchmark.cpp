// Speed of the simulator (issue 13), not a test: the 8192^3 bf16 replay (128x128x64 tiles,
// persistent, grouped_m:8) on one core, the default what-if (`tilesim whatif --gpu h100`, every
// order on the machine's cores) and, with --validate, `tilesim validate` on the H100 dataset (on
// the machine's cores). Each run is a child process of its own, so that its peak resident memory
// is its own (getrusage of the child); the median of the runs is reported.
//   tilesim_bench [--spec replay.json] [--repeats N] [--replay-only] [--validate]
#include "models/gpu_profile.h"
#include "models/kernel_spec.h"
#include "models/spec_error.h"
#include "sim/gpu_simulator.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fcntl.h>
#include <functional>
#include <string>
#include <vector>

namespace {

struct ChildRun {
  double wall_s = 0;
  double cpu_s = 0;    // user + system time of the child and its threads
  long peak_rss_kb = 0; // ru_maxrss of the child
  long long value = 0;  // what the child wrote back (the replay's L2 line lookups; 0 from an exec'd command)
};

// Runs `body` in a child process; what it returns is passed back through a pipe. The child fails
// (exit status 1) when `body` throws.
ChildRun run_child(const std::function<long long()>& body, int also_accepted_status = 0) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("tilesim_bench: pipe failed");
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("tilesim_bench: fork failed");
  if (pid == 0) {
    close(fds[0]);
    long long value = -1;
    try {
      value = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "tilesim_bench: %s\n", e.what());
    }
    const ssize_t written = write(fds[1], &value, sizeof value);
    _exit(written == sizeof value && value >= 0 ? 0 : 1);
  }
  close(fds[1]);
  ChildRun run;
  if (read(fds[0], &run.value, sizeof run.value) != sizeof run.value) run.value = 0;
  close(fds[0]);
  int status = 0;
  rusage usage{};
  wait4(pid, &status, 0, &usage);
  run.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.cpu_s = usage.ru_utime.tv_sec + usage.ru_utime.tv_usec * 1e-6 + usage.ru_stime.tv_sec + usage.ru_stime.tv_usec * 1e-6;
  run.peak_rss_kb = usage.ru_maxrss;
  if (!WIFEXITED(status) || (WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != also_accepted_status))
    throw std::runtime_error("tilesim_bench: a measured run failed (its message is above)");
  return run;
}

ChildRun median_of(std::vector<ChildRun> runs) {
  std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) { return a.wall_s < b.wall_s; });
  ChildRun m = runs[runs.size() / 2];
  for (const auto& r : runs) m.peak_rss_kb = std::max(m.peak_rss_kb, r.peak_rss_kb);
  return m;
}

void print(const char* what, const std::vector<ChildRun>& runs) {
  const ChildRun m = median_of(runs);
  double min_wall = runs.front().wall_s;
  for (const auto& r : runs) min_wall = std::min(min_wall, r.wall_s);
  std::printf("%s: median wall %.2f s over %zu runs (min %.2f), CPU %.2f s, peak RSS %.0f MiB\n", what, m.wall_s,
              runs.size(), min_wall, m.cpu_s, m.peak_rss_kb / 1024.0);
}

} // namespace

int main(int argc, char** argv) {
  std::string spec_path = std::string(TILESIM_SOURCE_DIR) + "/models/kernels/dense_8192.json";
  int repeats = 3;
  bool whatif = true;
  bool validate = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--spec" && i + 1 < argc) {
      spec_path = argv[++i];
    } else if (arg == "--repeats" && i + 1 < argc) {
      repeats = std::max(1, std::atoi(argv[++i]));
    } else if (arg == "--replay-only") {
      whatif = false;
    } else if (arg == "--validate") {
      validate = true;
    } else {
      std::fprintf(stderr,
                   "tilesim_bench: unknown argument '%s'; use [--spec replay.json] [--repeats N] [--replay-only] [--validate]\n",
                   argv[i]);
      return 1;
    }
  }
  try {
    const tilesim::GpuProfile gpu = tilesim::load_gpu_profile("h100");
    const tilesim::KernelSpec spec = tilesim::load_kernel_spec(spec_path);
    std::vector<ChildRun> replays;
    for (int i = 0; i < repeats; ++i)
      replays.push_back(run_child([&] {
        const auto r = tilesim::simulate(gpu, spec, {.record_tiles = false, .progress = {}});
        return r.extra["l2_line_lookups"].get<long long>();
      }));
    const double lookups = static_cast<double>(replays.front().value);
    print((spec.name + " replay on h100 (one core)").c_str(), replays);
    std::printf("  %.0f L2 line lookups, %.1f M lookups/s\n", lookups, lookups / median_of(replays).wall_s / 1e6);
    // The real command, its output thrown away.
    const auto command = [](std::vector<std::string> args) {
      return [args = std::move(args)] {
        const int null = open("/dev/null", O_WRONLY);
        if (null >= 0) dup2(null, STDOUT_FILENO);
        std::vector<char*> argv{const_cast<char*>(TILESIM_CLI)};
        for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
        argv.push_back(nullptr);
        execv(TILESIM_CLI, argv.data());
        throw std::runtime_error(std::string("cannot run ") + TILESIM_CLI);
        return 0LL;
      };
    };
    if (whatif) {
      std::vector<ChildRun> whatifs;
      for (int i = 0; i < repeats; ++i) whatifs.push_back(run_child(command({"whatif", "--gpu", "h100"})));
      print("tilesim whatif --gpu h100 (default, all cores)", whatifs);
    }
    if (validate) {
      // Exit status 3 is a scored dataset that misses a bar: the run is complete all the same.
      const std::string dataset = std::string(TILESIM_SOURCE_DIR) + "/validation/data/h100/measured";
      std::vector<ChildRun> validates;
      for (int i = 0; i < repeats; ++i)
        validates.push_back(run_child(command({"validate", "--dataset", dataset, "--quiet"}), 3));
      print("tilesim validate --dataset validation/data/h100/measured (all cores)", validates);
    }
  } catch (const tilesim::SpecError& e) {
    std::fprintf(stderr, "tilesim_bench: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
  return 0;
}
