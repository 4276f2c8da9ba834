// //tools:make_dataset: writes a small ImageNet-format data set of generated
// JPEGs (varied sizes, some grayscale) with labels and boxes, as TFRecord
// shards or a folder of JPEGs per class.
//   ./bazelw run //tools:make_dataset -- --out=DIR --images=N --classes=C
//       [--format=tfrecord|folder] [--shards=S] [--seed=N] [--validation_images=N]
//       [--min_side=200] [--max_side=500] [--grayscale_every=7]
// Exit codes: 0 written, 1 writing failed, 2 bad flags.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/crash_handler.h"
#include "core/invocation.h"
#include "input/pipeline/dataset_maker.h"

namespace cnnbench {
namespace {

constexpr char kUsage[] =
    "usage: make_dataset --out=DIR --images=N --classes=C [--format=tfrecord|folder]\n"
    "                    [--shards=S] [--seed=N] [--validation_images=N]\n"
    "                    [--min_side=200] [--max_side=500] [--grayscale_every=7]\n"
    "Writes N train images (and --validation_images, default N/4 rounded up) of C classes:\n"
    "  tfrecord: DIR/train-NNNNN-of-NNNNN, DIR/validation-NNNNN-of-NNNNN (tf.Example)\n"
    "  folder:   DIR/train/<class>/<file>, DIR/validation/<class>/<file>\n"
    "DIR must be new or empty. The same flags give the same bytes.\n";

int BadFlag(const std::string& message) {
  std::fprintf(stderr, "make_dataset: %s\n%s", message.c_str(), kUsage);
  return 2;
}

template <typename T>
bool ParseNumber(const std::string& text, T* out) {
  return absl::SimpleAtoi(text, out);
}

int Main(int argc, char** argv) {
  InstallCrashHandler(argv[0]);
  input::DatasetSpec spec;
  bool have_images = false, have_classes = false;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    const size_t eq = arg.find('=');
    if (!absl::StartsWith(arg, "--") || eq == std::string::npos)
      return BadFlag(absl::StrCat("'", arg, "': flags are --name=value"));
    const std::string name = arg.substr(2, eq - 2);
    const std::string value = arg.substr(eq + 1);
    bool ok = true;
    if (name == "out") {
      spec.out = value;
    } else if (name == "images") {
      ok = ParseNumber(value, &spec.images);
      have_images = true;
    } else if (name == "validation_images") {
      ok = ParseNumber(value, &spec.validation_images);
    } else if (name == "classes") {
      ok = ParseNumber(value, &spec.classes);
      have_classes = true;
    } else if (name == "shards") {
      ok = ParseNumber(value, &spec.shards);
    } else if (name == "seed") {
      ok = ParseNumber(value, &spec.seed);
    } else if (name == "min_side") {
      ok = ParseNumber(value, &spec.min_side);
    } else if (name == "max_side") {
      ok = ParseNumber(value, &spec.max_side);
    } else if (name == "grayscale_every") {
      ok = ParseNumber(value, &spec.grayscale_every);
    } else if (name == "format") {
      absl::StatusOr<input::DataFormat> format = input::ParseDataFormat(value);
      if (!format.ok())
        return BadFlag(absl::StrCat("--format=", value, ": must be tfrecord or folder"));
      spec.format = *format;
    } else {
      return BadFlag(absl::StrCat("unknown flag --", name));
    }
    if (!ok) return BadFlag(absl::StrCat("--", name, "=", value, ": not a valid number"));
  }
  if (spec.out.empty()) return BadFlag("--out is required (the folder to write)");
  if (!have_images) return BadFlag("--images is required");
  if (!have_classes) return BadFlag("--classes is required");
  if (absl::Status s = input::ValidateDatasetSpec(spec); !s.ok())
    return BadFlag(std::string(s.message()));

  ChangeToInvocationDirectory();  // a relative --out means where the command was typed
  if (absl::Status s = input::MakeDataset(spec); !s.ok()) {
    std::fprintf(stderr, "make_dataset: %s\n", std::string(s.message()).c_str());
    return absl::IsAlreadyExists(s) || absl::IsInvalidArgument(s) ? 2 : 1;
  }
  std::printf("wrote %lld train images of %d classes (%s) to %s\n",
              static_cast<long long>(spec.images), spec.classes,
              std::string(input::DataFormatName(spec.format)).c_str(), spec.out.c_str());
  return 0;
}

}  // namespace
}  // namespace cnnbench

int main(int argc, char** argv) { return cnnbench::Main(argc, argv); }
