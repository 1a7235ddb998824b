#!/usr/bin/env python3
"""Writes the kernel specs of the H100 MXFP8 quantiser dataset into validation/data/h100/mxfp8/specs/.

One spec per configuration; its file name (without .json) is the configuration id, and the measured
result in validation/data/h100/mxfp8/measured/ carries the same name. Shapes: the DeepSeek-V3-like
activations (16384 tokens x 7168) and fewer tokens, weights-like 2048-wide and 1024-wide tensors, a
decode-like 128 x 4096, each along rows and down columns, by both scale rules (E4M3); E5M2 on two
shapes. Which ones are held back follows the README's split rule (FNV-1a of the id), not this list.
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

if __name__ == "__main__":
    SPECS.mkdir(parents=True, exist_ok=True)
    for name, spec in CONFIGS:
        (SPECS / f"{name}.json").write_text(json.dumps(spec, indent=1) + "\n")
    print(f"{len(CONFIGS)} specs in {SPECS}")
