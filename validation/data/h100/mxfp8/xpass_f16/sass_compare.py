#!/usr/bin/env python3
"""Every kernel of two `cuobjdump -sass` dumps compared function by function (addresses and encodings included):
which are byte-identical, which differ, which are new. The new scheme's consumer (mxfp8_transposed_xpass_f16_kernel)
is written to OUT with its instruction counts by opcode.

    sass_compare.py BASE.sass NEW.sass OUT.sass
"""
import collections
import difflib
import re
import sys

FUNCTION = re.compile(r"^\s+Function : (\S+)", re.M)
OPCODE = re.compile(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)(\.[A-Z0-9_.]+)?")


def functions(path):
    text = open(path).read()
    starts = [(m.start(), m.group(1)) for m in FUNCTION.finditer(text)]
    out = {}
    for i, (at, name) in enumerate(starts):
        end = starts[i + 1][0] if i + 1 < len(starts) else len(text)
        out[name] = text[at:end]
    return out


def main(base_path, new_path, out_path):
    base, new = functions(base_path), functions(new_path)
    same = [n for n in new if n in base and base[n] == new[n]]
    differ = [n for n in new if n in base and base[n] != new[n]]
    added = [n for n in new if n not in base]
    gone = [n for n in base if n not in new]
    print(f"{len(same)} functions byte-identical, {len(differ)} differ, {len(added)} new, {len(gone)} gone")
    for label, names in (("differ", differ), ("new", added), ("gone", gone)):
        for n in names:
            print(f"  {label}: {n}")
    for n in differ: # the first lines that differ, without addresses and encodings
        strip = lambda text: [re.sub(r"/\*[0-9a-f]{4,}\*/|/\* 0x[0-9a-f]+ \*/", "", l).strip() for l in text.split("\n")]
        diff = list(difflib.unified_diff(strip(base[n]), strip(new[n]), lineterm="", n=0))
        print(f"  {n}: {len(diff)} diff lines without addresses and encodings; first:")
        for line in diff[:24]:
            print("    " + line)
    f16 = [n for n in new if "xpass_f16" in n]
    with open(out_path, "w") as out:
        for n in f16:
            out.write(new[n])
            counts = collections.Counter(m.group(1) + (m.group(2) or "") for m in OPCODE.finditer(new[n]))
            print(f"{n}: {sum(counts.values())} instructions; " +
                  ", ".join(f"{op} {c}" for op, c in counts.most_common() if any(
                      k in op for k in ("F2FP", "HMUL2", "HGMMA", "LDS", "PRMT", "I2F", "F2F", "HFMA2", "IMAD"))))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
