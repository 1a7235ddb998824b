#!/usr/bin/env python3
"""Writes the kernel specs of the H100 element-wise and fused-epilogue dataset into
validation/data/h100/elementwise/specs/.

One spec per configuration; its file name (without .json) is the configuration id, and the
measured result in validation/data/h100/elementwise/measured/ carries the same name. Rewrites every
spec it owns and removes none. Which ones are held back follows the README's split rule (FNV-1a of
the id), not this list.
"""
import argparse
import json
import pathlib
import re

SPECS = pathlib.Path(__file__).resolve().parents[1] / "data" / "h100" / "elementwise" / "specs"

MIB = 1 << 20


def elementwise(op, elements, dtype="fp32", block=256, vector=None, persistent=False, unroll=1):
    spec = {"kind": "elementwise", "op": op, "elements": elements, "dtype": dtype, "block": block,
            "unroll": unroll, "persistent": persistent}
    if vector is not None:
        spec["vector"] = vector
    form = "p" if persistent else "g"
    vec = f"v{vector}" if vector is not None else ""
    unrolled = f"u{unroll}" if unroll != 1 else ""
    return f"ew_{op}_{dtype}_n{elements}_b{block}{vec}{unrolled}_{form}", spec


CONFIGS = []
# Vector add from 4 KB to 4 GB per array (2^10 .. 2^30 fp32 elements), grid form.
for log2 in (10, 14, 17, 20, 22, 24, 26, 28, 30):
    CONFIGS.append(elementwise("add", 1 << log2))
# Sizes that are not a multiple of the 1024-element CTA step: the masked tail.
for n in (1000, 1000003, 10000001, (1 << 24) + 1):
    CONFIGS.append(elementwise("add", n))
# The persistent (grid-stride) form.
for n in (1 << 14, 1 << 20, 1 << 24, 1 << 28, 10000001):
    CONFIGS.append(elementwise("add", n, persistent=True))
# Other operations and types; relu/gelu over bf16 at the GEMM outputs' sizes below (the unfused
# epilogue: 8192 x 8192 and 16384 x 2048 bf16).
CONFIGS += [elementwise("mul", 1 << 24), elementwise("relu", 1 << 24), elementwise("gelu", 1 << 24),
            elementwise("add", 1 << 24, "bf16"), elementwise("add", 1 << 24, "fp16"),
            elementwise("relu", 1 << 26, "bf16"), elementwise("gelu", 1 << 26, "bf16"),
            elementwise("relu", 1 << 25, "bf16"), elementwise("gelu", (1 << 25) + 3, "bf16")]
# Block size and vector width.
CONFIGS += [elementwise("add", 1 << 24, block=128), elementwise("add", 1 << 24, block=1024),
            elementwise("add", 1 << 24, vector=1), elementwise("add", 1 << 24, vector=2),
            elementwise("add", 1 << 24, "bf16", vector=2)]

# Two vectors per thread (the Triton tutorial kernel's split: 128 threads x 8 fp32) and four.
CONFIGS += [elementwise("add", 1 << 20, block=128, unroll=2), elementwise("add", 1 << 24, block=128, unroll=2),
            elementwise("add", 1000003, block=128, unroll=2), elementwise("add", 1 << 22, unroll=2),
            elementwise("add", 1 << 26, unroll=4), elementwise("add", 1 << 24, persistent=True, unroll=2),
            elementwise("gelu", 1 << 24, "bf16", unroll=2)]

# Four vectors per thread at 1M and 4M: 256 and 1024 CTAs of 4096 elements (issue 18's search at 1M).
CONFIGS += [elementwise("add", 1 << 20, unroll=4), elementwise("add", 1 << 22, unroll=4)]
# 64 threads x 4 vectors at 1M: what the launcher takes there for a spec that names no shape
# (models/elementwise_launch_shape.h).
CONFIGS += [elementwise("add", 1 << 20, block=64, unroll=4)]

# Fused epilogues: the GEMM with none / bias_relu / bias_gelu on compute-bound (dense 8192^3,
# E=8 x 2048) and memory-bound (E=64 x 512, E=128 x 128) shapes, the kernel's default tile.
GEMMS = {
    "dense8192": {"kind": "gemm", "m": 8192, "n": 8192, "k": 8192},
    "e8x2048": {"kind": "grouped_gemm", "experts": [{"m": 2048}] * 8, "n": 4096, "k": 7168},
    "e64x512": {"kind": "grouped_gemm", "experts": [{"m": 512}] * 64, "n": 2048, "k": 7168},
    "e128x128": {"kind": "grouped_gemm", "experts": [{"m": 128}] * 128, "n": 2048, "k": 7168},
}
for shape, problem in GEMMS.items():
    for epilogue in ("none", "bias_relu", "bias_gelu"):
        spec = dict(problem, dtype="bf16", layout={"a": "row", "b": "col"}, tile={"m": 128, "n": 256, "k": 64},
                    stages=4, warps=12, load="tma", persistent=True, cluster=2, order="grouped_m:8",
                    epilogue=epilogue)
        CONFIGS.append((f"fused_{shape}_{epilogue}", spec))


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--specs", default=str(SPECS), help="where to write (default: the dataset's specs/)")
    parser.add_argument("--filter", default=".", help="only the ids this regular expression finds")
    args = parser.parse_args()
    specs = pathlib.Path(args.specs)
    specs.mkdir(parents=True, exist_ok=True)
    written = 0
    for name, spec in CONFIGS:
        if not re.search(args.filter, name):
            continue
        written += 1
        spec = {"name": name, **spec,
                "command": "python3 validation/measure/make_elementwise_specs.py (writes this spec); "
                           "measured by kernels/elementwise/run_device.sh"}
        (specs / f"{name}.json").write_text(json.dumps(spec) + "\n")
    print(f"wrote {written} specs to {specs}")


if __name__ == "__main__":
    main()
