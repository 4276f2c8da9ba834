#!/usr/bin/env python3
"""OpenVINO peer of //bench:all's infer cases on the CPU: the torchvision
network the PyTorch peer runs, converted with openvino.convert_model at the
case's batch (static shapes), compiled for the CPU with the latency hint,
the suite's thread count and the case's inference precision (f32 for fp32,
bf16 for bf16); the suite's protocol (warm-up batches, then each batch timed
on its own on one batch made once and set as the request's input), written
as Google Benchmark JSON with the suite's infer/... names and latency
counters for //tools:report (docs/peers.md). Needs torch, torchvision and
openvino (tools/peers/setup.sh); the suite never uses them.

    python openvino_infer.py --models=resnet50_v1.5 --batch_sizes=1,32 \\
        --precisions=fp32,bf16 --benchmark_out=openvino.json

--perf_counts=FILE also writes OpenVINO's per-layer profile of each case's
last timed batch (PERF_COUNT: layer, type, the kernel it ran, microseconds)
as tab-separated lines; the profile's counters slow the run a little, so
time without it.
"""
import sys

sys.dont_write_bytecode = True
import engine_common  # noqa: E402

# Precision -> (INFERENCE_PRECISION_HINT, the CPU flags it needs: any of them).
PRECISIONS = {"fp32": ("f32", ()), "bf16": ("bf16", ("avx512_bf16", "amx_bf16"))}


class OpenVino:
    name = "openvino"

    def __init__(self):
        self.ov = None
        self.profile = None

    def load(self):
        import openvino as ov
        import torch  # noqa: F401  (the conversion)

        self.ov = ov
        return ov.get_version().split("-")[0]

    def add_flags(self, parser):
        parser.add_argument("--perf_counts", default="",
                            help="a file for each case's per-layer profile (PERF_COUNT), "
                                 "tab-separated")
        parser.add_argument("--hint", choices=("latency", "throughput"), default="latency",
                            help="PERFORMANCE_HINT (default latency: one stream)")

    def settings(self, args, models):
        parts = [
            "CPU plugin",
            f"PERFORMANCE_HINT {args.hint.upper()}",
            f"INFERENCE_NUM_THREADS {args.threads}",
            "INFERENCE_PRECISION_HINT f32 for fp32, bf16 for bf16 "
            "(each case's label: as read back)",
            "the torchvision network converted with openvino.convert_model at the case's batch "
            "(static shapes, eval mode)",
            "each batch: a synchronous InferRequest.infer on one float32 NCHW batch made once, "
            "set as its input tensor",
            f"PERF_COUNT {'on (--perf_counts)' if args.perf_counts else 'off'}",
        ]
        return ", ".join(parts + engine_common.model_differences(models))

    def compile(self, model_name, precision, batch, args):
        import torch

        ov = self.ov
        example = engine_common.example_batch(model_name, batch)
        with torch.no_grad():
            model = ov.convert_model(engine_common.torch_model(model_name),
                                     example_input=torch.from_numpy(example),
                                     input=[list(example.shape)])
        config = {"PERFORMANCE_HINT": args.hint.upper(),
                  "INFERENCE_NUM_THREADS": str(args.threads),
                  "INFERENCE_PRECISION_HINT": PRECISIONS[precision][0]}
        if args.perf_counts:
            config["PERF_COUNT"] = "YES"
        return ov.Core().compile_model(model, "CPU", config), example

    def run_case(self, model_name, precision, batch, args):
        engine_common.check_precision(precision, "OpenVINO's CPU plugin",
                                      {p: needs for p, (_, needs) in PRECISIONS.items()})
        engine_common.check_model(model_name)  # Unsupported before any conversion
        compiled, example = self.compile(model_name, precision, batch, args)
        hint = compiled.get_property("INFERENCE_PRECISION_HINT")  # an openvino.Type
        got = hint.get_type_name() if hasattr(hint, "get_type_name") else str(hint)
        want = PRECISIONS[precision][0]
        if got != want:
            raise RuntimeError(f"OpenVINO compiled the model at {got}, not {want}")
        request = compiled.create_infer_request()
        request.set_input_tensor(self.ov.Tensor(example, shared_memory=True))
        seconds, cpu = engine_common.time_batches(request.infer, args)
        if args.perf_counts:
            self.write_profile(args.perf_counts, model_name, precision, batch, request)
        streams = compiled.get_property("NUM_STREAMS")
        threads = compiled.get_property("INFERENCE_NUM_THREADS")
        return seconds, cpu, (f"openvino {args.hint} hint, precision {got}, {streams} stream(s), "
                              f"{threads} threads, batch {batch}")

    def write_profile(self, path, model_name, precision, batch, request):
        """Appends the case's layers: case, layer, type, kernel, status, real and CPU us."""
        mode = "w" if self.profile is None else "a"
        self.profile = path
        with open(path, mode) as f:
            if mode == "w":
                f.write("case\tlayer\ttype\texec_type\tstatus\treal_us\tcpu_us\n")
            case = f"{model_name}/{precision}/batch:{batch}"
            for info in request.profiling_info:
                f.write(f"{case}\t{info.node_name}\t{info.node_type}\t{info.exec_type}\t"
                        f"{str(info.status).split('.')[-1]}\t"
                        f"{info.real_time.total_seconds() * 1e6:.1f}\t"
                        f"{info.cpu_time.total_seconds() * 1e6:.1f}\n")

    def close(self):
        pass


def main():
    return engine_common.main("openvino_infer.py", __doc__, OpenVino())


if __name__ == "__main__":
    sys.exit(main())
