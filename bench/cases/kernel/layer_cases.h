// Which kernel cases a training graph's layers have: the conv, fc, pool,
// batch-norm and ReLU layers, each with the passes the training step runs
// on it. The suite registers these cases and //tools:step_breakdown sums
// them, so the two never disagree.
#ifndef CNNBENCH_BENCH_LAYER_CASES_H_
#define CNNBENCH_BENCH_LAYER_CASES_H_

#include <optional>
#include <string>
#include <vector>

#include "bench/suite/names.h"
#include "kernels/op_traits.h"
#include "models/graph.h"

namespace cnnbench::bench {

// A pass of one layer operation through the Kernel interface.
using Pass = OpPass;

struct LayerPass {
  std::string name;  // the name's pass part: "fwd", "bwd_data", "bwd_filter", "bwd", "max/fwd"
  Pass pass;
};

struct LayerCases {
  int node = -1;
  std::optional<Family> family;  // conv, fc, pool, batchnorm, relu; none: no kernel cases
  std::string shape;   // the descriptor's canonical string
  Shape input;         // the logical shape of its (first) input in the network
  // In step order. Batch norm's "bwd" runs both of its backward passes; a
  // layer reading only the images runs no backward-data pass (so has no case).
  std::vector<LayerPass> passes;
};

// Every layer of `graph` that has kernel cases (its op's traits name a
// family: kernels/op_traits.h), in graph order (repeated shapes included).
std::vector<LayerCases> GraphLayerCases(const Graph& graph);

// The cases of one op from its traits' BenchFact: empty passes when it has
// none; passes that need the input's gradient only when
// `inputs_need_grad`. Templated so a descriptor type of its own works too.
template <typename T>
LayerCases LayerCasesOf(const T& desc, bool inputs_need_grad) {
  LayerCases c;
  const BenchFact fact = OpTraits<T>::Bench(desc);
  c.shape = desc.ToString();
  if (!fact.family) return c;
  c.family = CaseFamilyOf(*fact.family);
  for (const BenchPassFact& p : fact.passes)
    if (!p.needs_input_gradient || inputs_need_grad) c.passes.push_back({p.name, p.pass});
  return c;
}

}  // namespace cnnbench::bench

#endif  // CNNBENCH_BENCH_LAYER_CASES_H_
