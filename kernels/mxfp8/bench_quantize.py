#!/usr/bin/env python3
"""MXFP8 quantisers at 16384 x 7168 bf16: ours against torch.compile'd quantisers and the device copy.

On the same random bf16 tensor (uniform in [-1, 1) times a power of two per row, so scales vary),
one run of each candidate in turn, `--reps` rounds (interleaved: the H100's clock drifts with
temperature, and blocks of runs would favour whichever ran first), each after an L2 flush (a read of
twice the L2) and after `--warmup` untimed rounds. Durations are the kernels' own, as CUPTI's
activity records time them (through torch.profiler, as kernels/elementwise/bench_baselines.py
does), without host launch overhead: a call's duration is the sum of its kernels'; medians.
Candidates:
  ours_{rowwise,colwise}_{round_up,floor}: kernels/mxfp8 through --lib (ctypes), E4M3
  torch_rowwise, torch_colwise: the same quantisation (round-up rule, E4M3, saturating) written in
      torch ops and compiled by torch.compile (Inductor, Triton); colwise writes the transposed layout
  copy: out.copy_(x) of the bf16 tensor, the device copy rate
Effective TB/s = (bytes read + bytes written) / time: 2 n + n + n / 32 for a quantiser, 4 n for the
copy. Before timing, ours and torch's outputs are compared byte for byte (they compute the same
thing). Writes --out (JSON).
"""
import argparse
import ctypes
import datetime
import json
import os
import statistics
import subprocess
import tempfile

import torch


def torch_rowwise(x):
    r, c = x.shape
    b = x.view(r, c // 32, 32).float()
    amax = b.abs().amax(-1, keepdim=True)
    e = torch.ceil(torch.log2(amax / 448.0)).clamp(-127, 127)
    e = torch.where(amax == 0, torch.full_like(e, -127.0), e)
    q = (b * torch.exp2(-e)).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q.view(r, c), (e + 127).to(torch.uint8).view(r, c // 32)


def torch_colwise(x):
    r, c = x.shape
    b = x.view(r // 32, 32, c).float()
    amax = b.abs().amax(1, keepdim=True)
    e = torch.ceil(torch.log2(amax / 448.0)).clamp(-127, 127)
    e = torch.where(amax == 0, torch.full_like(e, -127.0), e)
    q = (b * torch.exp2(-e)).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q.permute(2, 0, 1).reshape(c, r), (e + 127).to(torch.uint8).view(r // 32, c).t().contiguous()


class Ours:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.tilesim_mxfp8_quantize.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_longlong] * 2 + [
            ctypes.c_int] * 4 + [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        self.err = ctypes.create_string_buffer(1024)
        self.sms = torch.cuda.get_device_properties(0).multi_processor_count

    def quantize(self, x, elements, scales, axis, rule):
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        if self.lib.tilesim_mxfp8_quantize(x.data_ptr(), elements.data_ptr(), scales.data_ptr(), x.shape[0], x.shape[1],
                                           axis, rule, 0, self.sms, stream, self.err, 1024):
            raise RuntimeError(self.err.value.decode())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--lib", required=True, help="libtilesim_mxfp8_capi.so")
    parser.add_argument("--out", required=True)
    parser.add_argument("--rows", type=int, default=16384)
    parser.add_argument("--cols", type=int, default=7168)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--warmup", type=int, default=5)
    args = parser.parse_args()
    torch.manual_seed(20)
    r, c = args.rows, args.cols
    n = r * c
    x = (torch.rand(r, c, device="cuda") * 2 - 1) * torch.exp2(torch.randint(-20, 21, (r, 1), device="cuda").float())
    x = x.to(torch.bfloat16)
    ours = Ours(args.lib)
    elements = torch.empty(n, dtype=torch.uint8, device="cuda")
    scales = torch.empty(n // 32, dtype=torch.uint8, device="cuda")
    copy_out = torch.empty_like(x)
    compiled_row = torch.compile(torch_rowwise)
    compiled_col = torch.compile(torch_colwise)

    # Same bytes as torch's version of the round-up rule (E4M3, saturating, RNE).
    checks = {}
    for axis, fn in ((0, compiled_row), (1, compiled_col)):
        ours.quantize(x, elements, scales, axis, 1)
        q, s = fn(x)
        torch.cuda.synchronize()
        same_e = (q.contiguous().view(torch.uint8).flatten() == elements).float().mean().item()
        same_s = (s.contiguous().flatten() == scales).float().mean().item()
        checks["rowwise" if axis == 0 else "colwise"] = {"elements_equal_fraction": same_e, "scales_equal_fraction": same_s}
    print("ours vs torch.compile, fraction of equal bytes:", checks, flush=True)

    candidates = {
        "ours_rowwise_round_up": lambda: ours.quantize(x, elements, scales, 0, 1),
        "ours_rowwise_floor": lambda: ours.quantize(x, elements, scales, 0, 0),
        "ours_colwise_round_up": lambda: ours.quantize(x, elements, scales, 1, 1),
        "ours_colwise_floor": lambda: ours.quantize(x, elements, scales, 1, 0),
        "torch_compile_rowwise": lambda: compiled_row(x),
        "torch_compile_colwise": lambda: compiled_col(x),
        "copy": lambda: copy_out.copy_(x),
    }
    scratch = torch.ones(2 * torch.cuda.get_device_properties(0).L2_cache_size // 4, device="cuda")
    for _ in range(args.warmup):
        for fn in candidates.values():
            fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(args.reps):
            for fn in candidates.values():
                scratch.sum()  # the flush: its reduction kernel separates one call from the next
                fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        events = json.load(open(path))["traceEvents"]
    device = sorted((e for e in events if e.get("cat") in ("kernel", "gpu_memcpy")), key=lambda e: e["ts"])
    calls = []  # the kernels between two flushes (one or more reduction kernels) are one call
    in_flush = False
    for e in device:
        flush = "reduce_kernel" in e["name"]
        if flush and not in_flush:
            calls.append(0.0)
        elif not flush and calls:
            calls[-1] += e["dur"]
        in_flush = flush
    if len(calls) != args.reps * len(candidates):
        raise RuntimeError(f"{len(calls)} calls in the trace, expected {args.reps * len(candidates)}")
    names = list(candidates)
    times = {name: calls[i::len(names)] for i, name in enumerate(names)}
    quant_bytes = 2 * n + n + n // 32
    results = {}
    for name, t in times.items():
        us = statistics.median(t)
        moved = 4 * n if name == "copy" else quant_bytes
        results[name] = {"median_us": us, "min_us": min(t), "max_us": max(t), "bytes": moved, "tb_per_s": moved / us / 1e6,
                         "runs_us": t}
        print(f"{name:24s} {us:9.2f} us  {moved / us / 1e6:6.3f} TB/s", flush=True)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    out = {
        "what": "MXFP8 quantisers (E4M3) on a bf16 [rows, cols] tensor: ours, torch.compile'd, and the bf16 copy",
        "rows": r, "cols": c,
        "command": "python3 kernels/mxfp8/bench_quantize.py --lib LIB --out OUT --reps %d --warmup %d" % (args.reps, args.warmup),
        "timing": "CUPTI kernel durations (torch.profiler), L2 flushed before every run, interleaved round by round, "
                  "medians of --reps",
        "gpu_driver": smi, "torch": torch.__version__,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "equal_bytes_ours_vs_torch": checks, "results": results,
    }
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
