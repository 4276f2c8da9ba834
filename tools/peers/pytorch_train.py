#!/usr/bin/env python3
"""PyTorch peer of //bench:all's train cases on the CPU: the same training
step (model, image size, batch, precision, SGD momentum 0.9 at lr
0.1*batch/256, synthetic data made once, softmax cross-entropy on 1001
classes), warm-up, timed steps and repetitions, written as Google Benchmark
JSON with the suite's case names for //tools:report (docs/peers.md). Needs
torch and torchvision (tools/peers/setup.sh); the suite never uses them.

    python pytorch_train.py --models=resnet50_v1.5 --batch_sizes=32 \\
        --precisions=fp32,bf16 --benchmark_out=pytorch.json
"""
import argparse
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree for peer_json
import peer_json  # noqa: E402
from peer_json import Unsupported  # noqa: E402

# Suite model -> (torchvision constructor, how it differs from the suite's).
# resnet50 (v1) is not here: torchvision's is v1.5, which the suite names resnet50_v1.5.
TORCHVISION = {
    "resnet18": ("resnet18", ""),
    "resnet34": ("resnet34", ""),
    "resnet50_v1.5": ("resnet50", ""),
    "resnet101": ("resnet101", "resnet101 is torchvision's v1.5 (stride in the 3x3)"),
    "resnet152": ("resnet152", "resnet152 is torchvision's v1.5 (stride in the 3x3)"),
    "vgg11": ("vgg11", ""),
    "vgg16": ("vgg16", ""),
    "vgg19": ("vgg19", ""),
    "alexnet": ("alexnet", "alexnet is torchvision's (224 there) run at the suite's 227"),
    "googlenet": ("googlenet", "googlenet without auxiliary heads"),
    "inception3": ("inception_v3", "inception3 without the auxiliary head"),
    "mobilenet": ("mobilenet_v2", ""),  # MobileNetV2, as the suite's (dropout 0.2 too)
    # TensorFlow's official ResNet v1 puts the stride in the 3x3, as torchvision.
    "official_resnet50": ("resnet50", ""),
    "official_resnet101": ("resnet101", ""),
    "official_resnet152": ("resnet152", ""),
    "official_resnet18": ("resnet18", "official_resnet18 projects stage 1's first shortcut; torchvision's does not"),
    "official_resnet34": ("resnet34", "official_resnet34 projects stage 1's first shortcut; torchvision's does not"),
    # The suite's efficientnet_b* are torchvision's (models/efficientnet.cc).
    **{f"efficientnet_b{i}": (f"efficientnet_b{i}", "") for i in range(8)},
    # And its mobilenet_v3_*, regnet_* and convnext_* (models/mobilenet_v3.cc,
    # regnet.cc, convnext.cc). The suite's ConvNeXt layer scale starts as a
    # convolution's weights, torch's at 1e-6: the same work, other values.
    **{name: (name, "") for name in ("mobilenet_v3_large", "mobilenet_v3_small", "regnet_x_3_2gf",
                                     "regnet_y_3_2gf", "regnet_y_400mf")},
    **{name: (name, "the layer scale starts from random weights, not torch's 1e-6")
       for name in ("convnext_tiny", "convnext_small", "convnext_base")},
}


def build(model_name):
    if model_name not in TORCHVISION:  # said before torchvision is imported
        hint = {"resnet50": " (torchvision's resnet50 is the suite's resnet50_v1.5)",
                "mobilenet_v1": " (its mobilenet_v2 is the suite's mobilenet)"}.get(model_name, "")
        raise Unsupported(f"torchvision has no {model_name}{hint}")
    import torchvision

    ctor = getattr(torchvision.models, TORCHVISION[model_name][0])
    kwargs = {"num_classes": peer_json.CLASSES, "weights": None}
    if model_name in ("googlenet", "inception3"):
        kwargs.update(aux_logits=False, init_weights=True)
    return ctor(**kwargs)


def bf16_capable(flags):
    return "avx512_bf16" in flags or "amx_bf16" in flags


class Case:
    """One model at one precision and batch: model, optimizer and data made once."""

    def __init__(self, model_name, precision, batch, args, channels_last):
        import torch

        size = peer_json.SUITE_MODELS[model_name][0]
        self.torch = torch
        self.model = build(model_name)
        self.model.train()
        fmt = torch.channels_last if channels_last else torch.contiguous_format
        self.model = self.model.to(memory_format=fmt)
        gen = torch.Generator().manual_seed(1)
        self.images = torch.randn(batch, 3, size, size, generator=gen).contiguous(memory_format=fmt)
        self.labels = torch.randint(0, peer_json.CLASSES, (batch,), generator=gen)
        self.optimizer = torch.optim.SGD(self.model.parameters(),
                                         lr=peer_json.learning_rate(batch),
                                         momentum=peer_json.MOMENTUM)
        self.loss_fn = torch.nn.CrossEntropyLoss()
        self.autocast = precision == "bf16"
        self.forward = torch.compile(self.model) if args.compile else self.model

    def step(self):
        torch = self.torch
        self.optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=self.autocast):
            loss = self.loss_fn(self.forward(self.images), self.labels)
        loss.backward()
        self.optimizer.step()
        return loss

    def timed(self, steps):
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(steps):
            loss = self.step()
        loss.item()  # CPU ops are synchronous; this only reads the result
        return time.perf_counter() - wall, time.process_time() - cpu


class InferCase:
    """One model's inference at one precision and batch: eval(), inference
    mode, bf16 autocast for bf16; each batch timed on its own."""

    def __init__(self, model_name, precision, batch, args, channels_last):
        import torch

        size = peer_json.SUITE_MODELS[model_name][0]
        self.torch = torch
        self.model = build(model_name).eval()
        fmt = torch.channels_last if channels_last else torch.contiguous_format
        self.model = self.model.to(memory_format=fmt)
        gen = torch.Generator().manual_seed(1)
        self.images = torch.randn(batch, 3, size, size, generator=gen).contiguous(memory_format=fmt)
        self.autocast = precision == "bf16"
        self.forward = torch.compile(self.model) if args.compile else self.model

    def batch(self):
        torch = self.torch
        with torch.inference_mode(), torch.autocast("cpu", dtype=torch.bfloat16,
                                                    enabled=self.autocast):
            return self.forward(self.images)

    def timed(self, iterations):
        """Each batch's seconds (CPU ops are synchronous), and the CPU time."""
        seconds, cpu = [], time.process_time()
        for _ in range(iterations):
            t = time.perf_counter()
            self.batch()
            seconds.append(time.perf_counter() - t)
        return seconds, time.process_time() - cpu


def make_runner(args):
    flags = peer_json.cpu_flags()

    def run_case(model_name, precision, batch):
        if precision not in ("fp32", "bf16"):
            raise Unsupported(f"{precision} on the CPU (PyTorch runs fp32 or bf16 autocast)")
        if precision == "bf16" and not bf16_capable(flags):
            raise Unsupported("bf16 needs avx512_bf16 or amx_bf16, which this CPU lacks")
        if model_name not in TORCHVISION:
            build(model_name)  # raises Unsupported with the reason
        layouts = {"auto": [True, False], "channels_last": [True], "nchw": [False]}[args.layout]
        infer = args.mode == "infer"
        kind = InferCase if infer else Case

        def probe_seconds(probe):
            return sum(probe.timed(2)[0]) if infer else probe.timed(2)[0]

        chosen, case = layouts[0], None
        if len(layouts) > 1:
            # Short probe: each layout warms up once, then the faster of two steps wins.
            best = None
            for channels_last in layouts:
                probe = kind(model_name, precision, batch, args, channels_last)
                probe.timed(1)
                seconds = probe_seconds(probe)
                if best is None or seconds < best:
                    best, chosen, case = seconds, channels_last, probe
        if case is None:
            case = kind(model_name, precision, batch, args, chosen)
        warmup = args.infer_warmup if infer else args.warmup_steps
        if warmup:
            case.timed(warmup)
        seconds, cpu_seconds = [], []
        for _ in range(args.repetitions):
            w, c = case.timed(args.infer_iterations if infer else args.steps)
            seconds.append(w)
            cpu_seconds.append(c)
        layout = "channels_last" if chosen else "NCHW"
        how = " (probe)" if len(layouts) > 1 else ""
        return seconds, cpu_seconds, f"pytorch {layout}{how} batch {batch}"

    return run_case


def settings(args, torch, models):
    parts = [
        f"threads {args.threads}",
        {"auto": "layout by probe per case (label): channels_last vs NCHW",
         "channels_last": "channels_last", "nchw": "NCHW"}[args.layout],
        f"torch.compile {'on' if args.compile else 'off'}",
        ("inference: eval(), torch.inference_mode(), each batch timed on its own"
         if args.mode == "infer" else "training steps"),
        "bf16 autocast for bf16",
        "SGD momentum 0.9 lr 0.1*batch/256",
        f"oneDNN {'on' if torch.backends.mkldnn.is_available() else 'off'}",
        peer_json.malloc_settings(),
    ]
    parts += [TORCHVISION[m][1] for m in models if m in TORCHVISION and TORCHVISION[m][1]]
    return ", ".join(parts)


def main():
    parser = argparse.ArgumentParser(prog="pytorch_train.py", description=__doc__.splitlines()[0])
    peer_json.add_suite_flags(parser)
    parser.add_argument("--layout", choices=("auto", "channels_last", "nchw"), default="auto",
                        help="auto: a short probe per case picks the faster")
    parser.add_argument("--compile", action="store_true", help="torch.compile the model")

    def run(args, cases):
        try:
            import torch
            import torchvision  # noqa: F401
        except ImportError as e:
            print(f"pytorch_train.py: PyTorch not installed ({e}); see tools/peers/setup.sh",
                  file=sys.stderr)
            return 3
        torch.set_num_threads(args.threads)
        torch.manual_seed(1)
        models = sorted({m for m, _, _ in cases})
        context = peer_json.host_context(f"pytorch {torch.__version__.split('+')[0]}",
                                         settings(args, torch, models), args)
        context["torch_version"] = torch.__version__
        benchmarks = peer_json.run_cases(cases, args, make_runner(args),
                                         infer=args.mode == "infer")
        return peer_json.write_run("pytorch_train.py", args.benchmark_out, context, benchmarks)

    return peer_json.main_wrapper(parser, run)


if __name__ == "__main__":
    sys.exit(main())
