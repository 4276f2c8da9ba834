# Prints the table and ratio of docs/results/2026-12-02-step-plan-before-after.md
# from the JSON files beside it (run from the repository root).
import json
d = 'docs/results/data/2026-12-02-step-plan'
load = {}
for line in open(d + '/load.txt'):
    r, side, *l = line.split()
    load[(r, side)] = ' '.join(l)
vals = {'before': [], 'after': []}
for r in '123':
    for side in ['before', 'after']:
        j = json.load(open(f'{d}/{side}_{r}.json'))
        b = [x for x in j['benchmarks'] if x.get('run_type') != 'aggregate'][0]
        vals[side].append(b['images_per_second'])
        print(f"| {r} | {side} | {b['images_per_second']:.3f} | {b['real_time']:.1f} | {load[(r, side)]} |")
mb, ma = sum(vals['before']) / 3, sum(vals['after']) / 3
allv = vals['before'] + vals['after']
print(f"Mean before {mb:.3f}, after {ma:.3f} images/s: after / before = {ma / mb:.3f}; "
      f"rounds span {min(allv):.3f} to {max(allv):.3f}.")
