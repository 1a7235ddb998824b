#include "models/json_fields.h"

#include "tests/spec_error_text.h"

#include <catch2/catch.hpp>

using namespace tilesim;
using nlohmann::json;

namespace {

constexpr std::string_view kKeys[] = {"persistent", "stages", "warps", "cluster"};

std::string unknown_key_error(const json& j) {
  return testing::spec_error_of([&] { JsonFields(j, "spec.json").refuse_unknown_keys(kKeys); });
}

std::string integer_error(const json& value, long long min, long long max) {
  const json object{{"v", value}};
  return testing::spec_error_of([&] { JsonFields(object, "f.json").integer("v", min, max); });
}

} // namespace

TEST_CASE("unknown keys are refused with the nearest known key") {
  CHECK(unknown_key_error(json{{"persistant", true}}) ==
        "spec.json: persistant: is not a known key; did you mean \"persistent\"? (\"comment\" and \"x-...\" keys are free for notes)");
  CHECK_THAT(unknown_key_error(json{{"stgaes", 4}}), Catch::Contains("did you mean \"stages\""));   // a swap
  CHECK_THAT(unknown_key_error(json{{"warp", 8}}), Catch::Contains("did you mean \"warps\""));      // a deletion
  CHECK_THAT(unknown_key_error(json{{"Cluster", 2}}), Catch::Contains("did you mean \"cluster\"")); // a substitution
  SECTION("no near key: the known keys are listed") {
    CHECK_THAT(unknown_key_error(json{{"experts_per_token", 8}}),
               Catch::Contains("known keys here: persistent, stages, warps, cluster"));
  }
  SECTION("notes are free") { CHECK(unknown_key_error(json{{"comment", "x"}, {"x-owner", 1}, {"stages", 4}}) == "no error"); }
}

TEST_CASE("nearest_key wants a typo, not another word") {
  CHECK(nearest_key("persistant", kKeys) == "persistent");
  CHECK(nearest_key("tiles", kKeys).empty());
  CHECK(nearest_key("", kKeys).empty());
  constexpr std::string_view kTile[] = {"m", "n", "k"};
  CHECK(nearest_key("x", kTile).empty()); // one letter is all of the word
  CHECK(nearest_key("kk", kTile) == "k");
  CHECK(nearest_key("", kTile).empty());
}

TEST_CASE("integers are read in their own type, so no large value wraps or rounds into range") {
  CHECK(integer_error(json(4294967301LL), 0, 1023) != "no error"); // 2^32 + 5 is not 5
  CHECK(integer_error(json(18446744073709551615ULL), 0, 1LL << 62) != "no error");
  CHECK(integer_error(json(-1), 0, 10) != "no error");
  CHECK(integer_error(json(9007199254740993LL), 0, 9007199254740992LL) != "no error"); // 2^53 + 1
  CHECK(integer_error(json(3.5), 0, 10) == "f.json: v: must be an integer; write a whole number in 0..10");
  CHECK(integer_error(json("3"), 0, 10) != "no error");
  CHECK(JsonFields(json{{"v", 4.0}}, "f.json").integer("v", 0, 10) == 4);
  CHECK(JsonFields(json{{"v", 9007199254740993LL}}, "f.json").integer("v", 0, 1LL << 60) == 9007199254740993LL);
}
