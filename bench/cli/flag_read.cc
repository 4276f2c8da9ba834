#include "bench/cli/flag_read.h"

#include <cmath>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/strip.h"

namespace cnnbench::bench {
namespace {

std::set<std::string>& GivenFlags() {
  static std::set<std::string>* given = new std::set<std::string>();
  return *given;
}

// A flag as the command line gives it.
struct GivenArg {
  std::string name;   // the flag's own name (a switch's --noname: name)
  std::string value;  // what its parser reads: a switch alone is "true", --noname "false"
  std::string typed;  // as typed: "--name=value", "--name value", "--noname"
  const absl::CommandLineFlag* flag = nullptr;  // null: Google Benchmark's
};

// How a value is read before its parser sees it.
enum class ValueKind { kText, kWhole32, kWhole64, kDecimal, kSwitch };

// Google Benchmark 1.7.1's flags (src/benchmark.cc) and how each reads its
// value; nullopt for a name it does not define (Abseil then says so).
std::optional<ValueKind> BenchmarkFlagKind(absl::string_view name) {
  static const std::map<std::string, ValueKind, std::less<>>* const kinds =
      new std::map<std::string, ValueKind, std::less<>>{
          {"benchmark_list_tests", ValueKind::kSwitch},
          {"benchmark_filter", ValueKind::kText},
          {"benchmark_min_time", ValueKind::kDecimal},
          {"benchmark_min_warmup_time", ValueKind::kDecimal},
          {"benchmark_repetitions", ValueKind::kWhole32},
          {"benchmark_enable_random_interleaving", ValueKind::kSwitch},
          {"benchmark_report_aggregates_only", ValueKind::kSwitch},
          {"benchmark_display_aggregates_only", ValueKind::kSwitch},
          {"benchmark_format", ValueKind::kText},
          {"benchmark_out", ValueKind::kText},
          {"benchmark_out_format", ValueKind::kText},
          {"benchmark_color", ValueKind::kText},
          {"benchmark_counters_tabular", ValueKind::kSwitch},
          {"benchmark_perf_counters", ValueKind::kText},
          {"benchmark_context", ValueKind::kText},
          {"benchmark_time_unit", ValueKind::kText},
          {"v", ValueKind::kWhole32},
      };
  const auto it = kinds->find(name);
  if (it == kinds->end()) return std::nullopt;
  return it->second;
}

ValueKind AbseilFlagKind(const absl::CommandLineFlag& flag) {
  if (flag.IsOfType<bool>()) return ValueKind::kSwitch;
  if (flag.IsOfType<int>()) return ValueKind::kWhole32;
  if (flag.IsOfType<int64_t>()) return ValueKind::kWhole64;
  if (flag.IsOfType<double>()) return ValueKind::kDecimal;
  return ValueKind::kText;
}

// Abseil's flags about reading flags, which may be given more than once.
bool MayRepeat(absl::string_view name) {
  return name == "flagfile" || name == "fromenv" || name == "tryfromenv" || name == "undefok";
}

// The error for a value its kind does not read; "" when fine.
std::string KindError(ValueKind kind, absl::string_view value) {
  absl::Status status;
  switch (kind) {
    case ValueKind::kText:
      break;
    case ValueKind::kWhole32:
      status = ParseWholeNumber<int32_t>(value).status();
      break;
    case ValueKind::kWhole64:
      status = ParseWholeNumber<int64_t>(value).status();
      break;
    case ValueKind::kDecimal:
      status = ParseDecimal(value).status();
      break;
    case ValueKind::kSwitch:
      status = ParseSwitch(value).status();
      break;
  }
  return std::string(status.message());
}

}  // namespace

std::string SpacesAround(absl::string_view text) {
  if (text.empty() || absl::StripAsciiWhitespace(text).size() == text.size()) return "";
  return absl::StrCat("'", text, "' has spaces around it (values are read as typed)");
}

absl::StatusOr<double> ParseDecimal(absl::string_view text) {
  if (std::string spaces = SpacesAround(text); !spaces.empty())
    return absl::InvalidArgumentError(spaces);
  if (text.empty()) return absl::InvalidArgumentError("empty (give a number, e.g. 0.5)");
  // strtod's hex, inf and nan are not decimal numbers.
  const bool decimal = std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '+' ||
           c == 'e' || c == 'E';
  });
  double value = 0;
  if (!decimal || !absl::SimpleAtod(text, &value))
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a decimal number (e.g. 0.5)"));
  if (!std::isfinite(value))
    return absl::InvalidArgumentError(value > 0
                                          ? absl::StrCat("'", text, "' is too large (at most ",
                                                         std::numeric_limits<double>::max(), ")")
                                          : absl::StrCat("'", text, "' is too small (at least ",
                                                         -std::numeric_limits<double>::max(), ")"));
  return value;
}

absl::StatusOr<bool> ParseSwitch(absl::string_view text) {
  if (text.empty()) return absl::InvalidArgumentError("empty (give true or false)");
  for (const char* yes : {"true", "t", "yes", "y", "1"})
    if (absl::EqualsIgnoreCase(text, yes)) return true;
  for (const char* no : {"false", "f", "no", "n", "0"})
    if (absl::EqualsIgnoreCase(text, no)) return false;
  if (std::string spaces = SpacesAround(text); !spaces.empty())
    return absl::InvalidArgumentError(spaces);
  return absl::InvalidArgumentError(absl::StrCat("'", text, "' is not true or false"));
}

absl::Status CheckCommandLine(int argc, const char* const* argv) {
  std::map<std::string, GivenArg> seen;
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;  // not a flag: Abseil keeps it
    absl::string_view body = arg.substr(1);
    absl::ConsumePrefix(&body, "-");
    const size_t eq = body.find('=');
    GivenArg given;
    given.name = std::string(body.substr(0, eq));
    given.typed = std::string(arg);
    const bool has_value = eq != absl::string_view::npos;
    if (has_value) given.value = std::string(body.substr(eq + 1));
    ValueKind kind = ValueKind::kText;
    if (const std::optional<ValueKind> benchmark = BenchmarkFlagKind(given.name)) {
      kind = *benchmark;
      if (!has_value && kind != ValueKind::kSwitch)  // Google Benchmark reads --name=value only
        return absl::InvalidArgumentError(
            absl::StrCat(arg, " needs a value (--", given.name, "=VALUE)"));
      if (!has_value) given.value = "true";  // a switch alone
    } else if (absl::StartsWith(given.name, "benchmark_")) {
      continue;  // not Google Benchmark's: Abseil says it is unknown
    } else {
      given.flag = absl::FindCommandLineFlag(given.name);
      if (given.flag == nullptr && absl::StartsWith(given.name, "no") && !has_value) {
        const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(given.name.substr(2));
        if (flag != nullptr && flag->IsOfType<bool>()) {
          given.flag = flag;
          given.name = given.name.substr(2);
          given.value = "false";
        }
      }
      if (given.flag == nullptr) continue;  // unknown: Abseil says so
      kind = AbseilFlagKind(*given.flag);
      if (!has_value && given.value.empty()) {
        if (kind == ValueKind::kSwitch) {
          given.value = "true";
        } else if (i + 1 < argc) {  // Abseil's `--name value`
          given.value = argv[++i];
          given.typed = absl::StrCat(arg, " ", given.value);
        } else {
          return absl::InvalidArgumentError(
              absl::StrCat(arg, " needs a value (--", given.name, "=VALUE)"));
        }
      }
    }
    const std::string where = absl::StrCat("--", given.name, "=", given.value, ": ");
    if (!SpacesAround(given.value).empty())
      return absl::InvalidArgumentError(
          absl::StrCat(where, "'", given.value,
                       "' has spaces around it (values are read as typed: "
                       "give --",
                       given.name, "=", absl::StripAsciiWhitespace(given.value), ")"));
    if (std::string why = KindError(kind, given.value); !why.empty())
      return absl::InvalidArgumentError(where + why);
    if (MayRepeat(given.name)) continue;
    auto [first, fresh] = seen.emplace(given.name, given);
    if (!fresh)
      return absl::InvalidArgumentError(absl::StrCat("--", given.name, " is given twice, as ",
                                                     first->second.typed, " and ", given.typed,
                                                     ": give it once"));
  }
  return absl::OkStatus();
}

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
  // Never a message ending in an empty reason.
  return absl::InvalidArgumentError(absl::StrCat(
      FlagWhere(flag), what.empty() ? absl::string_view("not a value it takes") : what));
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
