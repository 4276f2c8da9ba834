// What a two-process MPI job of //bench:all says on the console: rank 0
// alone says it, each thing once, and in time. Skips where mpirun is absent.
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testing/suite_paths.h"
#include "tests/testing/mpi_job.h"

namespace cnnbench::bench {
namespace {

using cnnbench::testing::BenchBinary;
using cnnbench::testing::TempPath;

size_t Occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A training case that fails on every rank (each rank's input reads a
// "JPEG" that is not one), with a rank count the job ignores: the note that
// it is ignored comes first, before any case; the header counts the
// machine's CPUs as the platform name does, whatever mpirun bound each
// rank to; the failed case is named once, by rank 0, while every rank
// exits with the failure's status.
TEST(MpiConsoleTest, RankZeroAloneSaysEachThingOnceAndTheNoteComesFirst) {
  const std::string mpirun = cnnbench::testing::FindMpirun();
  if (mpirun.empty()) GTEST_SKIP() << "mpirun is not on PATH: install OpenMPI (openmpi-bin)";
  const std::string data = TempPath("not_jpegs");
  std::filesystem::remove_all(data);
  for (const char* label : {"a", "b"}) {
    std::filesystem::create_directories(absl::StrCat(data, "/train/", label));
    for (int i = 0; i < 4; ++i)
      std::ofstream(absl::StrCat(data, "/train/", label, "/", i, ".jpg")) << "not a JPEG";
  }
  const cnnbench::testing::MpiJob job = cnnbench::testing::RunMpiJob(
      mpirun, 2,
      absl::StrCat(BenchBinary(), " --preset=tiny --families=train --data=real --data_dir=", data,
                   " --collective_ranks=3 --benchmark_repetitions=1 --benchmark_out=",
                   TempPath("mpi_console.json")));
  EXPECT_NE(job.exit_code, 0) << job.output;
  const std::string note = "cnnbench: note: --collective_ranks is ignored under mpirun";
  EXPECT_EQ(Occurrences(job.output, note), 1u) << job.output;
  const size_t first_case = job.output.find("[1/");
  ASSERT_NE(first_case, std::string::npos) << job.output;
  EXPECT_LT(job.output.find(note), first_case) << job.output;
  EXPECT_EQ(Occurrences(job.output, "case(s) failed"), 1u) << job.output;
  EXPECT_TRUE(absl::StrContains(job.output,
                                "1 case(s) failed (an error, not unsupported or OOM): "
                                "train/trivial/fp32/real/batch:2/gpus:0/replicas:2"))
      << job.output;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  const size_t header = job.output.find("cnnbench (");
  ASSERT_NE(header, std::string::npos) << job.output;
  const std::string header_line = job.output.substr(header, job.output.find('\n', header) - header);
  if (absl::StrContains(header_line, " on cpu-")) {
    EXPECT_TRUE(absl::StrContains(header_line, absl::StrCat("-", online, "c (")))
        << "the platform name counts the machine's CPUs: " << header_line;
  }
  EXPECT_TRUE(
      absl::StrContains(header_line, absl::StrCat(", ", online, online == 1 ? " CPU" : " CPUs")))
      << "so does the header: " << header_line;
  EXPECT_FALSE(absl::StrContains(header_line, "CPU(s)")) << header_line;
}

}  // namespace
}  // namespace cnnbench::bench
