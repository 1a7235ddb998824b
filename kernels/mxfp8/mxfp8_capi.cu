// A C entry point to the MXFP8 quantisers for kernels/mxfp8/bench_quantize.py (ctypes), so that
// ours, torch.compile's and a copy are timed by the same code on the same tensors, interleaved.
#include <cstdio>
#include <exception>

#include "kernels/mxfp8/mxfp8.h"

extern "C" {

// axis: 0 rowwise, 1 colwise; rule: 0 floor, 1 round_up; element: 0 e4m3, 1 e5m2. Enqueues one run
// on `stream` (torch.cuda.current_stream().cuda_stream); returns 0, or 1 with the message in `error`.
int tilesim_mxfp8_quantize(const void *x, void *elements, void *scales, long long rows, long long cols, int axis,
                           int rule, int element, int sm_count, void *stream, char *error, int error_len) {
  try {
    if (axis < 0 || axis > 1 || rule < 0 || rule > 1 || element < 0 || element > 1)
      throw tilesim::kernels::KernelError("axis, rule or element out of range");
    tilesim::Mxfp8QuantizeShape s;
    s.rows = rows;
    s.cols = cols;
    s.axis = static_cast<tilesim::Mxfp8Axis>(axis);
    s.scale_rule = static_cast<tilesim::Mxfp8ScaleRule>(rule);
    s.element = static_cast<tilesim::Mxfp8Element>(element);
    tilesim::kernels::Mxfp8Quantize(s, x, elements, scales, sm_count).run(static_cast<cudaStream_t>(stream));
    return 0;
  } catch (const std::exception &e) {
    if (error && error_len > 0) std::snprintf(error, error_len, "%s", e.what());
    return 1;
  }
}
}

// The MXFP8 grouped GEMM for bench_gemm.py: create (nullptr with the message in `error` on a
// refusal), run on `stream`, destroy. Buffers as kernels/mxfp8/mxfp8_gemm.h describes.
#include "kernels/mxfp8/mxfp8_gemm.h"
#include "models/launch_order_names.h"

extern "C" {

// scheme: 0 promote, 1 dequantize, 2 transposed, 3 xpass, 4 xpass_f16 (tile_tokens, tile_channels: the transposed schemes' tile).
void *tilesim_mxfp8_gemm_create(int experts, const int *tokens, int n, int k, int stages, int persistent,
                                const char *order, int scheme, int tile_tokens, int tile_channels, const void *x, const void *x_scales, const void *w,
                                const void *w_scales, void *y, int sm_count, char *error, int error_len) {
  try {
    tilesim::kernels::Mxfp8GemmProblem p;
    p.experts = experts;
    p.tokens_per_expert.assign(tokens, tokens + experts);
    p.n = n;
    p.k = k;
    p.stages = stages;
    p.persistent = persistent != 0;
    p.order = tilesim::parse_launch_order(order);
    if (scheme < 0 || scheme > 4)
      throw tilesim::kernels::KernelError(
          "scheme must be 0 (promote), 1 (dequantize), 2 (transposed), 3 (xpass) or 4 (xpass_f16)");
    p.scheme = static_cast<tilesim::kernels::Mxfp8GemmScheme>(scheme);
    p.tile_tokens = tile_tokens;
    p.tile_channels = tile_channels;
    return new tilesim::kernels::Mxfp8GroupedGemm(p, x, x_scales, w, w_scales, y, sm_count);
  } catch (const std::exception &e) {
    if (error && error_len > 0) std::snprintf(error, error_len, "%s", e.what());
    return nullptr;
  }
}

// gemm_only: the GEMM kernel without xpass's (or xpass_f16's) pass (on the X of the last full run).
int tilesim_mxfp8_gemm_run_part(void *handle, int gemm_only, void *stream, char *error, int error_len) {
  try {
    const auto *gemm = static_cast<const tilesim::kernels::Mxfp8GroupedGemm *>(handle);
    if (gemm_only) gemm->run_gemm(static_cast<cudaStream_t>(stream), nullptr);
    else gemm->run(static_cast<cudaStream_t>(stream), nullptr);
    return 0;
  } catch (const std::exception &e) {
    if (error && error_len > 0) std::snprintf(error, error_len, "%s", e.what());
    return 1;
  }
}

int tilesim_mxfp8_gemm_run(void *handle, void *stream, char *error, int error_len) {
  return tilesim_mxfp8_gemm_run_part(handle, 0, stream, error, error_len);
}

void tilesim_mxfp8_gemm_destroy(void *handle) { delete static_cast<tilesim::kernels::Mxfp8GroupedGemm *>(handle); }
}
