#!/usr/bin/env python3
"""Sums //tools:step_breakdown --profile tables by layer kind, and reads the
--direct and peak lines, for docs/results/2026-12-04-bf16-cpu.md.

  summarize.py profile_fp32.txt profile_bf16.txt
prints one markdown table: per kind, fp32 and bf16 ms (forward + backward)
and fp32/bf16; then each file's convolution sum against oneDNN direct and
the step against the peak loop."""
import re
import sys


def kind(name):
    last = name.split("/")[-1]
    base = re.sub(r"[0-9]+.*", "", last.split("+")[0])
    if base in ("conv", "fc"):
        return base
    if base.startswith("batchnorm") or base == "bn":
        return "batch norm (+ReLU)"
    if base in ("add", "concat"):
        return base + (" (+ReLU)" if "+relu" in last else "")
    if base in ("maxpool", "avgpool", "pool"):
        return "pooling"
    if base in ("relu", "lrn", "dropout", "loss", "edges", "update"):
        return base
    return base or last


def read(path):
    kinds, extra = {}, []
    step = None
    in_table = False
    for line in open(path):
        if line.startswith("layer ") and "implementation" in line:
            in_table = True
            continue
        if in_table and (line.startswith("ReLUs fused") or not line.strip()):
            in_table = False
        if in_table:
            fields = line.split()
            nums = [f for f in fields[1:] if re.fullmatch(r"-?[0-9]+\.[0-9]+", f)]
            if len(nums) >= 2:
                k = kind(fields[0])
                f, b = kinds.get(k, (0.0, 0.0))
                kinds[k] = (f + float(nums[0]), b + float(nums[1]))
        m = re.match(r"profiled step \(mean of \d+\):\s+([0-9.]+) ms", line)
        if m:
            step = float(m.group(1))
        if line.startswith(("convolutions: step", "conv and fc layers: step", "step arithmetic")):
            extra.append(line.strip())
    return kinds, step, extra


def main():
    fp32, bf16 = read(sys.argv[1]), read(sys.argv[2])
    print("| part of the step | fp32 ms (fwd / bwd) | bf16 ms (fwd / bwd) | fp32 / bf16 |")
    print("|---|---|---|---|")
    for k in sorted(set(fp32[0]) | set(bf16[0]), key=lambda k: -sum(fp32[0].get(k, (0, 0)))):
        a, b = fp32[0].get(k, (0, 0)), bf16[0].get(k, (0, 0))
        ratio = (a[0] + a[1]) / (b[0] + b[1]) if b[0] + b[1] > 0 else float("nan")
        print(f"| {k} | {a[0]:.1f} / {a[1]:.1f} | {b[0]:.1f} / {b[1]:.1f} | {ratio:.2f} |")
    print(f"| **the step** | {fp32[1]:.1f} | {bf16[1]:.1f} | **{fp32[1] / bf16[1]:.2f}** |")
    print()
    for name, r in (("fp32", fp32), ("bf16", bf16)):
        for line in r[2]:
            print(f"- {name}: {line}")


if __name__ == "__main__":
    main()
