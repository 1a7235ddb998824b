#!/usr/bin/env python3
"""The sixth xpass_f16 call's rule (kernels/mxfp8/NOTES.md, "xpass_f16 at 256 channels: pre-registered"): the
128 x 256 tile is adopted if the quick and full checks exit 0, memcheck reports 0 errors, no wgmma sits under a per-warp
branch, and its best candidate (pass + GEMM, `xpass_f16_by_tile.n256`) is faster than the faster of the fifth call's two
xpass_f16 runs on at least two of the four compute-bound shapes in both runs, and more than 2% slower than the slower
of them on no shape it runs in both runs. Also printed, not ruling: the same run's best 128 x 128 candidate, timed
interleaved with it.

    wide_rule.py CALL5_DIR RUN_DIR
"""
import json
import pathlib
import re
import sys

COMPUTE_BOUND = ("dense_8192", "moe_e8x2048_n4096", "moe_e8x2048_n2048", "moe_e64x512")


def records(folder):
    return [{rec["shape"]: rec for rec in json.loads((pathlib.Path(folder) / f"bench_gemm_run{r}.json").read_text())["records"]}
            for r in (1, 2)]


def main(call5, run):
    checks = (pathlib.Path(run) / "checks.log").read_text()
    exits = re.findall(r"^exit (\d+)", checks, re.M)
    memcheck = re.search(r"ERROR SUMMARY: (\d+) error", checks)
    branches = re.search(r"sass_wgmma_branches exit (\d+)", checks)
    checks_ok = (exits == ["0", "0"] and memcheck is not None and memcheck.group(1) == "0" and branches is not None
                 and branches.group(1) == "0")
    print(f"checks: exits {exits}, memcheck {memcheck.group(0) if memcheck else 'none'}, wgmma branches exit "
          f"{branches.group(1) if branches else '?'}: {'ok' if checks_ok else 'FAILED'}")
    before, after = records(call5), records(run)
    faster_shapes, slower_any = 0, False
    for shape in after[0]:
        old = [before[r][shape]["xpass_f16_median_ms"] for r in (0, 1)]
        new = [after[r][shape]["xpass_f16_by_tile"]["n256"]["median_ms"] for r in (0, 1)]
        same_run = [after[r][shape]["xpass_f16_by_tile"]["n128"]["median_ms"] for r in (0, 1)]
        bf16 = [after[r][shape]["bf16_median_ms"] for r in (0, 1)]
        changes = [new[r] / min(old) - 1 for r in (0, 1)]
        slower = all(new[r] / max(old) - 1 > 0.02 for r in (0, 1))
        faster = all(c < 0 for c in changes)
        print(f"{shape:20s} call 5 {old[0]:.4f} / {old[1]:.4f} ms, 128x256 {new[0]:.4f} / {new[1]:.4f} "
              f"({100 * changes[0]:+.1f} / {100 * changes[1]:+.1f}% against call 5's faster run; this run's 128x128 "
              f"{same_run[0]:.4f} / {same_run[1]:.4f}; / our bf16 {bf16[0] / new[0]:.3f} / {bf16[1] / new[1]:.3f})"
              f"{' SLOWER' if slower else ''}")
        faster_shapes += faster and shape in COMPUTE_BOUND
        slower_any = slower_any or slower
    print(f"faster on {faster_shapes} compute-bound shapes (2 needed), more than 2% slower on {'some' if slower_any else 'none'}")
    print("ADOPTED" if checks_ok and faster_shapes >= 2 and not slower_any else "NOT ADOPTED")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2]))
