#!/usr/bin/env python3
"""Writes the kernel specs of the measured H100 datasets.

validation/data/h100/specs/ gets the first dataset (six shapes, every order; measured into
validation/data/h100/measured/ and measured_repeat/); validation/data/h100/specs_new_shapes/ gets
shapes of published MoE and dense layers that dataset lacks (issue 16; measured into
measured_new_shapes/), kept apart so the first dataset's scores stay comparable. One spec per
configuration; its file name (without .json) is the configuration id, and the measured result
carries the same name, so the held-back split (a hash of that name) applies to both. Run it from
anywhere; it rewrites every spec it owns and removes none.
"""
import json
import pathlib

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "h100"
SPECS = DATA / "specs"
NEW_SPECS = DATA / "specs_new_shapes"

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


# Shapes of published models' expert and dense layers (Y = X W^T: n the layer's output width, k its
# input width), each at one tile and launch variant, so that together they cover 8 to 256 experts,
# 16 to ~8192 tokens per expert, balanced and Zipf-skewed routing, n and k from 1536 to 14336,
# both tiles, persistent and not. Sources:
# - Mixtral 8x7B (Jiang et al., "Mixtral of Experts", arXiv:2401.04088, Table 1): dim 4096,
#   hidden_dim 14336, 8 experts, top-2.
# - DeepSeek-V3 (arXiv:2412.19437, section 4.2): hidden 7168, expert intermediate 2048, 256 routed
#   experts, top-8.
# - Qwen3-235B-A22B (Qwen3 technical report, arXiv:2505.09388, Table 2, and its config.json):
#   hidden 4096, moe_intermediate_size 1536, 128 experts, top-8.
# - DBRX (Databricks, "Introducing DBRX", 2024, and its config.json): d_model 6144, ffn_hidden_size
#   10752, 16 experts, top-4.
# - gpt-oss-20b (OpenAI, gpt-oss model card, 2025, and its config.json): hidden 2880,
#   intermediate 2880 (gate and up fused: n = 5760), 32 experts, top-4.
# - LLaMA-13B (Touvron et al., arXiv:2302.13971, Table 2; its config.json): dim 5120, FFN 13824;
#   the down projection at 5000 tokens leaves tails in m (5000 = 39 x 128 + 8) and in n/256.
NEW_SHAPES = {
    "mixtral_up_e8x1024": {"kind": "grouped_gemm", "experts": [{"m": 1024}] * 8, "n": 14336, "k": 4096},
    "mixtral_down_zipf8": {"kind": "grouped_gemm",
                           "routing": {"tokens": 4096, "top_k": 2, "experts": 8, "zipf_s": 1.2, "seed": 5},
                           "n": 4096, "k": 14336},
    "dsv3_up_zipf256": {"kind": "grouped_gemm",
                        "routing": {"tokens": 4096, "top_k": 8, "experts": 256, "zipf_s": 1.2, "seed": 7},
                        "n": 2048, "k": 7168},
    "dsv3_down_e256x16": {"kind": "grouped_gemm", "routing": {"tokens": 512, "top_k": 8, "experts": 256},
                          "n": 7168, "k": 2048},
    "qwen3_up_zipf128": {"kind": "grouped_gemm",
                         "routing": {"tokens": 8192, "top_k": 8, "experts": 128, "zipf_s": 1.2, "seed": 11},
                         "n": 1536, "k": 4096},
    "dbrx_up_e16x512": {"kind": "grouped_gemm", "experts": [{"m": 512}] * 16, "n": 10752, "k": 6144},
    "gptoss_up_zipf32": {"kind": "grouped_gemm",
                         "routing": {"tokens": 8192, "top_k": 4, "experts": 32, "zipf_s": 1.2, "seed": 13},
                         "n": 5760, "k": 2880},
    "llama13b_up": {"kind": "gemm", "m": 4096, "n": 13824, "k": 5120},
    "llama13b_down_m5000": {"kind": "gemm", "m": 5000, "n": 5120, "k": 13824},
}

NEW_DENSE_ORDERS = ["row_major", "column_major", "grouped_m:8", "grouped_n:8", "serpentine", "hilbert"]
NEW_GROUPED_ORDERS = NEW_DENSE_ORDERS + ["expert_major:8"]

NEW_PLAN = [
    ("mixtral_up_e8x1024", "t128x256_p"), ("mixtral_down_zipf8", "t128x256_np"),
    ("dsv3_up_zipf256", "t128x128_np"), ("dsv3_down_e256x16", "t128x256_p"),
    ("qwen3_up_zipf128", "t128x128_p"), ("dbrx_up_e16x512", "t128x256_np"),
    ("gptoss_up_zipf32", "t128x256_p"), ("llama13b_up", "t128x128_p"),
    ("llama13b_down_m5000", "t128x256_p"),
]


def orders_for(shape):
    if shape in NEW_SHAPES:
        return NEW_GROUPED_ORDERS if NEW_SHAPES[shape]["kind"] == "grouped_gemm" else NEW_DENSE_ORDERS
    return GROUPED_ORDERS if SHAPES[shape]["kind"] == "grouped_gemm" else DENSE_ORDERS


def spec(shape, variant, order):
    tile_n, stages, persistent = VARIANTS[variant]
    config_id = f"{shape}_{variant}_{order.replace(':', '')}"
    s = {"name": config_id, "dtype": "bf16", **SHAPES.get(shape, NEW_SHAPES.get(shape)),
         "layout": {"a": "row", "b": "col"}, "tile": {"m": 128, "n": tile_n, "k": 64},
         "stages": stages, "warps": 12, "load": "tma", "persistent": persistent, "cluster": 2, "order": order,
         "command": "python3 validation/measure/make_dataset_specs.py (writes this spec); measured by validation/measure/measure_dataset.sh"}
    return config_id, s


def write_specs(folder, plan):
    folder.mkdir(parents=True, exist_ok=True)
    count = 0
    for shape, variant in plan:
        for order in orders_for(shape):
            config_id, s = spec(shape, variant, order)
            (folder / f"{config_id}.json").write_text(json.dumps(s))  # one line, as measured
            count += 1
    print(f"{count} specs in {folder}")


def main():
    write_specs(SPECS, PLAN)
    write_specs(NEW_SPECS, NEW_PLAN)


if __name__ == "__main__":
    main()
