// MXFP8 in the kernel spec: the quantiser kind ("kind": "mxfp8_quantize") and the block scaling of a
// GEMM with MXFP8 operands ("block_scale"): names, checks and JSON form. See README.md, "MXFP8
// quantisers" and "MXFP8 grouped GEMM".
#pragma once

#include "models/json_fields.h"
#include "models/kernel_spec.h"

#include <nlohmann/json_fwd.hpp>

namespace tilesim {

// Reads rows, cols, axis, scale_rule and element into `spec` (kind and dtype already set); throws
// SpecError naming the field and the fix.
void parse_mxfp8_quantize_spec(const JsonFields &f, KernelSpec &spec);
nlohmann::json mxfp8_quantize_spec_json(const KernelSpec &spec);

// Reads "block_scale" of a GEMM (the rest of the spec already read) and checks what MXFP8 operands
// need: K in whole blocks of 32, the MX block of 32, an FP8 element type; refuses "block_scale" on
// other dtypes. Throws SpecError naming the field and the fix.
void parse_block_scale(const JsonFields &f, KernelSpec &spec);
nlohmann::json block_scale_json(const KernelSpec &spec);

} // namespace tilesim
