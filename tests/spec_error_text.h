// For tests of bad input: the one-line message a call is refused with (the what() of the
// SpecError it throws), or "no error". Any other exception escapes and fails the test.
#pragma once

#include "models/spec_error.h"

#include <string>

namespace tilesim::testing {

template <typename Call>
std::string spec_error_of(Call&& call) {
  try {
    call();
  } catch (const SpecError& e) {
    return e.what();
  }
  return "no error";
}

} // namespace tilesim::testing
