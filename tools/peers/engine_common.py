"""What the inference-engine peers (onnxruntime_infer.py, openvino_infer.py)
share: the torchvision model the PyTorch peer builds (pytorch_train.py's
table, so every engine runs the network the PyTorch peer does), one batch of
the suite's image size made once, the suite's inference protocol on any
callable (warm-up batches, then each timed batch on its own), and the
runner's main: flags mirrored from //bench:all (peer_json), inference only,
the context and the JSON file (docs/peers.md). The engines are imported by
the runners, never here.
"""
import argparse
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
import peer_json  # noqa: E402
from peer_json import Unsupported  # noqa: E402,F401


def torch_model(model_name):
    """The torchvision network the PyTorch peer runs for `model_name`, in
    eval mode (Unsupported where torchvision has none)."""
    import pytorch_train  # its table of torchvision networks and their differences

    return pytorch_train.build(model_name).eval()


def check_model(model_name):
    """Unsupported (with the reason) where torchvision has no network for
    `model_name`; builds nothing otherwise."""
    import pytorch_train

    if model_name not in pytorch_train.TORCHVISION:
        pytorch_train.build(model_name)  # raises Unsupported with the hint


def model_differences(models):
    """How the torchvision networks of `models` differ from the suite's
    (pytorch_train.py's table), for framework_settings."""
    import pytorch_train

    table = pytorch_train.TORCHVISION
    return [table[m][1] for m in models if m in table and table[m][1]]


def example_batch(model_name, batch, seed=1):
    """One batch of random-normal NCHW images at the model's image size (float32)."""
    import numpy as np

    size = peer_json.SUITE_MODELS[model_name][0]
    return np.random.default_rng(seed).standard_normal((batch, 3, size, size), dtype=np.float32)


def time_batches(run_batch, args):
    """The suite's protocol (bench/cases/infer): args.infer_warmup untimed
    batches, then per repetition args.infer_iterations batches, each timed on
    its own. Returns each repetition's per-batch seconds and CPU seconds."""
    for _ in range(args.infer_warmup):
        run_batch()
    seconds, cpu_seconds = [], []
    for _ in range(args.repetitions):
        each, cpu = [], time.process_time()
        for _ in range(args.infer_iterations):
            start = time.perf_counter()
            run_batch()
            each.append(time.perf_counter() - start)
        seconds.append(each)
        cpu_seconds.append(time.process_time() - cpu)
    return seconds, cpu_seconds


def check_precision(precision, engine, supported):
    """Unsupported unless the engine runs `precision` here. `supported` maps
    each precision the engine has to the CPU flags it needs (any of them;
    empty: none)."""
    if precision not in supported:
        have = ", ".join(supported)
        raise Unsupported(f"{precision} on the CPU ({engine} runs {have} here)")
    needs = supported[precision]
    if needs and not (set(needs) & peer_json.cpu_flags()):
        raise Unsupported(f"{precision} needs {' or '.join(needs)}, which this CPU lacks")


def main(prog, doc, engine):
    """Runs an engine peer. `engine` has: `name` ("onnxruntime"), `load()`
    -> its version (ImportError when not installed), `add_flags(parser)`,
    `settings(args, models)` -> framework_settings, `run_case(model,
    precision, batch, args)` -> (per-repetition batch seconds, CPU seconds,
    label), and `close()` (what it leaves behind, run at the end). Exit 2
    on a bad flag (nothing written), 3 when the engine is not installed, 1
    when the file cannot be written."""
    parser = argparse.ArgumentParser(prog=prog, description=doc.splitlines()[0])
    peer_json.add_suite_flags(parser)
    parser.set_defaults(mode="infer")
    engine.add_flags(parser)

    def run(args, cases):
        if args.mode != "infer":
            print(f"{prog}: {engine.name} is an inference engine: --mode=infer (the default), "
                  f"not --mode={args.mode}", file=sys.stderr)
            return 2
        try:
            version = engine.load()
        except ImportError as e:
            print(f"{prog}: {engine.name} not installed ({e}); see tools/peers/setup.sh",
                  file=sys.stderr)
            return 3
        models = sorted({m for m, _, _ in cases})
        context = peer_json.host_context(f"{engine.name} {version}",
                                         engine.settings(args, models), args)
        try:
            benchmarks = peer_json.run_cases(
                cases, args, lambda m, p, b: engine.run_case(m, p, b, args), infer=True)
        finally:
            engine.close()
        return peer_json.write_run(prog, args.benchmark_out, context, benchmarks)

    return peer_json.main_wrapper(parser, run)
