#!/usr/bin/env python3
"""The fifth xpass_f16 call's rule (kernels/mxfp8/NOTES.md, "xpass_f16 on narrow tiles, fifth call"): the narrow
tiles and the fourth call's pass are adopted if the quick and full checks exit 0, memcheck reports 0 errors, no wgmma
sits under a per-warp branch, and xpass_f16 (pass + GEMM) is faster than the faster of the third call's two runs on
E = 128 x 128 and on decode in both runs, and more than 2% slower than the slower of them on no shape in both runs.

    narrow_rule.py CALL3_DIR RUN_DIR
"""
import pathlib
import re
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from pass_rule import medians  # noqa: E402  (the fourth call's reading of xpass_f16's medians)


def main(call3, run):
    checks = (pathlib.Path(run) / "checks.log").read_text()
    exits = re.findall(r"^exit (\d+)", checks, re.M)
    memcheck = re.search(r"ERROR SUMMARY: (\d+) error", checks)
    branches = re.search(r"sass_wgmma_branches exit (\d+)", checks)
    checks_ok = (exits == ["0", "0"] and memcheck is not None and memcheck.group(1) == "0" and branches is not None
                 and branches.group(1) == "0")
    print(f"checks: exits {exits}, memcheck {memcheck.group(0) if memcheck else 'none'}, wgmma branches exit "
          f"{branches.group(1) if branches else '?'}: {'ok' if checks_ok else 'FAILED'}")
    before, after = medians(call3), medians(run)
    faster_needed, slower_any = True, False
    for shape in before[0]:
        fast, slow = min(before[0][shape], before[1][shape]), max(before[0][shape], before[1][shape])
        changes = [after[r][shape] / fast - 1 for r in (0, 1)]  # against the faster call-3 run
        slower = all(after[r][shape] / slow - 1 > 0.02 for r in (0, 1))  # against the slower one
        print(f"{shape:20s} call 3 {before[0][shape]:.4f} / {before[1][shape]:.4f} ms, now {after[0][shape]:.4f} / "
              f"{after[1][shape]:.4f} ({100 * changes[0]:+.1f} / {100 * changes[1]:+.1f}% against the faster call-3 run)"
              f"{' SLOWER' if slower else ''}")
        if shape in ("moe_e128x128", "decode_e64x16") and not all(c < 0 for c in changes):
            faster_needed = False
        slower_any = slower_any or slower
    print("ADOPTED" if checks_ok and faster_needed and not slower_any else "NOT ADOPTED")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
