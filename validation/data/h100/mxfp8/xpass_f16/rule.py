#!/usr/bin/env python3
"""The pre-registered rule of the xpass_f16 call (kernels/mxfp8/NOTES.md, "f16 with a reference exponent a row"):
adopted if the quick and full checks pass, memcheck reports 0 errors, no wgmma sits under a per-warp branch, and
xpass_f16's median is below every other scheme's on at least one shape in both benchmark runs.

    rule.py RUN_DIR
"""
import json
import pathlib
import re
import sys

OTHERS = ("promote", "dequantize", "transposed", "xpass")


def main(run):
    run = pathlib.Path(run)
    checks = (run / "checks.log").read_text()
    # The quick and the full check's exit codes (0 only on PASS). The second call counted PASS lines too and
    # expected two, where memcheck's run of the quick check prints a third: every check had passed.
    exits = re.findall(r"^exit (\d+)", checks, re.M)
    memcheck = re.search(r"ERROR SUMMARY: (\d+) error", checks)
    branches = re.search(r"sass_wgmma_branches exit (\d+)", checks)
    checks_ok = exits == ["0", "0"]
    memcheck_ok = memcheck is not None and memcheck.group(1) == "0"
    branches_ok = branches is not None and branches.group(1) == "0"
    print(f"checks: quick and full exit {exits}: {'ok' if checks_ok else 'FAILED'}")
    print(f"memcheck: {memcheck.group(0) if memcheck else 'no summary'}: {'ok' if memcheck_ok else 'FAILED'}")
    print(f"wgmma branches: exit {branches.group(1) if branches else '?'}: {'ok' if branches_ok else 'FAILED'}")
    wins = []
    for r in (1, 2):
        path = run / f"bench_gemm_run{r}.json"
        try:
            records = json.loads(path.read_text())["records"]
        except (OSError, ValueError, KeyError) as error:
            print(f"{path.name}: unreadable ({error})")
            wins.append(set())
            continue
        won = set()
        for rec in records:
            fastest = all(rec["xpass_f16_median_ms"] < rec[f"{s}_median_ms"] for s in OTHERS)
            won |= {rec["shape"]} if fastest else set()
            print(f"run {r} {rec['shape']:20s} xpass_f16 {rec['xpass_f16_median_ms']:.4f} ms (gemm "
                  f"{rec['xpass_f16_gemm_only_ms']:.4f}) xpass {rec['xpass_median_ms']:.4f} transposed "
                  f"{rec['transposed_median_ms']:.4f} promote {rec['promote_median_ms']:.4f} bf16 "
                  f"{rec['bf16_median_ms']:.4f}: xpass_f16/bf16 {rec['xpass_f16_vs_bf16']:.3f}x, xpass/bf16 "
                  f"{rec['xpass_vs_bf16']:.3f}x{' FASTEST' if fastest else ''}")
        wins.append(won)
    both = sorted(wins[0] & wins[1])
    print(f"xpass_f16 fastest in both runs on: {both}")
    adopted = checks_ok and memcheck_ok and branches_ok and bool(both)
    print("ADOPTED" if adopted else "NOT ADOPTED")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
