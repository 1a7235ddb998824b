#include "validation/compare/order_error.h"

#include "models/spec_error.h"

#include <catch2/catch.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

using namespace tilesim;

namespace {

std::string scores_file(const std::string& text) {
  static int written = 0;
  const std::string path =
      (std::filesystem::temp_directory_path() / ("tilesim_order_error_test_" + std::to_string(++written) + ".json")).string();
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& path, const std::string& gpu) {
  try {
    load_known_order_error(path, gpu);
  } catch (const SpecError& e) {
    return e.what();
  }
  return "";
}

} // namespace

TEST_CASE("load_known_order_error: validate --json scores of one GPU") {
  SECTION("the held-back p90 and its pair count") {
    const auto path = scores_file(R"({"gpu":"h100","held_back":{"order_pairs":120,"order_pair_error_p90":0.031},"rows":[]})");
    const KnownOrderError e = load_known_order_error(path, "h100");
    CHECK(e.ratio_error == 0.031);
    CHECK(e.pairs == 120);
    CHECK(e.file == path);
    std::remove(path.c_str());
  }
  SECTION("another GPU's scores are refused, naming both") {
    const auto path = scores_file(R"({"gpu":"h100","held_back":{"order_pairs":1,"order_pair_error_p90":0.03}})");
    CHECK_THAT(error_of(path, "h200"), Catch::Contains("gpu: is 'h100', not 'h200'"));
    std::remove(path.c_str());
  }
  SECTION("scores written before pairs were counted, or with none") {
    const auto old = scores_file(R"({"gpu":"h100","held_back":{"time_mape":0.1}})");
    CHECK_THAT(error_of(old, "h100"), Catch::Contains("held_back.order_pairs: is missing"));
    const auto none = scores_file(R"({"gpu":"h100","held_back":{"order_pairs":0,"order_pair_error_p90":0}})");
    CHECK_THAT(error_of(none, "h100"), Catch::Contains("held_back.order_pairs"));
    std::remove(old.c_str());
    std::remove(none.c_str());
  }
  SECTION("a negative or absurd error") {
    const auto path = scores_file(R"({"gpu":"h100","held_back":{"order_pairs":3,"order_pair_error_p90":-0.1}})");
    CHECK_THAT(error_of(path, "h100"), Catch::Contains("held_back.order_pair_error_p90: is missing or outside 0..10"));
    std::remove(path.c_str());
  }
  SECTION("not a validate file") {
    const auto path = scores_file(R"([1, 2])");
    CHECK_THAT(error_of(path, "h100"), Catch::Contains("gpu: is missing"));
    std::remove(path.c_str());
  }
}
