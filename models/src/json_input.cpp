#include "models/json_input.h"

#include "models/spec_error.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>
#include <new>
#include <set>
#include <vector>

namespace tilesim {
namespace {

// A message fit for one terminal line: control and non-ASCII bytes (binary input echoed back by
// the parser) become '?'.
std::string printable(std::string_view text) {
  std::string s(text);
  for (char& c : s)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return s;
}

// Tracks where the parser is (for the path of a duplicate key) and refuses what the DOM must
// never hold. One entry per open object or array.
class JsonGuard {
public:
  JsonGuard(const std::string& source, const std::string& what) : source_(source), what_(what) {}

  bool operator()(int depth, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
    case Event::object_start:
    case Event::array_start:
      if (depth >= kMaxJsonDepth)
        throw SpecError(source_, path(), "nests objects or arrays more than " + std::to_string(kMaxJsonDepth) + " deep",
                        "no " + what_ + " nests that deep; check the file is the one meant");
      open_.push_back({event == Event::object_start, {}, {}, 0});
      break;
    case Event::key: {
      Level& level = open_.back();
      level.key = parsed.get<std::string>();
      if (!level.keys.insert(level.key).second)
        throw SpecError(source_, path(), "appears twice in one object", "keep one of the two");
      break;
    }
    case Event::object_end:
    case Event::array_end:
      open_.pop_back();
      finish_value();
      break;
    case Event::value: finish_value(); break;
    }
    return true;
  }

private:
  struct Level {
    bool is_object;
    std::set<std::string> keys;
    std::string key; // objects: the key being read
    size_t index;    // arrays: the element being read
  };

  void finish_value() {
    if (!open_.empty() && !open_.back().is_object) ++open_.back().index;
  }

  std::string path() const {
    std::string p;
    for (const auto& level : open_) {
      if (!level.is_object)
        p += "[" + std::to_string(level.index) + "]";
      else if (!level.key.empty() || !level.keys.empty())
        p += (p.empty() ? "" : ".") + printable(level.key);
    }
    return p.empty() ? "(top level)" : p;
  }

  const std::string& source_;
  const std::string& what_;
  std::vector<Level> open_;
};

// "[json.exception.parse_error.101] parse error at line 2, column 7: syntax error ..." without
// the library's prefix, which means nothing to a user.
std::string parse_problem(const nlohmann::json::parse_error& e, std::string_view text) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i + 1 < e.byte && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  std::string detail = e.what();
  const auto colon = detail.find(": ", detail.find("parse error"));
  detail = colon == std::string::npos ? "" : detail.substr(colon + 2);
  return "is not valid JSON at line " + std::to_string(line) + ", column " + std::to_string(column) +
         (detail.empty() ? "" : " (" + printable(detail) + ")");
}

} // namespace

void require_regular_file(const std::string& path, const std::string& what) {
  if (path.empty()) throw SpecError("(empty path)", what, "no file named", "give the path of a " + what + " file");
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0)
    throw SpecError(path, what, std::string("cannot be read: ") + std::strerror(errno), "check the path");
  if (S_ISDIR(st.st_mode)) throw SpecError(path, what, "is a folder, not a file", "give the path of a " + what + " file");
  if (!S_ISREG(st.st_mode))
    throw SpecError(path, what, "is not a regular file (a FIFO, socket or device)", "give the path of a " + what + " file");
  if (st.st_size > kMaxJsonBytes)
    throw SpecError(path, what, "is " + std::to_string(st.st_size) + " bytes, more than the " +
                                    std::to_string(kMaxJsonBytes >> 20) + " MiB a tilesim input may be",
                    "check the file is the one meant");
}

nlohmann::json parse_json_text(std::string_view text, const std::string& source, const std::string& what) {
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos)
    throw SpecError(source, what, "is empty", "write the " + what + " as a JSON object");
  try {
    JsonGuard guard(source, what);
    return nlohmann::json::parse(text.begin(), text.end(), std::ref(guard));
  } catch (const nlohmann::json::parse_error& e) {
    throw SpecError(source, what, parse_problem(e, text), "fix the syntax");
  } catch (const nlohmann::json::exception& e) { // out_of_range 406: a number too large for a double
    throw SpecError(source, what, "holds a number no double can hold", "write finite numbers");
  } catch (const std::bad_alloc&) {
    throw SpecError(source, what, "does not fit in memory", "check the file is the one meant");
  }
}

nlohmann::json read_json_file(const std::string& path, const std::string& what) {
  require_regular_file(path, what);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError(path, what, std::string("cannot be opened: ") + std::strerror(errno), "check the path");
  std::string text;
  try {
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    throw SpecError(path, what, "could not be read", "check the file");
  }
  if (in.bad()) throw SpecError(path, what, "could not be read", "check the file");
  return parse_json_text(text, path, what);
}

} // namespace tilesim
