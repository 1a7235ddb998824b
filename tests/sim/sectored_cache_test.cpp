#include "sim/sectored_cache.h"

#include "tests/sim/lines_in_one_set.h"

#include <catch2/catch.hpp>

using namespace tilesim;

using testing::lines_in_one_set;

TEST_CASE("sectored cache: hits, sector misses, LRU eviction") {
  // 4 sets of 2 ways, 128-byte lines of four 32-byte sectors.
  SectoredCache cache({4 * 2 * 128, 128, 32, 2});
  REQUIRE(cache.sets() == 4);
  const auto set = lines_in_one_set(cache, 3);

  SECTION("a cold read misses every sector, the second read hits them") {
    auto o = cache.read(set[0], 0b1111);
    CHECK(o.miss_sectors == 4);
    CHECK(o.hit_sectors == 0);
    o = cache.read(set[0], 0b1111);
    CHECK(o.hit_sectors == 4);
    CHECK(o.miss_sectors == 0);
  }
  SECTION("a read of other sectors of a present line misses only those sectors") {
    cache.read(set[0], 0b0011);
    const auto o = cache.read(set[0], 0b0110);
    CHECK(o.hit_sectors == 1);
    CHECK(o.miss_sectors == 1);
  }
  SECTION("the least recently used line of a full set is evicted") {
    cache.read(set[0], 0b1111);
    cache.read(set[1], 0b1111);
    cache.read(set[0], 0b0001); // set[1] is now least recently used
    cache.read(set[2], 0b1111); // evicts set[1]
    CHECK(cache.contains(set[0], 0b1111));
    CHECK_FALSE(cache.contains(set[1], 0b0001));
    CHECK(cache.contains(set[2], 0b1111));
  }
}

TEST_CASE("sectored cache: a hit reports when the fill it waits for lands") {
  SectoredCache cache({4 * 2 * 128, 128, 32, 2});
  const auto set = lines_in_one_set(cache, 3);
  cache.read(set[0], 0b0011);
  cache.set_fill_ready(set[0], 500.0);
  auto o = cache.read(set[0], 0b0001);
  CHECK(o.hit_ready == 501); // rounded up
  CHECK(o.miss_sectors == 0); // nothing to fetch
  // Fetching more sectors later moves the line's fill time on; it never moves back.
  o = cache.read(set[0], 0b0100);
  cache.set_fill_ready(set[0], 800.0);
  cache.set_fill_ready(set[0], 600.0);
  CHECK(cache.read(set[0], 0b0001).hit_ready == 801);
  // A line allocated anew starts with no pending fill.
  cache.read(set[1], 0b1111);
  cache.read(set[2], 0b1111); // evicts set[0]
  CHECK(cache.read(set[0], 0b1111).hit_ready == 0);
}

TEST_CASE("sectored cache: a working set within capacity misses only on its first pass") {
  SectoredCache cache({64 * 1024, 128, 32, 16}); // 512 lines
  long long misses = 0;
  for (int pass = 0; pass < 3; ++pass)
    for (LineAddress l = 0; l < 256; ++l) misses += cache.read(l, 0b1111).miss_sectors;
  CHECK(misses == 256 * 4); // only the first pass misses (256 lines spread over 32 sets of 16 ways)
}

TEST_CASE("sectored cache: LRU order follows every hit, and a fill time is dropped with its line") {
  // One set of 4 ways.
  SectoredCache cache({4 * 128, 128, 32, 4});
  const auto line = lines_in_one_set(cache, 6);
  for (int i = 0; i < 4; ++i) cache.read(line[i], 0b1111); // recency, newest first: 3 2 1 0
  cache.read(line[1], 0b0001);                              // 1 3 2 0
  cache.read(line[0], 0b0001);                              // 0 1 3 2
  cache.read(line[4], 0b1111);                              // 4 0 1 3: line 2 goes
  CHECK_FALSE(cache.contains(line[2], 0b0001));
  cache.read(line[5], 0b1111); // 5 4 0 1: line 3 goes
  CHECK_FALSE(cache.contains(line[3], 0b0001));
  for (int i : {0, 1, 4, 5}) CHECK(cache.contains(line[i], 0b1111));
  // A fill recorded for a line evicted since changes nothing; one for a present line is kept.
  cache.set_fill_ready(line[2], 900.0);
  cache.set_fill_ready(line[5], 700.0);
  CHECK(cache.read(line[5], 0b0001).hit_ready == 701);
  CHECK(cache.read(line[4], 0b0001).hit_ready == 0);
  CHECK(cache.read(line[2], 0b0001).hit_ready == 0); // allocated anew: no fill pending
}

TEST_CASE("sectored cache: a write allocates dirty sectors without fetching; their eviction reports them") {
  SectoredCache cache({4 * 2 * 128, 128, 32, 2}); // 4 sets of 2 ways
  const auto set = lines_in_one_set(cache, 4);
  SECTION("a write to an absent line allocates its sectors and evicts nothing dirty") {
    const auto o = cache.write(set[0], 0b0011);
    CHECK(o.miss_sectors == 2); // allocated, not fetched: the caller counts stores as hits
    CHECK(o.evicted_dirty_sectors == 0);
    CHECK(cache.contains(set[0], 0b0011));
    CHECK(cache.read(set[0], 0b0011).hit_sectors == 2); // written data is read back from L2
  }
  SECTION("evicting a written line reports its dirty sectors, a read-only line none") {
    cache.write(set[0], 0b0111);
    cache.read(set[1], 0b1111);
    CHECK(cache.read(set[2], 0b1111).evicted_dirty_sectors == 3); // set[0] was least recently used
    CHECK(cache.read(set[3], 0b1111).evicted_dirty_sectors == 0); // set[1] was only read
  }
  SECTION("reading a dirty line keeps it dirty; sectors written twice count once") {
    cache.write(set[0], 0b0001);
    cache.read(set[0], 0b1110); // fetches the other three, clean
    cache.write(set[0], 0b0011);
    cache.read(set[1], 0b1111);
    CHECK(cache.write(set[2], 0b1111).evicted_dirty_sectors == 2);
  }
  SECTION("a fill time recorded on a dirty line keeps its dirty sectors") {
    cache.write(set[0], 0b1000);
    cache.read(set[0], 0b0001);
    cache.set_fill_ready(set[0], 700.0);
    CHECK(cache.read(set[0], 0b0001).hit_ready == 701);
    cache.read(set[1], 0b1111);
    CHECK(cache.read(set[2], 0b1111).evicted_dirty_sectors == 1);
  }
}

TEST_CASE("sectored cache: LRU over every way of a 16-way set, and over 3 ways") {
  for (const int ways : {16, 3}) {
    SECTION(std::to_string(ways) + " ways") {
      SectoredCache cache({ways * 128, 128, 32, ways}); // one set
      const auto line = lines_in_one_set(cache, ways + 2);
      for (int i = 0; i < ways; ++i) CHECK(cache.read(line[i], 0b1111).miss_sectors == 4); // empty ways first
      for (int i = 0; i < ways; ++i) CHECK(cache.contains(line[i], 0b1111));
      cache.read(line[0], 0b0001);                           // line 0 most recent, line 1 least
      CHECK(cache.read(line[ways], 0b1111).miss_sectors == 4); // evicts line 1
      CHECK_FALSE(cache.contains(line[1], 0b0001));
      CHECK(cache.contains(line[0], 0b1111));
      cache.read(line[ways + 1], 0b1111); // evicts line 2 (line 0 was used after it)
      CHECK_FALSE(cache.contains(line[2], 0b0001));
      CHECK(cache.contains(line[0], 0b1111));
    }
  }
}

TEST_CASE("sectored cache: sectors in a mask") {
  const int expected[16] = {0, 1, 1, 2, 1, 2, 2, 3, 1, 2, 2, 3, 2, 3, 3, 4};
  for (int m = 0; m < 16; ++m) CHECK(SectoredCache::sectors_in(static_cast<SectorMask>(m)) == expected[m]);
}

TEST_CASE("sectored cache: a line a read allocates takes the read's fill id; renumbered ids keep their cycles") {
  FillCycles fills;
  SectoredCache cache({4 * 2 * 128, 128, 32, 2}, &fills);
  const auto set = lines_in_one_set(cache, 3);
  const std::uint32_t box = fills.open();
  auto o = cache.read_in_set(cache.set_of(set[0]), set[0], 0b0011, box);
  CHECK(o.allocated);
  CHECK(cache.read(set[0], 0b0001).hit_ready == 0); // its cycle is not known yet
  fills.cycle[box] = FillCycles::rounded(700.0);
  CHECK(cache.read(set[0], 0b0001).hit_ready == 701);
  // A line found keeps its own fill: the caller records the new one, which never moves it back.
  const std::uint32_t earlier = fills.open();
  fills.cycle[earlier] = FillCycles::rounded(400.0);
  o = cache.read_in_set(cache.set_of(set[0]), set[0], 0b0100, earlier);
  CHECK_FALSE(o.allocated);
  CHECK(o.miss_sectors == 1);
  cache.set_fill_ready_in_set(cache.set_of(set[0]), set[0], earlier, o.slot);
  CHECK(cache.read(set[0], 0b0001).hit_ready == 701);
  cache.read(set[1], 0b1111); // allocated with no fill pending (id 0)
  FillCycles fresh;
  cache.renumber_fills(fills, fresh);
  CHECK(fresh.cycle.size() == 2); // 0 and set[0]'s
  fills = std::move(fresh);
  CHECK(cache.read(set[0], 0b0001).hit_ready == 701);
  CHECK(cache.read(set[1], 0b0001).hit_ready == 0);
  // Past kLatest a fill is held there.
  CHECK(FillCycles::rounded(1e12) == FillCycles::kLatest);
}
