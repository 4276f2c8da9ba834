// //bench:cuda_overhead in builds without CUDA or the cudnn-frontend headers:
// says so (and writes it to --json), exit status 0 like a skipped case.
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"

ABSL_FLAG(std::string, json, "", "write the ratios here");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const char* reason = "unsupported: this build has no CUDA or no cudnn-frontend headers";
  std::printf("cuda_overhead: %s\n", reason);
  const std::string path = absl::GetFlag(FLAGS_json);
  if (!path.empty()) std::ofstream(path) << "[{\"skipped\": \"" << reason << "\"}]\n";
  return 0;
}
