#!/usr/bin/env python3
"""Prints, per model, where the fused fp32 batch-32 step goes by layer kind
(forward + backward ms, share of the step) from the step_breakdown --profile
files in this folder."""
import collections, glob, os, re

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = ["resnet50_v1.5", "resnet152", "inception3", "googlenet", "vgg16", "alexnet"]


def profile(path):
    kinds = collections.Counter()
    step = None
    for line in open(path):
        f = line.split()
        if line.startswith("profiled step"):
            step = float(f[-2])
        if len(f) != 4 or f[0] == "layer":
            continue
        try:
            ms = float(f[2]) + float(f[3])
        except ValueError:
            continue
        kinds[re.sub(r"[0-9]+", "", f[0].split("/")[-1])] += ms
    return kinds, step


rows = {}
for m in MODELS:
    path = os.path.join(HERE, f"profile_{m}.txt")
    if os.path.exists(path) and os.path.getsize(path) > 0:
        rows[m] = profile(path)
kinds = collections.Counter()
for k, _ in rows.values():
    kinds.update(k)
order = [k for k, _ in kinds.most_common()]
top = order[:7]
print("| model | step ms | " + " | ".join(top) + " | other |")
print("| --- | --- | " + " | ".join("---" for _ in top) + " | --- |")
for m, (k, step) in rows.items():
    cells = [f"{100 * k.get(t, 0) / step:.1f}%" for t in top]
    other = sum(v for t, v in k.items() if t not in top)
    print(f"| {m} | {step:.0f} | " + " | ".join(cells) + f" | {100 * other / step:.1f}% |")
print("\n(share of the profiled step, forward + backward; `other`: "
      + ", ".join(order[7:]) + ")")
print("\n`other` by model (kinds of at least 0.1% of the step):\n")
for m, (k, step) in rows.items():
    parts = [(t, v) for t, v in k.most_common() if t not in top and v / step >= 0.001]
    print(f"- {m}: " + ", ".join(f"{t} {100 * v / step:.1f}%" for t, v in parts))
# Batch norm and the residual add together (plain and fused), per model.
print("\nbatch norm + add (fused or not) by model: " + ", ".join(
    f"{m} {100 * sum(v for t, v in k.items() if t.startswith(('batchnorm', 'add'))) / step:.1f}%"
    for m, (k, step) in rows.items()))

