// convergence: trains a zoo model on a learnable data set and evaluates it
// on the validation split (tools/convergence/convergence.h); the exit status
// is 0 when the final top-1 reaches --min_top1, 1 below it, 2 on an error
// (a --json that cannot be written: before training when its folder cannot
// take it, else after it, and then without a verdict).
//   ./bazelw run //tools:convergence -- --backend=onednn --model=lenet --steps=120
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "core/compile_log.h"
#include "core/crash_handler.h"
#include "core/invocation.h"
#include "core/status.h"
#include "tools/convergence/convergence.h"
#include "tools/report/output_file.h"

ABSL_FLAG(std::string, model, "lenet", "zoo model to train");
ABSL_FLAG(std::string, backend, "onednn", "reference or onednn (the CPU), cuda (GPU 0)");
ABSL_FLAG(std::string, precision, "fp32", "fp32, tf32, fp16 or bf16");
ABSL_FLAG(int, batch, 16, "batch size");
ABSL_FLAG(int, image_size, 16, "image size (0: the model's own)");
ABSL_FLAG(int, steps, 120, "training steps");
ABSL_FLAG(int, eval_every, 40, "steps between evaluations (and after the last; 0: only then)");
ABSL_FLAG(double, learning_rate, 0.02, "SGD learning rate");
ABSL_FLAG(double, momentum, 0.9, "SGD momentum");
ABSL_FLAG(int, seed, 1, "weights, data order and the generated data set");
ABSL_FLAG(std::string, data_dir, "",
          "a data set (TFRecords or a folder per class, with a validation split); empty: one "
          "generated for the run");
ABSL_FLAG(int, images, 512,
          "generated data set: training images (and a quarter as many to validate)");
ABSL_FLAG(int, classes, 10, "generated data set: classes");
ABSL_FLAG(double, min_top1, 0.5, "the final validation top-1 the check needs");
ABSL_FLAG(std::string, json, "", "also write the curve here as JSON");

namespace {

// An error as the user reads it: without the source locations it passed
// through, which CNNBENCH_VERBOSE=1 (every program's verbose switch, also
// the compile log's) keeps.
std::string Message(const absl::Status& status) {
  return cnnbench::CompileLogEnabled() ? std::string(status.message())
                                       : cnnbench::WithoutSourceLocations(status.message());
}

}  // namespace

int main(int argc, char** argv) {
  cnnbench::InstallCrashHandler(argv[0]);
  cnnbench::ChangeToInvocationDirectory();
  absl::SetProgramUsageMessage(
      "convergence [--backend=onednn] [--model=lenet] [--steps=120] [--min_top1=0.5] "
      "[--json=curve.json]: trains a zoo model and checks its validation top-1");
  // --help lists this tool's flags, which live in tools/convergence/main.cc
  // (Abseil's default looks for a file named after the program).
  absl::FlagsUsageConfig usage;
  usage.contains_help_flags = [](absl::string_view file) {
    return absl::StrContains(file, "tools/convergence/");
  };
  absl::SetFlagsUsageConfig(usage);
  absl::ParseCommandLine(argc, argv);
  cnnbench::convergence::Options o;
  o.model = absl::GetFlag(FLAGS_model);
  o.backend = absl::GetFlag(FLAGS_backend);
  auto precision = cnnbench::ParsePrecision(absl::GetFlag(FLAGS_precision));
  if (!precision.ok()) {
    std::fprintf(stderr, "convergence: --precision: %s\n",
                 Message(precision.status()).c_str());
    return 2;
  }
  o.precision = *precision;
  o.batch = absl::GetFlag(FLAGS_batch);
  o.image_size = absl::GetFlag(FLAGS_image_size);
  o.steps = absl::GetFlag(FLAGS_steps);
  o.eval_every = absl::GetFlag(FLAGS_eval_every);
  o.learning_rate = absl::GetFlag(FLAGS_learning_rate);
  o.momentum = absl::GetFlag(FLAGS_momentum);
  o.seed = static_cast<uint64_t>(absl::GetFlag(FLAGS_seed));
  o.data_dir = absl::GetFlag(FLAGS_data_dir);
  o.images = absl::GetFlag(FLAGS_images);
  o.classes = absl::GetFlag(FLAGS_classes);
  o.min_top1 = absl::GetFlag(FLAGS_min_top1);
  const std::string json = absl::GetFlag(FLAGS_json);
  // Before the training, as the suite checks --benchmark_out: a folder that
  // does not exist must not cost the run.
  if (!json.empty()) {
    if (const absl::Status usable = cnnbench::convergence::CheckOutputPath(json); !usable.ok()) {
      std::fprintf(stderr, "convergence: --json: %s\n", Message(usable).c_str());
      return 2;
    }
  }
  auto result = cnnbench::convergence::Run(o, stdout);
  if (!result.ok()) {
    std::fprintf(stderr, "convergence: %s\n", Message(result.status()).c_str());
    return 2;
  }
  if (!json.empty()) {
    // Checked through the close: a full disk or /dev/full is an error with
    // the system's reason, not a PASS with the curve lost.
    const absl::Status written =
        cnnbench::report::WriteOutputFile(json, cnnbench::convergence::ToJson(o, *result));
    if (!written.ok()) {
      std::fprintf(stderr, "convergence: --json: %s\n", Message(written).c_str());
      return 2;
    }
  }
  // Only now: a curve that was not written has no PASS.
  std::printf("%s\n", cnnbench::convergence::Verdict(o, *result).c_str());
  return result->passed ? 0 : 1;
}
