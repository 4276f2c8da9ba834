"""Tables of the conv-epilogue and display runs (run.sh), from their JSON."""
import json
import pathlib
import statistics

here = pathlib.Path(__file__).parent


def means(path, counter):
    out = {}
    for b in json.loads(path.read_text())["benchmarks"]:
        if b.get("run_type") == "aggregate" and b.get("aggregate_name") == "mean":
            out[b["run_name"].split("/iterations")[0]] = b[counter]
    return out


def table(kind, variants, counter, better):
    runs = {v: [means(here / f"{kind}_{v}_{r}.json", counter) for r in (1, 2)] for v in variants}
    a, b = variants
    print(f"| case | {kind}={a} (runs 1, 2) | {kind}={b} (runs 1, 2) | {a} / {b} |")
    print("| --- | ---: | ---: | ---: |")
    for case in runs[a][0]:
        x = [r[case] for r in runs[a] if case in r]
        y = [r[case] for r in runs[b] if case in r]
        ratio = statistics.mean(x) / statistics.mean(y)
        if not better:
            ratio = 1 / ratio
        fmt = lambda v: ", ".join(f"{t:.3g}" for t in v)
        print(f"| {case} | {fmt(x)} | {fmt(y)} | {ratio:.3f} |")


table("conv_relu", ("true", "false"), "images_per_second", True)
print()
table("display", ("1", "0"), "step_ms", True)

print()
# run_batch1.sh: three alternated rounds.
runs = {v: [means(here / f"batch1_{v}_{r}.json", "images_per_second") for r in (1, 2, 3)]
        for v in ("true", "false")}
print("| case | conv_relu=true (rounds 1-3) | conv_relu=false (rounds 1-3) | true / false |")
print("| --- | ---: | ---: | ---: |")
for case in runs["true"][0]:
    x = [r[case] for r in runs["true"]]
    y = [r[case] for r in runs["false"]]
    fmt = lambda v: ", ".join(f"{t:.3g}" for t in v)
    print(f"| {case} | {fmt(x)} | {fmt(y)} | {statistics.mean(x) / statistics.mean(y):.3f} |")
