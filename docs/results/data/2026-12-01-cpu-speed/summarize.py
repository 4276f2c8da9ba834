#!/usr/bin/env python3
"""Prints the tables of docs/results/2026-12-01-cpu-speed.md from the files here."""
import collections
import glob
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))


def cases(path):
    d = json.load(open(path))
    return {b["name"].split("/iterations")[0].split("/min_time")[0]: b
            for b in d["benchmarks"] if b.get("run_type") != "aggregate"}


def fusion():
    print("## ReLU fusion, alternating rounds (resnet50_v1.5, fp32, batch 32)\n")
    print("| round | unfused img/s | fused img/s | fused / unfused | peak/fp32 GFLOP/s (unfused run, fused run) |")
    print("| --- | --- | --- | --- | --- |")
    ratios = []
    for r in sorted({re.search(r"_(\d+)\.json", p).group(1) for p in glob.glob(f"{HERE}/fusion/*.json")}):
        off, on = cases(f"{HERE}/fusion/fuse_false_{r}.json"), cases(f"{HERE}/fusion/fuse_true_{r}.json")
        name = "train/resnet50_v1.5/fp32/synthetic/batch:32/gpus:0"
        a, b = off[name]["images_per_second"], on[name]["images_per_second"]
        pa = [v["flops"] for k, v in off.items() if k.startswith("peak/")][0]
        pb = [v["flops"] for k, v in on.items() if k.startswith("peak/")][0]
        ratios.append(b / a)
        print(f"| {r} | {a:.2f} | {b:.2f} | {b / a:.3f} | {pa / 1e9:.0f}, {pb / 1e9:.0f} |")
    print(f"\nmean fused / unfused: {sum(ratios) / len(ratios):.3f}\n")


def profile(path):
    groups = collections.OrderedDict()
    step = None
    for line in open(path):
        f = line.split()
        if line.startswith("profiled step"):
            step = float(f[-2])
        if len(f) != 4 or f[0] == "layer":
            continue
        try:
            fwd, bwd = float(f[2]), float(f[3])
        except ValueError:
            continue
        kind = re.sub(r"[0-9]+", "", f[0].split("/")[-1])
        g = groups.setdefault(kind, [0.0, 0.0])
        g[0] += fwd
        g[1] += bwd
    return groups, step


def profiles():
    print("## Where the step goes (//tools:step_breakdown --profile, 3 steps)\n")
    off, step_off = profile(f"{HERE}/profile_fuse_false.txt")
    on, step_on = profile(f"{HERE}/profile_fuse_true.txt")
    print("| layers | unfused fwd ms | unfused bwd ms | fused fwd ms | fused bwd ms |")
    print("| --- | --- | --- | --- | --- |")
    for kind in sorted(set(off) | set(on), key=lambda k: -sum(off.get(k, on.get(k)))):
        a, b = off.get(kind, [0, 0]), on.get(kind, [0, 0])
        print(f"| {kind} | {a[0]:.1f} | {a[1]:.1f} | {b[0]:.1f} | {b[1]:.1f} |")
    conv = sum(on["conv"])
    print(f"\nstep: unfused {step_off:.1f} ms, fused {step_on:.1f} ms ({step_off / step_on:.3f}x); "
          f"convolutions {conv:.1f} ms = {100 * conv / step_on:.1f}% of the fused step\n")


def onednn():
    print("## oneDNN versions, resnet50's 53 convolutions at batch 32 (sum of ms, best of 3)\n")
    print("| oneDNN | layouts | fwd | bwd_data | bwd_weights | sum |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, label in (("onednn_2.6.3_any.txt", "any"), ("onednn_3.2_any.txt", "any"),
                        ("onednn_3.2_nhwc.txt", "nhwc")):
        last = open(f"{HERE}/{name}").read().strip().splitlines()[-1]
        m = re.search(r"oneDNN (\S+) total ms: fwd (\S+) bwd_data (\S+) bwd_weights (\S+) sum (\S+)", last)
        print(f"| {m.group(1)} | {label} | {m.group(2)} | {m.group(3)} | {m.group(4)} | {m.group(5)} |")
    t = collections.Counter()
    for line in open(f"{HERE}/pytorch_2.15_onednn_3.13_step_convs.csv"):
        f = line.strip().split(",")
        t[f[2]] += float(f[4])
    print(f"| 3.13 (in PyTorch 2.15's step, verbose) | nhwc | {t['forward_training']:.1f} | "
          f"{t['backward_data']:.1f} | {t['backward_weights']:.1f} | {sum(t.values()):.1f} |\n")


def peers():
    for prec in ("fp32", "bf16"):
        base = f"{HERE}/peers_{prec}"
        print(f"## Frameworks, {prec}, batch 32 (tools/peers/compare.sh, one round)\n")
        runs = {f: cases(p) for f in ("cnnbench", "pytorch", "tensorflow")
                for p in glob.glob(f"{base}/{f}-1.json")}
        print("| case | cnnbench img/s | step GFLOP/s | pytorch / cnnbench | tensorflow / cnnbench |")
        print("| --- | --- | --- | --- | --- |")
        for name, b in runs["cnnbench"].items():
            if not name.startswith("train/"):
                print(f"| {name} | | {b['flops'] / 1e9:.0f} (peak) | | |")
                continue
            ours = b["images_per_second"]
            cells = []
            for f in ("pytorch", "tensorflow"):
                other = runs.get(f, {}).get(name)
                cells.append(f"{other['images_per_second'] / ours:.2f}" if other and "images_per_second" in other else "-")
            print(f"| {name} | {ours:.2f} | {b['flops'] / 1e9:.0f} | {cells[0]} | {cells[1]} |")
        print()


def rounds():
    base = f"{HERE}/peers_fp32_resnet50_v1.5_rounds"
    print("## resnet50_v1.5, fp32, batch 32: two rounds in rotated order (compare.sh --rounds=2)\n")
    print("| round | file order | cnnbench img/s | pytorch img/s | cnnbench / pytorch |")
    print("| --- | --- | --- | --- | --- |")
    name = "train/resnet50_v1.5/fp32/synthetic/batch:32/gpus:0"
    for r in (1, 2):
        ours = cases(f"{base}/cnnbench-{r}.json")[name]["images_per_second"]
        peer = cases(f"{base}/pytorch-{r}.json")[name]["images_per_second"]
        first = min(("cnnbench", "pytorch"),
                    key=lambda f: json.load(open(f"{base}/{f}-{r}.json"))["context"]["date"])
        print(f"| {r} | {first} first | {ours:.2f} | {peer:.2f} | {ours / peer:.3f} |")
    print()


if __name__ == "__main__":
    fusion()
    profiles()
    onednn()
    peers()
    rounds()
