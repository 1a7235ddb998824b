#!/usr/bin/env python3
"""Vector add: our element-wise kernel against the brief's Triton kernel, torch and the device copy.

For every size, on the same random fp32 tensors, one run of each in turn (interleaved, `--reps`
rounds; the H100's clock drifts with temperature, so blocks of runs would favour whichever ran
first), each after an L2 flush (a read of twice the L2), so every run starts cold as
tilesim-measure's do:
  ours (kernels/elementwise through --lib, ctypes), named block_vector_unroll_form:
    b128v4u2_grid:   128 threads x 2 vectors of 4 fp32, one CTA per 1024 elements: Triton's own
                     split (BLOCK_SIZE 1024 over 4 warps)
    b256v4u1_grid:   256 threads x 1 vector of 4 (the spec's default), same elements per CTA
    b256v4u2_grid, b256v4u1_persistent: a wider step; the grid-stride form
    b256v4u4_grid, b1024v4u1_grid: 4096 elements per CTA: a quarter of the CTAs to place
  triton:          the Triton tutorial's add_kernel (BLOCK_SIZE 1024, its defaults)
  torch:           torch.add(x, y, out=out)
  copy:            out.copy_(x), a device-to-device cudaMemcpy: the device copy rate
Durations are the kernels' (and the copy's) own, as CUPTI's activity records time them (through
torch.profiler), without host launch overhead; medians. Rates count every byte read and written
(3 n x 4 for add, 2 n x 4 for the copy). Writes --out (JSON).
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
import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(output_ptr + offsets, x + y, mask=mask)


def triton_add(x, y, out):
    n = out.numel()
    add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK_SIZE=1024)


class Ours:
    def __init__(self, path):
        self.lib = ctypes.CDLL(path)
        self.lib.tilesim_elementwise_run.argtypes = [ctypes.c_int] * 2 + [ctypes.c_void_p] * 3 + [
            ctypes.c_longlong] + [ctypes.c_int] * 5 + [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int]
        self.err = ctypes.create_string_buffer(1024)
        self.sms = torch.cuda.get_device_properties(0).multi_processor_count

    def add(self, x, y, out, block, vector, unroll, persistent):
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        if self.lib.tilesim_elementwise_run(0, 0, x.data_ptr(), y.data_ptr(), out.data_ptr(), out.numel(), block,
                                            vector, unroll, int(persistent), self.sms, stream, self.err, 1024):
            raise RuntimeError(self.err.value.decode())


# (block, vector, unroll, persistent) of each configuration of ours timed.
OURS = {"b128v4u2_grid": (128, 4, 2, False), "b256v4u1_grid": (256, 4, 1, False),
        "b256v4u2_grid": (256, 4, 2, False), "b256v4u1_persistent": (256, 4, 1, True),
        "b256v4u4_grid": (256, 4, 4, False), "b1024v4u1_grid": (1024, 4, 1, False)}


def classify(name):
    if "tilesim" in name:
        return "ours"
    if "add_kernel" in name:
        return "triton"
    if "Memcpy DtoD" in name or "Memcpy" in name:
        return "copy"
    if "CUDAFunctor_add" in name or "AddFunctor" in name:
        return "torch"
    return None  # the flush's reduction and anything else


def time_size(ours, n, reps, flush):
    x = torch.rand(n, device="cuda") - 0.5
    y = torch.rand(n, device="cuda") - 0.5
    out = torch.full((n,), float("nan"), device="cuda")
    calls = [(f"ours_{name}", (lambda c: lambda: ours.add(x, y, out, *c))(config)) for name, config in OURS.items()]
    calls += [("triton", lambda: triton_add(x, y, out)),
             ("torch", lambda: torch.add(x, y, out=out)),
             ("copy", lambda: out.copy_(x))]
    for _, fn in calls:  # warm-up: Triton compiles on its first call
        fn()
    torch.cuda.synchronize()
    # Every configuration of ours against torch, bit for bit (one fp32 add per element).
    for name, config in OURS.items():
        out.fill_(float("nan"))
        ours.add(x, y, out, *config)
        if not torch.equal(out, x + y):
            raise RuntimeError(f"ours {name} differs from x + y at n={n}")
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(reps):
            for _, fn in calls:
                flush()
                fn()
        torch.cuda.synchronize()
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        events = json.load(open(path))["traceEvents"]
    device = sorted((e for e in events if e.get("cat") in ("kernel", "gpu_memcpy")), key=lambda e: e["ts"])
    # Each call's kernels in launch order (torch splits an add of over 2^31 bytes into two kernels:
    # a call's duration is the sum of its kernels'); ours are told apart by their launch order.
    times = {name: [] for name, _ in calls}
    ours_names = [f"ours_{name}" for name in OURS]
    ours_seen = 0
    previous = None
    for e in device:
        kind = classify(e["name"])
        if kind == "ours":
            kind = ours_names[ours_seen % len(ours_names)]
            ours_seen += 1
        if kind is None:
            previous = None
            continue
        if kind == previous and kind == "torch":
            times[kind][-1] += e["dur"]
        else:
            times[kind].append(e["dur"])
        previous = kind
    for name, t in times.items():
        if len(t) != reps:
            names = sorted({e["name"][:80] for e in device})
            raise RuntimeError(f"n={n}: {len(t)} timed {name} runs in the trace, expected {reps}; names: {names}")
    del x, y, out
    torch.cuda.empty_cache()
    med = {name: statistics.median(t) for name, t in times.items()}
    add_bytes, copy_bytes = 3 * n * 4, 2 * n * 4
    row = {"elements": n, "bytes_per_array": n * 4, "median_us": med, "all_us": times,
           "rate_gb_s": {name: (copy_bytes if name == "copy" else add_bytes) / (med[name] * 1e3) for name in med}}
    for name in ours_names + ["triton", "torch"]:
        row[f"{name}_over_copy_rate"] = row["rate_gb_s"][name] / row["rate_gb_s"]["copy"]
    for name in ours_names:
        row[f"{name}_speedup_over_triton"] = med["triton"] / med[name]
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", required=True, help="libtilesim_elementwise_capi.so")
    parser.add_argument("--out", required=True)
    parser.add_argument("--reps", type=int, default=20)
    parser.add_argument("--sizes", default="1024,4096,16384,65536,262144,1048576,4194304,16777216,67108864,"
                                           "268435456,1073741824,1000,1000003,10000001,16777217")
    args = parser.parse_args()
    ours = Ours(args.lib)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    scratch = torch.ones(2 * l2 // 4, device="cuda")
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        reps = args.reps if n < (1 << 28) else max(5, args.reps // 2)
        rows.append(time_size(ours, n, reps, lambda: scratch.sum()))
        r = rows[-1]
        ours_us = " / ".join(f"{r['median_us']['ours_' + name]:.2f}" for name in OURS)
        print(f"n={n:>11}: ours {ours_us} us, triton {r['median_us']['triton']:.2f}, torch "
              f"{r['median_us']['torch']:.2f}, copy {r['median_us']['copy']:.2f}; b128v4u2 over copy rate "
              f"{r['ours_b128v4u2_grid_over_copy_rate']:.3f}, over triton x{r['ours_b128v4u2_grid_speedup_over_triton']:.3f}"
              f"; best of ours over triton x{max(r[k] for k in r if k.endswith('_speedup_over_triton')):.3f}",
              flush=True)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    record = {"what": "vector add (fp32): ours (configurations in 'ours'), Triton tutorial kernel, torch.add, "
                      "device-to-device copy; "
                      "CUPTI kernel durations via torch.profiler, L2 flushed before every run, interleaved",
              "command": "python3 kernels/elementwise/bench_baselines.py --lib " + args.lib + " --out " + args.out +
                         f" --reps {args.reps} --sizes {args.sizes}",
              "gpu": torch.cuda.get_device_name(0), "nvidia_smi": smi, "torch": torch.__version__,
              "triton": triton.__version__, "cuda": torch.version.cuda,
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "ours": {name: dict(zip(("block", "vector", "unroll", "persistent"), c)) for name, c in OURS.items()},
              "sizes": rows}
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
