#include "tools/convergence/convergence.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <memory>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/device.h"
#include "core/json_string.h"
#include "core/status.h"
#include "input/pipeline/dataset_maker.h"
#include "input/pipeline/pipeline.h"
#include "input/pipeline/sources.h"
#include "kernels/backends.h"
#include "models/zoo.h"
#include "train/inference.h"
#include "train/trainer.h"

namespace cnnbench::convergence {
namespace {

// A folder made for the run and removed with it.
class TempFolder {
 public:
  static absl::StatusOr<TempFolder> Create() {
    const char* base = std::getenv("TEST_TMPDIR");
    std::string pattern = absl::StrCat(base != nullptr ? base : "/tmp", "/cnnbench-conv-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr)
      return absl::InternalError(absl::StrCat("cannot create a folder like ", pattern));
    TempFolder f;
    f.path_ = pattern;
    return f;
  }
  TempFolder() = default;
  TempFolder(TempFolder&& o) noexcept : path_(std::move(o.path_)) { o.path_.clear(); }
  TempFolder& operator=(TempFolder&& o) noexcept {
    std::swap(path_, o.path_);
    return *this;
  }
  ~TempFolder() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

absl::StatusOr<std::unique_ptr<input::InputPipeline>> Pipeline(const Options& o,
                                                               const std::string& dir,
                                                               const Graph& graph, bool training) {
  ASSIGN_OR_RETURN(std::vector<input::DataFormat> formats,
                   input::DetectDataFormats(dir, training ? "train" : "validation"));
  input::PipelineOptions p;
  p.format = formats.front();
  p.data_dir = dir;
  p.subset = training ? "train" : "validation";
  p.training = training;
  p.batch = graph.batch;
  const Shape& images = graph.nodes[graph.images].output;
  p.height = static_cast<int>(images[2]);
  p.width = static_cast<int>(images[3]);
  p.classes = static_cast<int>(graph.classes);
  p.layout = Layout::kNCHW;
  p.seed = o.seed;
  p.epochs = training ? 0 : 1;
  return input::InputPipeline::Create(p);
}

// Softmax cross-entropy of each labelled row, summed.
double SumCrossEntropy(const std::vector<float>& logits, const int32_t* labels, int64_t rows,
                       int64_t classes) {
  double sum = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const float* row = logits.data() + r * classes;
    double most = row[0];
    for (int64_t c = 1; c < classes; ++c) most = std::max(most, static_cast<double>(row[c]));
    double z = 0;
    for (int64_t c = 0; c < classes; ++c) z += std::exp(row[c] - most);
    sum += std::log(z) + most - row[labels[r]];
  }
  return sum;
}

// One pass over the validation split with the trainer's weights.
absl::Status Evaluate(const Options& o, const std::string& dir, const Graph& graph,
                      const Trainer& trainer, Inferencer& inferencer, Point& point) {
  RETURN_IF_ERROR(inferencer.CopyWeightsFrom(trainer));
  ASSIGN_OR_RETURN(std::unique_ptr<input::InputPipeline> pipeline,
                   Pipeline(o, dir, graph, /*training=*/false));
  int64_t seen = 0, top1 = 0, top5 = 0;
  double loss = 0;
  const int64_t classes = graph.classes;
  while (true) {
    absl::StatusOr<const input::Batch*> batch = pipeline->Next();
    if (absl::IsOutOfRange(batch.status())) break;
    RETURN_IF_ERROR(batch.status());
    RETURN_IF_ERROR(inferencer.SetBatch((*batch)->images));
    RETURN_IF_ERROR(inferencer.Run());
    ASSIGN_OR_RETURN(std::vector<float> logits, inferencer.Logits());
    const int64_t rows = (*batch)->size;
    logits.resize(rows * classes);
    const std::vector<int32_t> labels((*batch)->labels, (*batch)->labels + rows);
    ASSIGN_OR_RETURN(const int64_t t1, CountInTopK(logits, labels, classes, 1));
    ASSIGN_OR_RETURN(const int64_t t5, CountInTopK(logits, labels, classes, 5));
    top1 += t1;
    top5 += t5;
    loss += SumCrossEntropy(logits, labels.data(), rows, classes);
    seen += rows;
  }
  if (seen == 0) return absl::FailedPreconditionError("the validation split holds no image");
  point.validation_images = seen;
  point.validation_top1 = static_cast<double>(top1) / seen;
  point.validation_top5 = static_cast<double>(top5) / seen;
  point.validation_loss = loss / seen;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Result> Run(const Options& o, std::FILE* out) {
  if (o.steps < 1 || o.batch < 1 || o.eval_every < 0 || o.classes < 2 || o.images < 4)
    return absl::InvalidArgumentError(absl::StrCat(
        "steps (", o.steps, "), batch (", o.batch, "), images (", o.images, ") and classes (",
        o.classes, ") must be positive (classes >= 2), eval_every >= 0"));
  if (!(o.min_top1 >= 0 && o.min_top1 <= 1))
    return absl::InvalidArgumentError(
        absl::StrCat("--min_top1=", o.min_top1, ": a top-1 between 0 and 1"));
  if (!(o.learning_rate > 0) || !std::isfinite(o.learning_rate) || !(o.momentum >= 0) ||
      !(o.momentum < 1))
    return absl::InvalidArgumentError(absl::StrCat("--learning_rate=", o.learning_rate,
                                                   " (> 0) and --momentum=", o.momentum,
                                                   " (in [0, 1))"));
  TempFolder generated;
  std::string dir = o.data_dir;
  if (dir.empty()) {
    ASSIGN_OR_RETURN(generated, TempFolder::Create());
    input::DatasetSpec spec;
    spec.out = generated.path() + "/data";
    spec.images = o.images;
    spec.classes = o.classes;
    spec.seed = o.seed;
    spec.min_side = 40;  // small JPEGs: the run is the model's, not the decoder's
    spec.max_side = 72;
    spec.grayscale_every = 0;  // a grayscale image has no class colour to learn
    RETURN_IF_ERROR(input::MakeDataset(spec));
    dir = spec.out;
  }
  ModelOptions mo;
  mo.batch = o.batch;
  mo.image_size = o.image_size;
  ASSIGN_OR_RETURN(const Graph graph, BuildModel(o.model, mo));
  const Device device = o.backend == "cuda" ? Device::Cuda(0) : Device::Cpu();
  ASSIGN_OR_RETURN(std::unique_ptr<Backend> backend, CreateBackend(o.backend, device));
  TrainOptions to;
  to.precision = o.precision;
  to.seed = o.seed;
  to.learning_rate = o.learning_rate;
  to.momentum = o.momentum;
  ASSIGN_OR_RETURN(std::unique_ptr<Trainer> trainer, Trainer::Compile(graph, backend.get(), to));
  if (o.zero_gradients_for_testing) {
    Backend* b = backend.get();
    Trainer* t = trainer.get();
    trainer->SetGradientReadyHook([b, t](const GradientRange& range) {
      return b->Fill(static_cast<char*>(t->gradients()) + range.offset, 0, range.bytes);
    });
  }
  InferOptions io;
  io.precision = o.precision;
  io.seed = o.seed;
  ASSIGN_OR_RETURN(std::unique_ptr<Inferencer> inferencer,
                   Inferencer::Compile(graph, backend.get(), io));
  ASSIGN_OR_RETURN(std::unique_ptr<input::InputPipeline> train,
                   Pipeline(o, dir, graph, /*training=*/true));

  Result result;
  result.chance = 1.0 / o.classes;
  if (out != nullptr) {
    // A model whose head keeps its own width (1000 outputs) still meets
    // only the data's classes: chance is theirs, and the header says both.
    const std::string head =
        graph.classes != o.classes
            ? absl::StrCat("; the model's head has ", graph.classes, " outputs")
            : std::string();
    std::fprintf(out,
                 "convergence: %s on %s (%s), batch %lld, %lld px, %d steps, lr %g, momentum "
                 "%g, seed %llu, data %s (%d classes: chance top-1 %.3f%s)\n",
                 o.model.c_str(), o.backend.c_str(),
                 std::string(PrecisionName(o.precision)).c_str(), static_cast<long long>(o.batch),
                 static_cast<long long>(graph.nodes[graph.images].output[2]), o.steps,
                 o.learning_rate, o.momentum, static_cast<unsigned long long>(o.seed),
                 o.data_dir.empty() ? "generated" : o.data_dir.c_str(), o.classes, result.chance,
                 head.c_str());
    std::fprintf(out, "%6s %11s %10s %10s %9s %9s\n", "step", "train_loss", "train_top1",
                 "val_loss", "val_top1", "val_top5");
  }
  const int64_t classes = graph.classes;
  for (int step = 1; step <= o.steps; ++step) {
    ASSIGN_OR_RETURN(const input::Batch* batch, train->Next());
    RETURN_IF_ERROR(trainer->SetBatch(batch->images, batch->labels));
    const std::vector<int32_t> labels(batch->labels, batch->labels + batch->size);
    RETURN_IF_ERROR(trainer->Step());
    const bool evaluate = step == o.steps || (o.eval_every > 0 && step % o.eval_every == 0);
    if (!evaluate) continue;
    ASSIGN_OR_RETURN(const float loss, trainer->LastLoss());
    if (!std::isfinite(loss)) {
      // Not an error of the tool: the model did not learn (too high a rate).
      result.diverged = absl::StrCat("the training loss is ", loss, " at step ", step);
      break;
    }
    Point point;
    point.step = step;
    point.train_loss = loss;
    ASSIGN_OR_RETURN(std::vector<float> logits, trainer->LastLogits());
    logits.resize(labels.size() * classes);
    ASSIGN_OR_RETURN(const int64_t top1, CountInTopK(logits, labels, classes, 1));
    point.train_top1 = static_cast<double>(top1) / labels.size();
    RETURN_IF_ERROR(Evaluate(o, dir, graph, *trainer, *inferencer, point));
    if (out != nullptr) {
      std::fprintf(out, "%6d %11.4f %10.3f %10.4f %9.3f %9.3f\n", point.step, point.train_loss,
                   point.train_top1, point.validation_loss, point.validation_top1,
                   point.validation_top5);
      std::fflush(out);
    }
    result.curve.push_back(point);
  }
  result.passed = result.diverged.empty() && result.curve.back().validation_top1 >= o.min_top1;
  return result;
}

std::string Verdict(const Options& o, const Result& r) {
  if (!r.diverged.empty())
    return absl::StrFormat("%s: FAIL (did not learn; threshold %.3f)", r.diverged, o.min_top1);
  if (r.curve.empty()) return absl::StrFormat("no evaluation: FAIL (threshold %.3f)", o.min_top1);
  const Point& last = r.curve.back();
  return absl::StrFormat("final validation top-1 %.3f over %d images: %s (threshold %.3f)",
                         last.validation_top1, last.validation_images, r.passed ? "PASS" : "FAIL",
                         o.min_top1);
}

absl::Status CheckOutputPath(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("no path");
  std::string target = path;
  struct stat st;
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      return absl::InvalidArgumentError(absl::StrCat(path, " is a folder, not a file"));
    if (!S_ISREG(st.st_mode)) {  // a device or a pipe: written directly, so opened now
      const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0 && errno != ENXIO)  // ENXIO: a pipe with no reader yet, which one may open
        return absl::PermissionDeniedError(
            absl::StrCat("cannot write ", path, ": ", std::strerror(errno)));
      if (fd >= 0) ::close(fd);
      return absl::OkStatus();
    }
    // A link to a file: the file it names is replaced, in that file's folder.
    if (char* resolved = ::realpath(path.c_str(), nullptr)) {
      target = resolved;
      std::free(resolved);
    }
  }
  const size_t slash = target.rfind('/');
  const std::string folder = slash == std::string::npos ? "."
                             : slash == 0               ? "/"
                                                        : target.substr(0, slash);
  std::string probe = absl::StrCat(folder, "/.convergence-XXXXXX");
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT || error == ENOTDIR)
      return absl::NotFoundError(absl::StrCat("cannot write ", path, ": the folder ", folder,
                                              error == ENOENT ? " does not exist"
                                                              : " is not a folder"));
    return absl::PermissionDeniedError(
        absl::StrCat("cannot write ", path, ": ", std::strerror(error)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return absl::OkStatus();
}

std::string ToJson(const Options& o, const Result& r) {
  std::vector<std::string> points;
  for (const Point& p : r.curve)
    points.push_back(absl::StrFormat(
        "{\"step\": %d, \"train_loss\": %.6g, \"train_top1\": %.6g, \"validation_loss\": %.6g, "
        "\"validation_top1\": %.6g, \"validation_top5\": %.6g, \"validation_images\": %d}",
        p.step, p.train_loss, p.train_top1, p.validation_loss, p.validation_top1, p.validation_top5,
        p.validation_images));
  return absl::StrFormat(
      "{\"model\": \"%s\", \"backend\": \"%s\", \"precision\": \"%s\", \"batch\": %d, "
      "\"steps\": %d, \"seed\": %d, \"chance\": %.6g, \"min_top1\": %.6g, \"passed\": %s, "
      "%s\"points\": [%s]}\n",
      o.model, o.backend, PrecisionName(o.precision), o.batch, o.steps, o.seed, r.chance,
      o.min_top1, r.passed ? "true" : "false",
      r.diverged.empty() ? "" : absl::StrCat("\"diverged\": ", JsonString(r.diverged), ", "),
      absl::StrJoin(points, ", "));
}

}  // namespace cnnbench::convergence
