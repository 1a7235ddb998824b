"""The pre-registered rule of xpass's W as 16-byte units (kernels/mxfp8/NOTES.md): the variant is adopted
only if the xpass stage (L2-resident, 4 and 3 stages) is faster with it than with the base in both runs,
xpass on moe_e128x128 (pass + GEMM) is faster in both runs, and no shape is slower in both runs.
Usage: python3 rule.py RUN_DIR (the device call's stage_rate_*_run*.json and bench_*_run*.json)."""
import json
import sys

run = sys.argv[1]
stage = {(v, r): {c["stages"]: c["ns_per_stage"] for c in json.load(open(f"{run}/stage_rate_{v}_run{r}.json"))["configs"]
                  if c["scheme"] == "xpass"}
         for v in ("base", "var") for r in (1, 2)}
stage_faster = True
for r in (1, 2):
    for stages in sorted(stage[("base", r)]):
        b, v = stage[("base", r)][stages], stage[("var", r)][stages]
        print(f"run {r} xpass stage at {stages} stages: base {b:.1f} ns, variant {v:.1f} ns ({v / b - 1:+.1%})")
        stage_faster = stage_faster and v < b
bench = {(v, r): {x["shape"]: x for x in json.load(open(f"{run}/bench_{v}_run{r}.json"))["records"]}
         for v in ("base", "var") for r in (1, 2)}
faster, slower = {}, {}
for shape in bench[("base", 1)]:
    for r in (1, 2):
        b, v = bench[("base", r)][shape], bench[("var", r)][shape]
        print(f"run {r} {shape:20} xpass base {b['xpass_median_ms']:.4f} var {v['xpass_median_ms']:.4f} "
              f"({v['xpass_median_ms'] / b['xpass_median_ms']:.3f}); gemm only {b['xpass_gemm_only_ms']:.4f} "
              f"{v['xpass_gemm_only_ms']:.4f}; bf16 {b['bf16_median_ms']:.4f} {v['bf16_median_ms']:.4f}; "
              f"xpass/bf16 {b['xpass_vs_bf16']:.3f} {v['xpass_vs_bf16']:.3f}")
        faster.setdefault(shape, []).append(v["xpass_median_ms"] < b["xpass_median_ms"])
        slower.setdefault(shape, []).append(v["xpass_median_ms"] > b["xpass_median_ms"])
losing = [s for s, l in slower.items() if all(l)]
print("stage faster in both runs at every depth:", stage_faster)
print("xpass faster in both runs:", [s for s, f in faster.items() if all(f)])
print("xpass slower in both runs:", losing)
print("ADOPTED" if stage_faster and all(faster["moe_e128x128"]) and not losing else "NOT ADOPTED")
