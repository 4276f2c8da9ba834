#!/usr/bin/env python3
"""Tables of the conv-algorithm run (run.sh's JSON): kernel GFLOP/s direct
against timed, and training images/s per round and mode, with ratios."""
import glob
import json
import os
import sys

out = sys.argv[1]


def load(path):
    with open(path) as f:
        return json.load(f)


def runs(doc):
    for b in doc["benchmarks"]:
        if b.get("run_type") == "aggregate" or b.get("error_occurred"):
            continue
        yield b


# Kernel cases: GFLOP/s per case and mode.
k = {}
for mode in ("direct", "timed"):
    path = os.path.join(out, "kernel_%s.json" % mode)
    if not os.path.exists(path):
        continue
    for b in runs(load(path)):
        name = b["name"].split("/min_time")[0]
        k.setdefault(name, {})[mode] = (b["flops"] / 1e9, b.get("label", ""))
if k:
    print("| kernel case | direct GFLOP/s | timed GFLOP/s | timed runs | timed / direct |")
    print("| --- | --- | --- | --- | --- |")
    for name, m in k.items():
        if "direct" in m and "timed" in m:
            d, t = m["direct"][0], m["timed"][0]
            print("| %s | %.0f | %.0f | %s | %.2f |" % (name, d, t, m["timed"][1], t / d))

# Training: mean images/s of the repetitions, per round and mode.
t = {}
labels = {}
for path in sorted(glob.glob(os.path.join(out, "train_*_*.json"))):
    _, rnd, mode = os.path.basename(path)[:-5].split("_")
    for b in runs(load(path)):
        name = b["name"].split("/iterations")[0]
        t.setdefault(name, {}).setdefault(mode, []).append(b["images_per_second"])
        if mode == "timed":
            labels[name] = b.get("label", "")
if t:
    print()
    print("| case | direct images/s (each repetition) | timed images/s | timed / direct (means) |")
    print("| --- | --- | --- | --- |")
    for name, m in t.items():
        d = m.get("direct", [])
        ti = m.get("timed", [])
        ratio = (sum(ti) / len(ti)) / (sum(d) / len(d)) if d and ti else float("nan")
        print("| %s | %s | %s | %.2f |" % (name, ", ".join("%.2f" % x for x in d),
                                          ", ".join("%.2f" % x for x in ti), ratio))
    print()
    for name, label in labels.items():
        print("- %s (timed): %s" % (name, label))
