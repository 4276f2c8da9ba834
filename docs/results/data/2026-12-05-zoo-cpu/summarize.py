"""Turns the before/after step_breakdown profiles here into the tables of
docs/results/2026-12-05-zoo-cpu-step.md: per layer kind and implementation,
forward + backward ms, and the profiled step."""
import collections
import re
import sys

def kinds(path):
    totals = collections.Counter()
    step = None
    for line in open(path):
        m = re.match(r"profiled step \(mean of \d+\):\s+([0-9.]+) ms", line)
        if m:
            step = float(m.group(1))
        parts = line.split()
        if len(parts) >= 4 and re.fullmatch(r"[0-9.]+", parts[2]) and re.fullmatch(r"[0-9.]+", parts[3]):
            name = re.sub(r"[0-9]+", "", parts[0].split("/")[-1])
            totals[(name, parts[1])] += float(parts[2]) + float(parts[3])
    return totals, step

for model in sys.argv[1:]:
    before, step_b = kinds(f"profile_{model}_before.txt")
    after, step_a = kinds(f"profile_{model}_after.txt")
    print(f"\n{model}: step {step_b:.0f} ms -> {step_a:.0f} ms ({step_b / step_a:.2f}x)\n")
    print("| layer kind | implementation before | ms before | implementation after | ms after |")
    print("| --- | --- | --- | --- | --- |")
    names = sorted({n for n, _ in list(before) + list(after)},
                   key=lambda n: -max(sum(v for (k, _), v in before.items() if k == n),
                                      sum(v for (k, _), v in after.items() if k == n)))
    for n in names[:6]:
        b = sorted(((v, i) for (k, i), v in before.items() if k == n), reverse=True)
        a = sorted(((v, i) for (k, i), v in after.items() if k == n), reverse=True)
        fmt = lambda xs: ", ".join(i for _, i in xs)
        print(f"| {n} | {fmt(b)} | {sum(v for v, _ in b):.1f} | {fmt(a)} | {sum(v for v, _ in a):.1f} |")
