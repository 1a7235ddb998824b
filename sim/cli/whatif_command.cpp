#include "sim/cli/commands.h"

#include "models/gpu_profile.h"
#include "models/launch_order_names.h"
#include "models/spec_error.h"
#include "sim/gpu_simulator.h"
#include "sim/kernel_model.h"
#include "validation/compare/order_error.h"

#include <boost/program_options.hpp>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <iostream>
#include <mutex>
#include <optional>
#include <sstream>
#include <thread>

namespace tilesim::cli {
namespace {

std::vector<LaunchOrder> parse_orders(const std::string& text, bool grouped) {
  if (text == "all") return all_launch_orders(grouped);
  std::vector<LaunchOrder> orders;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    try {
      orders.push_back(parse_launch_order(item));
    } catch (const std::invalid_argument& e) {
      throw SpecError("--orders", item, e.what(), "");
    }
  }
  if (orders.empty()) throw SpecError("--orders", text, "names no launch order", "write all or a,b,c");
  return orders;
}

// Runs every order on a pool of threads; reports progress on stderr once a second has passed.
std::vector<KernelResult> simulate_orders(const GpuProfile& gpu, const KernelSpec& spec,
                                          const std::vector<LaunchOrder>& orders, unsigned threads) {
  std::vector<KernelResult> results(orders.size());
  std::vector<std::exception_ptr> errors(orders.size());
  std::vector<std::atomic<double>> fraction(orders.size());
  std::atomic<size_t> next{0};
  std::atomic<size_t> done{0};
  auto worker = [&] {
    for (size_t i = next++; i < orders.size(); i = next++) {
      KernelSpec s = spec;
      s.order = orders[i];
      try {
        results[i] = simulate(gpu, s, {.record_tiles = false, .progress = [&, i](double f) { fraction[i] = f; }});
      } catch (...) {
        errors[i] = std::current_exception(); // rethrown as it was: a SpecError stays one
      }
      fraction[i] = 1.0;
      ++done;
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::min<size_t>(threads, orders.size()); ++t) pool.emplace_back(worker);
  const auto start = std::chrono::steady_clock::now();
  bool reported = false;
  while (done < orders.size()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (elapsed < 1.0) continue;
    double sum = 0;
    for (const auto& f : fraction) sum += f;
    std::fprintf(stderr, "\rsimulating %zu orders on %u threads: %3.0f%% (%.0f s)", orders.size(),
                 std::min<unsigned>(threads, orders.size()), 100.0 * sum / orders.size(), elapsed);
    reported = true;
  }
  for (auto& t : pool) t.join();
  if (reported) std::fprintf(stderr, "\n");
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  return results;
}

std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');)
    if (!item.empty()) items.push_back(item);
  return items;
}

// --gpus: the same problem on each GPU, each with the GEMM model its architecture implies; the
// fastest of the requested orders (default: the spec's own) per GPU.
int compare_gpus(const std::string& gpu_list, const KernelSpec& spec, const std::string& orders_text, unsigned threads) {
  const auto names = split_list(gpu_list);
  if (names.empty()) throw SpecError("--gpus", gpu_list, "names no GPU", "write e.g. --gpus h100,b200");
  std::vector<GpuProfile> gpus; // every profile read before the first simulation, so a bad name fails at once
  for (const auto& name : names) gpus.push_back(load_gpu_profile(name));
  const auto orders = orders_text.empty() ? std::vector<LaunchOrder>{spec.order}
                                          : parse_orders(orders_text, spec.kind == KernelKind::grouped_gemm);
  if (spec.kind == KernelKind::elementwise && !spec.elementwise.shape_named)
    std::printf("%s: %s over %lld %s elements, vectors of %d, block and unroll the launcher's pick on each GPU, %s\n",
                spec.name.c_str(), to_string(spec.elementwise.op).c_str(),
                static_cast<long long>(spec.elementwise.elements), to_string(spec.a_dtype).c_str(),
                spec.elementwise.vector, spec.persistent ? "persistent" : "grid");
  else if (spec.kind == KernelKind::elementwise)
    std::printf("%s: %s over %lld %s elements, %d threads x %d x %d per CTA step, %s\n", spec.name.c_str(),
                to_string(spec.elementwise.op).c_str(), static_cast<long long>(spec.elementwise.elements),
                to_string(spec.a_dtype).c_str(), spec.elementwise.block, spec.elementwise.vector, spec.elementwise.unroll,
                spec.persistent ? "persistent" : "grid");
  else if (spec.kind == KernelKind::mxfp8_quantize)
    std::printf("%s: MXFP8 quantiser, bf16 %lld x %lld to %s, %s blocks of 32, %s scales\n", spec.name.c_str(),
                static_cast<long long>(spec.mxfp8.rows), static_cast<long long>(spec.mxfp8.cols),
                to_string(spec.mxfp8.element).c_str(), to_string(spec.mxfp8.axis).c_str(),
                to_string(spec.mxfp8.scale_rule).c_str());
  else
    std::printf("%s: %lld x %d x %d over %d expert(s), %s, tile %dx%dx%d, %d stages, cluster %d, %s\n", spec.name.c_str(),
                static_cast<long long>(spec.total_m()), spec.n, spec.k, spec.experts(), to_string(spec.a_dtype).c_str(),
                spec.tile.m, spec.tile.n, spec.tile.k, spec.stages, spec.cluster, spec.persistent ? "persistent" : "non-persistent");
  std::printf("  %-9s %-10s %-13s %-14s %10s %9s %8s %11s %9s\n", "gpu", "arch", "kernel model", "order", "time ms",
              "TFLOP/s", "L2 hit", "DRAM rd GB", "speedup");
  double first_ms = 0;
  for (size_t g = 0; g < gpus.size(); ++g) {
    const GpuProfile& gpu = gpus[g];
    auto results = simulate_orders(gpu, spec, orders, threads);
    const auto& r = *std::min_element(results.begin(), results.end(),
                                      [](const auto& a, const auto& b) { return a.time_ms < b.time_ms; });
    if (first_ms == 0) first_ms = r.time_ms;
    std::printf("  %-9s %-10s %-13s %-14s %10.4f %9.1f %7.1f%% %11.3f %8.2fx\n", names[g].c_str(), gpu.architecture.c_str(),
                kernel_model_name(spec, gpu).c_str(), r.order.c_str(), r.time_ms, r.tflops, 100 * r.l2_hit_rate,
                r.dram_read_bytes / 1e9, first_ms / r.time_ms);
  }
  std::printf("speedup: against the first GPU listed\n");
  return 0;
}

// The measured order error for `gpu`: from --order-error, else from the scores committed for it;
// none (no close-call mark) for a GPU without measurements.
std::optional<KnownOrderError> order_error_of(const std::string& path, const GpuProfile& gpu) {
  if (!path.empty()) return load_known_order_error(path, gpu.name);
  const std::string fallback = default_order_error_path(TILESIM_SOURCE_DIR, gpu.name);
  if (!std::filesystem::exists(fallback)) return std::nullopt;
  return load_known_order_error(fallback, gpu.name);
}

// An order is too close to call when its predicted time is within the model's known error in
// comparing two orders of the best's: the GPU may well run it at least as fast.
bool too_close_to_call(const KernelResult& order, const KernelResult& best, const KnownOrderError& error) {
  return order.time_ms <= best.time_ms * (1 + error.ratio_error);
}

} // namespace

std::string default_kernel_path() {
  const char* env = std::getenv("TILESIM_MODELS");
  return (env ? std::string(env) : std::string(TILESIM_SOURCE_DIR) + "/models") + "/kernels/default.json";
}

int whatif_command(const Args& args) {
  namespace po = boost::program_options;
  std::string gpu_name, gpu_list, kernel_path, orders_text, order_error_path;
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  po::options_description options("tilesim whatif --gpu h100 [--kernel spec.json] [--orders all|a,b,c] | --gpus h100,b200 --kernel spec.json");
  options.add_options()("help,h", "this help")(
      "gpu", po::value(&gpu_name)->default_value("h100"),
      "GPU profile: h100, h200, a100, b200 or a profile JSON path; b200@750: at a 750 W power limit")(
      "gpus", po::value(&gpu_list), "compare GPUs instead of orders: a comma list (h100,b200; b200@750 at a 750 W power limit), the spec's order "
      "on each")(
      "kernel", po::value(&kernel_path)->default_value(default_kernel_path(), "models/kernels/default.json"),
      "kernel spec JSON (default: the built-in MoE problem)")(
      "orders", po::value(&orders_text), "launch orders to compare: all (the default), or a comma list")(
      "threads", po::value(&threads), "simulations run in parallel (default: the machine's cores)")(
      "order-error", po::value(&order_error_path),
      "validate --json scores whose held-back order error marks close calls (default: "
      "validation/data/<gpu>/validate_scores.json where it exists)");
  if (!parse_options(args, options)) return 0;

  const KernelSpec spec = load_kernel_spec(kernel_path);
  if (!gpu_list.empty()) return compare_gpus(gpu_list, spec, orders_text, std::max(1u, threads));
  if (!spec.is_gemm())
    throw SpecError(kernel_path, "kind",
                    std::string("is ") + (spec.kind == KernelKind::elementwise ? "elementwise" : "mxfp8_quantize") +
                        ": its CTA steps have no launch order to compare",
                    "compare GPUs with --gpus h100,b200, or run tilesim simulate");
  const GpuProfile gpu = load_gpu_profile(gpu_name);
  const std::optional<KnownOrderError> known_error = order_error_of(order_error_path, gpu);
  const auto orders = parse_orders(orders_text.empty() ? "all" : orders_text, spec.kind == KernelKind::grouped_gemm);
  auto results = simulate_orders(gpu, spec, orders, std::max(1u, threads));
  std::sort(results.begin(), results.end(), [](const auto& a, const auto& b) { return a.time_ms < b.time_ms; });

  std::printf("%s on %s (%s): %lld x %d x %d over %d expert(s), tile %dx%dx%d, %d stages, %s\n", spec.name.c_str(),
              gpu.display_name.c_str(), spec.persistent ? "persistent" : "non-persistent",
              static_cast<long long>(spec.total_m()), spec.n, spec.k, spec.experts(), spec.tile.m, spec.tile.n,
              spec.tile.k, spec.stages, spec.load == LoadPath::tma ? "TMA" : "cp.async");
  std::printf("  %-16s %10s %9s %8s %11s %12s %8s\n", "order", "time ms", "TFLOP/s", "L2 hit", "DRAM rd GB",
              "DRAM wr GB", "vs best");
  for (size_t i = 0; i < results.size(); ++i) {
    const auto& r = results[i];
    const char* mark = i == 0 ? "*" : known_error && too_close_to_call(r, results.front(), *known_error) ? "~" : " ";
    std::printf("%s %-16s %10.4f %9.1f %7.1f%% %11.3f %12.3f %7.3fx\n", mark, r.order.c_str(), r.time_ms,
                r.tflops, 100 * r.l2_hit_rate, r.dram_read_bytes / 1e9, r.dram_write_bytes / 1e9,
                r.time_ms / results.front().time_ms);
  }
  std::printf("* fastest predicted order\n");
  if (known_error)
    std::printf("~ too close to call: within %.1f%% of the fastest, the model's error in the time ratio of two orders of one "
                "shape (90%% of %lld held-back pairs measured on this GPU are within it: %s)\n",
                100 * known_error->ratio_error, known_error->pairs, known_error->file.c_str());
  else
    std::printf("no measured order error for %s (no validate scores): orders are not marked too close to call\n",
                gpu.name.c_str());
  return 0;
}

} // namespace tilesim::cli
