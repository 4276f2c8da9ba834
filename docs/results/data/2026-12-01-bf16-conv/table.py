#!/usr/bin/env python3
"""Prints a table of docs/results/2026-12-01-bf16-conv-on-this-cpu.md from conv.json
(before the fix) or the file named as the argument (conv_after.json)."""
import json
import os

import sys

HERE = os.path.dirname(os.path.abspath(__file__))
d = json.load(open(os.path.join(HERE, sys.argv[1] if len(sys.argv) > 1 else "conv.json")))
scale = {"ns": 1e-6, "us": 1e-3, "ms": 1.0, "s": 1e3}
rows = {}
for b in d["benchmarks"]:
    if b.get("run_type") != "iteration":
        continue
    p = b["name"].split("/")
    rows.setdefault((p[1], p[4]), {})[p[2]] = (b["real_time"] * scale[b["time_unit"]],
                                               b.get("label", ""))
print("| pass | shape | fp32 (ms) | bf16 (ms) | bf16 / fp32 | bf16 implementation |")
print("| --- | --- | --- | --- | --- | --- |")
for (ps, shape), v in rows.items():
    if "fp32" in v and "bf16" in v:
        print(f"| {ps} | {shape} | {v['fp32'][0]:.3f} | {v['bf16'][0]:.3f} | "
              f"{v['bf16'][0] / v['fp32'][0]:.1f} | {v['bf16'][1]} |")
