#!/usr/bin/env python3
"""The MXFP8 grouped GEMM in every scheme (kernels/mxfp8/: (a) promote, (b) dequantize, (b) transposed, Y^T = W X^T
with the tokens on wgmma's N, xpass, X dequantised once by the dequantiser's pass, then the transposed 128 x 128
tile converting only W, and xpass_f16, the same in f16 relative to a reference exponent a row) against our
bf16 grouped GEMM and torch._scaled_mm FP8 with per-tensor scales, and the MXFP8 layer (quantise X + GEMM) against the
bf16 GEMM, on the issue's shapes.

Inputs per shape: X [total_tokens, k] and W [experts, n, k] bf16, uniform [-1, 1) times a power of
two per row of X (2^-4..2^4, so block scales differ); both quantised by our rowwise quantiser
(round-up rule, E4M3): X's blocks along its rows, W's along k. Candidates, timed interleaved run by
run (the H100's clock drifts with temperature; blocks of runs would favour whichever ran first),
CUDA events around each call from an idle GPU, `--warmup` untimed rounds, medians of `--reps`:
  promote, dequantize, transposed, xpass: ours, each the best of a few ring depths and orders (transposed: and tokens
        per tile) in a separate selection round first (dequantize runs 3 stages only: its bf16 copies of W take the rest
        of shared memory); xpass timed as the layer runs it, its pass over X and its GEMM together;
  xpass_gemm, xpass_f16_gemm: the GEMM kernel alone (on the X of the pass before), so the pass's share is read beside it;
  xpass_f16_n128, xpass_f16_n256: xpass_f16's best candidate of each tile width (pass + GEMM; `xpass_f16_by_tile`),
        so that the two tiles are compared in one interleaved round;
  bf16: our grouped GEMM (kernels/grouped_gemm, the configuration its own benchmark chose per shape,
        validation/data/h100/bench_grouped_gemm.json) on the unquantised bf16 X and W;
  scaled_mm: torch._scaled_mm of X and one expert's W as E4M3 with per-tensor scales, the
        dense-equivalent problem (same FLOPs): the unscaled FP8 ceiling, cuBLAS;
  layer: our rowwise quantiser on X, then our MXFP8 GEMM in the scheme the selection round found
        faster (W quantised beforehand, as inference or a cached weight would be), against bf16.
Accuracy (before timing): ours against the fp32 product of the dequantised operands (TF32 off), and
against the fp32 product of the unquantised bf16 operands (what quantisation costs), as relative
Frobenius errors. Writes --out (JSON).
"""
import argparse
import ctypes
import datetime
import json
import subprocess

import torch

SHAPES = [  # name, tokens per expert, n, k, our bf16 configuration (tile_n, stages, order, persistent)
    ("dense_8192", [8192], 8192, 8192, (256, 4, "expert_major:8", True)),
    ("moe_e8x2048_n4096", [2048] * 8, 4096, 7168, (256, 4, "grouped_m:4", True)),
    ("moe_e8x2048_n2048", [2048] * 8, 2048, 7168, (256, 4, "grouped_m:4", True)),
    ("moe_e64x512", [512] * 64, 2048, 7168, (256, 4, "grouped_m:4", True)),
    ("moe_e128x128", [128] * 128, 2048, 7168, (256, 4, "serpentine", False)),
    ("decode_e64x16", [16] * 64, 2048, 7168, (256, 4, "serpentine", False)),
]
SCHEMES = {"promote": 0, "dequantize": 1, "transposed": 2, "xpass": 3, "xpass_f16": 4}


def mxfp8_candidates(tokens_per_expert):
    """Per scheme: (stages, order, persistent, tile_tokens, tile_channels); the tile only matters to transposed, whose
    tile is tile_tokens x 64 channels, or 128 x 128 (a token count of 16 takes 16-token tiles; more take 64 or 128), and
    to xpass_f16, whose tile is 16 x 128 at 16 tokens, else 128 x 128 or 128 x 256 (two m64 blocks a consumer against
    one X stage: half X's L2 bytes per MMA; at most 3 stages of 64 KB)."""
    fixed = {"promote": [(5, "grouped_m:8", True, 0, 0), (4, "grouped_m:4", True, 0, 0), (5, "serpentine", False, 0, 0)],
             "dequantize": [(3, "grouped_m:8", True, 0, 0), (3, "grouped_m:4", True, 0, 0),
                            (3, "serpentine", False, 0, 0)]}
    if tokens_per_expert <= 16:
        fixed["transposed"] = [(12, "row_major", True, 16, 64), (16, "row_major", True, 16, 64),
                               (12, "serpentine", False, 16, 64)]
    else:
        fixed["transposed"] = [(4, "grouped_m:4", True, 128, 64), (10, "grouped_m:4", True, 64, 64),
                               (4, "row_major", True, 128, 128), (4, "grouped_m:4", True, 128, 128),
                               (3, "row_major", True, 128, 128)]
    fixed["xpass"] = [(4, "row_major", True, 128, 128), (4, "grouped_m:4", True, 128, 128), (3, "row_major", True, 128, 128)]
    if tokens_per_expert <= 16:  # xpass_f16's narrow tile: wgmma N 16, a deeper ring of W (2..11 stages)
        fixed["xpass_f16"] = [(8, "row_major", True, 16, 128), (11, "row_major", True, 16, 128),
                              (8, "serpentine", False, 16, 128)]
    else:
        fixed["xpass_f16"] = list(fixed["xpass"]) + [(3, "row_major", True, 128, 256), (3, "grouped_m:4", True, 128, 256),
                                                     (2, "grouped_m:4", True, 128, 256)]
    return fixed


class Handle:
    """A created kernel of one of the two C entry points, callable on the current stream."""

    def __init__(self, lib, prefix, args):
        self.lib, self.prefix, self.err = lib, prefix, ctypes.create_string_buffer(1024)
        create = getattr(lib, prefix + "_create")
        create.restype = ctypes.c_void_p
        self.handle = create(*args, self.err, 1024)
        if not self.handle:
            raise RuntimeError(self.err.value.decode())
        getattr(lib, prefix + "_run").argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]

    def __call__(self):
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        if getattr(self.lib, self.prefix + "_run")(ctypes.c_void_p(self.handle), stream, self.err, 1024):
            raise RuntimeError(self.err.value.decode())

    def gemm_only(self):
        """The MXFP8 GEMM kernel without xpass's pass over X (tilesim_mxfp8_gemm_run_part)."""
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        if self.lib.tilesim_mxfp8_gemm_run_part(ctypes.c_void_p(self.handle), 1, stream, self.err, 1024):
            raise RuntimeError(self.err.value.decode())

    def close(self):
        getattr(self.lib, self.prefix + "_destroy")(ctypes.c_void_p(self.handle))


def ptr(t):
    return ctypes.c_void_p(t.data_ptr())


def interleaved_medians(fns, reps, warmup):
    for _ in range(warmup):
        for fn in fns.values():
            fn()
    times = {name: [] for name in fns}
    for _ in range(reps):
        for name, fn in fns.items():
            torch.cuda.synchronize()
            start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            times[name].append(start.elapsed_time(stop))
    return {name: sorted(t)[len(t) // 2] for name, t in times.items()}


def quantize(mx_lib, x2d, sms):
    """Our rowwise quantiser (round-up, E4M3) on a [rows, cols] bf16 tensor: elements and scales."""
    rows, cols = x2d.shape
    elements = torch.empty(rows, cols, device="cuda", dtype=torch.uint8)
    scales = torch.empty(rows, cols // 32, device="cuda", dtype=torch.uint8)
    err = ctypes.create_string_buffer(1024)

    def run():
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        if mx_lib.tilesim_mxfp8_quantize(ptr(x2d), ptr(elements), ptr(scales), rows, cols, 0, 1, 0, sms, stream, err,
                                         1024):
            raise RuntimeError(err.value.decode())

    run()
    return elements, scales, run


def dequantize(elements, scales):
    values = elements.view(torch.float8_e4m3fn).float()
    exps = scales.float() - 127.0
    return (values.view(values.shape[0], -1, 32) * torch.exp2(exps).unsqueeze(-1)).view(values.shape)


def grouped_fp32(x, w, bounds):
    out = torch.empty(x.shape[0], w.shape[1], device="cuda", dtype=torch.float32)
    for e in range(w.shape[0]):
        if bounds[e + 1] > bounds[e]:
            out[bounds[e]:bounds[e + 1]] = x[bounds[e]:bounds[e + 1]] @ w[e].t()
    return out


def rel(a, b):
    return ((a.float() - b).norm() / b.norm()).item()


def shape_record(name, tokens, n, k, bf16_cfg, libs, reps, warmup):
    mx_lib, gg_lib = libs
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    experts, total = len(tokens), sum(tokens)
    bounds = [0]
    for t in tokens:
        bounds.append(bounds[-1] + t)
    flops = 2.0 * total * n * k
    tflops = lambda ms: round(flops / (ms * 1e-3) / 1e12, 1)
    row_scale = torch.exp2(torch.randint(-4, 5, (total, 1), device="cuda").float())
    x = ((torch.rand(total, k, device="cuda") * 2 - 1) * row_scale).to(torch.bfloat16)
    w = (torch.rand(experts, n, k, device="cuda") * 2 - 1).to(torch.bfloat16)
    xq, xs, quantize_x = quantize(mx_lib, x, sms)
    wq, ws, _ = quantize(mx_lib, w.view(experts * n, k), sms)
    y_mx = {scheme: torch.full((total, n), float("nan"), device="cuda", dtype=torch.bfloat16) for scheme in SCHEMES}
    y_bf = torch.empty(total, n, device="cuda", dtype=torch.bfloat16)
    tok = (ctypes.c_int * experts)(*tokens)

    def mxfp8(scheme, stages, order, persistent, tile_tokens, tile_channels):
        return Handle(mx_lib, "tilesim_mxfp8_gemm",
                      [experts, tok, n, k, stages, int(persistent), order.encode(), SCHEMES[scheme], tile_tokens,
                       tile_channels,
                       ptr(xq), ptr(xs), ptr(wq), ptr(ws), ptr(y_mx[scheme]), sms])

    tile_n, stages, order, persistent = bf16_cfg
    bf16 = Handle(gg_lib, "tilesim_grouped_gemm",
                  [experts, tok, n, k, tile_n, stages, int(persistent), order.encode(), ptr(x), ptr(w), ptr(y_bf), sms])
    candidates = {f"{scheme}/{f't{t}/' if t else ''}{f'n{c}/' if c >= 128 else ''}s{s}/{o}/{'persistent' if p else 'grid'}":
                  mxfp8(scheme, s, o, p, t, c)
                  for scheme, configs in mxfp8_candidates(tokens[0]).items() for s, o, p, t, c in configs}
    selection = interleaved_medians(candidates, max(5, reps // 3), warmup)
    best = {scheme: min((c for c in selection if c.startswith(scheme + "/")), key=selection.get) for scheme in SCHEMES}
    ours = {scheme: candidates[best[scheme]] for scheme in SCHEMES}
    faster = min(SCHEMES, key=lambda scheme: selection[best[scheme]])
    # xpass_f16's best 128 x 128 and best 128 x 256 candidates, both timed in the interleaved round below.
    f16_tiles = {c: min((k for k in selection if k.startswith("xpass_f16/") and f"/n{c}/" in k), key=selection.get,
                        default=None) for c in (128, 256)}

    # Accuracy first, on this run's outputs.
    for run in list(ours.values()) + [bf16]:
        run()
    torch.cuda.synchronize()
    ref_dequantised = grouped_fp32(dequantize(xq, xs), dequantize(wq, ws).view(experts, n, k), bounds)
    ref_bf16 = grouped_fp32(x.float(), w.float(), bounds)
    accuracy = {"bf16_vs_fp32_of_bf16_inputs_rel": float(f"{rel(y_bf, ref_bf16):.3e}")}
    for scheme, y in y_mx.items():
        accuracy[f"{scheme}_vs_fp32_of_dequantised_rel"] = float(f"{rel(y, ref_dequantised):.3e}")
        accuracy[f"{scheme}_vs_fp32_of_bf16_inputs_rel"] = float(f"{rel(y, ref_bf16):.3e}")
        accuracy[f"{scheme}_nan_outputs"] = int(torch.isnan(y).sum().item())
    del ref_dequantised, ref_bf16

    one = torch.ones((), device="cuda", dtype=torch.float32)
    x8 = x.to(torch.float8_e4m3fn)
    w8 = w[0].to(torch.float8_e4m3fn)
    fns = {"promote": ours["promote"], "dequantize": ours["dequantize"], "transposed": ours["transposed"],
           "xpass": ours["xpass"], "xpass_gemm": ours["xpass"].gemm_only, "xpass_f16": ours["xpass_f16"],
           "xpass_f16_gemm": ours["xpass_f16"].gemm_only, "bf16": bf16,
           "scaled_mm": lambda: torch._scaled_mm(x8, w8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
           "layer_mxfp8": lambda: (quantize_x(), ours[faster]()), "quantize_x": quantize_x}
    fns.update({f"xpass_f16_n{c}": candidates[k] for c, k in f16_tiles.items() if k is not None})
    med = interleaved_medians(fns, reps, warmup)
    for h in list(candidates.values()) + [bf16]:
        h.close()
    record = {"shape": name, "experts": experts, "tokens_per_expert": tokens[0], "n": n, "k": k}
    for scheme in SCHEMES:
        record.update({f"{scheme}_tflops": tflops(med[scheme]), f"{scheme}_median_ms": round(med[scheme], 4),
                       f"{scheme}_config": best[scheme], f"{scheme}_vs_bf16": round(med["bf16"] / med[scheme], 3)})
    winner = min(SCHEMES, key=med.get)
    record.update({
        "measured_winner": winner, "winner_vs_bf16": round(med["bf16"] / med[winner], 3),
        "bf16_tflops": tflops(med["bf16"]), "bf16_median_ms": round(med["bf16"], 4),
        "bf16_config": f"128x{tile_n}x64/s{stages}/{order}/{'persistent' if persistent else 'grid'}",
        "scaled_mm_per_tensor_tflops": tflops(med["scaled_mm"]), "scaled_mm_median_ms": round(med["scaled_mm"], 4),
        "layer_scheme": faster, "layer_mxfp8_ms": round(med["layer_mxfp8"], 4),
        "quantize_x_ms": round(med["quantize_x"], 4), "layer_vs_bf16": round(med["bf16"] / med["layer_mxfp8"], 3),
        "xpass_gemm_only_ms": round(med["xpass_gemm"], 4), "xpass_f16_gemm_only_ms": round(med["xpass_f16_gemm"], 4),
        "selection_round_tflops": {c: tflops(v) for c, v in selection.items()},
        "xpass_f16_by_tile": {f"n{c}": {"config": k, "median_ms": round(med[f"xpass_f16_n{c}"], 4)}
                              for c, k in f16_tiles.items() if k is not None},
        "accuracy": accuracy,
    })
    return record


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mxfp8-lib", required=True, help="libtilesim_mxfp8_capi.so")
    ap.add_argument("--bf16-lib", required=True, help="libtilesim_grouped_gemm_capi.so")
    ap.add_argument("--out", required=True)
    ap.add_argument("--command", required=True, help="the exact command line that produced the numbers")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--shapes", default="", help="comma-separated subset of the shape names")
    args = ap.parse_args()
    torch.manual_seed(20)
    torch.backends.cuda.matmul.allow_tf32 = False
    mx_lib, gg_lib = ctypes.CDLL(args.mxfp8_lib), ctypes.CDLL(args.bf16_lib)
    mx_lib.tilesim_mxfp8_quantize.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_longlong] * 2 + [ctypes.c_int] * 4 + [
        ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
    mx_lib.tilesim_mxfp8_gemm_run_part.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p,
                                                   ctypes.c_int]
    wanted = set(filter(None, args.shapes.split(",")))
    records = []
    print(f"{'shape':20} {'promote':>7} {'dequant':>7} {'transp':>7} {'xpass':>7} {'xp_f16':>7} {'bf16':>7} {'best/bf16':>9} "
          f"{'scaled_mm':>9} {'layer/bf16':>10} | err vs dequantised (a, b, t, x, xh), vs bf16 inputs (a, b, t, x, xh)")
    for name, tokens, n, k, cfg in SHAPES:
        if wanted and name not in wanted:
            continue
        r = shape_record(name, tokens, n, k, cfg, (mx_lib, gg_lib), args.reps, args.warmup)
        records.append(r)
        a = r["accuracy"]
        print(f"{name:20} {r['promote_tflops']:7.1f} {r['dequantize_tflops']:7.1f} {r['transposed_tflops']:7.1f} "
              f"{r['xpass_tflops']:7.1f} {r['xpass_f16_tflops']:7.1f} {r['bf16_tflops']:7.1f} {r['winner_vs_bf16']:9.3f} {r['scaled_mm_per_tensor_tflops']:9.1f} "
              f"{r['layer_vs_bf16']:10.3f} | "
              + ", ".join(str(a[f"{s}_vs_fp32_of_dequantised_rel"]) for s in SCHEMES) + ", "
              + ", ".join(str(a[f"{s}_vs_fp32_of_bf16_inputs_rel"]) for s in SCHEMES), flush=True)
        torch.cuda.empty_cache()
    props = torch.cuda.get_device_properties(0)
    driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"], capture_output=True,
                            text=True).stdout.strip()
    doc = {"command": args.command, "gpu": props.name, "driver": driver, "torch": torch.__version__,
           "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
           "timing": f"CUDA events around each call from an idle GPU, candidates interleaved run by run, {args.warmup} "
                     f"warm-up rounds, median of {args.reps}",
           "records": records}
    with open(args.out, "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
