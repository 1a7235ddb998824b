// The element-wise kind of the kernel spec ("kind": "elementwise") and the GEMM's epilogue field:
// their names, checks and JSON form. See README.md, "Element-wise kernels and fused epilogues".
#pragma once

#include "models/json_fields.h"
#include "models/kernel_spec.h"

#include <nlohmann/json_fwd.hpp>

namespace tilesim {

// Reads op, elements, dtype, block, vector, unroll and persistent into `spec` (kind already set);
// throws SpecError naming the field and the fix.
void parse_elementwise_spec(const JsonFields& f, KernelSpec& spec);
nlohmann::json elementwise_spec_json(const KernelSpec& spec);

// The GEMM's "epilogue" field (default "none").
GemmEpilogue parse_gemm_epilogue(const JsonFields& f);

} // namespace tilesim
