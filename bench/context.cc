#include "bench/context.h"

#include <ctime>

#include "benchmark/benchmark.h"

namespace cnnbench::bench {

PlatformInfo AddPlatformContext(const std::string& platform_override) {
  PlatformInfo info = CollectPlatformInfo();
  if (!platform_override.empty()) info.platform = platform_override;
  for (const auto& [key, value] : info.ToKeyValues()) benchmark::AddCustomContext(key, value);
  return info;
}

}  // namespace cnnbench::bench
