#include "sim/sectored_cache.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

namespace tilesim {
#if defined(__SSE2__)
const SectoredCache::ByteTables SectoredCache::kByteTables = [] {
  ByteTables t{};
  for (int v = 0; v < 16; ++v)
    for (int i = 0; i < 16; ++i) {
      t.splat[v].b[i] = static_cast<std::uint8_t>(v);
      t.lane[v].b[i] = i == v ? 0xFF : 0;
    }
  return t;
}();
#endif

SectoredCache::SectoredCache(const CacheGeometry& g, FillCycles* fills)
    : sets_(g.size_bytes / (static_cast<std::int64_t>(g.line_bytes) * g.ways)), ways_(g.ways),
      own_fills_(fills ? nullptr : std::make_unique<FillCycles>()), fills_(fills ? fills : own_fills_.get()) {
  if (sets_ < 1 || sets_ >= (std::int64_t{1} << 32) || g.line_bytes / g.sector_bytes > 4 || ways_ < 1 || ways_ > kSlots)
    throw std::invalid_argument("cache geometry: need 1..2^32 sets, 1..16 ways and at most 4 sectors per line");
  Set empty{};
  std::fill(std::begin(empty.tags), std::end(empty.tags), kEmpty);
  sets_data_.assign(static_cast<std::size_t>(sets_), empty);
  Ranks fresh{};
  for (int s = 0; s < kSlots; ++s) fresh.rank[s] = s < ways_ ? static_cast<std::uint8_t>(s) : kUnused;
  ranks_.assign(static_cast<std::size_t>(sets_), fresh);
}

bool SectoredCache::contains(LineAddress line, SectorMask sectors) const {
  const Set& set = sets_data_[static_cast<std::size_t>(set_of(line))];
  const int slot = find(set, static_cast<std::uint32_t>(line));
  return slot < ways_ && (set.state[slot] & sectors) == sectors;
}

} // namespace tilesim
