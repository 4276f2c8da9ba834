#!/usr/bin/env python3
"""conv + ReLU layers apart (--conv_relu=false) against fused (true): the
summed forward and backward times of the convolutions and ReLUs, per
profile, and each step (step_breakdown --profile)."""
import glob, os, re, sys
def load(f):
    d = {}
    for line in open(f):
        m = re.match(r'^(\S+)\s+(\S+)\s+([\d.]+)\s+([\d.]+)', line)
        if m: d[m.group(1)] = (float(m.group(3)), float(m.group(4)))
        m = re.match(r'^profiled step \(mean of \d+\):\s+([\d.]+)', line)
        if m: d['__step'] = float(m.group(1))
    return d
out = sys.argv[1]
print('| profile | conv+ReLU fwd ms | conv+ReLU bwd ms | sum | step ms |')
print('| --- | --- | --- | --- | --- |')
for f in sorted(glob.glob(os.path.join(out, 'profile_*_convrelu-*.txt'))):
    d = load(f)
    last = lambda k: k.rsplit('/', 1)[-1]
    rows = [v for k, v in d.items() if k != '__step' and re.match(r'(conv\d+(\+relu\d+)?|relu\d+)$', last(k))]
    fw = sum(v[0] for v in rows); bw = sum(v[1] for v in rows)
    print(f'| {os.path.basename(f)} | {fw:.1f} | {bw:.1f} | {fw + bw:.1f} | {d.get("__step", 0):.1f} |')
