#include "sim/sectored_cache.h"

#include <array>
#include <bit>

#include <algorithm>
#include <stdexcept>

namespace tilesim {
namespace {

// Sector masks are 8 bits; a table beats sectors_in where the target lacks a popcount
// instruction (the portable x86-64 baseline calls libgcc for it).
constexpr auto kPopcount = [] {
  std::array<std::uint8_t, 256> t{};
  for (int i = 0; i < 256; ++i) t[i] = static_cast<std::uint8_t>((i & 1) + (i >> 1 & 1) + (i >> 2 & 1) + (i >> 3 & 1) +
                                                                 (i >> 4 & 1) + (i >> 5 & 1) + (i >> 6 & 1) + (i >> 7 & 1));
  return t;
}();

int sectors_in(SectorMask m) { return kPopcount[m]; }

// Bit w set where tags[w] == tag; branch-free, as a hit's way is unpredictable.
std::uint64_t match_ways(const std::uint32_t* tags, std::uint32_t tag, int ways) {
  std::uint64_t match = 0;
  for (int w = 0; w < ways; ++w) match |= static_cast<std::uint64_t>(tags[w] == tag) << w;
  return match;
}

} // namespace

SectoredCache::SectoredCache(const CacheGeometry& g)
    : sets_(g.size_bytes / (static_cast<std::int64_t>(g.line_bytes) * g.ways)), ways_(g.ways),
      words_per_set_(3 * static_cast<std::size_t>(g.ways) + 1 + (static_cast<std::size_t>(g.ways) + 3) / 4) {
  if (sets_ < 1 || sets_ >= (std::int64_t{1} << 32) || g.line_bytes / g.sector_bytes > 8 || ways_ > 64)
    throw std::invalid_argument("cache geometry: need 1..2^32 sets, at most 64 ways and 8 sectors per line");
  words_.assign(static_cast<std::size_t>(sets_) * words_per_set_, 0);
  for (std::int64_t set = 0; set < sets_; ++set)
    std::fill_n(&words_[set * words_per_set_], ways_, kEmpty);
}

LookupOutcome SectoredCache::read(LineAddress line, SectorMask sectors) {
  const std::size_t set = static_cast<std::size_t>(set_of(line));
  Tag* tags = &words_[set * words_per_set_];
  std::uint32_t* last_use = tags + ways_;
  std::uint32_t& clock = last_use[ways_];
  std::uint32_t* fill_ready = &clock + 1;
  SectorMask* valid = valid_of(set);
  const Tag tag = static_cast<Tag>(line);
  ++clock;
  LookupOutcome out;
  const std::uint64_t match = match_ways(tags, tag, ways_);
  if (match != 0) {
    const int w = std::countr_zero(match);
    const SectorMask missing = static_cast<SectorMask>(sectors & ~valid[w]);
    out.missed = missing;
    out.miss_sectors = sectors_in(missing);
    out.hit_sectors = sectors_in(sectors) - out.miss_sectors;
    out.hit_ready = fill_ready[w];
    if (missing != 0) out.fill_ready = &fill_ready[w];
    valid[w] |= sectors;
    last_use[w] = clock;
    return out;
  }
  // Miss: an empty way if there is one, else the least recently used.
  int victim = 0;
  for (int w = 0; w < ways_; ++w) {
    if (tags[w] == kEmpty) {
      victim = w;
      break;
    }
    if (last_use[w] < last_use[victim]) victim = w;
  }
  out.missed = sectors;
  out.miss_sectors = sectors_in(sectors);
  tags[victim] = tag;
  last_use[victim] = clock;
  valid[victim] = sectors;
  fill_ready[victim] = 0;
  out.fill_ready = &fill_ready[victim];
  return out;
}

bool SectoredCache::contains(LineAddress line, SectorMask sectors) const {
  const std::size_t set = static_cast<std::size_t>(set_of(line));
  for (int w = 0; w < ways_; ++w)
    if (words_[set * words_per_set_ + w] == static_cast<Tag>(line))
      return (valid_of(set)[w] & sectors) == sectors;
  return false;
}

} // namespace tilesim
