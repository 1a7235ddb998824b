#!/usr/bin/env python3
"""Vector add: our element-wise kernel against the brief's Triton kernel, torch and the device copy.

For every size, on the same random fp32 tensors, one run of each in turn (interleaved, `--reps`
rounds; the H100's clock drifts with temperature, so blocks of runs would favour whichever ran
first), each after an L2 flush (a read of twice the L2), so every run starts cold as
tilesim-measure's do:
  ours (kernels/elementwise through --lib, ctypes), the configurations --ours names, each
  block_vector_unroll_form (CATALOGUE below), e.g.:
    b256v4u1_grid:   256 threads x 1 vector of 4 fp32 (the spec's default), one CTA per 1024 elements
    b128v4u2_grid:   128 threads x 2 vectors of 4: Triton's own split (BLOCK_SIZE 1024 over 4 warps)
    b256v4u4_grid:   256 threads x 4 vectors of 4: 4096 elements per CTA, a quarter of the CTAs
    b256v4u1_persistent: the grid-stride form
  triton:          the Triton tutorial's add_kernel (BLOCK_SIZE 1024, its defaults)
  torch:           torch.add(x, y, out=out)
  copy:            out.copy_(x), a device-to-device cudaMemcpy: the device copy rate
Durations are the kernels' (and the copy's) own, as CUPTI's activity records time them (through
torch.profiler), without host launch overhead; medians. Rates count every byte read and written
(3 n x 4 for add, 2 n x 4 for the copy). Every configuration of ours is first checked bit for bit
against torch's x + y on a NaN-poisoned output. Up to --trace-max elements, one traced run of each
configuration of ours (after a flush, outside the timed rounds) records per CTA when it started,
when its first loads had returned and when it ended (%globaltimer, 32 ns ticks): the record keeps
their summary, and every CTA's at --trace-keep elements. --asm-dir: Triton's PTX and SASS for the
kernel it ran, and the SASS of ours (cuobjdump), for reading side by side. Writes --out (JSON).
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
        self.lib.tilesim_elementwise_trace.argtypes = [ctypes.c_int] * 2 + [ctypes.c_void_p] * 3 + [
            ctypes.c_longlong] + [ctypes.c_int] * 5 + [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int,
                                                       ctypes.c_char_p, ctypes.c_int]
        self.err = ctypes.create_string_buffer(1024)
        self.sms = torch.cuda.get_device_properties(0).multi_processor_count

    def add(self, x, y, out, block, vector, unroll, persistent):
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        if self.lib.tilesim_elementwise_run(0, 0, x.data_ptr(), y.data_ptr(), out.data_ptr(), out.numel(), block,
                                            vector, unroll, int(persistent), self.sms, stream, self.err, 1024):
            raise RuntimeError(self.err.value.decode())

    def trace(self, x, y, out, block, vector, unroll, persistent):
        """One traced run: per CTA [sm, start, first data, end] in ns, times from the first start."""
        max_ctas = (out.numel() + block * vector * unroll - 1) // (block * vector * unroll)
        records = torch.zeros(max_ctas * 4, dtype=torch.int64, device="cuda")  # CtaTrace: 32 bytes
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        grid = self.lib.tilesim_elementwise_trace(0, 0, x.data_ptr(), y.data_ptr(), out.data_ptr(), out.numel(),
                                                  block, vector, unroll, int(persistent), self.sms, stream,
                                                  records.data_ptr(), max_ctas, self.err, 1024)
        if grid < 0:
            raise RuntimeError(self.err.value.decode())
        torch.cuda.synchronize()
        r = records.view(-1, 4)[:grid].cpu().tolist()
        t0 = min(c[0] for c in r)
        return [[c[3] & 0xFFFFFFFF, c[0] - t0, c[1] - t0, c[2] - t0] for c in r]


# (block, vector, unroll, persistent) of each configuration of ours that --ours can name.
CATALOGUE = {f"b{block}v4u{unroll}_grid": (block, 4, unroll, False)
             for block, unroll in ((256, 1), (128, 2), (256, 2), (256, 4), (128, 4), (1024, 1))}
CATALOGUE["b256v4u1_persistent"] = (256, 4, 1, True)
OURS = {}  # the configurations timed (main() fills it from --ours)


def percentile(values, q):
    v = sorted(values)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]


def trace_summary(cta):
    """Where a traced run's time went, in ns from the first CTA's start."""
    starts, firsts, ends = [c[1] for c in cta], [c[2] for c in cta], [c[3] for c in cta]
    return {"ctas": len(cta), "last_start": max(starts), "first_data_min": min(firsts),
            "first_data_median": percentile(firsts, 0.5), "first_data_max": max(firsts),
            "end_p10": percentile(ends, 0.1), "end_median": percentile(ends, 0.5), "end_p90": percentile(ends, 0.9),
            "end_max": max(ends), "wait_for_data_median": percentile([f - s for s, f in zip(starts, firsts)], 0.5)}


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


def time_size(ours, n, reps, flush, trace_max, trace_keep):
    x = torch.rand(n, device="cuda") - 0.5
    y = torch.rand(n, device="cuda") - 0.5
    out = torch.full((n,), float("nan"), device="cuda")
    # Every configuration of ours against torch, bit for bit (one fp32 add per element), traced too;
    # one that differs is recorded as failed and not timed.
    failed, traces = {}, {}
    for name, config in OURS.items():
        out.fill_(float("nan"))
        ours.add(x, y, out, *config)
        if not torch.equal(out, x + y):
            failed[name] = "differs from x + y"
            continue
        if n <= trace_max:
            out.fill_(float("nan"))
            flush()
            cta = ours.trace(x, y, out, *config)
            if not torch.equal(out, x + y):
                failed[name] = "traced run differs from x + y"
                continue
            traces[name] = {"summary_ns": trace_summary(cta)}
            if n == trace_keep:
                traces[name]["cta_sm_start_firstdata_end_ns"] = cta
    active = {name: config for name, config in OURS.items() if name not in failed}
    calls = [(f"ours_{name}", (lambda c: lambda: ours.add(x, y, out, *c))(config)) for name, config in active.items()]
    calls += [("triton", lambda: triton_add(x, y, out)),
             ("torch", lambda: torch.add(x, y, out=out)),
             ("copy", lambda: out.copy_(x))]
    for _, fn in calls:  # warm-up: Triton compiles on its first call
        fn()
    torch.cuda.synchronize()
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
    ours_names = [f"ours_{name}" for name in active]
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
    if traces:
        row["traces"] = traces
    if failed:
        row["failed"] = failed
    return row


def dump_asm(asm_dir, lib_path, n):
    """Triton's PTX and SASS of the add_kernel it ran, and the SASS of ours, into asm_dir."""
    import glob
    import shutil
    os.makedirs(asm_dir, exist_ok=True)
    x = torch.rand(n, device="cuda")
    compiled = add_kernel[(triton.cdiv(n, 1024),)](x, x, x, n, BLOCK_SIZE=1024)
    with open(os.path.join(asm_dir, "triton_add_kernel.ptx"), "w") as f:
        f.write(compiled.asm["ptx"])
    tools = os.path.join(os.path.dirname(triton.__file__), "backends", "nvidia", "bin")
    cuobjdump = shutil.which("cuobjdump") or next(iter(glob.glob(os.path.join(tools, "cuobjdump"))), None)
    with tempfile.TemporaryDirectory() as tmp:
        cubin = os.path.join(tmp, "add_kernel.cubin")
        with open(cubin, "wb") as f:
            f.write(compiled.asm["cubin"])
        for name, target in (("triton_add_kernel.sass", cubin), ("ours.sass", lib_path)):
            if cuobjdump is None:
                text = "no cuobjdump on this machine"
            else:
                text = subprocess.run([cuobjdump, "-sass", target], capture_output=True, text=True).stdout
            if name == "ours.sass":  # the fp32 kernels with 16-byte vectors only (the library holds hundreds)
                keep, lines = False, []
                for line in text.splitlines():
                    if "Function :" in line:
                        keep = "IfLi4E" in line and "ElementwiseOpE0" in line
                    if keep:
                        lines.append(line)
                text = "\n".join(lines) + "\n"
            with open(os.path.join(asm_dir, name), "w") as f:
                f.write(text)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lib", required=True, help="libtilesim_elementwise_capi.so")
    parser.add_argument("--out", required=True)
    parser.add_argument("--reps", type=int, default=30)
    parser.add_argument("--sizes", default="1024,4096,16384,65536,262144,1048576,4194304,16777216,67108864,"
                                           "268435456,1073741824,1000,1000003,10000001,16777217")
    parser.add_argument("--trace-max", type=int, default=1 << 24, help="trace sizes up to this many elements")
    parser.add_argument("--trace-keep", type=int, default=1 << 20, help="keep every CTA's record at this size")
    parser.add_argument("--asm-dir", help="write Triton's PTX/SASS and ours' SASS here")
    parser.add_argument("--ours", default="b256v4u1_grid,b128v4u2_grid",
                        help="configurations of ours to time, comma-separated: " + ", ".join(CATALOGUE))
    args = parser.parse_args()
    for name in args.ours.split(","):
        if name not in CATALOGUE:
            parser.error(f"--ours: unknown configuration {name!r}; known: {', '.join(CATALOGUE)}")
        OURS[name] = CATALOGUE[name]
    ours = Ours(args.lib)
    if args.asm_dir:
        try:
            dump_asm(args.asm_dir, args.lib, 1 << 20)
        except Exception as e:  # the listings are for reading; the timings go on without them
            print(f"dump_asm failed: {e!r}", flush=True)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    scratch = torch.ones(2 * l2 // 4, device="cuda")
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        reps = args.reps if n < (1 << 28) else max(5, args.reps // 2)
        rows.append(time_size(ours, n, reps, lambda: scratch.sum(), args.trace_max, args.trace_keep))
        r = rows[-1]
        timed = [name for name in OURS if f"ours_{name}" in r["median_us"]]
        ours_us = " / ".join(f"{r['median_us']['ours_' + name]:.2f}" for name in timed)
        print(f"n={n:>11}: ours {ours_us} us, triton {r['median_us']['triton']:.2f}, torch "
              f"{r['median_us']['torch']:.2f}, copy {r['median_us']['copy']:.2f}; over triton "
              + " ".join(f"{name} x{r[f'ours_{name}_speedup_over_triton']:.3f}" for name in timed)
              + (f"; FAILED {r['failed']}" if "failed" in r else ""), flush=True)
        for name, t in r.get("traces", {}).items():
            print(f"    trace {name}: {t['summary_ns']}", flush=True)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    record = {"what": "vector add (fp32): ours (configurations in 'ours'), Triton tutorial kernel, torch.add, "
                      "device-to-device copy; "
                      "CUPTI kernel durations via torch.profiler, L2 flushed before every run, interleaved",
              "command": "python3 kernels/elementwise/bench_baselines.py --lib " + args.lib + " --out " + args.out +
                         f" --reps {args.reps} --sizes {args.sizes} --trace-max {args.trace_max}"
                         f" --trace-keep {args.trace_keep} --ours {args.ours}"
                         + (f" --asm-dir {args.asm_dir}" if args.asm_dir else ""),
              "gpu": torch.cuda.get_device_name(0), "nvidia_smi": smi, "torch": torch.__version__,
              "triton": triton.__version__, "cuda": torch.version.cuda,
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "ours": {name: dict(zip(("block", "vector", "unroll", "persistent"), c)) for name, c in OURS.items()},
              "sizes": rows}
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
