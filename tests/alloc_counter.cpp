// Heap-allocation counter shared by the no-allocation tests (alloc_counter.hpp): replaces the
// global operator new / new[] / delete (every variant: sized, aligned, nothrow) and malloc /
// calloc / realloc / free (Eigen allocates through malloc, not operator new), counts the calls
// made while an AllocationScope is armed and records a backtrace of the first counted
// allocation so that a failure points at the culprit. Link it into a test binary once.
#include "alloc_counter.hpp"

#include <execinfo.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <new>

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
void* __libc_memalign(size_t, size_t);
}

namespace {

std::atomic<bool> gArmed{false};
std::atomic<long> gAllocations{0};
std::atomic<bool> gInHook{false};
constexpr int kMaxFrames = 48;
void* gFirstTrace[kMaxFrames];
int gFirstTraceDepth = 0;
size_t gFirstSize = 0;

void noteAllocation(size_t n) {
  if (!gArmed.load(std::memory_order_relaxed)) return;
  if (gAllocations.fetch_add(1) == 0 && !gInHook.exchange(true)) {
    gFirstSize = n;
    gFirstTraceDepth = backtrace(gFirstTrace, kMaxFrames);  // pre-warmed, does not allocate
    gInHook = false;
  }
}

void* countedMalloc(size_t n) {
  noteAllocation(n);
  void* p = __libc_malloc(n == 0 ? 1 : n);
  if (!p) throw std::bad_alloc();
  return p;
}

void* countedAligned(size_t n, std::align_val_t al) {
  noteAllocation(n);
  void* p = __libc_memalign(static_cast<size_t>(al), n == 0 ? 1 : n);
  if (!p) throw std::bad_alloc();
  return p;
}

}  // namespace

// ---- C allocation functions (glibc "replacing malloc": malloc, calloc, realloc, free).
extern "C" void* malloc(size_t n) {
  noteAllocation(n);
  return __libc_malloc(n);
}
extern "C" void* calloc(size_t n, size_t s) {
  noteAllocation(n * s);
  return __libc_calloc(n, s);
}
extern "C" void* realloc(void* p, size_t n) {
  noteAllocation(n);
  return __libc_realloc(p, n);
}
extern "C" void free(void* p) { __libc_free(p); }

// ---- Every replaceable global operator new / delete.
void* operator new(size_t n) { return countedMalloc(n); }
void* operator new[](size_t n) { return countedMalloc(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  noteAllocation(n);
  return __libc_malloc(n == 0 ? 1 : n);
}
void* operator new[](size_t n, const std::nothrow_t&) noexcept {
  noteAllocation(n);
  return __libc_malloc(n == 0 ? 1 : n);
}
void* operator new(size_t n, std::align_val_t al) { return countedAligned(n, al); }
void* operator new[](size_t n, std::align_val_t al) { return countedAligned(n, al); }
void* operator new(size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  noteAllocation(n);
  return __libc_memalign(static_cast<size_t>(al), n == 0 ? 1 : n);
}
void* operator new[](size_t n, std::align_val_t al, const std::nothrow_t&) noexcept {
  noteAllocation(n);
  return __libc_memalign(static_cast<size_t>(al), n == 0 ? 1 : n);
}
void operator delete(void* p) noexcept { __libc_free(p); }
void operator delete[](void* p) noexcept { __libc_free(p); }
void operator delete(void* p, size_t) noexcept { __libc_free(p); }
void operator delete[](void* p, size_t) noexcept { __libc_free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete(void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { __libc_free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { __libc_free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { __libc_free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  __libc_free(p);
}

namespace clusterdyn::test {

AllocationScope::AllocationScope() {
  gAllocations = 0;
  gFirstTraceDepth = 0;
  gArmed = true;
}

AllocationScope::~AllocationScope() { gArmed = false; }

long AllocationScope::stop() {
  gArmed = false;
  return gAllocations.load();
}

::testing::AssertionResult noAllocation(long count, const char* what) {
  if (count == 0) return ::testing::AssertionSuccess();
  std::fprintf(stderr, "first allocation (%zu bytes) during %s:\n", gFirstSize, what);
  backtrace_symbols_fd(gFirstTrace, gFirstTraceDepth, STDERR_FILENO);
  return ::testing::AssertionFailure() << count << " heap allocation(s) during " << what
                                       << " (backtrace of the first one on stderr)";
}

namespace {

class Environment : public ::testing::Environment {
 public:
  void SetUp() override {
    void* frames[4];
    backtrace(frames, 4);  // loads libgcc's unwinder now, so backtrace() never allocates later
  }
};
const auto* const kEnvironment = ::testing::AddGlobalTestEnvironment(new Environment);

}  // namespace

}  // namespace clusterdyn::test
