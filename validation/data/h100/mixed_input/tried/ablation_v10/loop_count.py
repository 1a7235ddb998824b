# Counts SASS instructions by opcode in each mixed-input kernel's K-block loop body: from the
# consumer's full-barrier TRYWAIT to the following empty-barrier SYNCS.ARRIVE (one K block).
import re, sys, collections
text = open(sys.argv[1]).read()
funcs = re.split(r'\n\s*Function : ', text)[1:]
for f in funcs:
    name = f.split('\n', 1)[0]
    m = re.search(r'mixed_input_gemm_kernelILi(\d+)ELi(\d+)ELNS0_7dequant10ConversionE(\d)', name)
    if not m: continue
    ins = re.findall(r'/\*[0-9a-f]{4,}\*/\s+([^;]*);', f)
    # consumer K block: first TRYWAIT whose following HGMMA appears before the next TRYWAIT
    best = None
    for i, s in enumerate(ins):
        if 'SYNCS.PHASECHK' in s:
            j = i + 1
            while j < len(ins) and 'SYNCS.PHASECHK' not in ins[j] and 'SYNCS.ARRIVE' not in ins[j]: j += 1
            body = ins[i:j]
            if any('HGMMA' in b for b in body):
                best = body; break
    if not best: continue
    ops = collections.Counter(re.sub(r'^@!?U?P\d\s+', '', b).split()[0].split('.')[0] for b in best)
    print(m.group(1), m.group(2), 'prmt' if m.group(3) == '0' else 'cvt', len(best), dict(ops.most_common(14)))
