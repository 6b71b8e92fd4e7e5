// Heap-allocation counter shared by the no-allocation tests (alloc_counter.hpp): replaces the
// global operator new / new[] / delete (every variant: sized, aligned, nothrow) and malloc /
// calloc / realloc / memalign / aligned_alloc / posix_memalign / free (Eigen allocates through
// malloc, not operator new), counts the allocations and the frees made while an AllocationScope
// is armed, in every thread, and records a backtrace of the first counted allocation so that a
// failure points at the culprit. Link it into a test binary once; a binary whose shared
// libraries must see the replacements (libclusterdyn.so's allocations) exports them
// (ENABLE_EXPORTS).
#include "alloc_counter.hpp"

#include <execinfo.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
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
std::atomic<long> gFrees{0};
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

void countedFree(void* p) {
  if (p && gArmed.load(std::memory_order_relaxed)) gFrees.fetch_add(1);
  __libc_free(p);
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
extern "C" void* memalign(size_t al, size_t n) {
  noteAllocation(n);
  return __libc_memalign(al, n);
}
extern "C" void* aligned_alloc(size_t al, size_t n) {
  noteAllocation(n);
  return __libc_memalign(al, n);
}
extern "C" int posix_memalign(void** out, size_t al, size_t n) {
  noteAllocation(n);
  if (al < sizeof(void*) || (al & (al - 1)) != 0) return EINVAL;
  void* p = __libc_memalign(al, n);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
extern "C" void free(void* p) { countedFree(p); }

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
void operator delete(void* p) noexcept { countedFree(p); }
void operator delete[](void* p) noexcept { countedFree(p); }
void operator delete(void* p, size_t) noexcept { countedFree(p); }
void operator delete[](void* p, size_t) noexcept { countedFree(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { countedFree(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { countedFree(p); }
void operator delete(void* p, std::align_val_t) noexcept { countedFree(p); }
void operator delete[](void* p, std::align_val_t) noexcept { countedFree(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { countedFree(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { countedFree(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { countedFree(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  countedFree(p);
}

namespace clusterdyn::test {

AllocationScope::AllocationScope() {
  // Loads libgcc's unwinder on first use (that allocates), so that the backtrace of a counted
  // allocation never allocates; later scopes find the static initialized.
  static const bool kUnwinderLoaded = [] {
    void* frames[4];
    return backtrace(frames, 4) > 0;
  }();
  (void)kUnwinderLoaded;
  gAllocations = 0;
  gFrees = 0;
  gFirstTraceDepth = 0;
  gArmed = true;
}

AllocationScope::~AllocationScope() { gArmed = false; }

long AllocationScope::stop() {
  gArmed = false;
  return gAllocations.load();
}

long AllocationScope::frees() const { return gFrees.load(); }

::testing::AssertionResult noAllocation(long count, const char* what) {
  if (count == 0) return ::testing::AssertionSuccess();
  std::fprintf(stderr, "first allocation (%zu bytes) during %s:\n", gFirstSize, what);
  backtrace_symbols_fd(gFirstTrace, gFirstTraceDepth, STDERR_FILENO);
  return ::testing::AssertionFailure() << count << " heap allocation(s) during " << what
                                       << " (backtrace of the first one on stderr)";
}

}  // namespace clusterdyn::test
