#include "sim/sectored_cache.h"

#include <algorithm>
#include <iterator>
#include <stdexcept>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace tilesim {
namespace {

constexpr std::uint32_t kValidBits = 0xF;

} // namespace

SectoredCache::SectoredCache(const CacheGeometry& g)
    : sets_(g.size_bytes / (static_cast<std::int64_t>(g.line_bytes) * g.ways)), ways_(g.ways) {
  if (sets_ < 1 || sets_ >= (std::int64_t{1} << 32) || g.line_bytes / g.sector_bytes > 4 || ways_ < 1 || ways_ > kSlots)
    throw std::invalid_argument("cache geometry: need 1..2^32 sets, 1..16 ways and at most 4 sectors per line");
  Set empty{};
  std::fill(std::begin(empty.tags), std::end(empty.tags), kEmpty);
  sets_data_.assign(static_cast<std::size_t>(sets_), empty);
}

int SectoredCache::find(const Set& set, std::uint32_t tag) {
#if defined(__SSE2__)
  // Four compares of four tags; the hit's slot is unpredictable, so no early exit.
  const __m128i key = _mm_set1_epi32(static_cast<int>(tag));
  unsigned match = 0;
  for (int q = 0; q < kSlots / 4; ++q) {
    const __m128i tags = _mm_load_si128(reinterpret_cast<const __m128i*>(set.tags) + q);
    match |= static_cast<unsigned>(_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(tags, key)))) << (4 * q);
  }
  return match != 0 ? __builtin_ctz(match) : kSlots;
#else
  for (int s = 0; s < kSlots; ++s)
    if (set.tags[s] == tag) return s;
  return kSlots;
#endif
}

inline void SectoredCache::move_to_front(Set& set, int from) {
  const std::uint32_t tag = set.tags[from], state = set.state[from];
#if defined(__SSE2__)
  // Branch-free: each group of four slots takes its shifted copy where its slot is at most `from`.
  const auto shift = [from](std::uint32_t* slots) {
    __m128i* q = reinterpret_cast<__m128i*>(slots);
    const __m128i limit = _mm_set1_epi32(from + 1);
    __m128i previous = _mm_setzero_si128();
    for (int i = 0; i < kSlots / 4; ++i) {
      const __m128i current = _mm_load_si128(q + i);
      const __m128i shifted = _mm_or_si128(_mm_slli_si128(current, 4), _mm_srli_si128(previous, 12));
      const __m128i moves = _mm_cmpgt_epi32(limit, _mm_setr_epi32(4 * i, 4 * i + 1, 4 * i + 2, 4 * i + 3));
      _mm_store_si128(q + i, _mm_or_si128(_mm_and_si128(moves, shifted), _mm_andnot_si128(moves, current)));
      previous = current;
    }
  };
  shift(set.tags);
  shift(set.state);
#else
  for (int s = from; s > 0; --s) {
    set.tags[s] = set.tags[s - 1];
    set.state[s] = set.state[s - 1];
  }
#endif
  set.tags[0] = tag;
  set.state[0] = state;
}

LookupOutcome SectoredCache::read(LineAddress line, SectorMask sectors) {
  Set& set = sets_data_[static_cast<std::size_t>(set_of(line))];
  const auto tag = static_cast<std::uint32_t>(line);
  LookupOutcome out;
  const int slot = find(set, tag);
  if (slot < ways_) {
    const std::uint32_t state = set.state[slot];
    const auto missing = static_cast<SectorMask>(sectors & ~state & kValidBits);
    out.missed = missing;
    out.miss_sectors = sectors_in(missing);
    out.hit_sectors = sectors_in(sectors) - out.miss_sectors;
    out.hit_ready = state >> kFillShift;
    set.state[slot] = state | (sectors & kValidBits);
    move_to_front(set, slot);
    return out;
  }
  // Miss: the last slot goes, which is an empty one while the set has any (they stay behind the
  // used ones), else the least recently used line.
  move_to_front(set, ways_ - 1);
  set.tags[0] = tag;
  set.state[0] = sectors & kValidBits;
  out.missed = sectors;
  out.miss_sectors = sectors_in(sectors);
  return out;
}

void SectoredCache::set_fill_ready(LineAddress line, Cycle cycle) {
  Set& set = sets_data_[static_cast<std::size_t>(set_of(line))];
  const int slot = find(set, static_cast<std::uint32_t>(line));
  if (slot >= ways_) return;
  // Rounded up, so a hit never sees data early; held at the latest cycle the state can hold.
  const auto c = static_cast<std::uint32_t>(std::min(cycle + 1.0, static_cast<double>(kLatestFill)));
  std::uint32_t& state = set.state[slot];
  if (c > state >> kFillShift) state = c << kFillShift | (state & kValidBits);
}

bool SectoredCache::contains(LineAddress line, SectorMask sectors) const {
  const Set& set = sets_data_[static_cast<std::size_t>(set_of(line))];
  const int slot = find(set, static_cast<std::uint32_t>(line));
  return slot < ways_ && (set.state[slot] & sectors) == sectors;
}

} // namespace tilesim
