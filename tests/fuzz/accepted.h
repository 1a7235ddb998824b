// What a fuzz target's loader made of an input: its value, or nothing when it refused the input
// with a SpecError (the expected answer to bad input). Any other exception escapes: libFuzzer
// reports it as a finding.
#pragma once

#include "models/spec_error.h"

#include <optional>

namespace tilesim::fuzz {

template <typename Load>
auto accepted(Load&& load) -> std::optional<decltype(load())> {
  try {
    return load();
  } catch (const SpecError&) {
    return std::nullopt;
  }
}

} // namespace tilesim::fuzz
