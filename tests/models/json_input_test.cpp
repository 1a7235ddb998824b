#include "models/json_input.h"
#include "models/spec_error.h"

#include "tests/spec_error_text.h"

#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

using namespace tilesim;

namespace {

std::string error_of(const std::string& text) {
  return testing::spec_error_of([&] { parse_json_text(text, "in.json", "kernel spec"); });
}

std::string file_error_of(const std::string& path) {
  return testing::spec_error_of([&] { read_json_file(path, "kernel spec"); });
}

// A bad-input message: one line, naming the file, free of the JSON library's own wording.
void check_message(const std::string& message, const std::string& file) {
  INFO(message);
  CHECK(message.find('\n') == std::string::npos);
  CHECK(message.rfind(file + ": ", 0) == 0);
  CHECK(message.find("json.exception") == std::string::npos);
  CHECK(message.find("parse_error") == std::string::npos);
}

} // namespace

TEST_CASE("nesting deeper than the limit is refused before a document is built") {
  SECTION("the issue's crash: ~400 KB of nested arrays under extra") {
    const std::string deep = R"({"extra": )" + std::string(200000, '[') + std::string(200000, ']') + "}";
    const std::string e = error_of(deep);
    check_message(e, "in.json");
    CHECK_THAT(e, Catch::Contains("extra[0][0]") && Catch::Contains("more than 64 deep"));
  }
  SECTION("the limit itself: 64 levels parse, 65 do not") {
    CHECK_NOTHROW(parse_json_text(std::string(64, '[') + std::string(64, ']'), "in.json", "result"));
    CHECK_THAT(error_of(std::string(65, '[') + std::string(65, ']')), Catch::Contains("more than 64 deep"));
    CHECK_THAT(error_of(std::string(65, '{') ), Catch::Contains("is not valid JSON"));
  }
}

TEST_CASE("a key given twice is refused with its path, not silently last-wins") {
  const std::string e = error_of(R"({"tile": {"m": 128, "n": 128, "m": 64}})");
  check_message(e, "in.json");
  CHECK_THAT(e, Catch::Contains("tile.m: appears twice"));
  CHECK_THAT(error_of(R"({"experts": [{"m": 1}, {"m": 2, "m": 3}]})"), Catch::Contains("experts[1].m: appears twice"));
  // The same key in sibling objects is no duplicate.
  CHECK_NOTHROW(parse_json_text(R"({"a": {"m": 1}, "b": {"m": 2}, "c": [{"m": 1}, {"m": 1}]})", "in.json", "spec"));
}

TEST_CASE("malformed JSON is named by line and column without the library's prefix") {
  const std::string e = error_of("{\n  \"m\": 12,\n  \"n\": x\n}");
  check_message(e, "in.json");
  CHECK_THAT(e, Catch::Contains("is not valid JSON at line 3, column 8"));
  CHECK_THAT(error_of(""), Catch::Contains("kernel spec: is empty"));
  CHECK_THAT(error_of(" \n "), Catch::Contains("is empty"));
  CHECK_THAT(error_of(R"({"m": 1e400})"), Catch::Contains("no double can hold"));
  SECTION("binary input stays on one line") {
    const std::string e2 = error_of(std::string("{\"a\":\n\x01\x02\xff\n", 9));
    check_message(e2, "in.json");
  }
}

TEST_CASE("inputs that are not regular files are refused before anything opens them") {
  const std::string dir = std::filesystem::temp_directory_path() / ("tilesim_json_input_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  SECTION("a folder (was basic_filebuf::underflow)") {
    const std::string e = file_error_of(dir);
    check_message(e, dir);
    CHECK_THAT(e, Catch::Contains("is a folder"));
    CHECK(e.find("basic_filebuf") == std::string::npos);
  }
  SECTION("a FIFO: refused at once, never opened (opening one blocks until a writer comes)") {
    const std::string fifo = dir + "/spec.json";
    REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
    CHECK_THAT(file_error_of(fifo), Catch::Contains("is not a regular file"));
  }
  SECTION("a character device") { CHECK_THAT(file_error_of("/dev/null"), Catch::Contains("is not a regular file")); }
  SECTION("a missing file and an empty path") {
    CHECK_THAT(file_error_of(dir + "/missing.json"), Catch::Contains("No such file"));
    CHECK_THAT(file_error_of(""), Catch::Contains("(empty path): kernel spec: no file named"));
  }
  SECTION("an empty file") {
    std::ofstream(dir + "/empty.json").close();
    CHECK_THAT(file_error_of(dir + "/empty.json"), Catch::Contains("is empty"));
  }
  std::filesystem::remove_all(dir);
}
