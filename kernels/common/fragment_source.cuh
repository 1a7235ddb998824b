// wgmma register-A fragments (PTX ISA 9.7.15.5.1.1, "Register fragments: matrix A") read from
// byte rows in shared memory.
#pragma once

#include <cstdint>

namespace tilesim::kernels {

// Where a thread's bytes of wgmma's register A operand sit in a shared-memory stage of byte rows
// (TMA, 64- or 128-byte swizzle): the mixed-input kernel's W, the MXFP8 dequantize kernel's X.
// Thread (warp, lane) holds A-fragment rows r = 16 warp + lane / 4 and r + 8 and, in each k16
// step kk, K columns 16 kk + 8 h + 2 (lane % 4) and + 1 (h = 0, 1): two bytes of the 32-bit word 4 kk + 2 h + (lane % 4) / 2 of the row, in its
// 16-byte unit kk. TMA's swizzle stores unit u of row r at u ^ ((r / 2) % 4) for 64-byte rows and
// u ^ (r % 8) for 128-byte rows, which spreads the warp's 16 distinct words over 16 banks. Rows r
// and r + 8 share the swizzle phase: 8 rows further on.
template <int BlockK> struct FragmentSource {
  static constexpr int k_steps = BlockK / 16;
  static constexpr uint32_t row8_bytes = 8 * BlockK;
  uint32_t offset[k_steps][2]; // byte offset of the word for (kk, h), row r, inside a stage
  uint32_t byte;               // 0 or 2: the pair's first byte inside the word
  __device__ FragmentSource(int row, int lane) : byte(2 * (lane & 1)) {
    const int phase = BlockK == 64 ? (row >> 1) & 3 : row & 7;
#pragma unroll
    for (int kk = 0; kk < k_steps; ++kk)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        offset[kk][h] = row * BlockK + ((kk ^ phase) << 4) + ((2 * h + ((lane & 3) >> 1)) << 2);
  }
};

// The same words addressed for a K block's loop: the word (kk, h) of row r sits at
// (stage + base) ^ (kk << 4), + 8 h, + row8_bytes for row r + 8, with base = r BlockK + (phase << 4)
// + 4 ((lane % 4) / 2). A stage 1024-byte aligned and r BlockK a multiple of 64 leave the unit bits
// (4, 5, and 6 for 128-byte rows) of stage + base holding the phase alone, so the XOR sets them to
// kk ^ phase: one LOP3 per k16 step, the rest ld.shared immediates, where the offsets above cost
// an add each (and registers the compiler spends recomputing them).
template <int BlockK> struct FragmentWords {
  static constexpr uint32_t row8_bytes = 8 * BlockK;
  uint32_t base;
  uint32_t byte; // 0 or 2: the pair's first byte inside the word
  __device__ FragmentWords(int row, int lane)
      : base(row * BlockK + ((BlockK == 64 ? (row >> 1) & 3 : row & 7) << 4) + (((lane & 3) >> 1) << 2)),
        byte(2 * (lane & 1)) {}
};

} // namespace tilesim::kernels
