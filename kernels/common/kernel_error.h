// The one exception type of the kernels layer: host launchers throw it with a message that names
// the call or field and the fix.
#pragma once

#include <stdexcept>

namespace tilesim::kernels {

class KernelError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

} // namespace tilesim::kernels
