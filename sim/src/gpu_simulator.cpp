#include "sim/gpu_simulator.h"

#include "models/launch_order_names.h"
#include "models/spec_error.h"
#include "sim/event_queue.h"
#include "sim/kernel_model.h"
#include "sim/kernel_sequence.h"
#include "sim/memory_system.h"
#include "sim/occupancy.h"

#include <algorithm>
#include <vector>

namespace tilesim {
namespace {

enum class EventKind : std::uint8_t { producer_issue, consumer_step, mma_done, cta_exit };

struct Event {
  EventKind kind;
  int cta;
};

// One resident CTA. Its work is a list of tiles; each tile is k_steps items, and item j lives in
// ring stage j % stages.
struct Cta {
  int sm = 0;
  std::vector<WorkItem> tiles;
  long long issued = 0;   // items whose loads were issued
  long long started = 0;  // items whose MMA was started
  long long finished = 0; // items whose MMA finished
  // The other CTA of a persistent cluster pair, -1 without one. The pair runs in lockstep: a
  // stage is free again only when both consumers released it (the empty barrier counts both
  // CTAs' warps) and an item is ready only when both producers' loads landed (each multicasts
  // half of the shared tile into both CTAs): kernels/grouped_gemm/grouped_gemm_kernel.cuh.
  int partner = -1;
  std::vector<Cycle> stage_ready;
  // The producer finds a tile (TileScheduler::next) after issuing the previous tile's last load,
  // and issues the tile's first load no earlier than that lookup is done.
  Cycle last_issue = 0;
  long long scheduled_tiles = 0;
  Cycle schedule_done = 0;
  bool producer_pending = false;
  bool consumer_waiting = false;
  Cycle tile_begin = 0;
  // When the epilogue warps are free, and when each accumulator buffer was drained
  // (KernelModel::accumulator_buffers; tile j uses buffer j % buffers).
  Cycle epilogue_free = 0;
  Cycle accumulator_free[2] = {0, 0};
};

struct Sm {
  Cycle load_unit_free = 0; // the TMA unit (or the producer warp's cp.async issue)
  Cycle tensor_free = 0;
  Cycle tensor_busy = 0;
};

class Simulation {
public:
  Simulation(const GpuProfile& gpu, const KernelSpec& spec, const SimulationOptions& options)
      : gpu_(gpu), spec_(spec), options_(options), model_(make_kernel_model(spec, gpu)), memory_(gpu),
        sms_(gpu.sm.count), k_steps_(model_->k_steps()), tiles_(model_->tile_count()) {
    occupancy_ = occupancy(gpu.sm, model_->resources());
    if (occupancy_.ctas_per_sm < 1)
      throw SpecError(spec.source, "tile", "one CTA does not fit on an SM of " + gpu.name + " (limited by " +
                                             occupancy_.limited_by + ")",
                      "use a smaller tile, fewer stages or fewer warps");
    records_.resize(tiles_);
    // A CTA with shared memory waits longer for its slot: 402 cycles with 227 KB, 91 with none
    // (validation/data/h100/microbench/launch_overhead.json).
    cta_launch_cycles_ = model_->resources().shared_memory_bytes > 0 ? gpu.launch.cta_launch_cycles
                                                                      : gpu.launch.cta_launch_cycles_without_shared_memory;
  }

  KernelResult run();

private:
  void launch_cta(Cycle t, int sm, std::vector<WorkItem> tiles);
  WorkItem work_item(int item) const;
  // The SM the b-th CTA of a wave lands on: the profile's measured dispatch order (for the
  // launch's cluster size), else SM b.
  int sm_of_block(int b) const {
    const std::vector<int>& order =
        spec_.cluster > 1 && !gpu_.sm.cluster_dispatch_order.empty() ? gpu_.sm.cluster_dispatch_order : gpu_.sm.dispatch_order;
    return order.empty() ? b : order[b];
  }
  void producer_issue(Cycle t, int id);
  void consumer_step(Cycle t, int id);
  void mma_done(Cycle t, int id);
  void cta_exit(Cycle t, int id);
  void wake_consumer(Cycle t, int id);
  void wake_producer(Cycle t, int id);
  // The consumers' own TileScheduler::next before a work item's first MMA, where the kernel's
  // consumers find their tiles themselves (the producer's call runs ahead of them).
  Cycle consumer_schedule_cycles(const WorkItem& w) const { return model_->consumer_finds_tile() ? w.schedule_cycles : 0; }
  Cycle issue_cost(const Box& box) const;
  KernelResult result(Cycle end) const;

  const GpuProfile& gpu_;
  const KernelSpec& spec_;
  const SimulationOptions& options_;
  std::unique_ptr<KernelModel> model_;
  Cycle cta_launch_cycles_ = 0; // the block scheduler placing one CTA (launch_overhead.json)
  MemorySystem memory_;
  std::vector<Sm> sms_;
  std::vector<Cta> ctas_;
  std::vector<TileRecord> records_;
  std::vector<SectorCount> a_sectors_, b_sectors_;
  EventQueue<Event> events_;
  Occupancy occupancy_;
  int k_steps_;
  int tiles_;
  int blocks_ = 0;     // work items of the grid: tiles, padded to whole clusters
  int next_block_ = 0; // non-persistent grids: the next blockIdx the block scheduler hands out
  int tiles_done_ = 0;
  Cycle end_ = 0;
  std::vector<OperandBox> boxes_;
  std::vector<Box> store_boxes_;
};

Cycle Simulation::issue_cost(const Box& box) const {
  if (model_->uses_tma()) return gpu_.tma.issue_cycles_per_box;
  // cp.async: each thread copies 16 bytes, a warp instruction 512, one per scheduler per cycle.
  const double warp_instructions = static_cast<double>(box.rows * box.row_bytes) / (16.0 * 32.0);
  return warp_instructions / gpu_.sm.warp_schedulers;
}

// The grid's work item `item`: its tile, and in a cluster its partner's.
WorkItem Simulation::work_item(int item) const {
  WorkItem w;
  w.linear = std::min(item, tiles_ - 1);
  w.store = item < tiles_;
  // The kernel's TileScheduler calls tile_at for each tile of the pair that exists.
  const auto lookup_cycles = [&](const TileLookup& l) {
    if (!model_->calls_tile_scheduler()) return 0.0;
    const TileSchedulerCost cost = gpu_.tile_scheduler.cost(spec_.order.kind);
    return cost.cycles_per_call + cost.cycles_per_loop_trip * static_cast<double>(l.loop_trips);
  };
  const TileLookup own = model_->lookup_tile(w.linear);
  w.tile = own.tile;
  w.schedule_cycles = lookup_cycles(own);
  if (spec_.cluster == 2) {
    w.rank = item % 2;
    w.has_partner = true;
    const int partner = item ^ 1;
    const TileLookup other = model_->lookup_tile(std::min(partner, tiles_ - 1));
    w.partner = other.tile;
    if (partner < tiles_) w.schedule_cycles += lookup_cycles(other);
  }
  return w;
}

void Simulation::launch_cta(Cycle placed, int sm, std::vector<WorkItem> tiles) {
  const Cycle t = placed + model_->cta_start_cycles();
  Cta cta;
  cta.sm = sm;
  cta.tiles = std::move(tiles);
  cta.stage_ready.assign(spec_.stages, 0);
  cta.tile_begin = t + consumer_schedule_cycles(cta.tiles.front());
  cta.last_issue = t + model_->cta_first_load_cycles();
  ctas_.push_back(std::move(cta));
  const int id = static_cast<int>(ctas_.size()) - 1;
  events_.push(ctas_[id].last_issue, {EventKind::producer_issue, id});
  events_.push(ctas_[id].tile_begin, {EventKind::consumer_step, id});
  ctas_[id].producer_pending = true;
}

void Simulation::producer_issue(Cycle t, int id) {
  Cta& c = ctas_[id];
  Sm& sm = sms_[c.sm];
  c.producer_pending = false;
  const long long items = static_cast<long long>(c.tiles.size()) * k_steps_;
  const auto released = [&] { return c.partner < 0 ? c.finished : std::min(c.finished, ctas_[c.partner].finished); };
  while (c.issued < items && c.issued - released() < spec_.stages) {
    if (sm.load_unit_free > t) {
      events_.push(sm.load_unit_free, {EventKind::producer_issue, id});
      c.producer_pending = true;
      return;
    }
    const WorkItem& item = c.tiles[c.issued / k_steps_];
    if (c.issued / k_steps_ == c.scheduled_tiles) {
      c.schedule_done = c.last_issue + item.schedule_cycles;
      ++c.scheduled_tiles;
    }
    if (c.schedule_done > t) {
      events_.push(c.schedule_done, {EventKind::producer_issue, id});
      c.producer_pending = true;
      return;
    }
    const int linear = item.linear;
    boxes_.clear();
    model_->load_boxes(item, static_cast<int>(c.issued % k_steps_), boxes_);
    Cycle ready = t;
    Cycle issue_done = t;
    for (const auto& ob : boxes_) {
      issue_done += issue_cost(ob.box);
      SectorCount padding; // the padding partner's loads are not its tile's
      SectorCount& counts = !item.store ? padding : ob.operand == Operand::a ? a_sectors_[linear] : b_sectors_[linear];
      ready = std::max(ready, memory_.read_box(issue_done, c.sm, ob.box, counts));
    }
    if (model_->uses_tma()) ready += gpu_.tma.latency_cycles;
    sm.load_unit_free = issue_done;
    c.last_issue = issue_done;
    c.stage_ready[c.issued % spec_.stages] = ready;
    ++c.issued;
    wake_consumer(t, id);
    if (c.partner >= 0) wake_consumer(t, c.partner);
  }
}

void Simulation::wake_consumer(Cycle t, int id) {
  Cta& c = ctas_[id];
  if (!c.consumer_waiting) return;
  c.consumer_waiting = false;
  events_.push(t, {EventKind::consumer_step, id});
}

void Simulation::wake_producer(Cycle t, int id) {
  Cta& c = ctas_[id];
  if (c.producer_pending) return;
  c.producer_pending = true;
  events_.push(t, {EventKind::producer_issue, id});
}

void Simulation::consumer_step(Cycle t, int id) {
  Cta& c = ctas_[id];
  const Cta* partner = c.partner >= 0 ? &ctas_[c.partner] : nullptr;
  if (c.started >= c.issued || (partner && c.started >= partner->issued)) {
    c.consumer_waiting = true;
    return;
  }
  const int stage = static_cast<int>(c.started % spec_.stages);
  const Cycle ready = partner ? std::max(c.stage_ready[stage], partner->stage_ready[stage]) : c.stage_ready[stage];
  if (ready > t) {
    events_.push(ready, {EventKind::consumer_step, id});
    return;
  }
  if (c.started % k_steps_ == 0) {
    const Cycle drained = std::max(c.accumulator_free[(c.started / k_steps_) % model_->accumulator_buffers()],
                                   c.tile_begin + model_->tile_setup_cycles());
    if (drained > t) {
      events_.push(drained, {EventKind::consumer_step, id});
      return;
    }
  }
  Sm& sm = sms_[c.sm];
  const Cycle start = std::max(t, sm.tensor_free);
  const Cycle mma = model_->mma_cycles_per_k_step();
  sm.tensor_free = start + mma;
  sm.tensor_busy += mma;
  ++c.started;
  // Conversions and scaling run on the CUDA cores alongside the other warpgroup's MMAs.
  events_.push(start + std::max(mma, model_->element_cycles_per_k_step()), {EventKind::mma_done, id});
}

void Simulation::mma_done(Cycle t, int id) {
  Cta& c = ctas_[id];
  ++c.finished;
  wake_producer(t, id);
  if (c.partner >= 0) wake_producer(t, c.partner);
  if (c.finished % k_steps_ != 0) {
    events_.push(t, {EventKind::consumer_step, id});
    return;
  }
  // Last K step of a tile: the epilogue converts and stores it.
  const WorkItem& item = c.tiles[c.finished / k_steps_ - 1];
  const int linear = item.linear;
  const TileIndex& tile = item.tile;
  const int buffers = model_->accumulator_buffers();
  const Cycle epilogue_start = std::max(t, c.epilogue_free);
  const Cycle epilogue_end = epilogue_start + model_->epilogue_cycles();
  // The tile's record ends with its last store's issue, as the kernel's trace does; the epilogue
  // keeps the consumers a while longer.
  const Cycle consumers_free = epilogue_end + model_->epilogue_tail_cycles();
  c.epilogue_free = consumers_free;
  c.accumulator_free[(c.finished / k_steps_ - 1) % buffers] = consumers_free;
  if (item.store) {
    store_boxes_.clear();
    model_->store_boxes(tile, store_boxes_);
    for (const Box& box : store_boxes_) end_ = std::max(end_, memory_.write_box(epilogue_start, c.sm, box));
    TileRecord& r = records_[linear];
    r = {linear, tile.expert, tile.row, tile.col, c.sm, 0, 0, c.tile_begin, epilogue_end,
         a_sectors_[linear].hits, a_sectors_[linear].misses, b_sectors_[linear].hits, b_sectors_[linear].misses};
    ++tiles_done_;
  }
  if (options_.progress && tiles_done_ % 1024 == 0) options_.progress(static_cast<double>(tiles_done_) / tiles_);
  // With a second accumulator buffer the next tile's MMA runs during this epilogue.
  const Cycle next_tile = buffers > 1 ? t : consumers_free;
  c.tile_begin = next_tile;
  if (c.finished < static_cast<long long>(c.tiles.size()) * k_steps_) {
    c.tile_begin += consumer_schedule_cycles(c.tiles[c.finished / k_steps_]);
    events_.push(c.tile_begin, {EventKind::consumer_step, id});
  } else {
    events_.push(consumers_free, {EventKind::cta_exit, id});
  }
}

void Simulation::cta_exit(Cycle t, int id) {
  end_ = std::max(end_, t);
  if (spec_.persistent || next_block_ >= blocks_) return;
  const int sm = ctas_[id].sm;
  launch_cta(t + cta_launch_cycles_, sm, {work_item(next_block_++)});
}

KernelResult Simulation::run() {
  a_sectors_.assign(tiles_, {});
  b_sectors_.assign(tiles_, {});
  const Cycle first_launch = cta_launch_cycles_;
  // Clusters take work items in pairs; an odd count gets a padding partner (WorkItem::store).
  blocks_ = (tiles_ + spec_.cluster - 1) / spec_.cluster * spec_.cluster;
  if (spec_.persistent) {
    // One CTA per SM striding through the launch order (the kernels' TileScheduler).
    const int grid = std::min(gpu_.sm.count / spec_.cluster * spec_.cluster, blocks_);
    for (int cta = 0; cta < grid; ++cta) {
      std::vector<WorkItem> items;
      for (int item = cta; item < blocks_; item += grid) items.push_back(work_item(item));
      launch_cta(first_launch, sm_of_block(cta), std::move(items));
      if (spec_.cluster == 2) ctas_[cta].partner = cta ^ 1;
    }
  } else {
    // The first wave fills every SM's first slot, then every SM's second, in blockIdx order.
    for (int slot = 0; slot < occupancy_.ctas_per_sm; ++slot)
      for (int b = 0; b < gpu_.sm.count && next_block_ < blocks_; ++b)
        launch_cta(first_launch, sm_of_block(b), {work_item(next_block_++)});
  }
  for (long long n = 1; !events_.empty(); ++n) {
    if (options_.cancel && n % 4096 == 0 && options_.cancel->load(std::memory_order_relaxed)) throw SimulationCancelled();
    const auto e = events_.pop();
    switch (e.payload.kind) {
    case EventKind::producer_issue: producer_issue(e.time, e.payload.cta); break;
    case EventKind::consumer_step: consumer_step(e.time, e.payload.cta); break;
    case EventKind::mma_done: mma_done(e.time, e.payload.cta); break;
    case EventKind::cta_exit: cta_exit(e.time, e.payload.cta); break;
    }
  }
  // CUPTI times a kernel from before its first CTA is placed to after its last one has drained:
  // what an empty kernel's duration has beyond placing its one CTA comes on top of the span.
  const Cycle start_drain = gpu_.launch.kernel_start_drain_ns * gpu_.sm.clock_mhz / 1000.0 - first_launch;
  return result(end_ + std::max(0.0, start_drain));
}

KernelResult Simulation::result(Cycle end) const {
  const ClockDomain clock{gpu_.sm.clock_mhz};
  const MemoryTotals& m = memory_.totals();
  KernelResult r;
  r.source = "simulated";
  r.gpu = gpu_.name;
  r.order = to_string(spec_.order);
  r.kernel = to_json(spec_);
  // The kernel's own duration, as CUPTI's activity records time it; the host's launch overhead
  // comes before it and is reported apart.
  r.time_ms = clock.ms(end);
  r.tflops = spec_.flops() / (r.time_ms * 1e-3) / 1e12;
  // As lts__t_sector_hit_rate reports it: with the lookups the profiler counts in every launch.
  const long long background = gpu_.l2.counter_background_sectors;
  const long long lookups = m.lookup_sectors() + background;
  r.l2_hit_rate = lookups > 0 ? static_cast<double>(m.hit_sectors() + background) / lookups : 0.0;
  r.dram_read_bytes = m.dram_read_bytes;
  r.dram_write_bytes = m.dram_write_bytes;
  r.l2_read_sectors = m.sm_read_sectors;
  if (options_.record_tiles) {
    r.tiles = records_;
    for (auto& t : r.tiles) {
      t.start_ns = clock.ns(*t.start_cycle);
      t.end_ns = clock.ns(*t.end_cycle);
    }
  }
  double tensor_busy = 0;
  for (const auto& sm : sms_) tensor_busy += sm.tensor_busy;
  r.extra = {{"cycles", end},
             {"launch_overhead_us", gpu_.launch.kernel_launch_overhead_us},
             {"sm_clock_mhz", gpu_.sm.clock_mhz},
             {"ctas_per_sm", occupancy_.ctas_per_sm},
             {"occupancy_limited_by", occupancy_.limited_by},
             {"tensor_busy_fraction", end > 0 ? tensor_busy / (end * gpu_.sm.count) : 0.0},
             {"dram_busy_fraction", end > 0 ? memory_.dram().busy_cycles() / end : 0.0},
             {"l2_bandwidth_busy_fraction", end > 0 ? memory_.l2_bandwidth().busy_cycles() / end : 0.0},
             {"l2_near_read_hit_sectors", m.near_read_hit_sectors},
             {"l2_fabric_read_sectors", m.fabric_read_sectors},
             {"l2_far_read_hit_sectors", m.far_read_hit_sectors},
             {"l2_fabric_promotion_sectors", m.fabric_promotion_sectors},
             {"l2_write_sectors", m.write_sectors},
             {"l2_coalesced_read_sectors", m.coalesced_read_sectors},
             {"l2_line_lookups", m.l2_line_lookups}};
  return r;
}

} // namespace

KernelResult simulate(const GpuProfile& gpu, const KernelSpec& spec, const SimulationOptions& options) {
  Simulation simulation(gpu, spec, options);
  KernelResult result = simulation.run();
  // A kernel launched before this one and timed with it runs first from the cold L2 the measurement
  // starts from; this one is replayed from a cold L2 too (what of the first's output the L2 still
  // holds is not carried over).
  const std::optional<KernelSpec> before = kernel_launched_before(spec, gpu);
  if (!before) return result;
  SimulationOptions quiet = options;
  quiet.progress = nullptr;
  quiet.record_tiles = false;
  return run_in_sequence(Simulation(gpu, *before, quiet).run(), std::move(result));
}

} // namespace tilesim
