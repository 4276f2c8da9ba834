#!/usr/bin/env python3
"""Times PyTorch training steps of torchvision's resnet50 (v1.5: stride in
the 3x3) on synthetic data on a GPU: the peer that cnnbench's
train/resnet50_v1.5/.../gpus:1 cases are compared with in the device
bundle's gpu_check.sh. Channels-last, SGD with momentum, autocast in bf16 or
fp16 (fp16 with a gradient scaler), fp32 and tf32 without autocast. Not part
of the suite or its build.

    python3 tools/peers/torch_train_step.py --batch=256 --precisions=bf16,fp16

Prints one JSON line per precision (model, precision, batch, steps, step_ms,
images_per_second, or skipped with the reason), with --matmul=N one more for
a bf16 N x N x N matmul (torch.matmul between device events: tflops), and,
with --json, writes
them as a list, rewritten (whole, through a temporary file) after each
precision so that a run stopped midway keeps the precisions it finished.
"""
import argparse
import json
import os
import time


def run(precision, args):
    import torch
    import torchvision

    if not torch.cuda.is_available():
        return {"skipped": "no CUDA device visible to PyTorch"}
    torch.backends.cudnn.benchmark = True
    tf32 = precision == "tf32"
    torch.backends.cuda.matmul.allow_tf32 = tf32
    torch.backends.cudnn.allow_tf32 = tf32
    device = torch.device("cuda")
    model = torchvision.models.resnet50(num_classes=args.classes)
    model = model.to(device).to(memory_format=torch.channels_last)
    # The suite's train cases: learning rate 0.1 * batch / 256, momentum 0.9,
    # no weight decay.
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1 * args.batch / 256, momentum=0.9,
                                weight_decay=args.weight_decay)
    images = torch.randn(args.batch, 3, args.image_size, args.image_size, device=device)
    images = images.contiguous(memory_format=torch.channels_last)
    labels = torch.randint(0, args.classes, (args.batch,), device=device)
    autocast = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(precision)
    scaler = torch.amp.GradScaler("cuda", enabled=precision == "fp16")
    loss_fn = torch.nn.CrossEntropyLoss()

    def step():
        optimizer.zero_grad(set_to_none=True)
        with torch.autocast("cuda", dtype=autocast or torch.float32, enabled=autocast is not None):
            loss = loss_fn(model(images), labels)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
        scaler.update()
        return loss

    for _ in range(args.warmup_steps):
        step()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(args.steps):
        loss = step()
    end.record()
    torch.cuda.synchronize()
    step_ms = start.elapsed_time(end) / args.steps
    return {"step_ms": step_ms, "images_per_second": args.batch * 1000.0 / step_ms,
            "loss": float(loss), "torch": torch.__version__, "gpu": torch.cuda.get_device_name()}


def matmul(n, args):
    """A bf16 n^3 matmul's rate: the tensor-core figure PyTorch reaches."""
    import torch

    if not torch.cuda.is_available():
        return {"skipped": "no CUDA device visible to PyTorch"}
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
    for _ in range(args.warmup_steps):
        c = torch.matmul(a, b)
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    iterations = max(args.steps, 10)
    start.record()
    for _ in range(iterations):
        c = torch.matmul(a, b)
    end.record()
    torch.cuda.synchronize()
    ms = start.elapsed_time(end) / iterations
    # Checked: one element against its dot product in fp32.
    want = float((a[0].float() * b[:, 0].float()).sum())
    got = float(c[0, 0].float())
    if abs(got - want) > 0.02 * max(1.0, abs(want)):
        return {"skipped": f"matmul wrong: c[0,0] = {got}, its dot product {want}"}
    return {"ms": ms, "tflops": 2.0 * n ** 3 / (ms * 1e-3) / 1e12, "torch": torch.__version__,
            "gpu": torch.cuda.get_device_name()}


def write_json(path, rows):
    """Replaces PATH with ROWS, never leaving it half written."""
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(rows, f)
    os.replace(tmp, path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup_steps", type=int, default=5)
    parser.add_argument("--classes", type=int, default=1001)
    parser.add_argument("--image_size", type=int, default=224)
    parser.add_argument("--precisions", default="bf16,fp16")
    parser.add_argument("--weight_decay", type=float, default=0.0,
                        help="SGD weight decay (the suite's train cases use none)")
    parser.add_argument("--matmul", type=int, default=0,
                        help="also time a bf16 N^3 matmul (0: none)")
    parser.add_argument("--json", default="")
    args = parser.parse_args()
    results = []

    def measure(row, what, missing):
        """Fills ROW from what(), reporting a failure as a skip; keeps it."""
        t0 = time.time()
        try:
            row.update(what())
        except ImportError as e:
            row["skipped"] = f"{missing} not importable ({e})"
        except Exception as e:  # OOM or a CUDA error: report it, go on
            row["skipped"] = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
        row["seconds"] = round(time.time() - t0, 1)
        print(json.dumps(row), flush=True)
        results.append(row)
        if args.json:
            write_json(args.json, results)

    for precision in args.precisions.split(","):
        measure({"framework": "pytorch", "model": "resnet50", "precision": precision,
                 "batch": args.batch, "steps": args.steps, "warmup_steps": args.warmup_steps},
                lambda: run(precision, args), "PyTorch or torchvision")
    if args.matmul > 0:
        measure({"framework": "pytorch", "model": "matmul", "precision": "bf16", "n": args.matmul},
                lambda: matmul(args.matmul, args), "PyTorch")
    if args.json and not results:
        write_json(args.json, results)


if __name__ == "__main__":
    main()
