# Writes ablated copies of kernels/mixed_input/mixed_input_kernel.cuh (timing experiments only,
# never committed): python3 make_ablation.py SRC_HEADER OUT_HEADER VARIANT
#   nomma     conversion kept (its results held live by an empty asm), no wgmma
#   noconv    the loaded words go straight into the fragments: no flip, no conversion
#   ss        conversion kept live, and the wgmma read A from the raw W stage in shared memory
#             (SS form, garbage values: timing only) instead of the registers
#   ss_noconv noconv + ss
#   idle      no shared-memory loads, no conversion, no wgmma: each consumer waits for its stage
#             and releases it (the load path alone)
import sys
src, out, variant = sys.argv[1:4]
s = open(src).read()
call = "    ptx::wgmma_rs<Shape::block_tokens>(acc, frag[kk], x_descriptor<Shape>(desc_lo, desc_hi, kk));"
conv = "        frag[kk][2 * h + i] = dequant::convert_pair<Path>(word[i][kk][h], src.byte, cq.zero[i], cq.magic_zero[i]);"
assert call in s and conv in s
# An empty asm does not keep the conversion alive (NVVM drops it): fold the fragments into a sink
# (two LOP3 per k16 step) that decides one predicated store.
keep = '    sink ^= frag[kk][0] ^ frag[kk][1] ^ frag[kk][2] ^ frag[kk][3];'
def ss_wrappers():
    lines = ["namespace tilesim::kernels::ptx {"]
    for n in (16, 32, 64, 128, 224, 256):
        a = n // 2
        regs = ", ".join("%%%d" % i for i in range(a))
        outs = ", ".join('"+f"(d[%d])' % i for i in range(a))
        lines.append('__device__ __forceinline__ void wgmma_ss_%d(float (&d)[%d], uint64_t da, uint64_t db) {' % (n, a))
        lines.append('  asm volatile("{\\n .reg .pred p;\\n setp.ne.b32 p, 1, 0;\\n wgmma.mma_async.sync.aligned.m64n%dk16.f32.bf16.bf16 {%s}, %%%d, %%%d, p, 1, 1, 0, 0;\\n}" : %s : "l"(da), "l"(db));' % (n, regs, a, a + 1, outs))
        lines.append('}')
    lines.append('template <int N> __device__ __forceinline__ void wgmma_ss(float (&d)[N / 2], uint64_t da, uint64_t db) {')
    for n in (16, 32, 64, 128, 224, 256):
        lines.append('  if constexpr (N == %d) wgmma_ss_%d(d, da, db);' % (n, n))
    lines.append('}')
    lines.append('} // namespace tilesim::kernels::ptx')
    return "\n".join(lines) + "\n"
sink_open = "  ptx::wgmma_fence(); // the fragments were written by ordinary instructions\n"
sink_close = "  ptx::wgmma_commit_group();\n}"
if variant in ("nomma", "ss", "idle"):
    assert sink_open in s and sink_close in s
    s = s.replace(sink_open, "  uint32_t sink = 0;\n" + sink_open, 1)
    s = s.replace(sink_close, "  if (sink == 0x12345678u) p.y[0] = __float2bfloat16_rn(1.0f); // never taken: keeps the conversion\n" + sink_close, 1)
if variant in ("nomma", "idle"):
    s = s.replace(call, keep)
if variant in ("noconv", "ss_noconv", "idle"):
    s = s.replace(conv, "        frag[kk][2 * h + i] = word[i][kk][h];")
    s = s.replace("ptx::ld_shared_u32(a + 8 * h + i * row8) ^ flip;", "ptx::ld_shared_u32(a + 8 * h + i * row8);")
if variant in ("ss", "ss_noconv"):
    s = s.replace(call, "    {" + keep.strip() + "\n    ptx::wgmma_ss<Shape::block_tokens>(acc, ptx::smem_descriptor_sw128(ring.w(cursor.stage)) + 2 * (kk % 4), x_descriptor<Shape>(desc_lo, desc_hi, kk)); }")
    s = s.replace('namespace tilesim::kernels::mixed_input {', ss_wrappers() + '\nnamespace tilesim::kernels::mixed_input {', 1)
if variant == "idle":
    s = s.replace("ptx::ld_shared_u32(a + 8 * h + i * row8);", "(a + 8 * h + i * row8);")
assert variant in ("nomma", "noconv", "ss", "ss_noconv", "idle")
open(out, "w").write(s)
