#!/usr/bin/env python3
"""Prints the colour-distortion tables from run.sh's JSON files
(NAME_DISTORTION_ROUND.json): the decode stage's capacity (decode + training
preprocessing, images/s of its one thread) in input/tfrecord/train/threads:1
per binary, distortion and round, each distortion against `none` of the same
binary and round, and every binary after the first against the first."""
import glob, json, os, sys

out = sys.argv[1]
rates = {}
names = []
for path in sorted(glob.glob(os.path.join(out, "*_*_*.json"))):
    name, mode, rnd = os.path.basename(path)[:-5].rsplit("_", 2)
    data = json.load(open(path))
    assert data["context"]["distortions"] == mode, path
    for b in data["benchmarks"]:
        if b.get("run_type") == "aggregate" or "decode_capacity_images_per_second" not in b:
            continue
        rates[(name, int(rnd), mode)] = b["decode_capacity_images_per_second"]
    if name not in names:
        names.append(name)
rounds = sorted({r for _, r, _ in rates})
modes = ("none", "fast", "full")
for name in names:
    print(f"### {name}\n")
    print("| round | none | fast | full | fast / none | full / none |")
    print("| --- | --- | --- | --- | --- | --- |")
    ratios = {"fast": [], "full": []}
    for rnd in rounds:
        row = [rates.get((name, rnd, m)) for m in modes]
        if None in row:
            continue
        for m, v in zip(("fast", "full"), row[1:]):
            ratios[m].append(v / row[0])
        print("| %d | %.1f | %.1f | %.1f | %.3f | %.3f |" % (rnd, *row, row[1] / row[0], row[2] / row[0]))
    print("\nmean " + ", ".join("%s / none %.3f" % (m, sum(r) / len(r)) for m, r in ratios.items() if r) + "\n")
for b in names[1:]:
    a = names[0]
    print(f"### {b} / {a}, same round\n")
    print("| round | none | fast | full |")
    print("| --- | --- | --- | --- |")
    means = {m: [] for m in modes}
    for rnd in rounds:
        cells = []
        for m in modes:
            x, y = rates.get((a, rnd, m)), rates.get((b, rnd, m))
            if x and y:
                means[m].append(y / x)
                cells.append("%.3f" % (y / x))
            else:
                cells.append("-")
        print(f"| {rnd} | " + " | ".join(cells) + " |")
    print("\nmean " + ", ".join("%s %.3f" % (m, sum(v) / len(v)) for m, v in means.items() if v) + "\n")
# Decode threads a device training at R images/s needs, at the last binary's
# mean per-thread capacity (one thread measured; assumes threads scale).
last = names[-1]
cap = {m: [rates[(last, r, m)] for r in rounds if (last, r, m) in rates] for m in modes}
cap = {m: sum(v) / len(v) for m, v in cap.items() if v}
print(f"### decode threads needed at a training rate ({last}, mean capacity per thread)\n")
print("| training rate (images/s) | " + " | ".join(f"{m} ({cap[m]:.0f}/thread)" for m in cap) + " |")
print("| --- | " + " | ".join("---" for _ in cap) + " |")
for rate in (1000, 3000, 5000, 8000):
    print(f"| {rate} | " + " | ".join(f"{rate / cap[m]:.1f}" for m in cap) + " |")
