#!/usr/bin/env python3
"""Writes the kernel specs of the measured H100 dataset into validation/data/h100/specs/.

One spec per configuration; its file name (without .json) is the configuration id, and the
measured result of validation/data/h100/measured/ carries the same name. Run it from anywhere;
it rewrites every spec it owns and removes none.
"""
import json
import pathlib

SPECS = pathlib.Path(__file__).resolve().parents[1] / "data" / "h100" / "specs"

# Problem shapes: dense GEMMs and MoE-style grouped GEMMs (Y_e = X_e W_e^T, K = 7168 as in
# DeepSeek-V3's expert layers), plus one skewed (Zipf) routing of 4096 tokens, top-8 of 64 experts.
SHAPES = {
    "dense4096": {"kind": "gemm", "m": 4096, "n": 4096, "k": 4096},
    "dense8192": {"kind": "gemm", "m": 8192, "n": 8192, "k": 8192},
    "e8x2048": {"kind": "grouped_gemm", "experts": [{"m": 2048}] * 8, "n": 4096, "k": 7168},
    "e64x512": {"kind": "grouped_gemm", "experts": [{"m": 512}] * 64, "n": 2048, "k": 7168},
    "e128x128": {"kind": "grouped_gemm", "experts": [{"m": 128}] * 128, "n": 2048, "k": 7168},
    "zipf64": {"kind": "grouped_gemm",
               "routing": {"tokens": 4096, "top_k": 8, "experts": 64, "zipf_s": 1.2, "seed": 3},
               "n": 2048, "k": 7168},
}

DENSE_ORDERS = ["row_major", "column_major", "grouped_m:8", "grouped_n:8", "serpentine", "morton", "hilbert"]
GROUPED_ORDERS = DENSE_ORDERS + ["expert_major:8", "interleaved"]

# (variant id, tile n, stages, persistent). The kernel supports tile 128 x {128, 256} x 64;
# stages: the deepest ring that fits shared memory for each (kernels/grouped_gemm/grouped_gemm.h).
VARIANTS = {
    "t128x256_p": (256, 4, True),
    "t128x256_np": (256, 4, False),
    "t128x128_p": (128, 6, True),
    "t128x128_np": (128, 6, False),
}

# Which (shape, variant) pairs get every launch order. Persistent and non-persistent at the
# kernel's default tile on every shape; the other tile on one dense and one grouped shape.
PLAN = [(shape, v) for v in ("t128x256_p", "t128x256_np") for shape in SHAPES] + [
    ("dense8192", "t128x128_p"), ("e64x512", "t128x128_p"),
    ("dense4096", "t128x128_np"), ("e128x128", "t128x128_np"),
]


def orders_for(shape):
    return GROUPED_ORDERS if SHAPES[shape]["kind"] == "grouped_gemm" else DENSE_ORDERS


def spec(shape, variant, order):
    tile_n, stages, persistent = VARIANTS[variant]
    config_id = f"{shape}_{variant}_{order.replace(':', '')}"
    s = {"name": config_id, "dtype": "bf16", **SHAPES[shape],
         "layout": {"a": "row", "b": "col"}, "tile": {"m": 128, "n": tile_n, "k": 64},
         "stages": stages, "warps": 12, "load": "tma", "persistent": persistent, "cluster": 2, "order": order,
         "command": "python3 validation/measure/make_dataset_specs.py (writes this spec); measured by validation/measure/measure_dataset.sh"}
    return config_id, s


def main():
    SPECS.mkdir(parents=True, exist_ok=True)
    count = 0
    for shape, variant in PLAN:
        for order in orders_for(shape):
            config_id, s = spec(shape, variant, order)
            (SPECS / f"{config_id}.json").write_text(json.dumps(s, indent=1) + "\n")
            count += 1
    print(f"{count} specs in {SPECS}")


if __name__ == "__main__":
    main()
