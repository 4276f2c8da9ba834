"""Tables for docs/results/2026-12-02-collectives-vs-copy.md from the JSON here."""
import json
import statistics
import sys

d = sys.argv[1]


def means(path):
    run = json.load(open(path))
    out = {}
    for b in run["benchmarks"]:
        if b.get("run_type") != "aggregate" or b.get("aggregate_name") != "mean":
            continue
        name = b["run_name"].split("/iterations")[0].split("/min_time")[0]
        out[name] = b
    return run["context"], out


print("| round | collective | transport | busbw out of place GB/s | in place GB/s | "
      "copy GB/s (same round) | out of place / copy | in place / copy |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for rnd in (1, 2):
    _, local = means(f"{d}/local_{rnd}.json")
    _, mpi = means(f"{d}/mpi_{rnd}.json")
    copies = {k: v["bytes_per_second"] for k, v in local.items()
              if k.startswith("bandwidth/copy/cpu/")}
    best_name = max(copies, key=copies.get)
    copy = copies[best_name]
    for transport, cases in (("local", local), ("mpi", mpi)):
        for name, b in cases.items():
            if "/bytes:67108864/" not in name or name.startswith("bandwidth"):
                continue
            out, inp = b["busbw"], b["busbw_inplace"]
            print(f"| {rnd} | {name.split('/')[0]} | {transport} | {out / 1e9:.2f} | "
                  f"{inp / 1e9:.2f} | {copy / 1e9:.2f} | {out / copy:.2f} | {inp / copy:.2f} |")
print()
print("| round | copy and triad cases | GB/s |")
print("| --- | --- | --- |")
for rnd in (1, 2):
    _, local = means(f"{d}/local_{rnd}.json")
    for k, v in sorted(local.items()):
        if k.startswith("bandwidth/"):
            print(f"| {rnd} | {k} | {v['bytes_per_second'] / 1e9:.2f} |")
