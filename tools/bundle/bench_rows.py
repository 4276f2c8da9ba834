"""What //bench:all's JSON says, for summarize.py: each case as a row of
the summary (a case error is a failure unless it says the case cannot run
here, or that the compile deadline passed: out of time), the GPU's
ceilings read against each other, and the summary's wrapped lines (reasons
are kept whole, never cut)."""
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


def bench_rows(doc):
    rows = []
    for b in doc.get("benchmarks", []):
        if b.get("run_type") == "aggregate":
            continue
        name = str(b.get("name", "?")).split("/manual_time")[0].split("/iterations:")[0].split("/min_time:")[0]
        row = {"name": name, "label": b.get("label", "")}
        if b.get("error_occurred"):
            row["status"] = case_status(b.get("error_message", ""))
        else:
            row["status"] = "ok"
            if "latency_ms_p99" in b:  # inference: its latency beside the rate
                row["status"] = (f"ok (latency ms: mean {b.get('latency_ms', 0):.3f}, "
                                 f"p50 {b.get('latency_ms_p50', 0):.3f}, "
                                 f"p99 {b['latency_ms_p99']:.3f})")
            if "images_per_second" in b:
                row["value"], row["unit"] = b["images_per_second"], "images/s"
            elif "flops" in b:
                row["value"], row["unit"] = b["flops"] / 1e12, "TFLOP/s"
            elif "busbw" in b:
                row["algbw"] = b.get("algbw", 0) / 1e9
                if b["busbw"] == 0 and b.get("algbw"):  # one rank: busbw is 0 by definition
                    row["value"], row["unit"] = row["algbw"], "algbw GB/s"
                else:
                    row["value"], row["unit"] = b["busbw"] / 1e9, "busbw GB/s"
            elif "bytes_per_second" in b:
                row["value"], row["unit"] = b["bytes_per_second"] / 1e9, "GB/s"
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
            size = int(parts[4].split(":")[1])
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
