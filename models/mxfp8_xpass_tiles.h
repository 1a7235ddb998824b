// The tiles the xpass schemes' GEMM kernels are built for (kernels/mxfp8/mxfp8_transposed_xpass_kernel.cuh,
// mxfp8_transposed_xpass_f16_kernel.cuh, mxfp8_transposed_xpass_f16_wide_kernel.cuh). Shared by the kernels'
// launcher, which refuses any other tile, and the simulator's model, so the model accepts the tiles that run.
// Header-only: the kernels' C entry point links no models code.
#pragma once

namespace tilesim {

// xpass: 128 tokens x 128 channels. xpass_f16: 16, 32, 64 or 128 tokens (wgmma's N) x 128 channels
// (XPassF16Shape), or 128 tokens x 256 channels (XPassF16WideShape).
constexpr bool xpass_tile_built(bool f16, int tokens, int channels) {
  if (!f16) return tokens == 128 && channels == 128;
  return (channels == 128 && (tokens == 16 || tokens == 32 || tokens == 64 || tokens == 128)) ||
         (channels == 256 && tokens == 128);
}

} // namespace tilesim
