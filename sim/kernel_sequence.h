// Two kernels launched back to back on one stream and timed as one, as tilesim-measure times a run
// (CUPTI: the first kernel's start to the last one's end): the MXFP8 xpass scheme's dequantiser
// pass over X, then its GEMM (kernels/mxfp8/NOTES.md, "X dequantised once").
#pragma once

#include "sim/kernel_result.h"

namespace tilesim {

// `second` as the pair ran: times, DRAM bytes and L2 reads added; the L2 hit rate the mean of the two
// weighted by each one's L2 sectors (reads and writes: what lts__t_sector_hit_rate counts over the
// range); TFLOP/s `second`'s FLOPs over the sum; `second`'s tile records later by `first`'s time.
// `first`'s own figures go under extra["launched_before"].
KernelResult run_in_sequence(const KernelResult& first, KernelResult second);

} // namespace tilesim
