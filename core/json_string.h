// A string as a JSON string literal, quotes included: the one escaping the
// suite's own JSON writers use (the results file's added context, the
// trace file).
#ifndef CNNBENCH_CORE_JSON_STRING_H_
#define CNNBENCH_CORE_JSON_STRING_H_

#include <string>

namespace cnnbench {

std::string JsonString(const std::string& value);

}  // namespace cnnbench

#endif  // CNNBENCH_CORE_JSON_STRING_H_
