// The MXFP8 quantiser kind of the kernel spec ("kind": "mxfp8_quantize"): its names, checks and JSON
// form. See README.md, "MXFP8 quantisers".
#pragma once

#include "models/json_fields.h"
#include "models/kernel_spec.h"

#include <nlohmann/json_fwd.hpp>

namespace tilesim {

// Reads rows, cols, axis, scale_rule and element into `spec` (kind and dtype already set); throws
// SpecError naming the field and the fix.
void parse_mxfp8_quantize_spec(const JsonFields &f, KernelSpec &spec);
nlohmann::json mxfp8_quantize_spec_json(const KernelSpec &spec);

} // namespace tilesim
