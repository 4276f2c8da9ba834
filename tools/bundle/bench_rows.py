"""What //bench:all's JSON says, for summarize.py: each case as a row of
the summary (a case error is a failure unless it says the case cannot run
here, or that the compile deadline passed: out of time), the GPU's
ceilings read against each other, and the summary's wrapped lines (reasons
are kept whole, never cut).

A results file is untrusted input: any JSON (a list where an object was
meant, null where text was, NaN where a number was) gives rows, never a
traceback. A figure that is not a finite number is shown as n/a and fails
its row: a NaN throughput is a measurement gone wrong, not "ok"."""
import math
import os
import re
import textwrap

# Reasons a case cannot run here; any other case error is a failure.
NOT_FAILURES = ("unsupported:", "OOM:")
WIDTH = 160


def wrapped(first, status, indent="      | "):
    """FIRST followed by STATUS on one line, the rest of a long STATUS on
    continuation lines: never cut."""
    lines = textwrap.wrap(status, WIDTH, break_long_words=True, break_on_hyphens=False) or [""]
    return [first + lines[0]] + [indent + l for l in lines[1:]]


def finite(x):
    """x as a float when it is a finite number (not a bool), else None."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    x = float(x)
    return x if math.isfinite(x) else None


def dicts(x):
    """The objects of a JSON list (anything else in it, or a non-list: none)."""
    return [r for r in x if isinstance(r, dict)] if isinstance(x, list) else []


def not_a_number(what, raw):
    """A row's status for a figure that is not a finite number."""
    shown = raw if isinstance(raw, str) else repr(raw)  # nan, inf, None, 'x'
    return f"failed: n/a (not a finite number: {what} {shown[:40]})"


def set_figure(row, what, raw, unit, scale=1.0):
    """The row's value (raw / scale) and unit; a raw figure that is not a
    finite number leaves no value and fails the row, naming it."""
    value = finite(raw)
    if value is None:
        row["status"] = not_a_number(what, raw)
        row.pop("value", None)
        return False
    row["value"], row["unit"] = value / scale, unit
    return True


def strict(doc):
    """doc with every float that is not finite replaced by None, so that
    json.dumps(..., allow_nan=False) writes strict JSON."""
    if isinstance(doc, float):
        return doc if math.isfinite(doc) else None
    if isinstance(doc, dict):
        return {k: strict(v) for k, v in doc.items()}
    if isinstance(doc, (list, tuple)):
        return [strict(v) for v in doc]
    return doc


def case_status(message):
    """A //bench:all case error as a status: skipped where the case cannot
    run here, stopped where the run was interrupted, else failed."""
    if message.startswith(NOT_FAILURES):
        return "skipped: " + message
    if message.startswith("deadline:"):  # the compile deadline passed: the time ran out
        return "out of time: " + message
    if message == "interrupted":
        return "stopped: interrupted"
    return "failed: " + message


def latency_text(b):
    """Inference's latency beside its rate: "mean 1.000, p50 ..." (n/a for
    a figure that is not a number)."""
    parts = []
    for label, key in (("mean", "latency_ms"), ("p50", "latency_ms_p50"), ("p99", "latency_ms_p99")):
        v = finite(b.get(key, 0))
        parts.append(f"{label} {v:.3f}" if v is not None else f"{label} n/a")
    return ", ".join(parts)


def bench_rows(doc):
    """A row per case of //bench:all's JSON (aggregates left out): its name,
    status and figure."""
    rows = []
    for b in dicts(doc.get("benchmarks") if isinstance(doc, dict) else None):
        if b.get("run_type") == "aggregate":
            continue
        name = str(b.get("name", "?")).split("/manual_time")[0].split("/iterations:")[0].split("/min_time:")[0]
        label = b.get("label", "")
        row = {"name": name, "label": label if isinstance(label, str) else str(label)}
        if b.get("error_occurred"):
            message = b.get("error_message")
            row["status"] = case_status(message if isinstance(message, str) and message
                                        else "(the case gave no error message)")
        else:
            row["status"] = "ok"
            if "latency_ms_p99" in b:  # inference: its latency beside the rate
                row["status"] = f"ok (latency ms: {latency_text(b)})"
            if "images_per_second" in b:
                set_figure(row, "images_per_second", b["images_per_second"], "images/s")
            elif "flops" in b:
                set_figure(row, "flops", b["flops"], "TFLOP/s", 1e12)
            elif "busbw" in b:
                algbw = finite(b.get("algbw", 0))
                if algbw is not None:
                    row["algbw"] = algbw / 1e9
                if b["busbw"] == 0 and algbw:  # one rank: busbw is 0 by definition
                    set_figure(row, "algbw", b["algbw"], "algbw GB/s", 1e9)
                else:
                    set_figure(row, "busbw", b["busbw"], "busbw GB/s", 1e9)
            elif "bytes_per_second" in b:
                set_figure(row, "bytes_per_second", b["bytes_per_second"], "GB/s", 1e9)
        rows.append(row)
    return rows


def ceiling_ratios(cases):
    """The GPU's ceilings read against each other, measured in the same check:
    our 8192^3 bf16 GEMM against PyTorch's matmul, and each NCCL collective's
    busbw at its largest size against the device-to-device copy."""
    def value(prefix):
        for c in cases:
            if c["name"].startswith(prefix) and c.get("value"):
                return c["value"]
        return None
    lines = []
    peer = value("pytorch/matmul/bf16/n:8192")
    ours = value("gemm/bf16/cuda/gemm:m8192n8192k8192")
    if ours and peer:
        lines.append(f"ratio cnnbench/pytorch bf16 8192^3 GEMM: {ours / peer:.2f}")
    peak = value("peak/bf16/cuda/gemm:m8192n8192k8192")
    if peak and peer:
        lines.append(f"ratio cnnbench tensor-core peak/pytorch bf16 8192^3 matmul: {peak / peer:.2f}")
    # NCCL against the d2d copy, the same bytes on both sides: the copy
    # counts each byte read and written, so a collective's bytes moved are
    # twice its algbw at one rank. Where busbw is 0 by definition (one rank
    # of allreduce, allgather, reducescatter, alltoall, gather, scatter) its algbw is said
    # and no ratio.
    d2d = value("bandwidth/d2d/cuda/")
    largest = {}
    for c in cases:
        parts = c["name"].split("/")
        if len(parts) == 6 and parts[1] == "nccl" and c.get("value") is not None:
            m = re.fullmatch(r"bytes:(\d+)", parts[4])
            if not m:
                continue
            size = int(m.group(1))
            if size >= largest.get(parts[0], (0, None))[0]:
                largest[parts[0]] = (size, c, parts[5])
    for collective, (size, c, ranks) in sorted(largest.items()):
        where = f"nccl {collective} at {size} B, {ranks.replace(':', ' ')}"
        if c.get("unit", "").startswith("algbw"):
            lines.append(f"{where}: algbw {c['value']:.1f} GB/s (busbw is 0 by definition "
                         "at one rank; no ratio)")
        elif d2d and ranks == "ranks:1" and c.get("algbw"):
            lines.append(f"ratio {where}: bytes read + written (2 x algbw) / bandwidth d2d "
                         f"(read + write): {2 * c['algbw'] / d2d:.2f}")
        elif c.get("value"):
            lines.append(f"{where}: busbw {c['value']:.1f} GB/s")
    return lines


def plan_cache_counts(out):
    """How the call's plans came from the plan-choice file: the compile-log
    lines (every *.log in `out`) of each convolution pass and batch norm
    graph, counted as hit (built from the file, untimed), miss (searched,
    timed and added) or stale (recorded but no longer built)."""
    counts = {"hit": 0, "miss": 0, "stale": 0}
    pattern = re.compile(r'\bplan_cache="?(hit|miss|stale)')
    for name in sorted(os.listdir(out)) if os.path.isdir(out) else []:
        if not name.endswith(".log"):
            continue
        try:
            with open(os.path.join(out, name), errors="replace") as f:
                for line in f:
                    if line.startswith("compile "):
                        m = pattern.search(line)
                        if m:
                            counts[m.group(1)] += 1
        except OSError:
            continue
    return counts


def plan_cache_line(counts):
    """One summary line, or none when no plan was looked up."""
    if not any(counts.values()):
        return []
    return [f"plan-choice file: {counts['miss']} plans searched and timed once, "
            f"{counts['hit']} built from the file in later steps"
            + (f", {counts['stale']} recorded plans no longer built" if counts["stale"] else "")]
