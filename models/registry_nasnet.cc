// The zoo's entries: the NASNet-A networks.
#include "models/zoo_registry.h"
#include "models/zoo_models.h"

namespace cnnbench {

std::vector<ModelInfo> NasNetModels() { return {}; }

}  // namespace cnnbench
