// Heap-allocation counter for the no-allocation tests (implementation and the replaced global
// allocation functions in alloc_counter.cpp, linked into those test binaries only).
#pragma once

#include <gtest/gtest.h>

#include <string>

namespace clusterdyn::test {

/// Counts the heap allocations (malloc family and every operator new) and the frees (free and
/// every operator delete, of non-null pointers) made in any thread between construction and
/// stop() (or destruction). Not reentrant: one scope at a time.
class AllocationScope {
 public:
  AllocationScope();
  ~AllocationScope();
  AllocationScope(const AllocationScope&) = delete;
  AllocationScope& operator=(const AllocationScope&) = delete;
  /// Disarms the counter and returns the number of allocations counted.
  long stop();
  /// The number of frees counted (so far, or until stop()).
  long frees() const;
};

/// Success when count is zero; otherwise the size and a backtrace of the first allocation
/// (on stderr) and a message naming `what`.
/// Takes a C string so that naming the check allocates nothing (arguments may be evaluated
/// while the scope is still armed).
::testing::AssertionResult noAllocation(long count, const char* what);
inline ::testing::AssertionResult noAllocation(long count, const std::string& what) {
  return noAllocation(count, what.c_str());
}

}  // namespace clusterdyn::test
