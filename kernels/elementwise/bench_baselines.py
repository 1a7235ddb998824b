#!/usr/bin/env python3
"""Vector add: our element-wise kernel against the brief's Triton kernel, torch and the device copy.

For every size, on the same random fp32 tensors, one run of each in turn (interleaved, `--reps`
rounds, the order reversed every other round; the H100's clock drifts with temperature, so blocks
of runs would favour whichever ran first), each after an L2 flush (a read of twice the L2), so every
run starts cold as tilesim-measure's do. `--placements P` repeats that on P fresh allocations of
the tensors (the earlier ones kept, so each lands elsewhere in device memory): where the arrays
lie moves each kernel's time at 1M by its own point or two (kernels/elementwise/NOTES.md).
  ours (kernels/elementwise through --lib, ctypes), the configurations --ours names, each
  b<block>v<vector>u<unroll>_<grid|persistent>, e.g.:
    b256v4u1_grid:   256 threads x 1 vector of 4 fp32 (the spec's default), one CTA per 1024 elements
    b128v4u2_grid:   128 threads x 2 vectors of 4: Triton's own split (BLOCK_SIZE 1024 over 4 warps)
    b256v4u4_grid:   256 threads x 4 vectors of 4: 4096 elements per CTA, a quarter of the CTAs
    b256v4u1_persistent: the grid-stride form
    b256v4u1_grid_<tag>: the same through the library --alt-lib <tag>=PATH names (another build of the
                     kernel, timed in the same rounds)
  triton:          the Triton tutorial's add_kernel (BLOCK_SIZE 1024, its defaults)
  torch:           torch.add(x, y, out=out)
  copy:            out.copy_(x), a device-to-device cudaMemcpy: the device copy rate
(--baselines picks which of the last three run; Triton always does.) Durations are the kernels'
(and the copy's) own, as CUPTI's activity records time them (through torch.profiler), without
host launch overhead; medians over every round of every placement. Rates count every byte read and
written (3 n x 4 for add, 2 n x 4 for the copy). "Triton / ours" is Triton's median time over ours;
its 95% interval is a two-level bootstrap (placements, then rounds within each, resampled with
replacement; Triton's and ours' times of one round stay paired; fixed seed), and so is the
interval of ours against each configuration --reference names (the default one). Every
configuration of ours is first checked bit for bit against torch's x + y on a NaN-poisoned output,
on every placement. Up to --trace-max elements, one traced run of each configuration of ours
(after a flush, outside the timed rounds) records per CTA when it started, when its first loads had
returned and when it ended (%globaltimer, 32 ns ticks): the record keeps their summary, and every
CTA's at --trace-keep elements. --asm-dir: Triton's PTX and SASS for the kernel it ran, and the SASS of ours
(cuobjdump), for reading side by side. --placements applies up to 2^26 elements and
--large-placements above (4 GB arrays: 12 GB a placement, all held); rounds are halved from 2^28
elements up unless --large-reps says how many. --hold-mib: a tensor of that size allocated first, so
that no placement lands where an earlier run's did. Writes --out (JSON).
"""
import argparse
import ctypes
import datetime
import json
import os
import re
import statistics
import subprocess
import tempfile

import numpy as np
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


CONFIG_NAME = re.compile(r"b(\d+)v(\d+)u(\d+)_(grid|persistent)(?:_(\w+))?")
# name -> (library, (block, vector, unroll, persistent)) of each configuration timed (main() fills it)
OURS = {}


def parse_config(name, libs):
    """The library (libs[tag] for a name ending in _<tag>, else libs[None]) and the configuration."""
    m = CONFIG_NAME.fullmatch(name)
    if m is None:
        raise ValueError(f"--ours: {name!r} is not b<block>v<vector>u<unroll>_<grid|persistent>[_<tag>], "
                         "e.g. b256v4u1_grid")
    if m[5] not in libs:
        raise ValueError(f"--ours: {name!r} ends in _{m[5]}, which no --alt-lib names; add --alt-lib {m[5]}=PATH")
    return libs[m[5]], (int(m[1]), int(m[2]), int(m[3]), m[4] == "persistent")


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


def check_and_trace(x, y, out, flush, traced, keep):
    """Every configuration of ours against torch, bit for bit (one fp32 add per element), on a
    NaN-poisoned output, and traced when `traced`: returns
    ({name: why} of those that failed, {name: trace record})."""
    failed, traces = {}, {}
    for name, (ours, config) in OURS.items():
        out.fill_(float("nan"))
        ours.add(x, y, out, *config)
        if not torch.equal(out, x + y):
            failed[name] = "differs from x + y"
            continue
        if traced:
            out.fill_(float("nan"))
            flush()
            cta = ours.trace(x, y, out, *config)
            if not torch.equal(out, x + y):
                failed[name] = "traced run differs from x + y"
                continue
            traces[name] = {"summary_ns": trace_summary(cta)}
            if keep:
                traces[name]["cta_sm_start_firstdata_end_ns"] = cta
    return failed, traces


def kernel_times(events, sequence):
    """The device duration of each call in `sequence` (launch order) from the profiler's events: the
    flush's kernels separate the calls; a call's kernels are summed (torch splits an add of over 2^31
    bytes in two)."""
    device = sorted((e for e in events if e.get("cat") in ("kernel", "gpu_memcpy")), key=lambda e: e["ts"])
    slots, after_flush = [], True
    for e in device:
        kind = classify(e["name"])
        if kind is None:
            after_flush = True
        elif after_flush:
            slots.append([kind, e["dur"]])
            after_flush = False
        else:
            slots[-1][1] += e["dur"]
    expected = ["ours" if name.startswith("ours_") else name for name in sequence]
    if [k for k, _ in slots] != expected:
        names = sorted({e["name"][:80] for e in device})
        raise RuntimeError(f"{len(slots)} timed calls in the trace, expected {len(sequence)} in launch order; "
                           f"kernel names: {names}")
    return [d for _, d in slots]


def bootstrap_ratio(num, den, resamples=2000, seed=18):
    """95% interval of median(num) / median(den) over (placements x rounds) arrays whose rounds are
    paired: placements resampled with replacement, then rounds within each."""
    num, den = np.asarray(num, dtype=float), np.asarray(den, dtype=float)
    p, r = num.shape
    rng = np.random.default_rng(seed)
    pick_p = rng.integers(0, p, size=(resamples, p, 1))
    pick_r = rng.integers(0, r, size=(resamples, p, r))
    ratios = (np.median(num[pick_p, pick_r].reshape(resamples, -1), axis=1) /
              np.median(den[pick_p, pick_r].reshape(resamples, -1), axis=1))
    return [float(np.percentile(ratios, 2.5)), float(np.percentile(ratios, 97.5))]


def time_size(n, reps, placements, flush, trace_max, trace_keep, baselines, references):
    baseline_calls = {"triton": lambda x, y, out: triton_add(x, y, out),
                      "torch": lambda x, y, out: torch.add(x, y, out=out),
                      "copy": lambda x, y, out: out.copy_(x)}
    held, failed, traces = [], {}, {}
    per_placement = []  # per placement: {call name: [duration per round]}
    for placement in range(placements):
        x = torch.rand(n, device="cuda") - 0.5
        y = torch.rand(n, device="cuda") - 0.5
        out = torch.full((n,), float("nan"), device="cuda")
        held.append((x, y, out))  # kept, so that the next placement's tensors land elsewhere
        bad, traced = check_and_trace(x, y, out, flush, placement == 0 and n <= trace_max, n == trace_keep)
        failed.update({name: f"placement {placement}: {why}" for name, why in bad.items()})
        traces.update(traced)
        calls = [(f"ours_{name}", (lambda lib, c: lambda: lib.add(x, y, out, *c))(lib, config))
                 for name, (lib, config) in OURS.items() if name not in failed]
        calls += [(name, (lambda f: lambda: f(x, y, out))(baseline_calls[name])) for name in baselines]
        for _, fn in calls:  # warm-up: Triton compiles on its first call
            fn()
        torch.cuda.synchronize()
        sequence = []
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            for r in range(reps):
                for name, fn in (calls if r % 2 == 0 else calls[::-1]):
                    flush()
                    fn()
                    sequence.append(name)
            torch.cuda.synchronize()
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "trace.json")
            prof.export_chrome_trace(path)
            durations = kernel_times(json.load(open(path))["traceEvents"], sequence)
        times = {name: [] for name, _ in calls}
        for name, d in zip(sequence, durations):
            times[name].append(d)
        per_placement.append(times)
    del held, x, y, out
    torch.cuda.empty_cache()
    names = [name for name in per_placement[-1] if all(name in t for t in per_placement)]
    grid = {name: [t[name] for t in per_placement] for name in names}  # placements x rounds
    med = {name: statistics.median(sum(g, [])) for name, g in grid.items()}
    add_bytes, copy_bytes = 3 * n * 4, 2 * n * 4
    row = {"elements": n, "bytes_per_array": n * 4, "placements": placements, "rounds_per_placement": reps,
           "median_us": med, "all_us": {name: sum(g, []) for name, g in grid.items()},
           "rate_gb_s": {name: (copy_bytes if name == "copy" else add_bytes) / (med[name] * 1e3) for name in med}}
    ours_names = [name for name in names if name.startswith("ours_")]
    for name in ours_names + [b for b in ("triton", "torch") if b in med]:
        if "copy" in med:
            row[f"{name}_over_copy_rate"] = row["rate_gb_s"][name] / row["rate_gb_s"]["copy"]
    for name in ours_names:
        row[f"{name}_speedup_over_triton"] = med["triton"] / med[name]
        row[f"{name}_speedup_over_triton_ci95"] = bootstrap_ratio(grid["triton"], grid[name])
        row[f"{name}_speedup_over_triton_by_placement"] = [
            statistics.median(t) / statistics.median(o) for t, o in zip(grid["triton"], grid[name])]
        paired = sorted(t / o for t, o in zip(sum(grid["triton"], []), sum(grid[name], [])))
        row[f"{name}_paired_ratio_quartiles"] = [percentile(paired, q) for q in (0.25, 0.5, 0.75)]
        for reference in references:
            ref = f"ours_{reference}"
            if ref in grid and name != ref:
                row[f"{name}_speedup_over_{reference}"] = med[ref] / med[name]
                row[f"{name}_speedup_over_{reference}_ci95"] = bootstrap_ratio(grid[ref], grid[name])
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
    meta = compiled.metadata
    print(f"triton add_kernel at n={n}: BLOCK_SIZE 1024, grid {triton.cdiv(n, 1024)}, "
          + ", ".join(f"{k} {getattr(meta, k, '?')}" for k in ("num_warps", "num_stages", "num_ctas", "shared")),
          flush=True)
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
                        help="configurations of ours to time, comma-separated: b<block>v<vector>u<unroll>_"
                             "<grid|persistent>")
    parser.add_argument("--reference", default="b256v4u1_grid",
                        help="configurations of ours (comma-separated) each of the others is also compared with "
                             "(when timed)")
    parser.add_argument("--alt-lib", action="append", default=[], metavar="TAG=PATH",
                        help="another libtilesim_elementwise_capi.so: configurations named <config>_TAG run through it")
    parser.add_argument("--baselines", default="triton,torch,copy", help="which of triton, torch, copy to time "
                                                                         "(triton always)")
    parser.add_argument("--placements", type=int, default=1,
                        help="fresh allocations of the tensors per size, up to 2^26 elements")
    parser.add_argument("--large-placements", type=int, default=1, help="fresh allocations above 2^26 elements")
    parser.add_argument("--large-reps", type=int, help="rounds from 2^28 elements up (default: half of --reps, >= 5)")
    parser.add_argument("--hold-mib", type=int, default=0, help="MiB of device memory allocated before anything else")
    args = parser.parse_args()
    hold = torch.empty(args.hold_mib << 20, dtype=torch.uint8, device="cuda") if args.hold_mib > 0 else None
    libs = {None: Ours(args.lib)}
    for spec in args.alt_lib:
        tag, sep, path = spec.partition("=")
        if not sep or not re.fullmatch(r"\w+", tag) or not path:
            parser.error(f"--alt-lib: {spec!r} is not TAG=PATH, e.g. committed=/tmp/libtilesim_elementwise_capi.so")
        libs[tag] = Ours(path)
    for name in args.ours.split(","):
        try:
            OURS[name] = parse_config(name, libs)
        except ValueError as e:
            parser.error(str(e))
    references = args.reference.split(",")
    unknown = set(args.baselines.split(",")) - {"triton", "torch", "copy"}
    if unknown:
        parser.error(f"--baselines: unknown {', '.join(sorted(unknown))}; use triton, torch and copy")
    baselines = ["triton"] + [b for b in ("torch", "copy") if b in args.baselines.split(",")]
    if args.asm_dir:
        try:
            dump_asm(args.asm_dir, args.lib, 1 << 20)
        except Exception as e:  # the listings are for reading; the timings go on without them
            print(f"dump_asm failed: {e!r}", flush=True)
    l2 = torch.cuda.get_device_properties(0).L2_cache_size
    scratch = torch.ones(2 * l2 // 4, device="cuda")
    rows = []
    for n in (int(s) for s in args.sizes.split(",")):
        reps = args.reps if n < (1 << 28) else args.large_reps or max(5, args.reps // 2)
        placements = args.placements if n <= (1 << 26) else args.large_placements
        rows.append(time_size(n, reps, placements, lambda: scratch.sum(), args.trace_max, args.trace_keep,
                              baselines, references))
        r = rows[-1]
        print(f"n={n:>11}: triton {r['median_us']['triton']:.3f} us"
              + "".join(f", {b} {r['median_us'][b]:.3f}" for b in baselines[1:])
              + (f"; FAILED {r['failed']}" if "failed" in r else ""), flush=True)
        for name in OURS:
            key = f"ours_{name}"
            if key not in r["median_us"]:
                continue
            lo, hi = r[f"{key}_speedup_over_triton_ci95"]
            vs_ref = "".join(f", over {ref} {r[f'{key}_speedup_over_{ref}']:.4f} "
                             f"[{r[f'{key}_speedup_over_{ref}_ci95'][0]:.4f}, "
                             f"{r[f'{key}_speedup_over_{ref}_ci95'][1]:.4f}]"
                             for ref in references if f"{key}_speedup_over_{ref}" in r)
            print(f"    {name:<24} {r['median_us'][key]:9.3f} us  triton/ours {r[f'{key}_speedup_over_triton']:.4f} "
                  f"[{lo:.4f}, {hi:.4f}]{vs_ref}", flush=True)
        for name, t in r.get("traces", {}).items():
            print(f"    trace {name}: {t['summary_ns']}", flush=True)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    record = {"what": "vector add (fp32): ours (configurations in 'ours'), Triton tutorial kernel, torch.add, "
                      "device-to-device copy; "
                      "CUPTI kernel durations via torch.profiler, L2 flushed before every run, interleaved, the "
                      "order reversed every other round, on fresh allocations per placement; ratios' 95% intervals "
                      "by a two-level bootstrap (placements, rounds)",
              "command": "python3 kernels/elementwise/bench_baselines.py --lib " + args.lib + " --out " + args.out +
                         f" --reps {args.reps} --sizes {args.sizes} --trace-max {args.trace_max}"
                         f" --trace-keep {args.trace_keep} --ours {args.ours} --reference {args.reference}"
                         f" --baselines {args.baselines} --placements {args.placements}"
                         f" --large-placements {args.large_placements}"
                         + (f" --large-reps {args.large_reps}" if args.large_reps else "")
                         + (f" --hold-mib {args.hold_mib}" if args.hold_mib else "")
                         + "".join(f" --alt-lib {spec}" for spec in args.alt_lib)
                         + (f" --asm-dir {args.asm_dir}" if args.asm_dir else ""),
              "gpu": torch.cuda.get_device_name(0), "nvidia_smi": smi, "torch": torch.__version__,
              "triton": triton.__version__, "cuda": torch.version.cuda,
              "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "ours": {name: dict(zip(("block", "vector", "unroll", "persistent"), c))
                       for name, (_, c) in OURS.items()},
              "sizes": rows}
    with open(args.out, "w") as f:
        json.dump(record, f, indent=1)


if __name__ == "__main__":
    main()
