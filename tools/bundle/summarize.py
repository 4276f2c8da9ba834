#!/usr/bin/env python3
"""gpu_check.sh's summary: reads the steps it ran (steps.tsv), the tests'
JSON, //bench:all's JSON and the PyTorch peer's, writes check.json and
summary.txt into the results folder and prints the table.

    summarize.py WORK_DIR RESULTS_DIR NOTE
"""
import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def test_counts(doc):
    passed = failed = skipped = 0
    for suite in doc.get("testsuites", []):
        for case in suite.get("testsuite", []):
            if case.get("failures"):
                failed += 1
            elif case.get("result") == "SKIPPED" or case.get("status") == "NOTRUN":
                skipped += 1
            else:
                passed += 1
    return passed, failed, skipped


def bench_rows(doc):
    rows = []
    for b in doc.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            continue
        name = b["name"].split("/manual_time")[0].split("/iterations:")[0].split("/min_time:")[0]
        row = {"name": name, "label": b.get("label", "")}
        if b.get("error_occurred"):
            row["status"] = "skipped: " + b.get("error_message", "")
        else:
            row["status"] = "ok"
            if "images_per_second" in b:
                row["value"], row["unit"] = b["images_per_second"], "images/s"
            elif "flops" in b:
                row["value"], row["unit"] = b["flops"] / 1e12, "TFLOP/s"
        rows.append(row)
    return rows


def main():
    work, out, note = sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else ""
    steps, tests, cases = [], [], []
    try:
        lines = open(os.path.join(work, "steps.tsv")).read().splitlines()
    except OSError:
        lines = []
    for line in lines:
        kind, name, rc, seconds, detail, path = (line.split("\t") + [""] * 6)[:6]
        steps.append({"kind": kind, "name": name, "exit": rc, "seconds": seconds, "detail": detail})
        doc = load(path) if path else None
        if rc == "skipped":
            status = "skipped: " + detail
        elif doc is None:
            status = f"failed: exit {rc}" + (f", {detail}" if detail else "") + ", no results"
        else:
            status = None
        if kind == "test":
            if status is None:
                p, f, s = test_counts(doc)
                status = "ok" if f == 0 and rc == "0" else f"failed: exit {rc}"
                tests.append({"name": name, "passed": p, "failed": f, "skipped": s, "status": status})
            else:
                tests.append({"name": name, "status": status})
        elif kind == "bench":
            rows = bench_rows(doc) if status is None else []
            if not rows:
                rows = [{"name": name, "status": status or f"no cases ran (exit {rc})"}]
            for r in rows:
                r["step"] = name  # several steps run one case under other flags
            cases += rows
        elif kind == "overhead":
            if status is not None:
                cases.append({"name": "ours vs cuDNN/cuBLASLt direct", "step": name,
                              "status": status})
            else:
                for r in doc:
                    if "skipped" in r:  # its reason; a failure when the program failed
                        verdict = "skipped: " if rc == "0" else f"failed: exit {rc}: "
                        cases.append({"name": "ours vs cuDNN/cuBLASLt direct", "step": name,
                                      "status": verdict + r["skipped"]})
                    elif isinstance(r.get("ratio"), (int, float)):
                        cases.append({"name": f"{r['layer']} {r['pass']} direct/ours",
                                      "step": name, "status": "ok", "value": r["ratio"],
                                      "unit": "ratio"})
                    else:
                        cases.append({"name": f"{r.get('layer')} {r.get('pass')} direct/ours",
                                      "step": name, "status": "failed: no ratio"})
        elif kind == "profile":
            if rc == "skipped":
                outcome = "skipped: " + detail
            else:  # no JSON: its exit status says
                outcome = "ok" if rc == "0" else f"failed: exit {rc}" + (f", {detail}" if detail else "")
            cases.append({"name": "per-layer profile (breakdown.log)", "step": name,
                          "status": outcome})
        elif kind == "torch":
            if status is None:
                for r in doc:
                    row = {"name": f"pytorch/resnet50/{r.get('precision')}/batch:{r.get('batch')}",
                           "step": name}
                    if "skipped" in r:
                        row["status"] = "skipped: " + r["skipped"]
                    else:
                        row.update(status="ok", value=r["images_per_second"], unit="images/s")
                    cases.append(row)
            else:
                cases.append({"name": "pytorch/resnet50", "status": status, "step": name})

    ratios = {}
    for precision in ("bf16", "fp16"):
        # The suite's default settings: the step named train_<precision>.
        ours = [c for c in cases if c["name"].startswith(f"train/resnet50_v1.5/{precision}/")
                and c.get("step") == f"train_{precision}" and c.get("value")]
        peer = [c for c in cases if c["name"].startswith(f"pytorch/resnet50/{precision}/")
                and c.get("value")]
        if ours and peer:
            ratios[precision] = ours[0]["value"] / peer[0]["value"]

    lines = []
    if note:
        lines.append(f"NOTE: {note}")
    lines.append(f"{'GPU test':<40} {'pass':>5} {'fail':>5} {'skip':>5}  status")
    for t in tests:
        lines.append(f"{t['name']:<40} {t.get('passed', '-'):>5} {t.get('failed', '-'):>5} "
                     f"{t.get('skipped', '-'):>5}  {t['status']}")
    lines.append("")
    lines.append(f"{'step':<22} {'case':<62} {'value':>10} {'unit':<9} status")
    for c in cases:
        digits = 3 if c.get("unit") == "ratio" else 1
        value = f"{c['value']:.{digits}f}" if "value" in c else "-"
        lines.append(f"{c.get('step', ''):<22} {c['name'][:62]:<62} {value:>10} "
                     f"{c.get('unit', ''):<9} {c['status'][:160]}")
    for precision, r in ratios.items():
        lines.append(f"ratio cnnbench/pytorch resnet50 {precision} batch 256: {r:.2f}")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    with open(os.path.join(out, "summary.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "check.json"), "w") as f:
        json.dump({"note": note, "steps": steps, "tests": tests, "cases": cases,
                   "ratios": ratios}, f, indent=1)


if __name__ == "__main__":
    main()
