// The one exception type of the models layer: a malformed profile or kernel spec.
#pragma once

#include <stdexcept>
#include <string>

namespace tilesim {

// what() reads "<file>: <field>: <problem>; <fix>" so the CLI can print it as one line.
class SpecError : public std::runtime_error {
public:
  SpecError(const std::string& file, const std::string& field, const std::string& problem,
            const std::string& fix)
      : std::runtime_error(file + ": " + field + ": " + problem + (fix.empty() ? "" : "; " + fix)) {}
};

} // namespace tilesim
