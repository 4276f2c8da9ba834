#!/usr/bin/env python3
"""ONNX Runtime peer of //bench:all's infer cases on the CPU: the torchvision
network the PyTorch peer runs, exported with torch.onnx.export at the case's
batch (static shapes), run by the CPU execution provider with every graph
optimisation on and the suite's thread count; the suite's protocol (warm-up
batches, then each batch timed on its own on one batch made once), written
as Google Benchmark JSON with the suite's infer/... names and latency
counters for //tools:report (docs/peers.md). Needs torch, torchvision, onnx,
onnxscript and onnxruntime (tools/peers/setup.sh); the suite never uses them.

    python onnxruntime_infer.py --models=resnet50_v1.5 --batch_sizes=1,32 \\
        --benchmark_out=onnxruntime.json
"""
import os
import sys
import tempfile

sys.dont_write_bytecode = True
import engine_common  # noqa: E402
from engine_common import Unsupported  # noqa: E402


class OnnxRuntime:
    name = "onnxruntime"

    def __init__(self):
        self.ort = None
        self.folder = None
        self.keep = False
        self.exporter = ""

    def load(self):
        import onnxruntime as ort
        import torch  # noqa: F401  (the export)

        self.ort = ort
        return ort.__version__

    def add_flags(self, parser):
        parser.add_argument("--keep_models", default="",
                            help="a folder to keep the exported .onnx files in (default: a "
                                 "temporary one, removed at the end)")

    def settings(self, args, models):
        parts = [
            "CPUExecutionProvider",
            "graph optimisations ORT_ENABLE_ALL",
            f"intra-op threads {args.threads}, inter-op threads 1, sequential execution",
            "the torchvision network exported with torch.onnx.export at the case's batch "
            "(static shapes, eval mode)",
            "each batch: InferenceSession.run on one float32 NCHW batch made once",
            "fp32 only (the CPU provider has no bf16 convolutions)",
        ]
        return ", ".join(parts + engine_common.model_differences(models))

    def export(self, model_name, batch, args):
        import torch

        if self.folder is None:
            self.keep = bool(args.keep_models)
            self.folder = args.keep_models or tempfile.mkdtemp(prefix="cnnbench-onnx-")
            os.makedirs(self.folder, exist_ok=True)
        path = os.path.join(self.folder, f"{model_name}-batch{batch}.onnx")
        model = engine_common.torch_model(model_name)
        example = torch.from_numpy(engine_common.example_batch(model_name, batch))
        with torch.no_grad():
            torch.onnx.export(model, (example,), path, input_names=["images"],
                              output_names=["logits"], dynamo=True, external_data=False)
        self.exporter = f"torch {torch.__version__.split('+')[0]} dynamo exporter"
        return path

    def run_case(self, model_name, precision, batch, args):
        engine_common.check_precision(precision, "ONNX Runtime's CPU provider", {"fp32": ()})
        engine_common.check_model(model_name)  # Unsupported before any export
        ort = self.ort
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        options.intra_op_num_threads = args.threads
        options.inter_op_num_threads = 1
        options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        session = ort.InferenceSession(self.export(model_name, batch, args), options,
                                       providers=["CPUExecutionProvider"])
        if session.get_providers()[0] != "CPUExecutionProvider":
            raise RuntimeError(f"the session runs on {session.get_providers()}, "
                               "not the CPU provider")
        feed = {"images": engine_common.example_batch(model_name, batch)}
        seconds, cpu = engine_common.time_batches(lambda: session.run(None, feed), args)
        return seconds, cpu, f"onnxruntime CPU provider, {self.exporter}, batch {batch}"

    def close(self):
        """Removes the exported files unless --keep_models named their folder."""
        if self.folder and not self.keep:
            for f in os.listdir(self.folder):
                os.unlink(os.path.join(self.folder, f))
            os.rmdir(self.folder)


def main():
    return engine_common.main("onnxruntime_infer.py", __doc__, OnnxRuntime())


if __name__ == "__main__":
    sys.exit(main())
