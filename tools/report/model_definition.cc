#include "tools/report/model_definition.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "models/zoo.h"
#include "tools/report/context_keys.h"

namespace cnnbench::report {

std::string RecordedDefinition(const RunFile& file, absl::string_view model) {
  const std::string recorded = file.Context(ModelDefinitionKey(model));
  return recorded.empty() ? "1" : recorded;
}

std::string CurrentDefinition(absl::string_view model) {
  const absl::StatusOr<ModelInfo> info = FindModel(model);
  return info.ok() ? absl::StrCat(info->definition_version) : "1";
}

std::string ReportedModel(const RunFile& file, absl::string_view model) {
  const std::string recorded = RecordedDefinition(file, model);
  if (recorded == CurrentDefinition(model)) return std::string(model);
  return absl::StrCat(model, " (definition ", recorded, ")");
}

std::vector<std::string> DefinitionWarnings(const std::vector<RunFile>& files) {
  std::vector<std::string> out;
  for (const RunFile& file : files) {
    std::set<std::string> told;
    for (const FileCase& c : file.cases) {
      const std::string& model = c.name.model;
      if (model.empty() || ReportedModel(file, model) == model || !told.insert(model).second)
        continue;
      out.push_back(absl::StrCat(file.path, ": its ", model, " cases measured definition ",
                                 RecordedDefinition(file, model), " of the network, the zoo's is ",
                                 CurrentDefinition(model), ": reported as '",
                                 ReportedModel(file, model), "', apart from the current one"));
    }
  }
  return out;
}

}  // namespace cnnbench::report
