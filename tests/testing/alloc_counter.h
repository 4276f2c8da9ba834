// Counts heap allocations made through global operator new while counting is
// on, to prove a piece of code allocates nothing. Linking this library
// replaces every non-aligned form of global operator new and delete (plain,
// array, nothrow, sized) with malloc/free, so each allocation is paired with
// its own deallocation whatever form the standard library chooses (under
// AddressSanitizer a partial replacement mixes its allocator with ours).
#ifndef CNNBENCH_TESTS_TESTING_ALLOC_COUNTER_H_
#define CNNBENCH_TESTS_TESTING_ALLOC_COUNTER_H_

namespace cnnbench::testing {

// Counts allocations until Stop(); not reentrant, one counter per process.
class AllocationCounter {
 public:
  // Resets the count and starts counting.
  static void Start();
  // Stops counting and returns the allocations since Start().
  static long Stop();
};

}  // namespace cnnbench::testing

#endif  // CNNBENCH_TESTS_TESTING_ALLOC_COUNTER_H_
