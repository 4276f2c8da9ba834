"""tools/peers/peer_json.py without PyTorch or TensorFlow: case names, the
platform name rule, flag checks, Google Benchmark entries and aggregates, the
JSON writer; then files it writes for two peers, beside a suite run of the
same platform, go through //tools:report, which must set them side by side.
Run by peer_json_test.sh (REPORT = the report binary, TOOLS = tools/,
MODEL_SUMMARY = the model_summary binary)."""
import argparse
import io
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.join(os.environ["TOOLS"], "peers"))
import engine_common  # noqa: E402
import peer_json  # noqa: E402


def parse(*argv):
    parser = argparse.ArgumentParser()
    peer_json.add_suite_flags(parser)
    args = parser.parse_args(list(argv))
    return args, peer_json.parse_suite_flags(args)


class CaseNameTest(unittest.TestCase):
    def test_the_suites_train_case_name(self):
        # As //bench:all writes it (the suite sets iterations and repetitions).
        self.assertEqual(peer_json.case_name("resnet50_v1.5", "bf16", 32, 100, 5),
                         "train/resnet50_v1.5/bf16/synthetic/batch:32/gpus:0/iterations:100"
                         "/repeats:5/manual_time")

    def test_learning_rate_scales_with_the_batch(self):
        self.assertEqual(peer_json.learning_rate(256), 0.1)
        self.assertEqual(peer_json.learning_rate(32), 0.0125)

    def test_platform_name_follows_the_suites_rule(self):
        self.assertEqual(peer_json.default_platform("Intel(R) Xeon(R) Processor", 2),
                         "cpu-Intel-Xeon-2c")
        self.assertEqual(peer_json.default_platform("AMD EPYC 7B13 64-Core Processor", 16),
                         "cpu-AMD-EPYC-7B13-64-Core-16c")
        self.assertEqual(peer_json.default_platform("Intel(R) Core(TM) i9-9900K CPU @ 3.60GHz", 8),
                         "cpu-Intel-Core-i9-9900K-@-3.60GHz-8c")

    def test_cpu_model_and_isa_from_cpuinfo(self):
        with tempfile.NamedTemporaryFile("w", suffix="cpuinfo", delete=False) as f:
            f.write("processor\t: 0\nmodel name\t: AMD EPYC 9B14\nflags\t\t: fpu avx2 fma avx "
                    "avx512_bf16 sse4_2\n")
        try:
            self.assertEqual(peer_json.read_cpu_model(f.name), "AMD EPYC 9B14")
            self.assertEqual(peer_json.cpu_isa(peer_json.cpu_flags(f.name)),
                             "sse4_2 avx avx2 fma avx512_bf16")
        finally:
            os.unlink(f.name)
        self.assertEqual(peer_json.read_cpu_model("/nonexistent/cpuinfo"), "unknown")

    def test_os_from_os_release_as_the_suite(self):
        with tempfile.NamedTemporaryFile("w", suffix="os-release", delete=False) as f:
            f.write('NAME="Debian GNU/Linux"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n')
        try:
            self.assertEqual(peer_json.os_name(f.name), "Debian GNU/Linux 12 (bookworm)")
        finally:
            os.unlink(f.name)


class FlagsTest(unittest.TestCase):
    def test_cases_in_the_suites_order_with_model_default_batches(self):
        args, cases = parse("--models=resnet50,alexnet", "--precisions=fp32,bf16",
                            "--benchmark_out=x.json", "--steps=2", "--warmup_steps=0",
                            "--repetitions=3")
        self.assertEqual(cases, [("resnet50", "fp32", 64), ("resnet50", "bf16", 64),
                                 ("alexnet", "fp32", 512), ("alexnet", "bf16", 512)])
        self.assertEqual((args.steps, args.warmup_steps, args.repetitions), (2, 0, 3))
        _, cases = parse("--models=vgg16", "--batch_sizes=2,4", "--benchmark_out=x.json")
        self.assertEqual(cases, [("vgg16", "fp32", 2), ("vgg16", "fp32", 4)])

    def test_another_name_runs_the_model_under_its_own(self):
        # mobilenet_v2 is the zoo's other name of mobilenet (MobileNetV2):
        # the cases use the model's own name; one model under both names is
        # refused, as //bench:all refuses it.
        args, cases = parse("--models=mobilenet_v2,mobilenet_v1", "--batch_sizes=1",
                            "--benchmark_out=x.json")
        self.assertEqual(cases, [("mobilenet", "fp32", 1), ("mobilenet_v1", "fp32", 1)])
        with self.assertRaises(peer_json.UsageError) as e:
            parse("--models=mobilenet_v3", "--benchmark_out=x.json")
        self.assertIn("other names: mobilenet_v2 (mobilenet)", str(e.exception))
        with self.assertRaises(peer_json.UsageError) as e:
            parse("--models=mobilenet_v2,mobilenet", "--benchmark_out=x.json")
        self.assertIn("'mobilenet_v2' and 'mobilenet' are the same model (mobilenet)",
                      str(e.exception))

    def test_the_context_records_each_models_definition(self):
        # As //bench:all: model_definition.<model> per model of the run,
        # mobilenet's 2 (MobileNetV2; 1 was MobileNet v1), the others' 1.
        args, _ = parse("--models=mobilenet_v2,resnet50", "--benchmark_out=x.json")
        c = peer_json.host_context("pytorch 2.15.0", "", args)
        self.assertEqual(c["model_definition.mobilenet"], "2")
        self.assertEqual(c["model_definition.resnet50"], "1")
        self.assertEqual([k for k in c if k.startswith("model_definition.")],
                         ["model_definition.mobilenet", "model_definition.resnet50"])

    def test_bad_values_name_the_flag(self):
        for argv, needle in [
            (["--models=resnet5"], "--models: unknown model 'resnet5'"),
            (["--precisions=fp8"], "--precisions: unknown precision 'fp8'"),
            (["--batch_sizes=32,0"], "--batch_sizes: '0' is not a positive integer"),
            (["--batch_sizes=32,"], "--batch_sizes: '' is not a positive integer"),
            (["--steps=0"], "--steps: '0' is not a positive integer"),
            (["--steps=1,2"], "--steps: one positive integer expected"),
            (["--repetitions=x"], "--repetitions: 'x'"),
            (["--warmup_steps=-1"], "--warmup_steps: '-1'"),
            (["--threads=two"], "--threads: 'two'"),
        ]:
            with self.assertRaises(peer_json.UsageError, msg=argv) as e:
                parse(*argv, "--benchmark_out=x.json")
            self.assertIn(needle, str(e.exception))
        with self.assertRaises(peer_json.UsageError) as e:
            parse()
        self.assertIn("--benchmark_out: a JSON file to write is required", str(e.exception))


class EntriesTest(unittest.TestCase):
    def test_one_repetition_is_one_iteration_entry_without_aggregates(self):
        name = peer_json.case_name("resnet50", "fp32", 4, 2, 1)
        entries = peer_json.case_entries(name, 4, 2, [1.0], [1.5], "label")
        self.assertEqual(len(entries), 1)
        e = entries[0]
        self.assertEqual((e["run_type"], e["repetitions"], e["repetition_index"]),
                         ("iteration", 1, 0))
        self.assertEqual((e["iterations"], e["time_unit"]), (2, "ms"))
        self.assertAlmostEqual(e["real_time"], 500.0)  # ms per step
        self.assertAlmostEqual(e["cpu_time"], 750.0)
        self.assertAlmostEqual(e["images_per_second"], 8.0)
        self.assertEqual((e["ranks"], e["label"], e["run_name"]), (1.0, "label", name))

    def test_aggregates_as_google_benchmark_writes_them(self):
        name = peer_json.case_name("resnet50", "fp32", 10, 1, 3)
        entries = peer_json.case_entries(name, 10, 1, [1.0, 2.0, 4.0], [1.0, 1.0, 1.0])
        self.assertEqual([e["name"] for e in entries],
                         [name] * 3 + [name + s for s in ("_mean", "_median", "_stddev", "_cv")])
        self.assertEqual([e.get("repetition_index") for e in entries[:3]], [0, 1, 2])
        agg = {e["aggregate_name"]: e for e in entries[3:]}
        self.assertTrue(all(e["run_name"] == name and e["run_type"] == "aggregate"
                            for e in agg.values()))
        self.assertAlmostEqual(agg["mean"]["real_time"], 7000.0 / 3)
        self.assertAlmostEqual(agg["median"]["real_time"], 2000.0)
        sd = math.sqrt(((1000 - 7000 / 3) ** 2 + (2000 - 7000 / 3) ** 2 + (4000 - 7000 / 3) ** 2) / 2)
        self.assertAlmostEqual(agg["stddev"]["real_time"], sd)
        self.assertAlmostEqual(agg["cv"]["real_time"], sd / (7000 / 3))
        self.assertEqual(agg["cv"]["aggregate_unit"], "percentage")
        self.assertEqual(agg["mean"]["aggregate_unit"], "time")
        # Counters aggregate their own values: the mean of 10, 5 and 2.5 images/s.
        self.assertAlmostEqual(agg["mean"]["images_per_second"], 17.5 / 3)
        self.assertAlmostEqual(agg["median"]["images_per_second"], 5.0)

    def test_bad_times_are_refused(self):
        with self.assertRaises(ValueError):
            peer_json.case_entries("n", 1, 1, [], [])
        with self.assertRaises(ValueError):
            peer_json.case_entries("n", 1, 1, [0.0], [0.0])
        with self.assertRaises(ValueError):
            peer_json.case_entries("n", 1, 1, [float("nan")], [1.0])

    def test_a_failed_case_is_kept_with_its_reason(self):
        args, cases = parse("--models=resnet50,vgg16,alexnet,googlenet", "--batch_sizes=2",
                            "--steps=3", "--repetitions=2", "--benchmark_out=x.json")

        def run_case(model, precision, batch):
            if model == "resnet50":
                raise peer_json.Unsupported("torchvision has no resnet50")
            if model == "vgg16":
                raise RuntimeError("DefaultCPUAllocator: not enough memory: you tried to allocate 1 GB\nmore")
            if model == "alexnet":
                raise ValueError("bad shape\nsecond line")
            return [1.0, 1.0], [1.0, 1.0], ""

        entries = peer_json.run_cases(cases, args, run_case, log=io.StringIO())
        errors = {e["name"].split("/")[1]: e["error_message"] for e in entries if e.get("error_occurred")}
        self.assertEqual(errors, {
            "resnet50": "unsupported: torchvision has no resnet50",
            "vgg16": "OOM: DefaultCPUAllocator: not enough memory: you tried to allocate 1 GB",
            "alexnet": "ValueError: bad shape",
        })
        self.assertEqual(len([e for e in entries if "googlenet" in e["name"]]), 6)


class InferEntriesTest(unittest.TestCase):
    def test_the_suites_infer_case_name(self):
        self.assertEqual(peer_json.infer_case_name("resnet50_v1.5", "fp32", 1, 200, 5),
                         "infer/resnet50_v1.5/fp32/synthetic/batch:1/gpus:0/iterations:200/"
                         "repeats:5/manual_time")

    def test_nearest_rank_percentiles_as_the_suite(self):
        # bench/harness/iteration_stats.h: the ceil(p/100 x n)-th smallest, no interpolation.
        ordered = list(range(1, 11))  # 1..10
        self.assertEqual(peer_json.nearest_rank(ordered, 50), 5)
        self.assertEqual(peer_json.nearest_rank(ordered, 90), 9)
        self.assertEqual(peer_json.nearest_rank(ordered, 95), 10)
        self.assertEqual(peer_json.nearest_rank(ordered, 99), 10)
        self.assertEqual(peer_json.nearest_rank([7.0], 50), 7.0)
        self.assertEqual(peer_json.nearest_rank([1, 2, 2, 3], 50), 2)  # ties

    def test_latency_counters_of_each_repetition_and_their_aggregates(self):
        reps = [[0.010, 0.020, 0.030, 0.040], [0.020, 0.020, 0.020, 0.020]]
        entries = peer_json.infer_entries("infer/x", 8, reps, [0.1, 0.1], "label")
        self.assertEqual(len(entries), 2 + 4)
        first = entries[0]
        self.assertAlmostEqual(first["latency_ms"], 25.0)
        self.assertAlmostEqual(first["real_time"], 25.0)
        self.assertAlmostEqual(first["images_per_second"], 8 / 0.025)
        self.assertAlmostEqual(first["latency_ms_p50"], 20.0)
        self.assertAlmostEqual(first["latency_ms_p99"], 40.0)
        self.assertAlmostEqual(first["latency_ms_min"], 10.0)
        self.assertEqual(first["timed_iterations"], 4.0)
        self.assertEqual(first["iterations"], 4)
        mean = [e for e in entries if e.get("aggregate_name") == "mean"][0]
        self.assertAlmostEqual(mean["latency_ms_p99"], 30.0)
        self.assertAlmostEqual(mean["latency_ms"], 22.5)
        with self.assertRaises(ValueError):
            peer_json.infer_entries("infer/x", 8, [[0.01, -1.0]], [0.1])

    def test_infer_flags_are_checked(self):
        args, _ = parse("--mode=infer", "--infer_iterations=50", "--infer_warmup=0",
                        "--benchmark_out=x.json")
        self.assertEqual((args.mode, args.infer_iterations, args.infer_warmup), ("infer", 50, 0))
        for bad in ("--infer_iterations=0", "--infer_iterations=1,2", "--infer_warmup=-1"):
            with self.assertRaises(peer_json.UsageError):
                parse(bad, "--benchmark_out=x.json")


class WriterTest(unittest.TestCase):
    def test_writes_whole_files_and_names_a_bad_path(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "run.json")
            peer_json.write_json(path, {"framework": "pytorch 2.15.0"}, [])
            with open(path) as f:
                self.assertEqual(json.load(f), {"context": {"framework": "pytorch 2.15.0"},
                                                "benchmarks": []})
            self.assertEqual(os.listdir(d), ["run.json"])  # no temporary file left
            with self.assertRaises(OSError):
                peer_json.write_json(os.path.join(d, "no", "such", "run.json"), {}, [])

    def test_a_runners_exit_status_names_the_file_it_could_not_write(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(peer_json.write_run("x.py", os.path.join(d, "run.json"), {}, []), 0)
            bad = os.path.join(d, "no", "such", "run.json")
            err = io.StringIO()
            stderr, sys.stderr = sys.stderr, err
            try:
                self.assertEqual(peer_json.write_run("x.py", bad, {}, []), 1)
            finally:
                sys.stderr = stderr
            self.assertIn(f"x.py: cannot write --benchmark_out={bad}: ", err.getvalue())

    def test_context_names_the_framework_and_the_platform(self):
        args, _ = parse("--benchmark_out=x.json", "--platform=box", "--steps=7")
        c = peer_json.host_context("tensorflow 2.21.0", "XLA off", args, argv=["t.py", "--a"])
        self.assertEqual((c["framework"], c["framework_settings"], c["platform"]),
                         ("tensorflow 2.21.0", "XLA off", "box"))
        self.assertEqual((c["steps"], c["command_line"], c["gpu_count"]), ("7", "t.py --a", "0"))
        args, _ = parse("--benchmark_out=x.json")
        c = peer_json.host_context("pytorch 2.15.0", "", args)
        self.assertEqual(c["platform"], peer_json.default_platform(peer_json.read_cpu_model(),
                                                                   peer_json.host_cpus()))
        self.assertGreaterEqual(int(c["host_cpus"]), int(c["cpu_cores"]))


def peer_file(folder, framework, settings, cases, steps=2, repetitions=3):
    """A run as a peer runner writes it, with made-up times: `cases` maps
    (model, batch) to seconds per step, or to an error message."""
    args, _ = parse("--benchmark_out=x.json", "--platform=cpu-epyc-2c", f"--steps={steps}",
                    f"--repetitions={repetitions}")
    benchmarks = []
    for (model, batch), value in cases.items():
        name = peer_json.case_name(model, "fp32", batch, steps, repetitions)
        if isinstance(value, str):
            benchmarks.append(peer_json.error_entry(name, repetitions, value))
        else:
            benchmarks += peer_json.case_entries(name, batch, steps, [value * steps] * repetitions,
                                                 [value * steps] * repetitions)
    path = os.path.join(folder, framework.split()[0] + ".json")
    peer_json.write_json(path, peer_json.host_context(framework, settings, args), benchmarks)
    return path


class ReportTest(unittest.TestCase):
    """The peers' files beside a suite run of the same platform (the report's
    own fixture cpu_box.json: resnet50 16.69, alexnet 142, googlenet 61.5
    images/s at batch 64, fp32)."""

    def test_the_report_sets_the_peers_beside_the_suite(self):
        with tempfile.TemporaryDirectory() as d:
            pytorch = peer_file(d, "pytorch 2.15.0", "channels_last, fixture", {
                ("resnet50", 64): "unsupported: torchvision has no resnet50",
                ("alexnet", 64): 64 / 151.0,
            })
            tensorflow = peer_file(d, "tensorflow 2.21.0", "XLA off, fixture", {
                ("resnet50", 64): 64 / 12.5,
                ("googlenet", 64): "unsupported: tf.keras.applications has no googlenet",
            })
            out = os.path.join(d, "report.md")
            run = subprocess.run([os.environ["REPORT"], os.environ["SUITE_JSON"], pytorch,
                                  tensorflow, f"--output={out}"],
                                 capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
            with open(out) as f:
                report = f.read()
        self.assertIn("Frameworks side by side: training synthetic data, fp32, batch size 64",
                      report)
        lines = [line for line in report.splitlines() if line.startswith("|")]
        header = next(line for line in lines if "pytorch 2.15.0 / cnnbench" in line)
        self.assertEqual([c.strip() for c in header.strip("|").split("|")],
                         ["Model", "GPUs", "cnnbench", "pytorch 2.15.0", "tensorflow 2.21.0",
                          "pytorch 2.15.0 / cnnbench", "tensorflow 2.21.0 / cnnbench"])
        start = lines.index(header)

        def row(model):
            for line in lines[start + 2:]:
                cells = [c.strip() for c in line.strip("|").split("|")]
                if cells[0] == model:
                    return cells
            self.fail(f"no {model} row after the side-by-side header in:\n{report}")

        resnet, alexnet = row("ResNet-50"), row("AlexNet")
        self.assertEqual(resnet[2], "16.7")
        self.assertTrue(resnet[3].startswith("N/A"), resnet)  # unsupported by the peer
        self.assertEqual((resnet[4], resnet[6]), ("12.5", "0.75"))
        self.assertEqual((alexnet[3], alexnet[5]), ("151", "1.06"))
        self.assertIn("torchvision has no resnet50", report)
        self.assertIn("pytorch 2.15.0 settings: channels_last, fixture", report)
        self.assertIn("cpu-epyc-2c (framework=tensorflow 2.21.0)", report)


class SuiteModelsTest(unittest.TestCase):
    """peer_json's model table is the zoo's: the same names, and each
    model's image size and default batch as //tools:model_summary prints them."""

    def summary(self, model):
        run = subprocess.run([os.environ["MODEL_SUMMARY"], f"--model={model}"],
                             capture_output=True, text=True)
        return run.returncode, run.stdout + run.stderr

    def test_the_table_names_every_zoo_model_and_no_other(self):
        code, out = self.summary("no_such_model")
        self.assertNotEqual(code, 0, out)
        known = re.search(r"known models: ([^;\n]+)", out)
        self.assertIsNotNone(known, out)
        zoo = {name.strip() for name in known.group(1).split(",")}
        self.assertIn("nasnetlarge", zoo)
        self.assertEqual(set(peer_json.SUITE_MODELS), zoo)

    def test_each_models_image_size_and_batch_are_the_zoos(self):
        for model, (size, batch) in peer_json.SUITE_MODELS.items():
            code, out = self.summary(model)
            self.assertEqual(code, 0, out)
            first = out.splitlines()[0]
            self.assertIn(f"; {size}x{size} images, batch {batch}, ", first, model)


class EngineCommonTest(unittest.TestCase):
    """engine_common.py, what the ONNX Runtime and OpenVINO runners share,
    without either engine (or PyTorch) installed."""

    def test_the_suites_protocol_on_a_callable(self):
        args, _ = parse("--mode=infer", "--infer_warmup=3", "--infer_iterations=5",
                        "--repetitions=2", "--benchmark_out=x.json")
        calls = []
        seconds, cpu = engine_common.time_batches(lambda: calls.append(1), args)
        self.assertEqual(len(calls), 3 + 2 * 5)  # warm-up, then each repetition's batches
        self.assertEqual([len(s) for s in seconds], [5, 5])
        self.assertEqual(len(cpu), 2)
        self.assertTrue(all(t >= 0 for s in seconds for t in s))

    def test_a_precision_the_engine_lacks_is_unsupported_with_its_reason(self):
        supported = {"fp32": (), "bf16": ("avx512_bf16", "amx_bf16")}
        engine_common.check_precision("fp32", "engine", supported)
        with self.assertRaisesRegex(peer_json.Unsupported, r"^fp16 on the CPU \(engine runs "
                                    r"fp32, bf16 here\)$"):
            engine_common.check_precision("fp16", "engine", supported)
        saved = peer_json.cpu_flags
        try:
            peer_json.cpu_flags = lambda cpuinfo=None: {"avx2", "avx512f"}
            with self.assertRaisesRegex(peer_json.Unsupported,
                                        "bf16 needs avx512_bf16 or amx_bf16, which this CPU lacks"):
                engine_common.check_precision("bf16", "engine", supported)
            peer_json.cpu_flags = lambda cpuinfo=None: {"avx512f", "amx_bf16"}
            engine_common.check_precision("bf16", "engine", supported)
        finally:
            peer_json.cpu_flags = saved

    def test_a_model_torchvision_lacks_is_unsupported_before_anything_is_built(self):
        # No PyTorch here: a model torchvision has passes without importing it.
        engine_common.check_model("resnet18")
        with self.assertRaisesRegex(peer_json.Unsupported, "torchvision has no resnet50 "
                                    r"\(torchvision's resnet50 is the suite's resnet50_v1.5\)"):
            engine_common.check_model("resnet50")

    def test_an_inference_run_records_its_protocol(self):
        args, _ = parse("--mode=infer", "--infer_warmup=4", "--infer_iterations=50",
                        "--repetitions=3", "--benchmark_out=x.json")
        c = peer_json.host_context("openvino 2026.4.1", "latency hint", args)
        self.assertEqual((c["infer_iterations"], c["infer_warmup"], c["infer_include_copy"]),
                         ("50", "4", "false"))
        self.assertEqual(c["methodology"], "4 warm-up batches, 50 timed batches each timed on "
                                           "its own, 3 repetition(s), mean reported")
        args, _ = parse("--benchmark_out=x.json")
        self.assertNotIn("infer_iterations", peer_json.host_context("pytorch 2.15.0", "", args))

    def test_an_engines_allocation_failure_is_oom(self):
        args, cases = parse("--mode=infer", "--models=resnet18", "--batch_sizes=1",
                            "--repetitions=1", "--benchmark_out=x.json")

        def fails(model, precision, batch):
            raise RuntimeError("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : bad allocation")

        entries = peer_json.run_cases(cases, args, fails, log=io.StringIO(), infer=True)
        self.assertEqual(len(entries), 1)
        self.assertTrue(entries[0]["error_message"].startswith("OOM: [ONNXRuntimeError]"),
                        entries[0])
        self.assertTrue(entries[0]["name"].startswith("infer/resnet18/fp32/synthetic/batch:1/"))


def engine_file(folder, framework, settings, cases, iterations=30, repetitions=3):
    """An inference run as an engine runner writes it: `cases` maps (model,
    precision, batch) to a repetition's per-batch seconds, or to an error."""
    args, _ = parse("--mode=infer", f"--infer_iterations={iterations}", "--platform=infer-box",
                    f"--repetitions={repetitions}", "--benchmark_out=x.json")
    benchmarks = []
    for (model, precision, batch), value in cases.items():
        name = peer_json.infer_case_name(model, precision, batch, iterations, repetitions)
        if isinstance(value, str):
            benchmarks.append(peer_json.error_entry(name, repetitions, value))
        else:
            benchmarks += peer_json.infer_entries(name, batch, [value] * repetitions,
                                                  [sum(value)] * repetitions, framework)
    path = os.path.join(folder, framework.split()[0] + ".json")
    peer_json.write_json(path, peer_json.host_context(framework, settings, args), benchmarks)
    return path


class InferReportTest(unittest.TestCase):
    """Engine runs beside the suite's inference fixture of platform infer-box
    (tests/tools/testdata/inference.json: ResNet-50 v1.5 fp32 at batch 1, 50
    images/s, p50 19 ms, p99 25 ms; bf16 at batch 16, 160 images/s)."""

    def test_the_report_sets_the_engines_beside_the_suite(self):
        # 30 batches: 29 at 20 ms and one at 40 ms (p50 20, p99 40, 48.4 images/s).
        ort_batches = [0.020] * 29 + [0.040]
        with tempfile.TemporaryDirectory() as d:
            ort = engine_file(d, "onnxruntime 1.32.0", "CPUExecutionProvider, fixture", {
                ("resnet50_v1.5", "fp32", 1): ort_batches,
                ("resnet50_v1.5", "bf16", 16): "unsupported: bf16 on the CPU (fixture)",
            })
            ov = engine_file(d, "openvino 2026.4.1", "latency hint, fixture", {
                ("resnet50_v1.5", "fp32", 1): [0.010] * 30,
                ("resnet50_v1.5", "bf16", 16): [0.080] * 30,
            })
            out = os.path.join(d, "report.md")
            run = subprocess.run([os.environ["REPORT"], os.environ["INFER_JSON"], ort, ov,
                                  f"--output={out}"], capture_output=True, text=True)
            self.assertEqual(run.returncode, 0, run.stderr)
            with open(out) as f:
                report = f.read()
        tables = {}
        for block in report.split("\n#### ")[1:]:
            title, _, rest = block.partition("\n")
            tables[title.strip()] = [[c.strip() for c in line.strip("|").split("|")]
                                     for line in rest.splitlines() if line.startswith("|")]
        rate = tables.get("Frameworks side by side: inference synthetic data, fp32, batch size 1")
        self.assertIsNotNone(rate, list(tables))
        self.assertEqual(rate[0], ["Model", "Device", "cnnbench", "onnxruntime 1.32.0",
                                   "openvino 2026.4.1", "onnxruntime 1.32.0 / cnnbench",
                                   "openvino 2026.4.1 / cnnbench"])
        # 30 batches in 0.62 s: 48.4 images/s, 0.97 of 50; 100 images/s, 2.00 of 50.
        self.assertEqual(rate[2], ["ResNet-50 v1.5", "CPU", "50.0", "48.4", "100", "0.97", "2.00"])
        latency = tables["Frameworks side by side: inference synthetic data, fp32, batch size 1, "
                         "latency (ms)"]
        self.assertEqual(latency[0][2:8], ["cnnbench p50", "cnnbench p99", "onnxruntime 1.32.0 p50",
                                           "onnxruntime 1.32.0 p99", "openvino 2026.4.1 p50",
                                           "openvino 2026.4.1 p99"])
        # p50 20 / 19 = 1.05; 10 / 19 = 0.53.
        self.assertEqual(latency[2], ["ResNet-50 v1.5", "CPU", "19.0", "25.0", "20.0", "40.0",
                                      "10.0", "10.0", "1.05", "0.53"])
        bf16 = tables["Frameworks side by side: inference synthetic data, bf16, batch size 16"]
        self.assertEqual(bf16[2][2], "160")
        self.assertTrue(bf16[2][3].startswith("N/A"), bf16[2])  # unsupported, with a footnote
        self.assertEqual((bf16[2][4], bf16[2][6]), ("200", "1.25"))
        self.assertIn("bf16 on the CPU (fixture)", report)
        self.assertIn("onnxruntime 1.32.0 settings: CPUExecutionProvider, fixture", report)


if __name__ == "__main__":
    unittest.main(verbosity=2)
