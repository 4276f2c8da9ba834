#!/usr/bin/env python3
"""Prints the colour-distortion table from run.sh's JSON files: the decode
stage's capacity (decode + preprocessing images/s of its one thread) in
input/tfrecord/train/threads:1 per distortion and round, and each against
`none` of the same round."""
import glob, json, os, sys

out = sys.argv[1]
rates = {}
for path in sorted(glob.glob(os.path.join(out, "*_*.json"))):
    mode, rnd = os.path.basename(path)[:-5].rsplit("_", 1)
    data = json.load(open(path))
    assert data["context"]["distortions"] == mode, path
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" or "images_per_second" not in b:
            continue
        rates[(int(rnd), mode)] = b["decode_capacity_images_per_second"]
print("| round | none | fast | full | fast / none | full / none |")
print("| --- | --- | --- | --- | --- | --- |")
ratios = {"fast": [], "full": []}
for rnd in sorted({r for r, _ in rates}):
    row = [rates.get((rnd, m)) for m in ("none", "fast", "full")]
    if None in row:
        continue
    for m, v in zip(("fast", "full"), row[1:]):
        ratios[m].append(v / row[0])
    print("| %d | %.1f | %.1f | %.1f | %.3f | %.3f |" % (rnd, *row, row[1] / row[0], row[2] / row[0]))
for m, r in ratios.items():
    if r:
        print("\nmean %s / none: %.3f" % (m, sum(r) / len(r)), end="")
print()
