// `bazel run` starts a binary in its runfiles folder; relative paths the user
// typed (--benchmark_out=run.json, report inputs) mean the folder the command
// was typed in, which Bazel passes as BUILD_WORKING_DIRECTORY.
#ifndef CNNBENCH_CORE_INVOCATION_H_
#define CNNBENCH_CORE_INVOCATION_H_

namespace cnnbench {

// Changes to $BUILD_WORKING_DIRECTORY when set (under `bazel run`); no-op otherwise.
void ChangeToInvocationDirectory();

}  // namespace cnnbench

#endif  // CNNBENCH_CORE_INVOCATION_H_
