// Which network a model's cases measured: the zoo's definition version that
// a run records per model (context_keys.h, model_definition.<model>), and
// the name under which the report shows cases of a definition other than
// the zoo's current one, so that they never share a cell, a column or a
// comparison with the current network's.
#ifndef CNNBENCH_TOOLS_REPORT_MODEL_DEFINITION_H_
#define CNNBENCH_TOOLS_REPORT_MODEL_DEFINITION_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "tools/report/run_file.h"

namespace cnnbench::report {

// The version `file` recorded for `model`: its model_definition.<model>, or
// "1" where it has none (files written before the key existed).
std::string RecordedDefinition(const RunFile& file, absl::string_view model);

// The zoo's current version of `model` (models/zoo.h); "1" for a name the
// zoo does not know.
std::string CurrentDefinition(absl::string_view model);

// The model name the report gives `file`'s cases of `model`: the name itself
// when the file measured the zoo's current definition, else
// "<model> (definition <v>)".
std::string ReportedModel(const RunFile& file, absl::string_view model);

// "old.json: its mobilenet cases measured definition 1 of the network, the
// zoo's is 2: reported as 'mobilenet (definition 1)'", once per file and model.
std::vector<std::string> DefinitionWarnings(const std::vector<RunFile>& files);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_MODEL_DEFINITION_H_
