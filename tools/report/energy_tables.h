// Energy per platform, where the run sampled power (bench/harness/power_sampler.h):
// per train and infer case, images/sec beside the mean power, images per
// joule (perf per watt: images/sec / W), the energy of a step, the SM clock
// and how much of the span the GPU throttled.
#ifndef CNNBENCH_TOOLS_REPORT_ENERGY_TABLES_H_
#define CNNBENCH_TOOLS_REPORT_ENERGY_TABLES_H_

#include <optional>
#include <string>

#include "tools/report/results.h"
#include "tools/report/table.h"

namespace cnnbench::report {

// The "Energy" section; none when no case of the platform carried power_w.
std::optional<Section> EnergySection(const PlatformResults& platform);

// A footnote mark for a cell whose case throttled during its timed span
// (throttled_fraction > 0, the reasons are in the case's label); "" else.
std::string ThrottleMark(const Measurement& m, Footnotes& notes, const std::string& where);

}  // namespace cnnbench::report

#endif  // CNNBENCH_TOOLS_REPORT_ENERGY_TABLES_H_
