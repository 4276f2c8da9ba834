#include "bench/cli/flag_read.h"

#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"

namespace cnnbench::bench {
namespace {

std::set<std::string>& GivenFlags() {
  static std::set<std::string>* given = new std::set<std::string>();
  return *given;
}

}  // namespace

void RecordGivenFlags(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (!absl::ConsumePrefix(&arg, "-")) continue;
    absl::ConsumePrefix(&arg, "-");
    const std::string name(arg.substr(0, arg.find('=')));
    if (name.empty()) continue;
    GivenFlags().insert(name);
    if (absl::StartsWith(name, "no") && absl::FindCommandLineFlag(name) == nullptr)
      GivenFlags().insert(name.substr(2));
  }
}

void ForgetGivenFlags() { GivenFlags().clear(); }

bool FlagGiven(const absl::CommandLineFlag& flag) {
  return GivenFlags().count(std::string(flag.Name())) > 0;
}

bool FlagGiven(absl::string_view name) {
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
  return flag != nullptr && FlagGiven(*flag);
}

std::string FlagWhere(const absl::CommandLineFlag& flag) {
  return absl::StrCat("--", flag.Name(), "=", flag.CurrentValue(), ": ");
}

namespace flag_read_internal {
absl::Status Error(const absl::CommandLineFlag& flag, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(FlagWhere(flag), what));
}
}  // namespace flag_read_internal

absl::Status ReadAliasedCount(const absl::Flag<int>& flag, const absl::Flag<int>& older, int least,
                              int* out) {
  const absl::CommandLineFlag& a = absl::GetFlagReflectionHandle(flag);
  const absl::CommandLineFlag& b = absl::GetFlagReflectionHandle(older);
  const bool given_a = FlagGiven(a), given_b = FlagGiven(b);
  if (given_a && given_b && absl::GetFlag(flag) != absl::GetFlag(older))
    return absl::InvalidArgumentError(absl::StrCat("--", a.Name(), "=", absl::GetFlag(flag),
                                                   " and --", b.Name(), "=", absl::GetFlag(older),
                                                   " disagree (the second is the first's older "
                                                   "name): give one of them"));
  if (!given_a && !given_b) return absl::OkStatus();
  const int value = given_a ? absl::GetFlag(flag) : absl::GetFlag(older);
  if (value < least)
    return flag_read_internal::Error(given_a ? a : b,
                                     absl::StrCat("must be a whole number >= ", least));
  *out = value;
  return absl::OkStatus();
}

}  // namespace cnnbench::bench
