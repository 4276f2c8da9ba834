// //bench:all and the zoo's names: a model's other name (mobilenet_v2) runs
// the model under its own name, an unknown name lists the known ones and
// the other names, and the JSON context records each run model's definition
// version (model_definition.<model>, a measurement setting).
#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "models/zoo.h"
#include "nlohmann/json.hpp"
#include "tests/testing/suite_paths.h"
#include "tools/report/context_keys.h"

namespace cnnbench::bench {
namespace {

using cnnbench::testing::BenchBinary;
using cnnbench::testing::TempPath;

int RunBench(const std::string& args, std::string* output) {
  const std::string log = TempPath("model_definition_bench.log");
  const std::string cmd = absl::StrCat(BenchBinary(), " ", args, " > ", log, " 2>&1");
  const int rc = std::system(cmd.c_str());
  std::ifstream in(log);
  output->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(ModelDefinitionTest, AnotherNameRunsTheModelUnderItsOwnName) {
  std::string output;
  for (const char* flag : {"--models", "--infer_models"}) {
    ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=infer --batch_sizes=1 ", flag,
                                    "=mobilenet_v2,lenet --list"),
                       &output),
              0)
        << output;
    EXPECT_EQ(output,
              "infer/mobilenet/fp32/synthetic/batch:1/gpus:0\n"
              "infer/lenet/fp32/synthetic/batch:1/gpus:0\n")
        << flag;
    // One model under both its names is a repeat, refused as every list
    // flag refuses one.
    EXPECT_EQ(RunBench(absl::StrCat("--preset=tiny --families=infer ", flag,
                                    "=mobilenet_v2,mobilenet --list"),
                       &output),
              2)
        << output;
    EXPECT_TRUE(absl::StrContains(
        output, absl::StrCat(flag, ": 'mobilenet_v2' and 'mobilenet' are the same model "
                                   "(mobilenet): give it once")))
        << output;
  }
  ASSERT_EQ(RunBench("--preset=tiny --families=conv --kernel_models=mobilenet_v2 --list", &output),
            0)
      << output;
  EXPECT_TRUE(absl::StrContains(output, "conv/")) << output;
  EXPECT_EQ(RunBench("--preset=tiny --models=mobilenet_v3 --list", &output), 2);
  EXPECT_TRUE(absl::StrContains(output, "--models: unknown model 'mobilenet_v3'")) << output;
  EXPECT_TRUE(absl::StrContains(output, "mobilenet_v2 (mobilenet)")) << output;
}

TEST(ModelDefinitionTest, TheContextRecordsEachRunModelsDefinition) {
  const std::string json_path = TempPath("model_definition.json");
  std::string output;
  ASSERT_EQ(RunBench(absl::StrCat("--preset=tiny --families=infer --models=mobilenet_v2,lenet "
                                  "--batch_sizes=1 --image_size=32 --infer_warmup=0 "
                                  "--infer_iterations=1 --repetitions=1 --store=none "
                                  "--benchmark_out_format=json --benchmark_out=",
                                  json_path),
                     &output),
            0)
      << output;
  std::ifstream in(json_path);
  const nlohmann::json context = nlohmann::json::parse(in).at("context");
  // The zoo's versions: mobilenet's 2 (MobileNetV2; 1 was MobileNet v1).
  EXPECT_EQ(context.value("model_definition.mobilenet", ""), "2") << context.dump();
  EXPECT_EQ(context.value("model_definition.lenet", ""),
            absl::StrCat(FindModel("lenet")->definition_version));
  int keys = 0;
  for (const auto& [key, value] : context.items()) {
    if (!absl::StartsWith(key, report::kModelDefinitionPrefix)) continue;
    ++keys;
    EXPECT_EQ(report::ClassOfKey(key), report::KeyClass::kSetting) << key;
  }
  EXPECT_EQ(keys, 2) << "one key per model the run ran, none for the others: " << context.dump();
}

}  // namespace
}  // namespace cnnbench::bench
