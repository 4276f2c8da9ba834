#include "tools/report/model_names.h"

#include <tuple>

#include "bench/suite/names.h"

namespace cnnbench::report {
namespace {

// Position in bench's table of display names (its order is the tables'
// column order); the table's size for unknown names.
size_t Rank(absl::string_view model) {
  const std::vector<bench::ModelDisplay>& models = bench::ModelDisplayNames();
  for (size_t i = 0; i < models.size(); ++i) {
    if (models[i].model == model) return i;
  }
  return models.size();
}

// The place in tables: a model's cases of an older definition ("mobilenet
// (definition 1)", model_definition.h) beside the model's own.
size_t SortRank(absl::string_view model) {
  const size_t definition = model.find(" (definition ");
  return Rank(definition == absl::string_view::npos ? model : model.substr(0, definition));
}

}  // namespace

std::string ModelDisplayName(absl::string_view model) {
  const size_t rank = Rank(model);
  const std::vector<bench::ModelDisplay>& models = bench::ModelDisplayNames();
  return rank < models.size() ? models[rank].display : std::string(model);
}

bool IsKnownModel(absl::string_view model) {
  return Rank(model) < bench::ModelDisplayNames().size();
}

bool ModelBefore(absl::string_view a, absl::string_view b) {
  return std::make_tuple(SortRank(a), a) < std::make_tuple(SortRank(b), b);
}

}  // namespace cnnbench::report
