#include "models/output_file.h"

#include "models/spec_error.h"

#include <catch2/catch.hpp>

#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

using namespace tilesim;
namespace fs = std::filesystem;

namespace {

std::string contents(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

} // namespace

TEST_CASE("outputs are written whole through a temporary file, or not at all") {
  const std::string dir = fs::temp_directory_path() / "tilesim_output_file_test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string path = dir + "/out.json";
  SECTION("a write replaces the file and leaves no temporary behind") {
    write_output_file(path, "first\n", "--out");
    write_output_file(path, "second\n", "--out");
    CHECK(contents(path) == "second\n");
    CHECK(std::distance(fs::directory_iterator(dir), fs::directory_iterator()) == 1);
  }
  SECTION("a full device is refused before anything is written (was exit 0)") {
    CHECK_THROWS_WITH(write_output_file("/dev/full", "x", "--out"),
                      "/dev/full: --out: is not a regular file (a device, FIFO or socket); give the path of a file to write");
  }
  SECTION("a missing folder (was exit 0 for validate --json)") {
    CHECK_THROWS_WITH(write_output_file(dir + "/no/such/dir/v.json", "x", "--json"),
                      dir + "/no/such/dir/v.json: --json: cannot create a file in its folder: " + dir +
                          "/no/such/dir is not a folder; create the folder first");
  }
  SECTION("a folder or a FIFO as the target") {
    CHECK_THROWS_WITH(write_output_file(dir, "x", "--out"), Catch::Contains("--out: is a folder"));
    REQUIRE(::mkfifo((dir + "/fifo").c_str(), 0600) == 0);
    CHECK_THROWS_WITH(write_output_file(dir + "/fifo", "x", "--out"), Catch::Contains("is not a regular file"));
  }
  SECTION("an empty path") { CHECK_THROWS_WITH(write_output_file("", "x", "--out"), Catch::Contains("names no file")); }
  SECTION("the same checks before a long run") {
    CHECK_NOTHROW(check_output_path(path, "--out"));
    CHECK_THROWS_WITH(check_output_path("/dev/full", "--out"), Catch::Contains("is not a regular file"));
    CHECK_THROWS_WITH(check_output_path(dir + "/missing/r.json", "--out"), Catch::Contains("is not a folder"));
  }
  fs::remove_all(dir);
}
