// Helpers the microbenchmarks share to write their JSON reports.
#pragma once

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string>
#include <vector>

namespace microbench {

// printf into a std::string: JSON fragments of any length.
__attribute__((format(printf, 1, 2))) inline std::string format(const char* fmt, ...) {
  va_list args, copy;
  va_start(args, fmt);
  va_copy(copy, args);
  std::string s(std::max(0, std::vsnprintf(nullptr, 0, fmt, copy)), '\0');
  va_end(copy);
  std::vsnprintf(s.data(), s.size() + 1, fmt, args);
  va_end(args);
  return s;
}

// The upper median: one of the samples, as the reports quote.
inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

} // namespace microbench
