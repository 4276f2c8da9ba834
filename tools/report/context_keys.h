// One classification of the JSON context's keys, which the report (what
// runs it merges into one cell) and the history of runs (what a machine
// and a series are, and what changed between two runs) share:
//
// - machine identity: what the machine is (CPU model, ISA, CPUs, memory,
//   GPU model, count and memory, hosts of a multi-host run);
// - measurement settings: how the suite measured (steps, batch, backend,
//   convolution algorithm, the build, the cap on oneDNN's ISA, ...);
// - environment: the software and conditions the figure was taken under
//   (driver, CUDA, cuDNN, cuBLAS, NCCL, oneDNN and MPI versions, OS,
//   kernel, the CPU governor, GPU clock and power limits).
//
// A machine is its identity keys; a series is one case on one machine under
// one set of settings, and the environment may change inside it (the
// history names such a change as the cause of a step). The report merges
// only runs that agree on all three. Every other key is the run's own
// record (when, where, the command, the commit, the load, how far it got),
// which tells runs apart but is none of the three. Every key //bench:all
// writes is in exactly one class: tests/bench/suite_test.cc holds it.
//
// One setting is per model, not per run: `model_definition.<model>`, the
// zoo's definition version of the network behind the name (models/zoo.h
// ModelInfo::definition_version), one key per model the run ran. It
// concerns that model's cases only (train, infer, grads): the report names
// the cases of another definition apart ("mobilenet (definition 1)") and
// the history keeps them in a series of their own, while the run's other
// cases merge and compare as before. A file without the key measured
// definition 1 (files written before the key existed).
#ifndef CNNBENCH_TOOLS_REPORT_CONTEXT_KEYS_H_
#define CNNBENCH_TOOLS_REPORT_CONTEXT_KEYS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace cnnbench::report {

enum class KeyClass { kMachine, kSetting, kEnvironment, kRunRecord };

const std::vector<std::string>& MachineKeys();
const std::vector<std::string>& MeasurementSettingKeys();
const std::vector<std::string>& EnvironmentKeys();
const std::vector<std::string>& RunRecordKeys();

// "model_definition.": the per-model setting's prefix, and its key for `model`.
inline constexpr absl::string_view kModelDefinitionPrefix = "model_definition.";
std::string ModelDefinitionKey(absl::string_view model);
// Whether `key` is a model_definition.<model> key (a measurement setting).
bool IsModelDefinitionKey(absl::string_view key);

// The class of `key`; nullopt for a key in none (a new key not yet classified).
std::optional<KeyClass> ClassOfKey(absl::string_view key);
const char* KeyClassName(KeyClass key_class);  // "machine identity", ...

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_CONTEXT_KEYS_H_
