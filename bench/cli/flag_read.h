// How //bench:all reads a flag into SuiteOptions, one way for every flag
// and family: a flag is read only when the command line names it, so the
// preset's value (PresetOptions, bench/suite/suite.h) stands for every option the user
// leaves out, and an explicit flag overrides the preset. Every error names
// the flag and its value. The families' Apply<Family>Flags and
// bench/cli/suite_flags.cc read through these alone.
//
// One rule for every value (docs/benchmarks.md, "Flag values"), the
// suite's flags and Google Benchmark's --benchmark_* alike: a flag is given
// once; a value is read as typed, spaces around it (or around a list's
// item) refused, never trimmed; a whole number is decimal digits (a '-'
// first where the flag allows one), no hex, no '+', and one too large for
// its flag says "too large (at most N)"; every bad value is the suite's
// message and exit status 2 (CheckCommandLine runs before Abseil and Google
// Benchmark parse, so neither refuses a value with its own message).
#ifndef CNNBENCH_BENCH_CLI_FLAG_READ_H_
#define CNNBENCH_BENCH_CLI_FLAG_READ_H_

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
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

// Checks the command line against the one rule before Abseil and Google
// Benchmark parse it (call first; the first breach is the error): a flag
// given twice (a switch's --name and --noname too) is an error naming
// both; a value with spaces around it is refused; the value of a number or
// switch flag (the suite's int, int64_t, double and bool flags; Google
// Benchmark's --benchmark_repetitions, --benchmark_min_time,
// --benchmark_min_warmup_time and switches) is read by the suite's rules
// (ParseWholeNumber, ParseDecimal, ParseSwitch), so that a bad one is this
// error rather than Abseil's "Illegal value" with exit status 1, or a value
// Google Benchmark would take silently. A flag without a value where one is
// needed (`--steps` last) is an error too. Unknown flags are left to Abseil
// (exit status 1, as documented); Abseil's --flagfile, --fromenv,
// --tryfromenv and --undefok may repeat.
absl::Status CheckCommandLine(int argc, const char* const* argv);

// "'text' has spaces around it (values are read as typed)" when it has
// (any ASCII white space first or last), else "".
std::string SpacesAround(absl::string_view text);

// A whole number as every flag reads one: decimal digits, a '-' first for
// a negative one; no spaces, '+', hex or exponent. Errors: "'x' is not a
// whole number (decimal digits)", "'x' is too large (at most N)", "'x' is
// too small (at least N)" (N: T's limit).
template <typename T>
absl::StatusOr<T> ParseWholeNumber(absl::string_view text) {
  static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
  if (std::string spaces = SpacesAround(text); !spaces.empty())
    return absl::InvalidArgumentError(spaces);
  absl::string_view digits = text;
  const bool negative = !digits.empty() && digits.front() == '-';
  if (negative) digits.remove_prefix(1);
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) {
        return absl::ascii_isdigit(static_cast<unsigned char>(c));
      }))
    return absl::InvalidArgumentError(
        text.empty() ? std::string("empty (give a whole number)")
                     : absl::StrCat("'", text, "' is not a whole number (decimal digits)"));
  // The magnitude, saturated: past 20 digits it is past every limit anyway.
  using Wide = unsigned long long;
  constexpr Wide kWideMax = std::numeric_limits<Wide>::max();
  Wide magnitude = 0;
  for (char c : digits) {
    const Wide d = static_cast<Wide>(c - '0');
    magnitude = magnitude > (kWideMax - d) / 10 ? kWideMax : magnitude * 10 + d;
  }
  if (!negative) {
    if (magnitude > static_cast<Wide>(std::numeric_limits<T>::max()))
      return absl::InvalidArgumentError(
          absl::StrCat("'", text, "' is too large (at most ", std::numeric_limits<T>::max(), ")"));
    return static_cast<T>(magnitude);
  }
  // The most negative T's magnitude is its max + 1 (0 for an unsigned T).
  const Wide lowest =
      std::is_signed_v<T> ? static_cast<Wide>(std::numeric_limits<T>::max()) + 1 : 0;
  if (magnitude > lowest)
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is too small (at least ", std::numeric_limits<T>::min(), ")"));
  if (magnitude == 0) return T{0};
  return static_cast<T>(-static_cast<long long>(magnitude - 1) - 1);
}

// A decimal number (a double flag's value): what strtod reads, but no
// spaces, hex, inf or nan, and finite. Errors say which.
absl::StatusOr<double> ParseDecimal(absl::string_view text);

// A switch's value: true, false, 1, 0, yes, no, t, f, y, n in any case (what
// Abseil reads); else "'x' is not true or false".
absl::StatusOr<bool> ParseSwitch(absl::string_view text);

namespace flag_read_internal {
absl::Status Error(const absl::CommandLineFlag& flag, absl::string_view what);
template <typename T>
absl::Status ParseItem(absl::string_view item, T least, T* out) {
  if constexpr (std::is_same_v<T, std::string>) {
    *out = std::string(item);
    return absl::OkStatus();
  } else {
    absl::StatusOr<T> value = ParseWholeNumber<T>(item);
    if (!value.ok()) return value.status();
    if (*value < least)
      return absl::InvalidArgumentError(absl::StrCat("'", item, "' is less than ", least));
    *out = *value;
    return absl::OkStatus();
  }
}
}  // namespace flag_read_internal

// A list value as every list flag reads one: comma-separated items, none
// empty, none with spaces around it, none twice (an item given twice names
// itself); numbers read as ParseWholeNumber, each at least `least`. The
// errors do not name the flag (ReadList's do).
template <typename T>
absl::StatusOr<std::vector<T>> ParseList(absl::string_view text, T least = T()) {
  if (text.empty()) return absl::InvalidArgumentError("empty (leave it out for the preset's)");
  std::vector<T> items;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    if (part.empty()) return absl::InvalidArgumentError("an empty item");
    if (!SpacesAround(part).empty()) {
      std::vector<absl::string_view> tidy = absl::StrSplit(text, ',');
      for (absl::string_view& t : tidy) t = absl::StripAsciiWhitespace(t);
      return absl::InvalidArgumentError(
          absl::StrCat("'", part,
                       "' has spaces around it (a list is comma-separated without "
                       "spaces: give ",
                       absl::StrJoin(tidy, ","), ")"));
    }
    T item;
    if (absl::Status s = flag_read_internal::ParseItem(part, least, &item); !s.ok()) return s;
    if (std::find(items.begin(), items.end(), item) != items.end())
      return absl::InvalidArgumentError(absl::StrCat("'", part, "' is given twice"));
    items.push_back(std::move(item));
  }
  return items;
}

// A comma-separated list flag: when given, it replaces *out. It is read
// as ParseList reads a list (not empty, no empty item, no spaces, no item
// twice; numbers at least `least`).
template <typename T>
absl::Status ReadList(const absl::Flag<std::string>& flag, std::vector<T>* out, T least = T()) {
  if (!FlagGiven(flag)) return absl::OkStatus();
  const absl::CommandLineFlag& handle = absl::GetFlagReflectionHandle(flag);
  const std::string value = absl::GetFlag(flag);
  if (value.empty())
    return absl::InvalidArgumentError(
        absl::StrCat("--", handle.Name(), " is empty (leave it out for the preset's)"));
  absl::StatusOr<std::vector<T>> items = ParseList<T>(value, least);
  if (!items.ok()) return flag_read_internal::Error(handle, items.status().message());
  *out = *std::move(items);
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
    return flag_read_internal::Error(absl::GetFlagReflectionHandle(flag), value.status().message());
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
