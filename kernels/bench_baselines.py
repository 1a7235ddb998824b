#!/usr/bin/env python3
"""Baselines for the grouped GEMM benchmark, on the same GPU, and the merged record.

Reads the JSON written by grouped_gemm_bench (--ours), times for every shape:
  cuBLAS dense-equivalent: torch.matmul of the stacked X [total_tokens, k] by one [k, n] matrix;
  torch._grouped_mm(X, W.transpose(1, 2), offs=cumulative token counts, int32);
  a Python loop of per-expert torch.mm into slices of Y;
with CUDA events, warm-up, median of --reps runs, random uniform [-1, 1] bf16 inputs, and writes
validation/data/h100/bench_grouped_gemm.json (--out).
"""
import argparse
import datetime
import json
import subprocess

import torch


def median_ms(fn, reps, warmup=5):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    times.sort()
    return times[len(times) // 2] if len(times) % 2 else 0.5 * (times[len(times) // 2 - 1] + times[len(times) // 2])


def uniform(*shape):
    return (torch.rand(*shape, device="cuda", dtype=torch.float32) * 2 - 1).to(torch.bfloat16)


def baselines(tokens, n, k, reps):
    experts, total = len(tokens), sum(tokens)
    flops = 2.0 * total * n * k
    x, w = uniform(total, k), uniform(experts, n, k)
    y = torch.empty(total, n, device="cuda", dtype=torch.bfloat16)
    out = {}
    dense_w = w[0].t()
    out["cublas_dense_tflops"] = flops / (median_ms(lambda: torch.matmul(x, dense_w), reps) * 1e-3) / 1e12
    offs = torch.tensor(tokens, device="cuda", dtype=torch.int32).cumsum(0, dtype=torch.int32)
    try:
        ref_check = torch._grouped_mm(x, w.transpose(1, 2), offs=offs)
        assert ref_check.shape == (total, n)
        out["torch_grouped_mm_tflops"] = flops / (
            median_ms(lambda: torch._grouped_mm(x, w.transpose(1, 2), offs=offs), reps) * 1e-3) / 1e12
    except Exception as e:  # recorded, not hidden
        out["torch_grouped_mm_tflops"] = None
        out["torch_grouped_mm_error"] = repr(e)[:300]
    bounds = [0]
    for t in tokens:
        bounds.append(bounds[-1] + t)

    def loop():
        for e in range(experts):
            if tokens[e]:
                torch.mm(x[bounds[e]:bounds[e + 1]], w[e].t(), out=y[bounds[e]:bounds[e + 1]])

    out["per_expert_loop_tflops"] = flops / (median_ms(loop, reps) * 1e-3) / 1e12
    del x, w, y
    torch.cuda.empty_cache()
    return out


def best(results, pred=lambda r: True):
    rs = [r for r in results if pred(r)]
    return max(rs, key=lambda r: r["tflops"]) if rs else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ours", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", required=True, help="the exact command line that produced the numbers")
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    ours = json.load(open(args.ours))
    try:
        driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                                capture_output=True, text=True).stdout.strip()
    except OSError:
        driver = "unknown"
    records = []
    print(f"{'shape':14} {'ours':>7} {'cuBLAS':>7} {'grp_mm':>7} {'loop':>7}  best config | grouped_m:8 vs row_major")
    for s in ours["shapes"]:
        tokens, n, k = s["tokens_per_expert"], s["n"], s["k"]
        base = baselines(tokens, n, k, args.reps)
        b = best(s["results"])
        rm = best(s["results"], lambda r: r["order"] == "row_major")
        gm = best(s["results"], lambda r: r["order"] == "grouped_m:8")
        by_order = {}
        for r in s["results"]:
            if r["order"] not in by_order or r["tflops"] > by_order[r["order"]]["tflops"]:
                by_order[r["order"]] = r
        uniform_tokens = len(set(tokens)) == 1
        rec = {
            "shape": s["shape"],
            "experts": len(tokens),
            "tokens_per_expert": tokens[0] if uniform_tokens else tokens,
            "n": n,
            "k": k,
            "ours_tflops": round(b["tflops"], 1),
            "ours_config": b["config"],
            "ours_median_ms": b["median_ms"],
            "ours_best_per_order_tflops": {o: round(r["tflops"], 1) for o, r in by_order.items()},
            "ours_row_major_tflops": round(rm["tflops"], 1) if rm else None,
            "ours_grouped_m8_tflops": round(gm["tflops"], 1) if gm else None,
            "cublas_dense_tflops": round(base["cublas_dense_tflops"], 1),
            "torch_grouped_mm_tflops": None if base["torch_grouped_mm_tflops"] is None else round(base["torch_grouped_mm_tflops"], 1),
            "per_expert_loop_tflops": round(base["per_expert_loop_tflops"], 1),
        }
        if "torch_grouped_mm_error" in base:
            rec["torch_grouped_mm_error"] = base["torch_grouped_mm_error"]
        records.append(rec)
        print(f"{rec['shape']:14} {rec['ours_tflops']:7.1f} {rec['cublas_dense_tflops']:7.1f} "
              f"{rec['torch_grouped_mm_tflops'] or float('nan'):7.1f} {rec['per_expert_loop_tflops']:7.1f}  "
              f"{rec['ours_config']} | {rec['ours_grouped_m8_tflops']} vs {rec['ours_row_major_tflops']}", flush=True)
    doc = {
        "command": args.command,
        "gpu": ours["gpu"],
        "driver": driver,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "torch": torch.__version__,
        "timing": f"CUDA events, 5 warm-up runs, median of {args.reps} (ours: {ours['reps']}) runs, uniform [-1,1] bf16 inputs",
        "records": records,
    }
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
