#!/usr/bin/env python3
"""Tables from run.sh's JSON: per pool case and per training case, the
before/after figures of each round and after / before (speed: time ratio
before / after for pool cases, images/s after / before for training)."""
import collections, glob, json, os, re, sys

out = sys.argv[1]
data = collections.defaultdict(dict)  # (family, case) -> {(name, round): value}
impl = {}
rates = {}  # binary -> pool cases' GB/s
for path in sorted(glob.glob(os.path.join(out, "*_*_*.json"))):
    family, name, rnd = os.path.basename(path)[:-5].split("_")
    for b in json.load(open(path))["benchmarks"]:
        if b.get("run_type") == "aggregate" or b.get("error_occurred"):
            continue
        case = re.sub(r"/(min_time|iterations|repeats|manual_time).*", "", b["name"])
        if family == "pool":
            value = b["real_time"]  # microseconds per call (manual time)
            impl[(case, name)] = b.get("label", "")
            rates.setdefault(name, []).append(b["bytes_per_second"] / 1e9)
        else:
            value = b["images_per_second"]
        data[(family, case)][(name, int(rnd))] = value
rounds = sorted({r for d in data.values() for _, r in d})
for family, title, unit in (("pool", "Max pool kernel cases (batch 32), microseconds per call", "us"),
                            ("train", "Training steps (fp32, batch 32), images/s", "img/s")):
    print(f"### {title}\n")
    head = " | ".join(f"before r{r} | after r{r}" for r in rounds)
    print(f"| case | {head} | speed-up: mean (each round) |")
    print("| --- | " + " | ".join("---" for _ in rounds for _ in (0, 1)) + " | --- |")
    for (fam, case), d in data.items():
        if fam != family:
            continue
        cells, ratios = [], []
        for r in rounds:
            a, b = d.get(("before", r)), d.get(("after", r))
            cells += [f"{a:.2f}" if a else "-", f"{b:.2f}" if b else "-"]
            if a and b:
                ratios.append(a / b if family == "pool" else b / a)
        mean = sum(ratios) / len(ratios) if ratios else float("nan")
        per_round = ", ".join(f"{x:.2f}" for x in ratios)
        short = case.replace("pool/max/", "").replace("/fp32/cpu/pool:max_", " ")
        short = short.replace("train/", "").replace("/fp32/synthetic/batch:32/gpus:0", "")
        print(f"| {short} | " + " | ".join(cells) + f" | {mean:.2f}x ({per_round}) |")
    print()
if rates:
    print("Pool cases' bytes_per_second (GB/s, every case and round): " + "; ".join(
        f"{n} {min(v):.2f}-{max(v):.2f}" for n, v in sorted(rates.items(), reverse=True)) + "\n")
if impl:
    names = sorted({v for (c, n), v in impl.items()})
    print("Implementations named by the cases: " + "; ".join(
        f"{n}: " + ", ".join(sorted({v for (c, m), v in impl.items() if m == n}))
        for n in ("before", "after")))

# googlenet's step profile before (the per-model profiles of the CPU-speed
# results) and after (profile_googlenet_after.txt beside this script).
HERE = os.path.dirname(os.path.abspath(__file__))
profiles = {"before": os.path.join(HERE, "..", "2026-12-01-cpu-speed", "layers_avx2",
                                   "profile_googlenet.txt"),
            "after": os.path.join(HERE, "profile_googlenet_after.txt")}
rows = []
for name, path in profiles.items():
    if not os.path.exists(path):
        continue
    fwd = bwd = 0.0
    step = None
    for line in open(path):
        f = line.split()
        if line.startswith("profiled step"):
            step = float(f[-2])
        if len(f) == 4 and "maxpool" in f[0]:
            fwd += float(f[2])
            bwd += float(f[3])
    rows.append((name, fwd, bwd, step))
if rows:
    print("\n### googlenet, batch 32: max pools in the step profile (step_breakdown --profile, 3 steps; two runs)\n")
    print("| binary | max pool fwd ms | max pool bwd ms | max pools ms | step ms | max pools / step |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, fwd, bwd, step in rows:
        print(f"| {name} | {fwd:.1f} | {bwd:.1f} | {fwd + bwd:.1f} | {step:.0f} | "
              f"{100 * (fwd + bwd) / step:.1f}% |")
