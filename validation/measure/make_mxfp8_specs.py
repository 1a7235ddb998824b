#!/usr/bin/env python3
"""Writes the kernel specs of the H100 MXFP8 dataset (quantisers and the grouped GEMM) into
validation/data/h100/mxfp8/specs/.

One spec per configuration; its file name (without .json) is the configuration id, and the measured
result in validation/data/h100/mxfp8/measured/ carries the same name. Shapes: the DeepSeek-V3-like
activations (16384 tokens x 7168) and fewer tokens, weights-like 2048-wide and 1024-wide tensors, a
decode-like 128 x 4096, each along rows and down columns, by both scale rules (E4M3); E5M2 on two
shapes. GEMMs (kernels/mxfp8/, the promote scheme, 128 x 128 x 128 tiles, clusters of 2): issue 20's
shapes (dense 8192^3; E=8 x 2048 and 64 x 512 at N 2048-4096; memory-bound E=128 x 128 and 64 x 16,
K 7168), dense 4096^3, a Zipf-routed batch and a short-K one, several orders, ring depths and both
grid modes; the same shapes again in the dequantize scheme (3 stages, the only depth its shared memory
allows), so that the model's pick of scheme per shape can be scored; and the transposed scheme (tile.m
tokens x 64 channels x 128, or 128 x 128 x 128; no clusters) on the memory-bound and a few other shapes, two more
decode-like ones (one expert x 16 tokens, N = K = 8192; 8 experts x 64 tokens) among them; the xpass scheme (X
dequantised by a pass, then the 128 x 128 transposed tile: both kernels timed together) on the 128 x 128
tile's shapes and two compute-bound ones. Which ones are held back follows the README's split rule (FNV-1a of the id), not this list.
"""
import json
import pathlib

SPECS = pathlib.Path(__file__).resolve().parents[1] / "data" / "h100" / "mxfp8" / "specs"
COMMAND = "python3 validation/measure/make_mxfp8_specs.py"

SHAPES = [(16384, 7168), (8192, 7168), (4096, 7168), (1024, 7168), (16384, 2048), (65536, 1024), (2048, 2048),
          (128, 4096)]


def quantiser(rows, cols, axis, rule, element="e4m3"):
    name = f"q_{rows}x{cols}_{axis}_{rule}" + ("" if element == "e4m3" else f"_{element}")
    return name, {"name": name, "command": COMMAND, "kind": "mxfp8_quantize", "dtype": "bf16", "rows": rows,
                  "cols": cols, "axis": axis, "scale_rule": rule, "element": element}


CONFIGS = [quantiser(r, c, axis, rule) for r, c in SHAPES for axis in ("rowwise", "colwise")
           for rule in ("round_up", "floor")]
CONFIGS += [quantiser(r, c, axis, "round_up", "e5m2") for r, c in ((16384, 7168), (4096, 7168))
            for axis in ("rowwise", "colwise")]



def gemm(name, experts, n, k, order, persistent=True, stages=4, scheme="promote", tile_m=128, tile_n=64):
    transposed = scheme in ("transposed", "xpass", "xpass_f16")
    # transposed: a producer warpgroup and 4 consumers at 16 or 32 tokens per tile, 2 at 64 or 128; 2 on every
    # 128-channel tile (tile_n 128: transposed's 128 x 128, xpass's, xpass_f16's at 16..128 tokens).
    warps = 4 * (1 + (4 if tile_m <= 32 and tile_n == 64 else 2)) if transposed else 12
    spec = {"name": name, "command": COMMAND, "kind": "grouped_gemm", "dtype": "mxfp8", "n": n, "k": k,
            "layout": {"a": "row", "b": "col"},
            "tile": {"m": tile_m, "n": tile_n if transposed else 128, "k": 128}, "stages": stages,
            "warps": warps, "load": "tma", "persistent": persistent, "cluster": 1 if transposed else 2,
            "order": order, "block_scale": {"scheme": scheme, "block": 32, "element": "e4m3"}}
    if isinstance(experts, dict):
        spec["routing"] = experts
    else:
        spec["experts"] = experts
    mode = "p" if persistent else "g"
    suffix = {"promote": "", "dequantize": "_deq", "transposed": "_tr", "xpass": "_xp", "xpass_f16": "_xh"}[scheme]
    if scheme == "xpass_f16" and tile_n == 256:
        suffix = "_xw"
    tile = (f"_t{tile_m}" + (f"n{tile_n}" if tile_n != 64 else "")) if scheme == "transposed" else ""
    return f"g_{name}{tile}_s{stages}_{mode}_{order.replace(':', '')}{suffix}", spec


ZIPF = {"tokens": 4096, "top_k": 8, "experts": 64, "zipf_s": 1.2, "seed": 3}
CONFIGS += [
    gemm("dense8192", [8192], 8192, 8192, "grouped_m:8"),
    gemm("dense8192", [8192], 8192, 8192, "row_major"),
    gemm("dense4096", [4096], 4096, 4096, "grouped_m:8"),
    gemm("dense4096", [4096], 4096, 4096, "serpentine", persistent=False),
    gemm("dense4096", [4096], 4096, 4096, "grouped_m:8", stages=3),
    gemm("e8x2048_n4096", [2048] * 8, 4096, 7168, "grouped_m:4"),
    gemm("e8x2048_n4096", [2048] * 8, 4096, 7168, "row_major"),
    gemm("e8x2048_n4096", [2048] * 8, 4096, 7168, "hilbert"),
    gemm("e8x2048_n4096", [2048] * 8, 4096, 7168, "grouped_m:8", stages=5),
    gemm("e8x2048_n2048", [2048] * 8, 2048, 7168, "grouped_m:8"),
    gemm("e64x512", [512] * 64, 2048, 7168, "grouped_m:4"),
    gemm("e64x512", [512] * 64, 2048, 7168, "expert_major:4"),
    gemm("e128x128", [128] * 128, 2048, 7168, "serpentine", persistent=False),
    gemm("e128x128", [128] * 128, 2048, 7168, "grouped_m:4"),
    gemm("e64x16", [16] * 64, 2048, 7168, "grouped_m:4"),
    gemm("e64x16", [16] * 64, 2048, 7168, "serpentine", persistent=False),
    gemm("zipf64", ZIPF, 2048, 7168, "grouped_m:8"),
    gemm("e16x1024_k2048", [1024] * 16, 4096, 2048, "row_major"),
]
CONFIGS += [gemm(*args, **options, stages=3, scheme="dequantize") for args, options in [
    (("dense8192", [8192], 8192, 8192, "grouped_m:8"), {}),
    (("dense4096", [4096], 4096, 4096, "grouped_m:8"), {}),
    (("dense4096", [4096], 4096, 4096, "serpentine"), {"persistent": False}),
    (("e8x2048_n4096", [2048] * 8, 4096, 7168, "grouped_m:4"), {}),
    (("e8x2048_n4096", [2048] * 8, 4096, 7168, "row_major"), {}),
    (("e8x2048_n2048", [2048] * 8, 2048, 7168, "grouped_m:8"), {}),
    (("e64x512", [512] * 64, 2048, 7168, "grouped_m:4"), {}),
    (("e128x128", [128] * 128, 2048, 7168, "serpentine"), {"persistent": False}),
    (("e128x128", [128] * 128, 2048, 7168, "grouped_m:4"), {}),
    (("e64x16", [16] * 64, 2048, 7168, "grouped_m:4"), {}),
    (("e64x16", [16] * 64, 2048, 7168, "serpentine"), {"persistent": False}),
    (("zipf64", ZIPF, 2048, 7168, "grouped_m:8"), {}),
    (("e16x1024_k2048", [1024] * 16, 4096, 2048, "row_major"), {}),
]]

CONFIGS += [gemm(*args, **options, scheme="transposed") for args, options in [
    (("e64x16", [16] * 64, 2048, 7168, "row_major"), {"tile_m": 16, "stages": 12}),
    (("e64x16", [16] * 64, 2048, 7168, "row_major"), {"tile_m": 16, "stages": 16}),
    (("e64x16", [16] * 64, 2048, 7168, "grouped_m:4"), {"tile_m": 16, "stages": 12}),
    (("e64x16", [16] * 64, 2048, 7168, "serpentine"), {"tile_m": 16, "stages": 12, "persistent": False}),
    (("dense16_n8192", [16], 8192, 8192, "row_major"), {"tile_m": 16, "stages": 12}),
    (("e8x64_n4096", [64] * 8, 4096, 7168, "grouped_m:4"), {"tile_m": 64, "stages": 10}),
    (("e8x64_n4096", [64] * 8, 4096, 7168, "grouped_m:4"), {"tile_m": 32, "stages": 12}),
    (("e128x128", [128] * 128, 2048, 7168, "grouped_m:4"), {"tile_m": 128, "stages": 4}),
    (("e128x128", [128] * 128, 2048, 7168, "row_major"), {"tile_m": 128, "stages": 4}),
    (("e128x128", [128] * 128, 2048, 7168, "grouped_m:4"), {"tile_m": 64, "stages": 10}),
    (("e128x128", [128] * 128, 2048, 7168, "serpentine"), {"tile_m": 128, "stages": 4, "persistent": False}),
    (("zipf64", ZIPF, 2048, 7168, "grouped_m:8"), {"tile_m": 128, "stages": 4}),
    (("e64x512", [512] * 64, 2048, 7168, "grouped_m:4"), {"tile_m": 128, "stages": 4}),
    (("dense4096", [4096], 4096, 4096, "grouped_m:8"), {"tile_m": 128, "stages": 4}),
    # 128 x 128 tiles (kernels/mxfp8/mxfp8_transposed_wide_kernel.cuh).
    (("e128x128", [128] * 128, 2048, 7168, "row_major"), {"tile_m": 128, "tile_n": 128, "stages": 4}),
    (("e128x128", [128] * 128, 2048, 7168, "grouped_m:4"), {"tile_m": 128, "tile_n": 128, "stages": 4}),
    (("e128x128", [128] * 128, 2048, 7168, "row_major"), {"tile_m": 128, "tile_n": 128, "stages": 3}),
    (("e128x128", [128] * 128, 2048, 7168, "serpentine"), {"tile_m": 128, "tile_n": 128, "stages": 4,
                                                          "persistent": False}),
    (("zipf64", ZIPF, 2048, 7168, "grouped_m:8"), {"tile_m": 128, "tile_n": 128, "stages": 4}),
    (("e64x512", [512] * 64, 2048, 7168, "grouped_m:4"), {"tile_m": 128, "tile_n": 128, "stages": 4}),
    (("dense4096", [4096], 4096, 4096, "grouped_m:8"), {"tile_m": 128, "tile_n": 128, "stages": 4}),
]]

# xpass and xpass_f16 (its twin in f16, "_xh"): 128 x 128 x 128 tiles only (kernels/mxfp8/
# mxfp8_transposed_xpass_kernel.cuh, mxfp8_transposed_xpass_f16_kernel.cuh), the same 9 configurations.
XPASS_CONFIGS = [
    (("e128x128", [128] * 128, 2048, 7168, "row_major"), {"stages": 4}),
    (("e128x128", [128] * 128, 2048, 7168, "grouped_m:4"), {"stages": 4}),
    (("e128x128", [128] * 128, 2048, 7168, "row_major"), {"stages": 3}),
    (("e128x128", [128] * 128, 2048, 7168, "serpentine"), {"stages": 4, "persistent": False}),
    (("zipf64", ZIPF, 2048, 7168, "grouped_m:8"), {"stages": 4}),
    (("e64x512", [512] * 64, 2048, 7168, "grouped_m:4"), {"stages": 4}),
    (("dense4096", [4096], 4096, 4096, "grouped_m:8"), {"stages": 4}),
    (("dense8192", [8192], 8192, 8192, "grouped_m:8"), {"stages": 4}),
    (("e8x2048_n4096", [2048] * 8, 4096, 7168, "grouped_m:4"), {"stages": 4}),
]
CONFIGS += [gemm(*args, **options, scheme=scheme, tile_m=128, tile_n=128)
            for scheme in ("xpass", "xpass_f16") for args, options in XPASS_CONFIGS]

# xpass_f16's 128 x 256 tile ("_xw", mxfp8_transposed_xpass_f16_wide_kernel.cuh): twins of the _xh configurations
# the sixth call's benchmark ran it on (the compute-bound shapes and E = 128 x 128), at 3 stages (4 do not fit in
# shared memory); the orders are the twins' own, so each _xw file compares with its _xh one.
WIDE_CONFIGS = [
    ("e128x128", [128] * 128, 2048, 7168, "row_major"),
    ("zipf64", ZIPF, 2048, 7168, "grouped_m:8"),
    ("e64x512", [512] * 64, 2048, 7168, "grouped_m:4"),
    ("dense4096", [4096], 4096, 4096, "grouped_m:8"),
    ("dense8192", [8192], 8192, 8192, "grouped_m:8"),
    ("e8x2048_n4096", [2048] * 8, 4096, 7168, "grouped_m:4"),
]
CONFIGS += [gemm(*args, stages=3, scheme="xpass_f16", tile_m=128, tile_n=256) for args in WIDE_CONFIGS]

if __name__ == "__main__":
    SPECS.mkdir(parents=True, exist_ok=True)
    for name, spec in CONFIGS:
        (SPECS / f"{name}.json").write_text(json.dumps(spec, indent=1) + "\n")
    print(f"{len(CONFIGS)} specs in {SPECS}")
