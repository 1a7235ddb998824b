#!/usr/bin/env python3
"""Fused against unfused epilogues, measured and predicted, as a Markdown table (README.md).

Measured: validation/data/h100/elementwise/measured/ — the GEMM without epilogue, the element-wise
kernel that would apply it separately (relu/gelu over the GEMM's bf16 output: 2^26 or 2^25
elements), and the GEMM with the epilogue fused. Predicted: `tilesim fusion` on the same GEMM spec
at the profile's clock. Usage: validation/compare/fusion_table.py TILESIM_BINARY
"""
import json
import pathlib
import subprocess
import sys
import tempfile

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "h100" / "elementwise"
# The GEMM shapes and the element count of their output (total tokens x n).
SHAPES = {"dense8192": 8192 * 8192, "e8x2048": 16384 * 4096, "e64x512": 32768 * 2048, "e128x128": 16384 * 2048}
SEPARATE = {"bias_relu": "relu", "bias_gelu": "gelu"}


def measured(name):
    r = json.load(open(DATA / "measured" / f"{name}.json"))
    return r["time_ms"], r["dram_read_bytes"] + r["dram_write_bytes"]


def separate_kernel(op, elements):
    # gelu over 2^25 elements was measured at 2^25 + 3 (a masked tail); the 3 elements are noise.
    for n in (elements, elements + 3):
        path = DATA / "measured" / f"ew_{op}_bf16_n{n}_b256_g.json"
        if path.exists():
            return measured(path.stem)
    raise FileNotFoundError(f"no measured {op} over {elements} bf16 elements")


def main():
    tilesim = sys.argv[1]
    print("| shape | epilogue | measured: GEMM + separate, ms | fused, ms | saved | DRAM GB unfused / fused "
          "| predicted: GEMM + separate, ms | fused, ms | saved | DRAM GB unfused / fused |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for shape, elements in SHAPES.items():
        for epilogue, op in SEPARATE.items():
            gemm_ms, gemm_bytes = measured(f"fused_{shape}_none")
            sep_ms, sep_bytes = separate_kernel(op, elements)
            fused_ms, fused_bytes = measured(f"fused_{shape}_{epilogue}")
            with tempfile.NamedTemporaryFile(suffix=".json") as out:
                subprocess.run([tilesim, "fusion", "--gpu", "h100", "--kernel",
                                str(DATA / "specs" / f"fused_{shape}_none.json"), "--epilogue", epilogue,
                                "--out", out.name], check=True, capture_output=True)
                p = {x["what"]: x for x in json.load(open(out.name))["predictions"]}
            unfused_p, fused_p = p["unfused total"], p[f"GEMM + fused {epilogue}"]
            traffic = lambda x: (x["dram_read_bytes"] + x["dram_write_bytes"]) / 1e9
            un_ms = gemm_ms + sep_ms
            print(f"| {shape} | {epilogue} | {gemm_ms:.3f} + {sep_ms:.3f} = {un_ms:.3f} | {fused_ms:.3f} | "
                  f"{100 * (1 - fused_ms / un_ms):.1f}% | {(gemm_bytes + sep_bytes) / 1e9:.2f} / {fused_bytes / 1e9:.2f} | "
                  f"{unfused_p['time_ms']:.3f} | {fused_p['time_ms']:.3f} | "
                  f"{100 * (1 - fused_p['time_ms'] / unfused_p['time_ms']):.1f}% | "
                  f"{traffic(unfused_p):.2f} / {traffic(fused_p):.2f} |")


if __name__ == "__main__":
    main()
