#!/usr/bin/env python3
"""TensorFlow (Keras) peer of //bench:all's train cases on the CPU: the same
training step (model, image size, batch, precision, SGD momentum 0.9 at lr
0.1*batch/256, synthetic data made once, softmax cross-entropy on 1001
classes), warm-up, timed steps and repetitions, written as Google Benchmark
JSON with the suite's case names for //tools:report (docs/peers.md). Needs
tensorflow-cpu (tools/peers/setup.sh); the suite never uses it.

    python tensorflow_train.py --models=resnet50 --batch_sizes=32 \\
        --precisions=fp32,bf16 --benchmark_out=tensorflow.json
"""
import argparse
import os
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree for peer_json
import peer_json  # noqa: E402
from peer_json import Unsupported  # noqa: E402

# Suite model -> (tf.keras.applications constructor, how it differs from the suite's).
KERAS = {
    "resnet50": ("ResNet50", ""),  # v1: stride in the first 1x1, as the suite's resnet50
    "resnet101": ("ResNet101", ""),
    "resnet152": ("ResNet152", ""),
    "resnet50_v2": ("ResNet50V2", "resnet*_v2 are Keras' ResNetV2 (stride in each stage's last block)"),
    "resnet101_v2": ("ResNet101V2", "resnet*_v2 are Keras' ResNetV2 (stride in each stage's last block)"),
    "resnet152_v2": ("ResNet152V2", "resnet*_v2 are Keras' ResNetV2 (stride in each stage's last block)"),
    "vgg16": ("VGG16", ""),
    "vgg19": ("VGG19", ""),
    "inception3": ("InceptionV3", "inception3 without the auxiliary head"),
    # tf_cnn_benchmarks' mobilenet is MobileNetV2, as the suite's.
    "mobilenet": ("MobileNetV2", "mobilenet is Keras' MobileNetV2 (no dropout before the logits)"),
    "mobilenet_v1": ("MobileNet", "mobilenet_v1 is Keras' MobileNet (ReLU6 where the suite's has ReLU)"),
    "nasnet": ("NASNetMobile", "nasnet is Keras' NASNetMobile (no drop-path, Keras' own cell wiring)"),
    "nasnetlarge": ("NASNetLarge", "nasnetlarge is Keras' NASNetLarge (no drop-path, Keras' own cell wiring)"),
}


def build(tf, model_name, size):
    if model_name not in KERAS:
        raise Unsupported(f"tf.keras.applications has no {model_name}")
    ctor = getattr(tf.keras.applications, KERAS[model_name][0])
    return ctor(weights=None, classes=peer_json.CLASSES, input_shape=(size, size, 3),
                classifier_activation=None)


class Case:
    """One model at one precision and batch: model, optimizer and data made once."""

    def __init__(self, tf, model_name, precision, batch, args):
        size = peer_json.SUITE_MODELS[model_name][0]
        tf.keras.mixed_precision.set_global_policy(
            "mixed_bfloat16" if precision == "bf16" else "float32")
        tf.keras.backend.clear_session()
        self.model = build(tf, model_name, size)
        self.optimizer = tf.keras.optimizers.SGD(learning_rate=peer_json.learning_rate(batch),
                                                 momentum=peer_json.MOMENTUM)
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        tf.random.set_seed(1)
        self.images = tf.random.normal([batch, size, size, 3])  # NHWC: Keras' CPU layout
        self.labels = tf.random.uniform([batch], maxval=peer_json.CLASSES, dtype=tf.int32)
        model, optimizer = self.model, self.optimizer

        @tf.function(jit_compile=bool(args.xla))
        def step(x, y):
            with tf.GradientTape() as tape:
                logits = tf.cast(model(x, training=True), tf.float32)
                loss = loss_fn(y, logits)
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
            return loss

        self.step = step

    def timed(self, steps):
        wall, cpu = time.perf_counter(), time.process_time()
        for _ in range(steps):
            loss = self.step(self.images, self.labels)
        loss.numpy()  # waits for the last step
        return time.perf_counter() - wall, time.process_time() - cpu


class InferCase:
    """One model's inference: a tf.function of model(x, training=False),
    each batch timed on its own (the result read back waits for it)."""

    def __init__(self, tf, model_name, precision, batch, args):
        size = peer_json.SUITE_MODELS[model_name][0]
        tf.keras.mixed_precision.set_global_policy(
            "mixed_bfloat16" if precision == "bf16" else "float32")
        tf.keras.backend.clear_session()
        model = build(tf, model_name, size)
        tf.random.set_seed(1)
        self.images = tf.random.normal([batch, size, size, 3])

        @tf.function(jit_compile=bool(args.xla))
        def forward(x):
            return model(x, training=False)

        self.forward = forward

    def timed(self, iterations):
        seconds, cpu = [], time.process_time()
        for _ in range(iterations):
            t = time.perf_counter()
            self.forward(self.images).numpy()
            seconds.append(time.perf_counter() - t)
        return seconds, time.process_time() - cpu


def make_runner(tf, args):
    flags = peer_json.cpu_flags()

    def run_case(model_name, precision, batch):
        if precision not in ("fp32", "bf16"):
            raise Unsupported(f"{precision} on the CPU (TensorFlow runs fp32 or mixed_bfloat16)")
        if precision == "bf16" and not ("avx512_bf16" in flags or "amx_bf16" in flags):
            raise Unsupported("bf16 needs avx512_bf16 or amx_bf16, which this CPU lacks")
        if model_name not in KERAS:
            raise Unsupported(f"tf.keras.applications has no {model_name}")
        infer = args.mode == "infer"
        case = (InferCase if infer else Case)(tf, model_name, precision, batch, args)
        warmup = args.infer_warmup if infer else args.warmup_steps
        if warmup:
            case.timed(warmup)
        seconds, cpu_seconds = [], []
        for _ in range(args.repetitions):
            w, c = case.timed(args.infer_iterations if infer else args.steps)
            seconds.append(w)
            cpu_seconds.append(c)
        return seconds, cpu_seconds, f"tensorflow NHWC batch {batch}"

    return run_case


def settings(args, models):
    onednn = os.environ.get("TF_ENABLE_ONEDNN_OPTS", "default (on for x86)")
    parts = [
        f"XLA {'on' if args.xla else 'off'}",
        "NHWC",
        f"intra_op_parallelism_threads {args.threads}",
        f"inter_op_parallelism_threads {args.inter_op_threads}",
        f"TF_ENABLE_ONEDNN_OPTS {onednn}",
        "mixed_bfloat16 for bf16",
        ("inference: tf.function of model(x, training=False), each batch timed on its own"
         if args.mode == "infer" else "training steps"),
        "SGD momentum 0.9 lr 0.1*batch/256",
        peer_json.malloc_settings(),
    ]
    notes = [KERAS[m][1] for m in models if m in KERAS and KERAS[m][1]]
    parts += sorted(set(notes), key=notes.index)
    return ", ".join(parts)


def main():
    parser = argparse.ArgumentParser(prog="tensorflow_train.py",
                                     description=__doc__.splitlines()[0])
    peer_json.add_suite_flags(parser)
    parser.add_argument("--xla", action="store_true", help="jit_compile the step with XLA")
    parser.add_argument("--inter_op_threads", type=int, default=1)

    def run(args, cases):
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
        try:
            import tensorflow as tf
        except ImportError as e:
            print(f"tensorflow_train.py: TensorFlow not installed ({e}); see tools/peers/setup.sh",
                  file=sys.stderr)
            return 3
        tf.config.threading.set_intra_op_parallelism_threads(args.threads)
        tf.config.threading.set_inter_op_parallelism_threads(args.inter_op_threads)
        models = sorted({m for m, _, _ in cases})
        context = peer_json.host_context(f"tensorflow {tf.__version__}", settings(args, models),
                                         args)
        benchmarks = peer_json.run_cases(cases, args, make_runner(tf, args),
                                         infer=args.mode == "infer")
        return peer_json.write_run("tensorflow_train.py", args.benchmark_out, context, benchmarks)

    return peer_json.main_wrapper(parser, run)


if __name__ == "__main__":
    sys.exit(main())
