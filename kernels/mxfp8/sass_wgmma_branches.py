#!/usr/bin/env python3
"""Which conditional branches each wgmma instruction of a kernel depends on, read from its SASS.

PTX's wgmma.fence / mma_async / commit_group / wait_group are `.aligned`: every thread of the
warpgroup must execute the same instruction. A warp-uniform branch whose condition may differ
between the four warps of a warpgroup (a VOTE.ANY over one warp's lanes, as the transposed MXFP8
kernels' one/two-multiply scale choice is) must therefore not control any of them: if it does, warps
on different paths issue the same wgmma from two instructions, which is right only while ptxas happens
to give both copies the same registers (kernels/mxfp8/NOTES.md, "wgmma outside the per-warp branch").

For every function holding wgmma instructions (HGMMA, QGMMA, WARPGROUP.ARRIVE / DEPBAR), prints
them grouped by the set of conditional branches they are control dependent on (the branch decides
whether they run: they post-dominate one of its successors, not the branch itself), each branch with
the instruction that last set its predicate. Exits 1 if a branch whose predicate a VOTE set controls
any of them, 0 otherwise.

    cuobjdump -sass build-mxfp8/kernels/mxfp8/mxfp8_gemm_check > gemm.sass
    kernels/mxfp8/sass_wgmma_branches.py gemm.sass
"""
import re
import sys

INSTRUCTION = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
WGMMA = re.compile(r"(@!?U?P\w+\s+)?(HGMMA|QGMMA|WARPGROUP)")
PREDICATED = re.compile(r"@!?(U?P\w+)\s+")


def successors(code):
    """Instruction-level control flow: a branch goes to its target, and on to the next one if predicated."""
    where = {address: i for i, (address, _) in enumerate(code)}
    out = []
    for i, (_, text) in enumerate(code):
        op = PREDICATED.sub("", text).split()[0] if text else ""
        predicated = text.startswith("@")
        nexts = []
        if op == "BRA":
            target = re.search(r"0x([0-9a-f]+)", text)
            if target and int(target.group(1), 16) in where:
                nexts.append(where[int(target.group(1), 16)])
            if predicated and i + 1 < len(code):
                nexts.append(i + 1)
        elif op in ("EXIT", "RET"):
            if predicated and i + 1 < len(code):
                nexts.append(i + 1)
        elif i + 1 < len(code):
            nexts.append(i + 1)
        out.append(nexts)
    return out


def post_dominators(succ):
    exit_node = len(succ)
    every = set(range(exit_node + 1))
    pdom = [every.copy() for _ in succ] + [{exit_node}]
    changed = True
    while changed:
        changed = False
        for i in reversed(range(len(succ))):
            new = set.intersection(*[pdom[s] for s in (succ[i] or [exit_node])]) | {i}
            if new != pdom[i]:
                pdom[i], changed = new, True
    return pdom


def predicate_source(code, i):
    """The last instruction before branch i (in address order) that writes the branch's predicate."""
    predicate = PREDICATED.match(code[i][1]).group(1)
    for j in range(i - 1, -1, -1):
        body = PREDICATED.sub("", code[j][1]).split(None, 1)
        if len(body) > 1 and re.match(r"%s\b" % predicate, body[1]):
            return code[j]
    return None


def check_function(name, code):
    succ = successors(code)
    pdom = post_dominators(succ)
    branches = [i for i, s in enumerate(succ) if len(s) == 2]
    groups = {}
    for k, (address, text) in enumerate(code):
        if WGMMA.match(text):
            controls = tuple(b for b in branches if k not in pdom[b] and (k in pdom[succ[b][0]] or k in pdom[succ[b][1]]))
            groups.setdefault(controls, []).append("%04x %s" % (address, PREDICATED.sub("", text).split()[0]))
    print("==", name)
    hazard = False
    for controls, items in groups.items():
        print("  %d instructions: %s" % (len(items), ", ".join(items)))
        for b in controls:
            source = predicate_source(code, b)
            by_vote = source is not None and "VOTE" in source[1]
            hazard |= by_vote
            print("    controlled by %04x %s, predicate set by %s%s" % (
                code[b][0], code[b][1], "%04x %s" % source if source else "nothing before it",
                "  <- per warp: the warps of a warpgroup may disagree" if by_vote else ""))
    return hazard


def main(argv):
    if len(argv) != 2:
        sys.exit("usage: sass_wgmma_branches.py FILE.sass (the output of cuobjdump -sass)")
    try:
        text = open(argv[1]).read()
    except OSError as error:
        sys.exit(f"sass_wgmma_branches.py: cannot read {argv[1]} ({error.strerror}); give cuobjdump -sass's output")
    hazard, seen = False, 0
    for function in re.split(r"\n\s*Function : ", text)[1:]:
        code = [(int(a, 16), t.strip()) for a, t in INSTRUCTION.findall(function)]
        if any(WGMMA.match(t) for _, t in code):
            seen += 1
            hazard |= check_function(function.split("\n")[0].strip(), code)
    if seen == 0:
        sys.exit(f"sass_wgmma_branches.py: {argv[1]} holds no function with wgmma instructions; give cuobjdump -sass's output of a binary built for sm_90a")
    print("a wgmma instruction depends on a per-warp branch" if hazard else "no wgmma instruction depends on a per-warp branch")
    return 1 if hazard else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
