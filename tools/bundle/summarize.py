#!/usr/bin/env python3
"""gpu_check.sh's summary, written after every step so that a check stopped
from outside still leaves what it finished: reads the steps it ran
(WORK_DIR/steps.tsv), the steps it plans (plan.tsv), cuda_smoke's JSON, the
tests' GoogleTest JSON and output, //bench:all's JSON, the PyTorch peer's
and cuda_overhead's, and rewrites check.json and summary.txt in the results
folder (each replaced whole, never half written).

    summarize.py WORK_DIR RESULTS_DIR NOTE [--running=AFTER] [--budget=S] [--elapsed=S]

steps.tsv, a line per step: kind, name, exit status (a number, "skipped"
or "stopped"), seconds, detail (a skip's reason, "timed out after Ns",
"cut short by the budget after Ns ..."),
the JSON it should have written, the file holding its output and the byte
offset there where its output starts. --running: the check is still
running (AFTER: the step just finished); steps it plans that have not run
yet are then "not reached". Exit status 0, or 1 when something failed.

A case error of //bench:all is a failure unless it says the case cannot run
here ("unsupported: ...", "OOM: ..."); a step cut short by the budget is
out of time, not failed, and goes into the second call with what was not
reached. Reasons are kept whole (wrapped, never cut).

Every JSON read is untrusted (bench_rows.py): a shape no reader expects
gives a row saying so, never a traceback, and a figure that is not a
finite number shows as n/a and fails its row. check.json is strict JSON
(no bare NaN: such a figure is null there).
"""
import argparse
import json
import os
import re
import signal
import sys

# bench_rows.py beside this file (also when loaded by path, as tests do).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_rows import (bench_rows, ceiling_ratios, dicts, finite, plan_cache_counts,  # noqa: E402
                        plan_cache_line, set_figure, strict, wrapped)

SECOND_CALL_KINDS = ("out of time", "cut short", "not reached", "stopped")


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError, RecursionError):
        return None


def read_from(path, offset):
    """A step's own output: from its offset up to the next step's "== " header
    (steps share a log, and later ones append to it)."""
    try:
        with open(path, "rb") as f:
            f.seek(int(offset or 0))
            text = f.read().decode("utf-8", "replace")
    except (OSError, ValueError):
        return ""
    if text.startswith("== "):
        text = text.split("\n", 1)[1] if "\n" in text else ""
    end = text.find("\n== ")
    return text if end < 0 else text[:end + 1]


def tail(text, n=4, width=200):
    lines = [l.rstrip() for l in text.splitlines() if l.strip() and not l.startswith("== ")]
    return [l[:width] for l in lines[-n:]]


def exit_text(rc, detail):
    """'timed out after Ns' for timeout's 124 and 137, 'exit 139 (SIGSEGV)'
    for other statuses above 128, else 'exit N'."""
    if detail.startswith("timed out"):
        return detail
    try:
        n = int(rc)
    except ValueError:
        return f"exit {rc}" + (f", {detail}" if detail else "")
    text = f"exit {n}"
    if n > 128:
        try:
            text += f" ({signal.Signals(n - 128).name})"
        except ValueError:
            pass
    return text + (f", {detail}" if detail else "")


LOCATION = re.compile(r"^\S+:\d+(: Failure)?$")


def first_line(message):
    """The message's first line; a bare 'file:line' joined with the line after."""
    lines = [l.strip() for l in message.splitlines() if l.strip()]
    if not lines:
        return ""
    if LOCATION.match(lines[0]) and len(lines) > 1:
        location = lines[0][:-len(": Failure")] if lines[0].endswith(": Failure") else lines[0]
        return f"{location}: {lines[1]}"
    return lines[0]


def test_counts(doc):
    passed = failed = skipped = 0
    failures = []
    for suite in dicts(doc.get("testsuites")):
        for case in dicts(suite.get("testsuite")):
            if case.get("failures"):
                failed += 1
                listed = case["failures"]
                first = listed[0] if isinstance(listed, list) else listed
                message = first.get("failure", "") if isinstance(first, dict) else first
                failures.append({"test": f"{suite.get('name', '?')}.{case.get('name', '?')}",
                                 "message": str(message)})
            elif case.get("result") == "SKIPPED" or case.get("status") == "NOTRUN":
                skipped += 1
            else:
                passed += 1
    return passed, failed, skipped, failures


RUN = re.compile(r"^\[ RUN      \] (\S+)")
DONE = re.compile(r"^\[ +(OK|FAILED|SKIPPED) +\] (\S+)")


def from_output(text):
    """From a test's output (no JSON: it crashed or timed out): the failures
    it printed, each with its first message lines, and the test it was in
    when it stopped."""
    failures, current, in_failure = [], None, None
    for line in text.splitlines():
        m = RUN.match(line)
        if m:
            current, in_failure = m.group(1), None
            continue
        m = DONE.match(line)
        if m:
            if m.group(2) == current:
                current = None
            in_failure = None
            continue
        if current and line.rstrip().endswith(": Failure") and not any(
                f["test"] == current for f in failures):
            in_failure = {"test": current, "message": line.strip()}
            failures.append(in_failure)
        elif in_failure is not None and in_failure["message"].count("\n") < 5:
            in_failure["message"] += "\n" + line.rstrip()
    return failures, current


def next_results(out):
    base = os.path.basename(os.path.normpath(out))
    m = re.match(r"^(.*?)(\d+)$", base)
    return f"{m.group(1)}{int(m.group(2)) + 1}" if m else f"{base}2"


def env_header(out):
    """The GPU, driver and library origin lines of env.txt."""
    try:
        text = open(os.path.join(out, "env.txt")).read()
    except OSError:
        return []
    keep, previous = [], ""
    for line in text.splitlines():
        if previous.startswith("name, driver_version") and "," in line:
            keep.append(f"GPU: {line.strip()}"[:200])
        previous = line
        if line.startswith("no nvidia-smi"):
            line = line.split(" (")[0]
        if line.startswith(("GPU ", "driver ", "origin: ", "no nvidia-smi")) and line not in keep:
            keep.append(line[:200])
    return keep[:6]


class Collected:
    """What the steps so far gave, each list a part of the summary."""

    def __init__(self):
        self.steps, self.tests, self.cases, self.smoke, self.smoke_failures = [], [], [], [], []
        self.second = []  # (name, why) for the second call
        self.failed_any = False
        self.no_gpu = ""  # why no GPU is visible, when none is


def read_step(line, c):
    """Adds one line of steps.tsv (and the JSON and output it names) to c."""
    kind, name, rc, seconds, detail, path, outpath, offset = (line.split("\t") + [""] * 8)[:8]
    doc = load(path) if path else None
    output = read_from(outpath, offset) if outpath and rc not in ("skipped", "0") else ""
    record = {"kind": kind, "name": name, "exit": rc, "seconds": seconds, "detail": detail}
    if doc is not None and kind in ("bench", "torch", "overhead", "smoke", "convergence"):
        record["document"] = doc
    c.steps.append(record)
    if rc == "skipped":
        status = "skipped: " + detail
        if detail.startswith("out of time"):
            c.second.append((name, "out of time"))
    elif detail.startswith("cut short"):
        # Its limit was cut to what the budget had left: out of time, not failed.
        status = f"out of time: {detail}" + ("" if doc is not None or not path
                                              else ", no results")
        c.second.append((name, "cut short"))
    elif rc == "stopped":
        status = "stopped " + (detail or "while it ran: the check was stopped")
        c.second.append((name, "stopped"))
    elif doc is None and path:
        status = f"failed: {exit_text(rc, detail)}, no results"
    elif rc != "0" and not path:
        status = f"failed: {exit_text(rc, detail)}"
    else:
        status = None  # from the document
    why = tail(output) if output else []
    record["status"] = status or "ran"

    if kind == "test":
        t = {"name": name}
        if status is None and not (isinstance(doc, dict) and isinstance(doc.get("testsuites"), list)):
            status = f"failed: {exit_text(rc, detail)}, its JSON has no GoogleTest testsuites"
        if status is None:
            p, f, s, failures = test_counts(doc)
            t.update(passed=p, failed=f, skipped=s, failures=failures)
            t["status"] = "ok" if f == 0 and rc == "0" else f"failed: {exit_text(rc, detail)}"
        else:
            t["status"] = status
            if output:
                failures, stopped_in = from_output(output)
                t["failures"] = failures
                if stopped_in:
                    t["status"] += f"; it was in {stopped_in}"
                    t["stopped_in"] = stopped_in
        if t["status"].startswith(("failed", "stopped")):
            t["output_tail"] = why
        record["status"] = t["status"]
        c.tests.append(t)
    elif kind == "libs":
        row = {"name": "run.sh --libs (env.txt)", "step": name}
        missing = [l.strip()[:200] for l in read_from(outpath, offset).splitlines()
                   if l.startswith("MISSING")]
        if rc == "0":
            row["status"] = "ok"
        elif rc == "2":
            row["status"] = "failed: a CUDA library the build needs is missing; nothing ran"
        elif rc == "3":
            row["status"] = ("failed: some programs have unresolved symbols; "
                             "the steps running them are skipped")
        else:
            row["status"] = f"failed: {exit_text(rc, detail)}"
        if missing:
            row["output_tail"] = missing[:8]
        c.cases.append(row)
        record["status"] = row["status"]
    elif kind == "smoke":
        mine = []
        if status is None and not isinstance(doc, list):
            status = f"failed: {exit_text(rc, detail)}, its JSON is not a list of checks"
        if status is not None:
            row = {"check": name, "status": status}
            if why:
                row["output_tail"] = why
            c.smoke.append(row)
            # Not run for want of a symbol: a failure; absent, out of time or
            # stopped from outside: not.
            if rc not in ("skipped", "stopped") or detail.startswith("unresolved symbol"):
                mine.append(row)
        else:
            for r in dicts(doc):
                row = {k: r.get(k, "") for k in ("check", "status", "seconds", "implementation",
                                                 "detail")}
                row["status"] = str(row["status"] or "?")
                c.smoke.append(row)
                if not row["status"].startswith(("ok", "skipped")):
                    mine.append(row)
            if rc != "0":
                reason = {"1": "some checks failed",
                          "2": "no GPU, or it is not usable"}.get(rc, "it stopped")
                row = {"check": name, "status": f"failed: {exit_text(rc, detail)} ({reason})"}
                if why and not mine:  # what it said last, where no check says why
                    row["output_tail"] = why
                c.smoke.append(row)
                mine.append(row)
        c.smoke_failures += mine
        record["status"] = "failed" if mine else (status or "ok")
    elif kind == "gpu":  # no GPU visible: nothing ran after the environment
        # No row: the verdict says it, once.
        record["status"] = "no GPU"
        c.no_gpu = detail or "none is visible"
    elif kind == "bench":
        rows = bench_rows(doc) if doc is not None and (status is None or
                                                       status.startswith("out of time")) else []
        if not rows:
            rows = [{"name": name,
                     "status": status or f"failed: no cases ran ({exit_text(rc, detail)})"}]
        elif status and status.startswith("out of time"):
            rows.append({"name": name, "status": status})
        elif rc == "3" and any(r["status"].startswith("failed") for r in rows):
            pass  # //bench:all's exit 3: a case failed, and its row says how
        elif rc != "0":
            rows.append({"name": name, "status": f"failed: {exit_text(rc, detail)}"})
        for r in rows:
            r["step"] = name  # several steps run one case under other flags
        c.cases += rows
        if any(r["status"].startswith("out of time") for r in rows):
            status = status or "out of time: a compile deadline passed (the rows say where)"
            if not any(n == name for n, _ in c.second):
                c.second.append((name, "cut short"))
    elif kind == "overhead":
        if status is None and not isinstance(doc, list):
            status = f"failed: {exit_text(rc, detail)}, its JSON is not a list of layers"
        if status is not None:
            c.cases.append({"name": "ours vs cuDNN/cuBLASLt direct", "step": name,
                            "status": status})
        else:
            for r in dicts(doc):
                if "skipped" in r:  # its reason; a failure when the program failed
                    verdict = "skipped: " if rc == "0" else f"failed: {exit_text(rc, detail)}: "
                    c.cases.append({"name": "ours vs cuDNN/cuBLASLt direct", "step": name,
                                    "status": verdict + str(r["skipped"])})
                    continue
                row = {"name": f"{r.get('layer')} {r.get('pass')} direct/ours", "step": name,
                       "status": "ok"}
                if "ratio" not in r:
                    row["status"] = "failed: no ratio"
                else:
                    set_figure(row, "ratio", r["ratio"], "ratio")
                c.cases.append(row)
            if rc != "0" and not any(r.get("step") == name and r["status"].startswith("failed")
                                     for r in c.cases):
                c.cases.append({"name": "ours vs cuDNN/cuBLASLt direct", "step": name,
                                "status": f"failed: {exit_text(rc, detail)}"})
    elif kind == "convergence":
        # tools/convergence's JSON: the final validation top-1 and whether
        # it reached the threshold (exit 1: it did not).
        points = dicts(doc.get("points")) if isinstance(doc, dict) else []
        if status is None and points:
            row = {"name": f"convergence/{doc.get('backend')}/{doc.get('precision')}",
                   "step": name}
            row["status"] = ("ok" if doc.get("passed") is True else
                             f"failed: top-1 below {doc.get('min_top1')} (chance "
                             f"{doc.get('chance')}): the model did not learn")
            set_figure(row, "validation_top1", points[-1].get("validation_top1"), "top-1")
            c.cases.append(row)
        else:
            c.cases.append({"name": f"convergence ({name})", "step": name,
                            "status": status or f"failed: {exit_text(rc, detail)}"
                            + ("" if rc != "0" else ", its JSON has no points")})
    elif kind == "profile":
        outcome = status or "ok"
        c.cases.append({"name": "per-layer profile (breakdown.log)", "step": name,
                        "status": outcome})
    elif kind == "torch":
        if status is None and not isinstance(doc, list):
            status = f"failed: {exit_text(rc, detail)}, its JSON is not a list of rows"
        if status is None:
            for r in dicts(doc):
                if r.get("model") == "matmul":
                    row = {"name": f"pytorch/matmul/bf16/n:{r.get('n')}", "step": name}
                    if "skipped" in r:
                        row["status"] = "skipped: " + str(r["skipped"])
                    else:
                        row["status"] = "ok"
                        set_figure(row, "tflops", r.get("tflops"), "TFLOP/s")
                    c.cases.append(row)
                    continue
                row = {"name": f"pytorch/resnet50/{r.get('precision')}/batch:{r.get('batch')}",
                       "step": name}
                if "skipped" in r:
                    row["status"] = "skipped: " + str(r["skipped"])
                else:
                    row["status"] = "ok"
                    set_figure(row, "images_per_second", r.get("images_per_second"), "images/s")
                c.cases.append(row)
            if rc != "0":
                c.cases.append({"name": "pytorch/resnet50", "step": name,
                                "status": f"failed: {exit_text(rc, detail)} (rows above: "
                                          "the precisions it finished)"})
        else:
            c.cases.append({"name": "pytorch/resnet50", "status": status, "step": name})
    if kind not in ("test", "smoke", "libs", "gpu"):
        mine = [r for r in c.cases if r.get("step") == name]
        bad = [r for r in mine if r["status"].startswith(("failed", "stopped"))]
        if bad and why:
            bad[-1]["output_tail"] = why
        record["status"] = status or ("failed" if bad else "ok")
        if bad and record["status"].startswith("out of time"):  # a deadline beside a failure
            record["status"] = "failed"
    if record["status"].startswith("failed"):  # a stop from outside is not a failure
        c.failed_any = True


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("work")
    parser.add_argument("out")
    parser.add_argument("note", nargs="?", default="")
    parser.add_argument("--running", default=None)
    parser.add_argument("--budget", default="")
    parser.add_argument("--elapsed", default="")
    args = parser.parse_args()
    work, out, note = args.work, args.out, args.note

    try:
        lines = open(os.path.join(work, "steps.tsv")).read().splitlines()
    except OSError:
        lines = []
    try:
        plan = [l.split("\t")[:2] for l in open(os.path.join(work, "plan.tsv")).read().splitlines()
                if "\t" in l]
    except OSError:
        plan = []

    c = Collected()
    for line in lines:
        try:
            read_step(line, c)
        except Exception as e:  # noqa: BLE001
            # A shape no reader foresaw costs its own step, not the summary:
            # gpu_check reruns this after every step of its one call.
            name = (line.split("\t") + ["", ""])[1]
            c.cases.append({"name": "its results", "step": name,
                            "status": f"failed: summarize.py could not read them "
                                      f"({type(e).__name__}: {e})"})
            c.failed_any = True
    steps, tests, cases, smoke, smoke_failures = c.steps, c.tests, c.cases, c.smoke, c.smoke_failures
    second, failed_any, no_gpu = c.second, c.failed_any, c.no_gpu

    done = {s["name"] for s in steps}
    pending = [name for _, name in plan if name not in done]
    for name in pending:
        second.append((name, "not reached"))
    order = {name: i for i, (_, name) in enumerate(plan)}
    second.sort(key=lambda x: order.get(x[0], len(order)))

    # The headline against PyTorch's eager step: with CUDA graphs (the
    # suite's default) and, like for like, without.
    ratios, ratio_lines = {}, []
    for key, step, precision, how in (
            ("bf16", "train_bf16", "bf16", "CUDA graphs on (train_bf16)"),
            ("bf16_no_graph", "train_bf16_no_graph", "bf16",
             "CUDA graphs off (train_bf16_no_graph), like for like"),
            ("fp16", "train_fp16", "fp16", "CUDA graphs on (train_fp16)")):
        ours = [c for c in cases if c["name"].startswith(f"train/resnet50_v1.5/{precision}/")
                and c.get("step") == step and c.get("value")]
        peer = [c for c in cases if c["name"].startswith(f"pytorch/resnet50/{precision}/")
                and c.get("value")]
        if ours and peer:
            ratios[key] = ours[0]["value"] / peer[0]["value"]
            ratio_lines.append(f"ratio cnnbench/pytorch resnet50 {precision} batch 256, {how} / "
                               f"PyTorch eager: {ratios[key]:.2f}")

    bundle = os.path.basename(os.path.dirname(os.path.abspath(__file__))) or "bundle"
    second_call = ""
    if second:
        second_call = (f"{bundle}/gpu_check.sh {next_results(out)} "
                       + " ".join(f"'{name}'" for name, _ in second))

    text = []
    if smoke_failures:
        text.append("SMOKE FAILURES (bin/cuda_smoke; its output is in smoke.log):")
        for r in smoke_failures:
            extra = "".join(f"; {k}: {r[k]}" for k in ("implementation", "detail") if r.get(k))
            text += wrapped(f"  {r.get('check', '?')}: ", f"{r['status']}{extra}")
            for l in r.get("output_tail", []):
                text.append(f"      | {l}")
        text.append("")
    if note:
        text.append(f"NOTE: {note}")
    if args.running is not None:
        text.append(f"NOTE: written while the check was running (after {args.running or 'the start'}"
                    f"{f', {args.elapsed}s of {args.budget}s' if args.elapsed else ''}); "
                    "if it was stopped there, the steps marked 'not reached' did not run")
    text += env_header(out)
    if text and text[-1] != "":
        text.append("")
    if smoke:
        text.append(f"{'smoke check':<40} {'seconds':>8}  {'implementation':<24} status")
        for r in smoke:
            secs = finite(r.get("seconds"))
            secs = f"{secs:.2f}" if secs is not None else "-"
            detail = f" ({r['detail']})" if r.get("detail") else ""
            text += wrapped(f"{str(r.get('check', '?'))[:40]:<40} {secs:>8}  "
                            f"{str(r.get('implementation', ''))[:24]:<24} ", f"{r['status']}{detail}")
        text.append("")
    if tests:
        text.append(f"{'GPU test':<40} {'pass':>5} {'fail':>5} {'skip':>5}  status")
    for t in tests:
        text += wrapped(f"{t['name']:<40} {t.get('passed', '-'):>5} {t.get('failed', '-'):>5} "
                        f"{t.get('skipped', '-'):>5}  ", t["status"])
    failed_tests = [t for t in tests if t.get("failures") or t.get("output_tail")]
    if failed_tests:
        text.append("")
        text.append("failed tests (first message; check.json has each message whole, tests.log the output):")
        for t in failed_tests:
            failures = t.get("failures", [])
            for f in failures[:20]:
                text.append(f"  {t['name']}: {f['test']}")
                text += wrapped("      ", first_line(f["message"]), indent="      ")
            if len(failures) > 20:
                text.append(f"  {t['name']}: and {len(failures) - 20} more (check.json)")
            if t.get("stopped_in"):
                text.append(f"  {t['name']}: stopped in {t['stopped_in']}")
            if t.get("output_tail") and (not failures or t.get("stopped_in")):
                text.append(f"  {t['name']}: its last output lines:")
                text += [f"      | {l}" for l in t["output_tail"]]
    if text and text[-1] != "":
        text.append("")
    text.append(f"{'step':<22} {'case':<62} {'value':>10} {'unit':<9} status")
    for c in cases:
        digits = 3 if c.get("unit") == "ratio" else 1
        value = (f"{c['value']:.{digits}f}" if "value" in c else
                 "n/a" if c["status"].startswith("failed: n/a") else "-")
        text += wrapped(f"{c.get('step', ''):<22} {c['name'][:62]:<62} {value:>10} "
                        f"{c.get('unit', ''):<9} ", c["status"])
        for l in c.get("output_tail", []):
            text.append(f"      | {l}")
    text += ratio_lines
    text += ceiling_ratios(cases)
    plan_cache = plan_cache_counts(out)
    text += plan_cache_line(plan_cache)
    # The GPU's convergence beside the CPU's (same model, seed and data).
    cpu = [c for c in cases if c["name"].startswith("convergence/onednn/") and "value" in c]
    for c in cases:
        if c["name"].startswith("convergence/cuda/") and "value" in c and cpu:
            text.append(f"convergence top-1 {c['name'].split('/')[-1]} on the GPU "
                        f"{c['value']:.3f} vs the CPU's {cpu[0]['value']:.3f} (fp32, same seed)")
    verdict = ("no GPU" if no_gpu else "failed" if failed_any else
               "incomplete" if second else "passed")
    if args.running is None:
        text.append("")
        # Without a GPU the verdict is the one place that says so, and why.
        text.append(f"verdict: {verdict}" + (f": {no_gpu}; nothing ran after the environment "
                                             "(env.txt)" if no_gpu else ""))
    if second:  # the second call last
        text.append("")
        text.append("not run: " + ", ".join(f"{name} ({why})" for name, why in second))
        text.append("second call: " + second_call)
    summary = "\n".join(text) + "\n"

    def replace(name, content):
        tmp = os.path.join(out, f".{name}.tmp")
        with open(tmp, "w") as f:
            f.write(content)
        os.replace(tmp, os.path.join(out, name))

    replace("check.json", json.dumps(strict({
        "note": note, "running": args.running, "verdict": verdict,
        "smoke_failures": smoke_failures, "smoke": smoke, "steps": steps, "tests": tests,
        "cases": cases, "ratios": ratios, "plan_cache": plan_cache,
        "out_of_time": [n for n, why in second if why == "out of time"],
        "cut_short": [n for n, why in second if why == "cut short"],
        "not_reached": [n for n, why in second if why == "not reached"],
        "stopped": [n for n, why in second if why == "stopped"],
        "second_call": second_call}), indent=1, allow_nan=False))
    replace("summary.txt", summary)
    if args.running is None:
        print(summary, end="")
    return 1 if failed_any else 0


if __name__ == "__main__":
    sys.exit(main())
