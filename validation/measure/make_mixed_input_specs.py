#!/usr/bin/env python3
"""Writes the kernel specs of the measured H100 mixed-input dataset (bf16 x int8/uint8,
kernels/mixed_input/) into validation/data/h100/mixed_input/specs/.

One spec per configuration; its file name (without .json) is the configuration id, and the
measured result in validation/data/h100/mixed_input/measured/ carries the same name. Decode shapes
(1-64 tokens, weight-bandwidth bound), prefill shapes (tensor-core bound), grouped MoE shapes
(balanced, and Zipf-routed), several launch orders, both conversions, int8 and uint8 with
per-128 group scales. Rewrites every spec it owns and removes none.
"""
import json
import pathlib

SPECS = pathlib.Path(__file__).resolve().parents[1] / "data" / "h100" / "mixed_input" / "specs"

SHAPES = {
    "dec1_8192": {"kind": "gemm", "m": 1, "n": 8192, "k": 8192},
    "dec16_8192": {"kind": "gemm", "m": 16, "n": 8192, "k": 8192},
    "dec32_8192": {"kind": "gemm", "m": 32, "n": 8192, "k": 8192},
    "dec64_8192": {"kind": "gemm", "m": 64, "n": 8192, "k": 8192},
    "dec8_4096": {"kind": "gemm", "m": 8, "n": 4096, "k": 4096},
    "pre3456": {"kind": "gemm", "m": 3456, "n": 4096, "k": 2048},
    "pre2048": {"kind": "gemm", "m": 2048, "n": 8192, "k": 4096},
    "e64x16": {"kind": "grouped_gemm", "experts": [{"m": 16}] * 64, "n": 2048, "k": 7168},
    "e8x512": {"kind": "grouped_gemm", "experts": [{"m": 512}] * 8, "n": 4096, "k": 2048},
    "zipf64": {"kind": "grouped_gemm",
               "routing": {"tokens": 512, "top_k": 8, "experts": 64, "zipf_s": 1.2, "seed": 3},
               "n": 2048, "k": 7168},
}

# Tiles the kernel is built for: tokens (tile m) -> (channels, K a ring stage carries, ring stages).
# 64-token tiles carry two K blocks of 128 a stage (kernels/mixed_input/NOTES.md, stage K).
# 224-token tiles at 4 stages: 5 do not fit beside the TMA-store epilogue's buffers, and the pair
# of epilogues is measured at the same depth (kernels/mixed_input/NOTES.md, v16 and v17).
TILES = {16: (64, 128, 12), 32: (64, 128, 8), 64: (64, 256, 4), 128: (128, 64, 5), 224: (128, 64, 4),
         256: (128, 64, 4)}
# Tiles whose configurations are also measured with the TMA-store epilogue ("quant": {"store":
# "tma"}, id suffix _tma), beside their element-store twins: where it won the bench (v16); the
# 128-token tile keeps the element stores (1% faster there).
TMA_STORE_TILES = (224, 256)
# The warps follow the tile (mixed_input_consumers in kernels/mixed_input/mixed_input_gemm.h): a
# producer warpgroup and four consumers splitting K on 16- and 32-token tiles, two on the others.
CONSUMERS = {16: 4, 32: 4, 64: 2, 128: 2, 224: 2, 256: 2}

# (shape, tile tokens, weight, scale group, conversion, persistent, orders)
PLAN = [
    ("dec1_8192", 16, "int8", 0, "prmt", True, ["row_major"]),
    ("dec1_8192", 16, "int8", 0, "cvt", True, ["row_major"]),
    ("dec16_8192", 16, "int8", 0, "prmt", True, ["row_major", "column_major"]),
    ("dec16_8192", 16, "int8", 0, "cvt", True, ["row_major"]),
    ("dec16_8192", 16, "uint8", 128, "prmt", True, ["row_major"]),
    ("dec16_8192", 16, "uint8", 128, "cvt", True, ["row_major"]),
    ("dec32_8192", 32, "int8", 0, "prmt", True, ["row_major"]),
    ("dec32_8192", 32, "int8", 0, "cvt", True, ["row_major"]),
    ("dec64_8192", 64, "int8", 0, "prmt", True, ["row_major"]),
    ("dec64_8192", 64, "int8", 0, "cvt", True, ["row_major"]),
    ("dec8_4096", 16, "int8", 0, "prmt", True, ["row_major"]),
    ("dec8_4096", 16, "int8", 0, "cvt", True, ["row_major"]),
    ("pre3456", 128, "int8", 0, "prmt", True, ["row_major", "column_major", "grouped_m:8", "hilbert"]),
    ("pre3456", 256, "int8", 0, "prmt", True, ["row_major", "column_major", "grouped_m:8", "hilbert"]),
    ("pre3456", 256, "int8", 0, "cvt", True, ["row_major", "grouped_m:8"]),
    ("pre3456", 224, "int8", 0, "prmt", True, ["row_major", "grouped_m:8", "column_major"]),
    ("pre3456", 224, "int8", 0, "cvt", True, ["grouped_m:8"]),
    ("pre2048", 256, "uint8", 128, "prmt", True, ["row_major", "grouped_m:8", "grouped_n:8", "morton"]),
    ("pre2048", 256, "uint8", 128, "prmt", False, ["row_major", "grouped_m:8"]),
    ("e64x16", 16, "int8", 0, "prmt", True, ["row_major", "column_major", "grouped_m:8", "expert_major:4",
                                              "interleaved"]),
    ("e64x16", 16, "int8", 0, "cvt", True, ["row_major", "grouped_m:8"]),
    ("e8x512", 128, "int8", 0, "prmt", True, ["row_major", "grouped_m:8", "expert_major:4", "interleaved",
                                               "hilbert"]),
    ("e8x512", 128, "int8", 0, "cvt", True, ["grouped_m:8"]),
    ("e8x512", 128, "int8", 0, "prmt", False, ["row_major", "grouped_m:8"]),
    ("zipf64", 64, "int8", 0, "prmt", True, ["grouped_m:8", "expert_major:4", "interleaved"]),
    ("zipf64", 64, "uint8", 128, "prmt", True, ["grouped_m:8"]),
    ("zipf64", 64, "int8", 0, "cvt", True, ["grouped_m:8"]),
]


def config_id(shape, tile, weight, group, conversion, persistent, order, tma_store=False):
    q = weight + ("g128" if group else "")
    return (f"{shape}_{q}_{conversion}_t{tile}_{'p' if persistent else 'np'}_"
            + order.replace(":", "") + ("_tma" if tma_store else ""))


def spec(shape, tile, weight, group, conversion, persistent, order, tma_store=False):
    tile_n, tile_k, stages = TILES[tile]
    s = {"name": config_id(shape, tile, weight, group, conversion, persistent, order, tma_store)}
    s.update(SHAPES[shape])
    quant = {"scale_group": group, "zero_points": weight == "uint8", "conversion": conversion}
    if tma_store:
        quant["store"] = "tma"
    s.update({
        "dtype": "bf16", "b_dtype": weight, "c_dtype": "bf16",
        "quant": quant,
        "layout": {"a": "row", "b": "col"},
        "tile": {"m": tile, "n": tile_n, "k": tile_k}, "stages": stages, "warps": 4 * (CONSUMERS[tile] + 1),
        "load": "tma", "persistent": persistent, "cluster": 1, "order": order,
        "command": "python3 validation/measure/make_mixed_input_specs.py (writes this spec); "
                   "measured by kernels/mixed_input/run_device.sh",
    })
    return s


def main():
    SPECS.mkdir(parents=True, exist_ok=True)
    count = 0
    for shape, tile, weight, group, conversion, persistent, orders in PLAN:
        for order in orders:
            for tma_store in (False, True) if tile in TMA_STORE_TILES else (False,):
                s = spec(shape, tile, weight, group, conversion, persistent, order, tma_store)
                (SPECS / (s["name"] + ".json")).write_text(json.dumps(s, indent=1) + "\n")
                count += 1
    print(f"wrote {count} specs to {SPECS}")


if __name__ == "__main__":
    main()
