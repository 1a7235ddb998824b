// The L2 request-merging probes (validation/microbench/l2_request_merging.cu, l2_merging_pairs.cu)
// replayed through the simulator's memory system: SMs walk the same 8 MB of 16 KB TMA boxes, each
// from its own first box and start time, with a few boxes in flight. What the GPU measured for
// each launch (validation/data/h100/microbench/l2_request_merging_run*.json,
// l2_merging_pairs_run*.json) is what the model's request coalescer is fitted to and held to.
#pragma once

#include "models/gpu_profile.h"
#include "sim/units.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace tilesim {

struct ProbeWalker {
  int sm = 0;
  Cycle start = 0;
  int first_box = 0;
  int in_flight = 1;
};

struct MergingProbeReplay {
  double lookups_per_requested_sector = 0; // lts__t_sectors_srcunit_tex_op_read / sectors the SMs asked for
  double time_us = 0;                       // at the profile's SM clock
};

MergingProbeReplay replay_merging_probe(const GpuProfile& gpu, const std::vector<ProbeWalker>& walkers);

// The walkers of one launch as the probe's JSON output describes it: {"lag_boxes", "in_flight"}
// (every SM, CTA c starting `lag` boxes after CTA c - 1) or {"leader_sm", "follower_sm",
// "delay_ns"} (two SMs, the follower starting later; follower -1: the leader alone).
std::vector<ProbeWalker> probe_walkers(const GpuProfile& gpu, const nlohmann::json& launch);

} // namespace tilesim
