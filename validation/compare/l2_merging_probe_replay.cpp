#include "validation/compare/l2_merging_probe_replay.h"

#include "sim/event_queue.h"
#include "sim/memory_system.h"

namespace tilesim {
namespace {

// The probes' geometry: a 8192 x 4096 bf16 tensor, 128 x 64 boxes, 512 of them (8 MB) walked.
constexpr int kBoxes = 512;
constexpr int kSteps = kBoxes; // each walker reads the whole region once
constexpr ByteCount kRowBytes = 4096 * 2;
constexpr int kBoxRows = 128;
constexpr ByteCount kBoxRowBytes = 64 * 2;
constexpr int kColBlocks = static_cast<int>(kRowBytes / kBoxRowBytes);
constexpr Address kTensorBase = Address{1} << 32;

Box probe_box(int j) {
  const Address band = static_cast<Address>(j / kColBlocks), col_block = static_cast<Address>(j % kColBlocks);
  return {kTensorBase + band * kBoxRows * kRowBytes + col_block * kBoxRowBytes, kBoxRowBytes, kRowBytes, kBoxRows, true};
}

} // namespace

std::vector<ProbeWalker> probe_walkers(const GpuProfile& gpu, const nlohmann::json& launch) {
  std::vector<ProbeWalker> walkers;
  if (launch.contains("lag_boxes")) {
    const long long lag = launch.at("lag_boxes").get<long long>();
    const int in_flight = launch.at("in_flight").get<int>();
    for (int c = 0; c < gpu.sm.count; ++c)
      walkers.push_back({gpu.sm.dispatch_order.empty() ? c : gpu.sm.dispatch_order[c], 0,
                         static_cast<int>(c * lag % kBoxes), in_flight});
  } else {
    walkers.push_back({launch.at("leader_sm").get<int>(), 0, 0, 1});
    const int follower = launch.at("follower_sm").get<int>();
    const double delay_cycles = launch.at("delay_ns").get<double>() * gpu.sm.clock_mhz / 1000.0;
    if (follower >= 0) walkers.push_back({follower, delay_cycles, 0, 1});
  }
  return walkers;
}

MergingProbeReplay replay_merging_probe(const GpuProfile& gpu, const std::vector<ProbeWalker>& walkers) {
  MemorySystem memory(gpu);
  const int n = static_cast<int>(walkers.size());
  std::vector<std::vector<Cycle>> landed(n, std::vector<Cycle>(kSteps, 0));
  std::vector<int> next(n, 0);
  EventQueue<int> events;
  for (int w = 0; w < n; ++w) events.push(walkers[w].start, w);
  Cycle end = 0;
  SectorCount outcome;
  while (!events.empty()) {
    const auto e = events.pop();
    const ProbeWalker& walker = walkers[e.payload];
    std::vector<Cycle>& own = landed[e.payload];
    const int step = next[e.payload]++;
    const Cycle issue = e.time + gpu.tma.issue_cycles_per_box;
    own[step] = memory.read_box(issue, walker.sm, probe_box((walker.first_box + step) % kBoxes), outcome) +
                gpu.tma.latency_cycles;
    end = std::max(end, own[step]);
    if (step + 1 == kSteps) continue;
    // The next box goes out once its ring slot's previous box has landed.
    const int recycled = step + 1 - walker.in_flight;
    events.push(recycled >= 0 ? std::max(issue, own[recycled]) : issue, e.payload);
  }
  const double box_sectors = static_cast<double>(kBoxRows * kBoxRowBytes / gpu.l2.sector_bytes);
  const double requested = static_cast<double>(n) * kSteps * box_sectors;
  return {static_cast<double>(memory.totals().sm_read_sectors) / requested, ClockDomain{gpu.sm.clock_mhz}.ns(end) / 1e3};
}

} // namespace tilesim
