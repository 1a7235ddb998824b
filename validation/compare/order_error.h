// The model's measured error in comparing two launch orders of one shape, read from the scores
// `tilesim validate --json` wrote for a GPU: what whatif's "too close to call" mark rests on.
#pragma once

#include <string>

namespace tilesim {

struct KnownOrderError {
  // 90th percentile, over the held-back pairs of orders of one shape, of how far the predicted time
  // ratio of the two is from the measured one (SplitScore::order_pair_error_p90).
  double ratio_error = 0;
  long long pairs = 0; // how many pairs it was taken over
  std::string file;
};

// validation/data/<gpu>/validate_scores.json under `source_dir`: where the validated GPUs keep it.
std::string default_order_error_path(const std::string& source_dir, const std::string& gpu_name);

// Reads `held_back.order_pair_error_p90` and `held_back.order_pairs` of a validate --json file and
// checks its `gpu` is `gpu_name`. Throws SpecError naming the file and field when it cannot.
KnownOrderError load_known_order_error(const std::string& path, const std::string& gpu_name);

} // namespace tilesim
