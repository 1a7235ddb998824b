// For tests of bad input: the one-line message a call is refused with (the what() of the
// SpecError it throws), or "no error". Any other exception escapes and fails the test.
#pragma once

#include "models/kernel_spec.h"
#include "models/spec_error.h"

#include <nlohmann/json.hpp>

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

// The refusal of a kernel spec given as JSON (read as if from "spec.json"), or "no error".
inline std::string kernel_spec_error_of(const nlohmann::json& spec) {
  return spec_error_of([&] { parse_kernel_spec(spec, "spec.json"); });
}

} // namespace tilesim::testing
