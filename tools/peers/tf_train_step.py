#!/usr/bin/env python3
"""Times TensorFlow (Keras) training steps of an ImageNet model on synthetic
data: the peer that cnnbench's train cases are compared with on the same
machine (docs/results/). Not part of the suite or its build; it needs
`pip install tensorflow-cpu` (PyPI), which the suite itself never uses.

    python3 tools/peers/tf_train_step.py --model=resnet50 --batch=32

Prints one JSON line: model, batch, steps, step_ms (mean), images_per_second.
Superseded by tensorflow_train.py (the suite's flags, case names and JSON,
read by //tools:report; docs/peers.md); kept for the command recorded in
docs/results/2026-11-29-resnet50-vs-tensorflow.md.
"""
import argparse
import json
import time


def build(name, classes):
    import tensorflow as tf

    apps = {
        "resnet50": tf.keras.applications.ResNet50,  # v1: stride in the first 1x1
        "vgg16": tf.keras.applications.VGG16,
        "inception3": tf.keras.applications.InceptionV3,
        "mobilenet": tf.keras.applications.MobileNetV2,  # the suite's and tf_cnn_benchmarks'
        "mobilenet_v1": tf.keras.applications.MobileNet,
    }
    sizes = {"inception3": 299}
    if name not in apps:
        raise SystemExit(f"tf_train_step: unknown model '{name}' (known: {', '.join(apps)})")
    size = sizes.get(name, 224)
    model = apps[name](weights=None, classes=classes, input_shape=(size, size, 3),
                       classifier_activation=None)
    return model, size


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet50")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--warmup_steps", type=int, default=3)
    parser.add_argument("--classes", type=int, default=1001)
    args = parser.parse_args()

    import tensorflow as tf

    model, size = build(args.model, args.classes)
    # Same recipe as cnnbench's train cases: SGD with momentum 0.9, learning
    # rate 0.1 scaled by batch / 256, softmax cross-entropy on integer labels.
    optimizer = tf.keras.optimizers.SGD(learning_rate=0.1 * args.batch / 256, momentum=0.9)
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    images = tf.random.normal([args.batch, size, size, 3], seed=1)
    labels = tf.random.uniform([args.batch], maxval=args.classes, dtype=tf.int32, seed=2)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    for _ in range(args.warmup_steps):
        step(images, labels).numpy()
    times = []
    for _ in range(args.steps):
        start = time.perf_counter()
        step(images, labels).numpy()  # .numpy() waits for the step to finish
        times.append(time.perf_counter() - start)
    mean = sum(times) / len(times)
    print(json.dumps({
        "peer": f"tensorflow {tf.__version__}",
        "model": args.model,
        "batch": args.batch,
        "steps": args.steps,
        "step_ms": round(mean * 1e3, 1),
        "images_per_second": round(args.batch / mean, 3),
        "parameters": int(sum(v.shape.num_elements() for v in model.trainable_variables)),
    }))


if __name__ == "__main__":
    main()
