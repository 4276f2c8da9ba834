#!/usr/bin/env python3
"""Per model: images/s of every repetition of each run in OUT, and the
ratios new/old and new/new-noconvrelu (means over both rounds' repetitions)."""
import glob, json, os, statistics, sys
out = sys.argv[1]
rows = {}
for path in sorted(glob.glob(os.path.join(out, 'train_*_*.json'))):
    rnd, name = os.path.basename(path)[len('train_'):-len('.json')].split('_', 1)
    for b in json.load(open(path))['benchmarks']:
        if b.get('run_type') != 'iteration':
            continue
        model = b['name'].split('/')[1]
        rows.setdefault(model, {}).setdefault(name, []).append((rnd, b['images_per_second']))
names = ['old', 'new-noconvrelu', 'new']
print('| model | ' + ' | '.join(f'{n} img/s (round: reps)' for n in names) +
      ' | new / old | new / new-noconvrelu |')
print('| --- ' * (len(names) + 3) + '|')
for model, runs in rows.items():
    cells, means = [], {}
    for n in names:
        vals = runs.get(n, [])
        by_round = {}
        for r, v in vals:
            by_round.setdefault(r, []).append(v)
        cells.append('; '.join(f'{r}: ' + ', '.join(f'{v:.2f}' for v in vs)
                               for r, vs in sorted(by_round.items())))
        means[n] = statistics.mean(v for _, v in vals) if vals else float('nan')
    print(f'| {model} | ' + ' | '.join(cells) +
          f" | {means['new'] / means['old']:.3f} | {means['new'] / means['new-noconvrelu']:.3f} |")
