// The one exception type of the models layer: a malformed profile or kernel spec.
#pragma once

#include <stdexcept>
#include <string>

namespace tilesim {

// what() reads "<file>: <field>: <problem>; <fix>" so the CLI can print it as one line: control
// characters (a newline in a key or a file name) are shown as '?'.
class SpecError : public std::runtime_error {
public:
  SpecError(const std::string& file, const std::string& field, const std::string& problem,
            const std::string& fix)
      : std::runtime_error(one_line(file + ": " + field + ": " + problem + (fix.empty() ? "" : "; " + fix))) {}

private:
  static std::string one_line(std::string s) {
    for (char& c : s)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
    return s;
  }
};

} // namespace tilesim
