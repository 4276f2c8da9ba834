// The table DefinitionOf reads: one entry per Collective, in its order.
#include <iterator>

#include "bench/cases/collective/definitions/definition.h"

namespace cnnbench::bench {
namespace {

using Definer = const CollectiveDefinition& (*)();

// Indexed by Collective: a collective added to kCollectives without its
// definition here fails the static_assert below.
constexpr Definer kDefinitions[] = {
    AllReduceDefinition, AllGatherDefinition, ReduceScatterDefinition,
    BroadcastDefinition, ReduceDefinition,    AllToAllDefinition,
    GatherDefinition,    ScatterDefinition,
};
static_assert(std::size(kDefinitions) == std::size(kCollectives),
              "every collective of kCollectives needs its definition in kDefinitions");

}  // namespace

const CollectiveDefinition& DefinitionOf(Collective collective) {
  return kDefinitions[static_cast<size_t>(collective)]();
}

}  // namespace cnnbench::bench
