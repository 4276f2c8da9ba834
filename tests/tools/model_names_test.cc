// The report's display names and the model zoo name the same models: every
// zoo model has a display name (so no table shows a raw name for it), and
// every display name belongs to a zoo model (so none is stale).
#include "tools/report/model_names.h"

#include <set>
#include <string>

#include "bench/suite/names.h"
#include "gtest/gtest.h"
#include "models/zoo.h"

namespace cnnbench::report {
namespace {

TEST(ModelNamesTest, EveryZooModelHasADisplayName) {
  ASSERT_FALSE(ListModels().empty());
  for (const ModelInfo& m : ListModels()) {
    EXPECT_TRUE(IsKnownModel(m.name)) << m.name << " has no display name";
    EXPECT_NE(ModelDisplayName(m.name), m.name) << m.name;
  }
}

TEST(ModelNamesTest, EveryDisplayNameIsAZooModel) {
  std::set<std::string> zoo;
  for (const ModelInfo& m : ListModels()) zoo.insert(m.name);
  for (const bench::ModelDisplay& d : bench::ModelDisplayNames()) {
    EXPECT_TRUE(zoo.count(d.model)) << d.model << " (" << d.display << ") is not in the zoo";
    EXPECT_TRUE(FindModel(d.model).ok()) << d.model;
  }
  EXPECT_EQ(bench::ModelDisplayNames().size(), zoo.size());
}

}  // namespace
}  // namespace cnnbench::report
