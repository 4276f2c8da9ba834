#include "tools/report/table.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace cnnbench::report {

std::string Footnotes::Mark(const std::string& reason, const std::string& where) {
  auto it = std::find(reasons_.begin(), reasons_.end(), reason);
  if (it == reasons_.end()) it = reasons_.insert(reasons_.end(), reason);
  places_[reason].push_back(where);
  return absl::StrCat("[", it - reasons_.begin() + 1, "]");
}

std::vector<std::string> Footnotes::Notes() const {
  std::vector<std::string> notes;
  for (size_t i = 0; i < reasons_.size(); ++i) {
    notes.push_back(absl::StrCat("[", i + 1, "] ", reasons_[i], " (",
                                 absl::StrJoin(places_.at(reasons_[i]), "; "), ")"));
  }
  return notes;
}

}  // namespace cnnbench::report
