"""What the peer runners (pytorch_train.py, tensorflow_train.py) share, with
no framework imported: the suite's case names, model table and platform
name, the command-line flags that mirror //bench:all's, and a writer of
Google Benchmark JSON that //tools:report reads like the suite's own files
(docs/peers.md). Plain python3; tests/peers exercises it without PyTorch or
TensorFlow.
"""
import argparse
import datetime
import math
import os
import platform as host
import re
import socket
import statistics
import sys
import tempfile

# The suite's zoo (models/zoo.cc): image size and default batch per model.
SUITE_MODELS = {
    "trivial": (227, 32), "lenet": (28, 32), "alexnet": (227, 512), "overfeat": (231, 32),
    "vgg11": (224, 64), "vgg16": (224, 64), "vgg19": (224, 64), "googlenet": (224, 32),
    "inception3": (299, 32), "inception4": (299, 32), "resnet18": (224, 32),
    "resnet34": (224, 32), "resnet50": (224, 64), "resnet50_v1.5": (224, 64),
    "resnet50_v2": (224, 64), "resnet101": (224, 32), "resnet101_v2": (224, 32),
    "resnet152": (224, 32), "resnet152_v2": (224, 32), "mobilenet": (224, 32),
    "mobilenet_v1": (224, 32), "resnet20": (32, 128), "resnet32": (32, 128), "resnet44": (32, 128), "resnet56": (32, 128),
    "resnet110": (32, 128),
    **{f"official_resnet{d}{v}": (224, 128 if d == 50 else 32)
       for d in (18, 34, 50, 101, 152, 200) for v in ("", "_v2")},
    "nasnet": (224, 32), "nasnetlarge": (331, 16), "nasnet_cifar": (32, 32),
    **{f"resnet{d}_v2": (32, 128) for d in (20, 32, 44, 56, 110)},
    "densenet40_k12": (32, 64), "densenet100_k12": (32, 64), "densenet100_k24": (32, 64),
    "alexnet_cifar": (32, 128), "trivial_cifar": (32, 32),
    # torchvision's efficientnet_b0..b7 at its weights' crop sizes.
    **{f"efficientnet_b{i}": (size, batch) for i, (size, batch) in enumerate(
        [(224, 32), (240, 32), (288, 32), (300, 32), (380, 16), (456, 16), (528, 8), (600, 8)])},
    # torchvision's mobilenet_v3_*, regnet_* and convnext_*.
    **{name: (224, 32) for name in ("mobilenet_v3_large", "mobilenet_v3_small", "regnet_x_3_2gf",
                                    "regnet_y_3_2gf", "regnet_y_400mf", "convnext_tiny",
                                    "convnext_small", "convnext_base")},
}
# The zoo's other names (ModelInfo::aliases): a run names its cases by the model's own.
ALIASES = {"mobilenet_v2": "mobilenet"}
# The zoo's definition versions other than 1 (ModelInfo::definition_version):
# `mobilenet` was MobileNet v1 and is MobileNetV2 since definition 2. Written
# to the context as model_definition.<model> for every model of the run, as
# //bench:all does, so the report and the history keep an older network's
# results apart (tools/report/context_keys.h).
DEFINITIONS = {"mobilenet": 2}
CLASSES = 1001  # ImageNet plus background, as the suite (models/zoo.h)
MOMENTUM = 0.9
PRECISIONS = ("fp32", "tf32", "fp16", "bf16")
# The suite's CpuIsa() list (core/platform.cc), in its order.
ISA_FLAGS = ("sse4_2", "avx", "avx2", "fma", "avx512f", "avx512bw", "avx512_vnni",
             "avx512_bf16", "amx_bf16", "amx_tile", "avx512_fp16")


class UsageError(Exception):
    """A bad flag value: the runner prints it and exits 2."""


def learning_rate(batch, ranks=1):
    """bench/cases/train/train_cases.cc: 0.1 at a global batch of 256, scaled linearly."""
    return 0.1 * batch * ranks / 256.0


def case_name(model, precision, batch, steps, repetitions, data="synthetic", gpus=0):
    """The name //bench:all gives a train case (Google Benchmark appends
    iterations, repeats and manual_time because the suite sets all three)."""
    return (f"train/{model}/{precision}/{data}/batch:{batch}/gpus:{gpus}"
            f"/iterations:{steps}/repeats:{repetitions}/manual_time")


def infer_case_name(model, precision, batch, iterations, repetitions, data="synthetic", gpus=0):
    """The name //bench:all gives an infer case."""
    return (f"infer/{model}/{precision}/{data}/batch:{batch}/gpus:{gpus}"
            f"/iterations:{iterations}/repeats:{repetitions}/manual_time")


def nearest_rank(ordered, percent):
    """bench/harness/iteration_stats.h: the ceil(p/100 x n)-th smallest (1-based)."""
    n = len(ordered)
    rank = max(1, min(n, math.ceil(percent / 100.0 * n - 1e-9)))
    return ordered[rank - 1]


def latency_counters(seconds):
    """The suite's latency counters (ms) of one repetition's per-batch times."""
    ordered = sorted(seconds)
    ms = [s * 1e3 for s in ordered]
    out = {"latency_ms": statistics.fmean(ms), "latency_ms_min": ms[0], "latency_ms_max": ms[-1],
           "timed_iterations": float(len(ms))}
    for p in (50, 90, 95, 99):
        out[f"latency_ms_p{p}"] = nearest_rank(ms, p)
    return out


def infer_entries(name, batch, iteration_seconds, cpu_seconds, label=""):
    """An infer case's entries: per repetition an iteration entry (real_time
    = the mean ms per batch, images_per_second, the latency counters) and,
    with more than one, the aggregates of every counter. `iteration_seconds`
    holds each repetition's list of per-batch seconds."""
    if not iteration_seconds or len(iteration_seconds) != len(cpu_seconds):
        raise ValueError(f"{name}: one list of batch times and one CPU time per repetition expected")
    r = len(iteration_seconds)
    out, per_rep = [], []
    for i, seconds in enumerate(iteration_seconds):
        if not seconds or any(not (s > 0 and math.isfinite(s)) for s in seconds):
            raise ValueError(f"{name}: every batch time must be positive and finite")
        counters = latency_counters(seconds)
        real = counters["latency_ms"]
        e = _entry(name, r, "iteration", len(seconds), real, cpu_seconds[i] * 1e3 / len(seconds),
                   batch * 1e3 / real, label, index=i)
        e.update(counters)
        out.append(e)
        per_rep.append(e)
    if r > 1:
        keys = ["real_time", "cpu_time", "images_per_second"] + list(latency_counters([1.0]))
        for agg in ("mean", "median", "stddev", "cv"):
            values = {}
            for k in keys:
                v = [e[k] for e in per_rep]
                mean = statistics.fmean(v)
                stddev = statistics.stdev(v)
                values[k] = {"mean": mean, "median": statistics.median(v), "stddev": stddev,
                             "cv": stddev / mean if mean else 0.0}[agg]
            e = _entry(name, r, "aggregate", r, values["real_time"], values["cpu_time"],
                       values["images_per_second"], label, aggregate=agg)
            e.update({k: values[k] for k in keys[3:]})
            out.append(e)
    return out


def tidy_cpu_model(model):
    """core/platform.cc DefaultPlatformName's tidy(): drop (R), (TM), " CPU",
    "Processor", join the words with '-'."""
    for junk in ("(R)", "(TM)", " CPU", "Processor"):
        model = model.replace(junk, "")
    return "-".join(model.split())


def default_platform(cpu_model, host_cpus):
    """The host's name, with its online CPUs (not this process's affinity),
    as core/platform.cc's DefaultPlatformName."""
    return f"cpu-{tidy_cpu_model(cpu_model)}-{host_cpus}c"


def read_cpu_model(cpuinfo="/proc/cpuinfo"):
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip() or "unknown"
    except OSError:
        pass
    return "unknown"


def cpu_flags(cpuinfo="/proc/cpuinfo"):
    try:
        with open(cpuinfo) as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def cpu_isa(flags):
    found = [f for f in ISA_FLAGS if f in flags]
    return " ".join(found) if found else "unknown"


def os_name(os_release="/etc/os-release"):
    """The suite's `os`: PRETTY_NAME from os-release, else the kernel's."""
    try:
        with open(os_release) as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"') or host.platform()
    except OSError:
        pass
    return host.platform()


def host_cpus():
    """The logical CPUs online on the host, whatever this process's affinity."""
    try:
        online = os.sysconf("SC_NPROCESSORS_ONLN")
    except (AttributeError, ValueError, OSError):
        online = 0
    return max(online if online > 0 else (os.cpu_count() or 1), usable_cpus())


def usable_cpus():
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _positive_list(flag, text):
    values = []
    for item in text.split(","):
        if not re.fullmatch(r"[1-9][0-9]*", item.strip()):
            raise UsageError(f"--{flag}: '{item}' is not a positive integer (in '{text}')")
        values.append(int(item))
    return values


def add_suite_flags(parser):
    """The flags that mirror //bench:all's (bench/cli/main.cc)."""
    parser.add_argument("--models", default="resnet50_v1.5",
                        help="comma-separated suite model names")
    parser.add_argument("--batch_sizes", default="",
                        help="per-device batch sizes (default: each model's own, as the suite)")
    parser.add_argument("--precisions", default="fp32", help="fp32,bf16 (others: unsupported)")
    parser.add_argument("--warmup_steps", default="10")
    parser.add_argument("--steps", default="100")
    parser.add_argument("--repetitions", default="5")
    parser.add_argument("--benchmark_out", default="", help="Google Benchmark JSON file to write")
    parser.add_argument("--platform", default="",
                        help="platform name (default: the suite's rule, cpu-<model>-<cores>c)")
    parser.add_argument("--threads", default="0", help="compute threads (default: usable cores)")
    parser.add_argument("--mode", choices=("train", "infer"), default="train",
                        help="train steps (train/...) or inference batches (infer/...)")
    parser.add_argument("--infer_warmup", default="10", help="--mode=infer: untimed batches")
    parser.add_argument("--infer_iterations", default="200",
                        help="--mode=infer: timed batches per repetition, each timed on its own")


def parse_suite_flags(args):
    """Checks the mirrored flags; returns the list of cases to run as
    (model, precision, batch) in the suite's order (model, precision, batch)."""
    models, spelled = [], []
    for m in (m.strip() for m in args.models.split(",")):
        if m not in SUITE_MODELS and m not in ALIASES:
            other = ", ".join(f"{a} ({n})" for a, n in ALIASES.items())
            raise UsageError(f"--models: unknown model '{m}' (the suite's: "
                             f"{', '.join(SUITE_MODELS)}; other names: {other})")
        own = ALIASES.get(m, m)
        if own in models and spelled[models.index(own)] != m:
            raise UsageError(f"--models: '{spelled[models.index(own)]}' and '{m}' are the same "
                             f"model ({own}): give it once")
        models.append(own)
        spelled.append(m)
    args.model_names = sorted(set(models), key=models.index)
    precisions = [p.strip() for p in args.precisions.split(",")]
    for p in precisions:
        if p not in PRECISIONS:
            raise UsageError(f"--precisions: unknown precision '{p}' (one of {', '.join(PRECISIONS)})")
    batches = _positive_list("batch_sizes", args.batch_sizes) if args.batch_sizes else []
    args.steps = _positive_list("steps", args.steps)[0] if "," not in args.steps else None
    if args.steps is None:
        raise UsageError("--steps: one positive integer expected")
    args.repetitions = _positive_list("repetitions", args.repetitions)[0] \
        if "," not in args.repetitions else None
    if args.repetitions is None:
        raise UsageError("--repetitions: one positive integer expected")
    if not re.fullmatch(r"[0-9]+", args.warmup_steps.strip()):
        raise UsageError(f"--warmup_steps: '{args.warmup_steps}' is not an integer >= 0")
    args.warmup_steps = int(args.warmup_steps)
    if not re.fullmatch(r"[0-9]+", str(args.infer_warmup).strip()):
        raise UsageError(f"--infer_warmup: '{args.infer_warmup}' is not an integer >= 0")
    args.infer_warmup = int(args.infer_warmup)
    iterations = _positive_list("infer_iterations", str(args.infer_iterations))
    if len(iterations) != 1:
        raise UsageError("--infer_iterations: one positive integer expected")
    args.infer_iterations = iterations[0]
    if not re.fullmatch(r"[0-9]+", args.threads.strip()):
        raise UsageError(f"--threads: '{args.threads}' is not an integer >= 0")
    args.threads = int(args.threads) or usable_cpus()
    if not args.benchmark_out:
        raise UsageError("--benchmark_out: a JSON file to write is required")
    cases = []
    for m in models:
        for p in precisions:
            for b in batches or [SUITE_MODELS[m][1]]:
                cases.append((m, p, b))
    return cases


def host_context(framework, framework_settings, args, argv=None):
    """The run's context: the keys the report reads (framework,
    framework_settings, platform) and the suite's cheap host keys."""
    cpu_model = read_cpu_model()
    cores = usable_cpus()
    now = datetime.datetime.now(datetime.timezone.utc).astimezone()
    argv = sys.argv if argv is None else argv
    try:
        load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        load = "not available"
    return {
        "date": now.isoformat(timespec="seconds"),
        "host_name": socket.gethostname(),
        "executable": argv[0],
        "num_cpus": os.cpu_count() or 1,
        "framework": framework,
        "framework_settings": framework_settings,
        "platform": args.platform or default_platform(cpu_model, host_cpus()),
        "cpu_model": cpu_model,
        "cpu_cores": str(cores),
        "host_cpus": str(host_cpus()),
        "cpu_isa": cpu_isa(cpu_flags()),
        "os": os_name(),
        "kernel": host.release(),
        "gpu_count": "0",
        "gpu_model": "none",
        "steps": str(args.steps),
        "warmup_steps": str(args.warmup_steps),
        "repetitions": str(args.repetitions),
        "image_size": "model default",
        "optimizer": f"sgd momentum {MOMENTUM:g}",
        "methodology": (f"{args.warmup_steps} warm-up steps, {args.steps} timed steps, "
                        f"{args.repetitions} repetition(s), mean reported"),
        "command_line": " ".join(argv),
        "load_average_start": load,
        **definition_context(getattr(args, "model_names", [])),
        **infer_context(args),
    }


def infer_context(args):
    """An inference run's protocol, under the keys //bench:all writes: the
    timed batches (a setting: runs of other counts are not merged), the
    warm-up, and the batch resident rather than copied in each time."""
    if getattr(args, "mode", "train") != "infer":
        return {}
    return {
        "infer_iterations": str(args.infer_iterations),
        "infer_warmup": str(args.infer_warmup),
        "infer_include_copy": "false",
        "methodology": (f"{args.infer_warmup} warm-up batches, {args.infer_iterations} timed "
                        f"batches each timed on its own, {args.repetitions} repetition(s), "
                        "mean reported"),
    }


def definition_context(models):
    """model_definition.<model> for each model, as //bench:all writes it."""
    return {f"model_definition.{m}": str(DEFINITIONS.get(m, 1)) for m in models}


def _entry(name, repetitions, kind, iterations, real_ms, cpu_ms, images_per_second, label,
           index=None, aggregate=None):
    e = {"name": name, "family_index": 0, "per_family_instance_index": 0,
         "run_name": name, "run_type": kind, "repetitions": repetitions}
    if index is not None:
        e["repetition_index"] = index
    e["threads"] = 1
    if aggregate is not None:
        e["name"] = f"{name}_{aggregate}"
        e["aggregate_name"] = aggregate
        e["aggregate_unit"] = "percentage" if aggregate == "cv" else "time"
    e.update({"iterations": iterations, "real_time": real_ms, "cpu_time": cpu_ms,
              "time_unit": "ms", "images_per_second": images_per_second, "ranks": 1.0})
    if label:
        e["label"] = label
    return e


def case_entries(name, batch, steps, seconds, cpu_seconds, label=""):
    """One case's entries as Google Benchmark writes them: an iteration per
    repetition (real_time and cpu_time in ms per step) and, with more than one
    repetition, the mean, median, stddev and cv aggregates. `seconds` and
    `cpu_seconds` hold each repetition's total over `steps` steps."""
    if not seconds or len(seconds) != len(cpu_seconds):
        raise ValueError(f"{name}: one wall and one CPU time per repetition expected")
    for s in seconds:
        if not (s > 0 and math.isfinite(s)):
            raise ValueError(f"{name}: a repetition's time must be positive and finite, not {s}")
    r = len(seconds)
    real = [s * 1e3 / steps for s in seconds]
    cpu = [s * 1e3 / steps for s in cpu_seconds]
    ips = [batch * 1e3 / t for t in real]
    out = [_entry(name, r, "iteration", steps, real[i], cpu[i], ips[i], label, index=i)
           for i in range(r)]
    if r > 1:
        def stats(values):
            mean = statistics.fmean(values)
            stddev = statistics.stdev(values)
            return {"mean": mean, "median": statistics.median(values), "stddev": stddev,
                    "cv": stddev / mean if mean else 0.0}
        sr, sc, si = stats(real), stats(cpu), stats(ips)
        for agg in ("mean", "median", "stddev", "cv"):
            out.append(_entry(name, r, "aggregate", r, sr[agg], sc[agg], si[agg], label,
                              aggregate=agg))
    return out


def error_entry(name, repetitions, message):
    """A case that could not run, as the suite's SkipWithError writes it;
    `message` starts with its kind ("unsupported: ", "OOM: ") where it has one."""
    return {"name": name, "family_index": 0, "per_family_instance_index": 0, "run_name": name,
            "run_type": "iteration", "repetitions": repetitions, "repetition_index": 0,
            "threads": 1, "error_occurred": True, "error_message": message,
            "iterations": 0, "real_time": 0.0, "cpu_time": 0.0, "time_unit": "ms"}


def write_run(prog, path, context, benchmarks):
    """write_json, as a runner's exit status: 0, or 1 after saying on stderr
    which --benchmark_out could not be written and why."""
    try:
        write_json(path, context, benchmarks)
    except OSError as e:
        print(f"{prog}: cannot write --benchmark_out={path}: {e}", file=sys.stderr)
        return 1
    return 0


def write_json(path, context, benchmarks):
    """Writes the run through a temporary file renamed into place (a failed
    run leaves an older file whole). Errors raise OSError naming the path."""
    import json

    text = json.dumps({"context": context, "benchmarks": benchmarks}, indent=2) + "\n"
    if path in ("-", "/dev/stdout"):
        sys.stdout.write(text)
        return
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".peer-", suffix=".json", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def malloc_settings():
    """The glibc malloc tuning the run saw (compare.sh sets it: without it a
    framework that allocates per step pays page faults, docs/peers.md)."""
    keys = ("MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_")
    found = [f"{k}={os.environ[k]}" for k in keys if k in os.environ]
    return " ".join(found) if found else "glibc malloc defaults"


def run_cases(cases, args, run_case, log=sys.stderr, infer=False):
    """Runs each (model, precision, batch) with run_case(model, precision,
    batch) -> (seconds, cpu_seconds, label); an exception becomes the case's
    error entry (unsupported:, OOM: or the exception's own words), never a
    lost case. With `infer`, the cases are infer cases of args.infer_iterations
    batches and `seconds` holds each repetition's per-batch times."""
    benchmarks = []
    for i, (model, precision, batch) in enumerate(cases):
        name = (infer_case_name(model, precision, batch, args.infer_iterations, args.repetitions)
                if infer else case_name(model, precision, batch, args.steps, args.repetitions))
        print(f"[{i + 1}/{len(cases)}] {name}", file=log, flush=True)
        try:
            seconds, cpu_seconds, label = run_case(model, precision, batch)
            if infer:
                benchmarks.extend(infer_entries(name, batch, seconds, cpu_seconds, label))
            else:
                benchmarks.extend(case_entries(name, batch, args.steps, seconds, cpu_seconds, label))
        except Unsupported as e:
            print(f"  skipped: unsupported: {e}", file=log, flush=True)
            benchmarks.append(error_entry(name, args.repetitions, f"unsupported: {e}"))
        except MemoryError as e:
            benchmarks.append(error_entry(name, args.repetitions, f"OOM: {e or 'out of memory'}"))
        except Exception as e:  # a framework error: reported with the case, the run goes on
            first = str(e).splitlines()[0] if str(e) else ""
            message = f"{type(e).__name__}: {first}"
            low = first.lower()
            if (any(w in low for w in ("out of memory", "not enough memory", "bad_alloc",
                                       "bad allocation", "failed to allocate"))
                    or "OOM" in type(e).__name__):
                message = f"OOM: {first}"
            print(f"  failed: {message}", file=log, flush=True)
            benchmarks.append(error_entry(name, args.repetitions, message))
    return benchmarks


class Unsupported(Exception):
    """A case the peer has no definition for (a model, a precision)."""


def main_wrapper(parser, run):
    """Parses the flags, turns a UsageError into exit 2 with the message."""
    args = parser.parse_args()
    try:
        cases = parse_suite_flags(args)
    except UsageError as e:
        print(f"{parser.prog}: {e}", file=sys.stderr)
        return 2
    return run(args, cases)
