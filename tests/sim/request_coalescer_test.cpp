#include "sim/request_coalescer.h"

#include "tests/sim/lines_in_one_set.h"

#include <catch2/catch.hpp>

#include <vector>

using namespace tilesim;

using testing::lines_in_one_set;

TEST_CASE("request coalescer: a held request takes reads of its sectors in, up to its limit") {
  RequestCoalescer coalescer(8, 4, 2); // 2 sets of 4 entries, 2 merges a request
  REQUIRE(coalescer.enabled());
  const LineAddress line = lines_in_one_set(coalescer, 1)[0];
  CHECK(coalescer.merge(line, 0b1111) < 0); // nothing held yet
  coalescer.insert(line, 0b1111, 100.0);
  CHECK(coalescer.merge(line, 0b0011) == 100.0);
  CHECK(coalescer.merge(line, 0b1111) == 100.0);
  CHECK(coalescer.merge(line, 0b0001) < 0); // full: two merged already
  coalescer.insert(line, 0b1111, 200.0);    // the full request is replaced by the new one
  CHECK(coalescer.merge(line, 0b0001) == 200.0);
}

TEST_CASE("request coalescer: sectors the held request lacks are not merged; a later request adds them") {
  RequestCoalescer coalescer(8, 4, 2);
  const LineAddress line = lines_in_one_set(coalescer, 1)[0];
  coalescer.insert(line, 0b0011, 100.0);
  CHECK(coalescer.merge(line, 0b0100) < 0);
  coalescer.insert(line, 0b0100, 150.0); // the entry is kept, with its first request's time
  CHECK(coalescer.merge(line, 0b0111) == 100.0);
}

TEST_CASE("request coalescer: a full set replaces its oldest entry") {
  for (const int ways : {4, 3}) { // four ways are compared at once, others one by one
    SECTION(std::to_string(ways) + " ways") {
      RequestCoalescer coalescer(2 * ways, ways, 0); // no merge limit
      const auto lines = lines_in_one_set(coalescer, ways + 2);
      for (int i = 0; i < ways; ++i) coalescer.insert(lines[i], 0b1111, 10.0 * (i + 1));
      coalescer.insert(lines[0], 0b1111, 99.0);     // held already: no new entry, no new time
      coalescer.insert(lines[ways], 0b1111, 500.0); // replaces lines[0], the oldest
      CHECK(coalescer.merge(lines[0], 0b0001) < 0);
      for (int i = 1; i < ways; ++i) CHECK(coalescer.merge(lines[i], 0b0001) == 10.0 * (i + 1));
      CHECK(coalescer.merge(lines[ways], 0b0001) == 500.0);
      coalescer.insert(lines[ways + 1], 0b1111, 600.0); // then lines[1]
      CHECK(coalescer.merge(lines[1], 0b0001) < 0);
      CHECK(coalescer.merge(lines[ways + 1], 0b0001) == 600.0);
    }
  }
}

TEST_CASE("request coalescer: without entries nothing is coalesced") {
  CHECK_FALSE(RequestCoalescer(0, 4, 2).enabled());
}

TEST_CASE("request coalescer: an insert takes the way its failed merge found, checked against what moved since") {
  RequestCoalescer coalescer(4, 4, 1); // one set of 4 entries, 1 merge a request
  const auto lines = lines_in_one_set(coalescer, 6);
  coalescer.insert(lines[0], 0b1111, 10.0);
  CHECK(coalescer.merge_in_set(0, lines[0], 0b1111).ready == 10.0);
  const RequestCoalescer::Merge full = coalescer.merge_in_set(0, lines[0], 0b1111); // its one merge is used
  CHECK(full.ready < 0);
  CHECK(full.way == 0);
  const RequestCoalescer::Merge absent = coalescer.merge_in_set(0, lines[1], 0b1111);
  CHECK(absent.ready < 0);
  CHECK(absent.way == -1);
  SECTION("the way still holds the line: its full request is replaced there") {
    coalescer.insert_in_set(0, lines[0], 0b1111, 20.0, full.way);
    coalescer.insert_in_set(0, lines[1], 0b1111, 30.0, absent.way);
    CHECK(coalescer.merge(lines[0], 0b1111) == 20.0);
    CHECK(coalescer.merge(lines[1], 0b1111) == 30.0);
  }
  SECTION("another line took the way since: the line is new again, in the oldest way") {
    for (int i = 2; i <= 5; ++i) coalescer.insert(lines[i], 0b1111, 100.0 * i); // lines[2..5] replace all four
    coalescer.insert_in_set(0, lines[0], 0b1111, 40.0, full.way);
    CHECK(coalescer.merge(lines[0], 0b1111) == 40.0);
    CHECK(coalescer.merge(lines[2], 0b1111) < 0); // lines[0] replaced the oldest, lines[2]
    CHECK(coalescer.merge(lines[5], 0b1111) == 500.0);
  }
}
