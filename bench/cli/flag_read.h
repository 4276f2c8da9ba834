// How //bench:all reads a flag into SuiteOptions, one way for every flag
// and family: a flag is read only when the command line names it, so the
// preset's value (PresetOptions, bench/suite/suite.h) stands for every option the user
// leaves out, and an explicit flag overrides the preset. Every error names
// the flag and its value. The families' Apply<Family>Flags and
// bench/cli/suite_flags.cc read through these alone.
#ifndef CNNBENCH_BENCH_CLI_FLAG_READ_H_
#define CNNBENCH_BENCH_CLI_FLAG_READ_H_

#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"

namespace cnnbench::bench {

// Records which flags the command line names (even at their default
// values): `--name`, `--name=value`, `-name`, a boolean's `--noname`, up to
// a bare `--`. Call before Abseil parses the command line. Abseil's own
// record is not public in Debian's release.
void RecordGivenFlags(int argc, char** argv);
// Forgets them (tests that read several command lines in one process).
void ForgetGivenFlags();
// Whether the command line named `flag`.
bool FlagGiven(const absl::CommandLineFlag& flag);
template <typename T>
bool FlagGiven(const absl::Flag<T>& flag) {
  return FlagGiven(absl::GetFlagReflectionHandle(flag));
}
// By name: false for a flag this binary does not define.
bool FlagGiven(absl::string_view name);

// "--name=value: " for errors.
std::string FlagWhere(const absl::CommandLineFlag& flag);

namespace flag_read_internal {
absl::Status Error(const absl::CommandLineFlag& flag, absl::string_view what);
template <typename T>
absl::Status ParseItem(absl::string_view item, T least, T* out) {
  if constexpr (std::is_same_v<T, std::string>) {
    *out = std::string(item);
    return absl::OkStatus();
  } else {
    if (!absl::SimpleAtoi(item, out))
      return absl::InvalidArgumentError(absl::StrCat("'", item, "' is not a whole number"));
    if (*out < least)
      return absl::InvalidArgumentError(absl::StrCat("'", item, "' is less than ", least));
    return absl::OkStatus();
  }
}
}  // namespace flag_read_internal

// A comma-separated list flag: when given, it replaces *out. It must not be
// empty, nor hold an empty item, the same item twice, or (numbers) an item
// below `least`.
template <typename T>
absl::Status ReadList(const absl::Flag<std::string>& flag, std::vector<T>* out, T least = T()) {
  if (!FlagGiven(flag)) return absl::OkStatus();
  const absl::CommandLineFlag& handle = absl::GetFlagReflectionHandle(flag);
  const std::string value = absl::GetFlag(flag);
  if (value.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("--", handle.Name(), " is empty (leave it out for the preset's)"));
  std::vector<T> items;
  for (absl::string_view part : absl::StrSplit(value, ',')) {
    if (part.empty()) return flag_read_internal::Error(handle, "an empty item");
    T item;
    if (absl::Status s = flag_read_internal::ParseItem(part, least, &item); !s.ok())
      return flag_read_internal::Error(handle, s.message());
    if (std::find(items.begin(), items.end(), item) != items.end())
      return flag_read_internal::Error(handle, absl::StrCat("'", part, "' is given twice"));
    items.push_back(std::move(item));
  }
  *out = std::move(items);
  return absl::OkStatus();
}

// A count flag (int, int64_t): when given, it must be >= `least` and
// replaces *out.
template <typename T>
absl::Status ReadCount(const absl::Flag<T>& flag, T least, T* out) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  if (!FlagGiven(flag)) return absl::OkStatus();
  const T value = absl::GetFlag(flag);
  if (value < least)
    return flag_read_internal::Error(absl::GetFlagReflectionHandle(flag),
                                     absl::StrCat("must be a whole number >= ", least));
  *out = value;
  return absl::OkStatus();
}

// A count flag with an older name kept as its alias: the one given (both
// given must agree) replaces *out.
absl::Status ReadAliasedCount(const absl::Flag<int>& flag, const absl::Flag<int>& older, int least,
                              int* out);
// A text flag with an older name: the one given (both given must agree;
// not empty) is parsed by `parse`, whose error the flag's name prefixes.
template <typename T, typename Parse>
absl::Status ReadAliasedText(const absl::Flag<std::string>& flag,
                             const absl::Flag<std::string>& older, Parse parse, T* out);

// A plain value flag (bool, double, string): when given, it replaces *out;
// `check` (value -> error text, "" when fine) refuses a value.
template <typename T, typename Check>
absl::Status ReadValue(const absl::Flag<T>& flag, T* out, Check check) {
  if (!FlagGiven(flag)) return absl::OkStatus();
  T value = absl::GetFlag(flag);
  if (const std::string why = check(value); !why.empty())
    return flag_read_internal::Error(absl::GetFlagReflectionHandle(flag), why);
  *out = std::move(value);
  return absl::OkStatus();
}
template <typename T>
absl::Status ReadValue(const absl::Flag<T>& flag, T* out) {
  return ReadValue(flag, out, [](const T&) { return std::string(); });
}

// A flag naming one of several choices: when given, `parse(text)` (a
// StatusOr<T>) replaces *out; its error is prefixed with the flag's name.
template <typename T, typename Parse>
absl::Status ReadChoice(const absl::Flag<std::string>& flag, Parse parse, T* out) {
  if (!FlagGiven(flag)) return absl::OkStatus();
  absl::StatusOr<T> value = parse(absl::GetFlag(flag));
  if (!value.ok())
    return flag_read_internal::Error(absl::GetFlagReflectionHandle(flag),
                                     value.status().message());
  *out = *std::move(value);
  return absl::OkStatus();
}

template <typename T, typename Parse>
absl::Status ReadAliasedText(const absl::Flag<std::string>& flag,
                             const absl::Flag<std::string>& older, Parse parse, T* out) {
  const absl::CommandLineFlag& a = absl::GetFlagReflectionHandle(flag);
  const absl::CommandLineFlag& b = absl::GetFlagReflectionHandle(older);
  const bool given_a = FlagGiven(a), given_b = FlagGiven(b);
  if (given_a && given_b && absl::GetFlag(flag) != absl::GetFlag(older))
    return absl::InvalidArgumentError(absl::StrCat(
        "--", a.Name(), "=", absl::GetFlag(flag), " and --", b.Name(), "=", absl::GetFlag(older),
        " disagree (the second is the first's older name): give one of them"));
  if (!given_a && !given_b) return absl::OkStatus();
  const absl::CommandLineFlag& chosen = given_a ? a : b;
  const std::string text = given_a ? absl::GetFlag(flag) : absl::GetFlag(older);
  if (text.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("--", chosen.Name(), " is empty (leave it out for the preset's)"));
  absl::StatusOr<T> value = parse(text);
  if (!value.ok()) return flag_read_internal::Error(chosen, value.status().message());
  *out = *std::move(value);
  return absl::OkStatus();
}

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_CLI_FLAG_READ_H_
