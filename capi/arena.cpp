// Allocation redirection of libclusterdyn.so (see arena.hpp). The __wrap_X functions receive the
// library-internal references to X (GNU ld --wrap); __real_X is the process-wide X.
#include "arena.hpp"

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

namespace cdyn_internal {
namespace {

// initial-exec: no lazy TLS allocation on first use in a thread, even when the library is
// loaded with dlopen (8 bytes taken from glibc's static TLS surplus).
__attribute__((tls_model("initial-exec"))) thread_local Arena* t_arena = nullptr;

std::size_t roundUp(std::size_t n, std::size_t a) { return (n + a - 1) / a * a; }

/// Arena currently in effect on this thread (nullptr: use the process allocator).
inline Arena* current() { return t_arena; }

/// Non-measuring arena: a block of n bytes aligned to `align` (nullptr when exhausted).
void* bump(Arena* a, std::size_t n, std::size_t align) {
  if (align < kArenaAlign) align = kArenaAlign;
  const std::uintptr_t p = roundUp(reinterpret_cast<std::uintptr_t>(a->cur), align);
  const std::size_t size = roundUp(n == 0 ? 1 : n, kArenaAlign);
  const std::uintptr_t end = reinterpret_cast<std::uintptr_t>(a->end);
  if (p > end || size > end - p) return nullptr;
  a->cur = reinterpret_cast<unsigned char*>(p + size);
  return reinterpret_cast<void*>(p);
}

/// Measuring arena: record what bump() would consume (worst-case alignment padding).
void record(Arena* a, std::size_t n, std::size_t align) {
  a->measured += roundUp(n == 0 ? 1 : n, kArenaAlign) + (align > kArenaAlign ? align : 0);
}

/// True when p must not be returned to the process allocator.
inline bool ownedByArena(const void* p) {
  const Arena* a = current();
  return p != nullptr && a != nullptr && !a->measuring && a->owns(p);
}

}  // namespace

ArenaScope::ArenaScope(Arena* arena) noexcept : previous_(t_arena) { t_arena = arena; }
ArenaScope::~ArenaScope() { t_arena = previous_; }

}  // namespace cdyn_internal

using cdyn_internal::Arena;
using cdyn_internal::bump;
using cdyn_internal::current;
using cdyn_internal::kArenaAlign;
using cdyn_internal::ownedByArena;
using cdyn_internal::record;
using std::size_t;

extern "C" {

// The process allocator.
void* __real_malloc(size_t);
void __real_free(void*);
void* __real_calloc(size_t, size_t);
void* __real_realloc(void*, size_t);
int __real_posix_memalign(void**, size_t, size_t);
void* __real_aligned_alloc(size_t, size_t);
void* __real_memalign(size_t, size_t);
void* __real__Znwm(size_t);
void* __real__Znam(size_t);
void* __real__ZnwmRKSt9nothrow_t(size_t, const std::nothrow_t&);
void* __real__ZnamRKSt9nothrow_t(size_t, const std::nothrow_t&);
void* __real__ZnwmSt11align_val_t(size_t, size_t);
void* __real__ZnamSt11align_val_t(size_t, size_t);
void* __real__ZnwmSt11align_val_tRKSt9nothrow_t(size_t, size_t, const std::nothrow_t&);
void* __real__ZnamSt11align_val_tRKSt9nothrow_t(size_t, size_t, const std::nothrow_t&);
void __real__ZdlPv(void*);
void __real__ZdaPv(void*);
void __real__ZdlPvm(void*, size_t);
void __real__ZdaPvm(void*, size_t);
void __real__ZdlPvRKSt9nothrow_t(void*, const std::nothrow_t&);
void __real__ZdaPvRKSt9nothrow_t(void*, const std::nothrow_t&);
void __real__ZdlPvSt11align_val_t(void*, size_t);
void __real__ZdaPvSt11align_val_t(void*, size_t);
void __real__ZdlPvmSt11align_val_t(void*, size_t, size_t);
void __real__ZdaPvmSt11align_val_t(void*, size_t, size_t);
void __real__ZdlPvSt11align_val_tRKSt9nothrow_t(void*, size_t, const std::nothrow_t&);
void __real__ZdaPvSt11align_val_tRKSt9nothrow_t(void*, size_t, const std::nothrow_t&);

// ---- C allocation functions ----------------------------------------------------------------

void* __wrap_malloc(size_t n) {
  Arena* a = current();
  if (!a) return __real_malloc(n);
  if (a->measuring) {
    record(a, n, kArenaAlign);
    return __real_malloc(n);
  }
  void* p = bump(a, n, kArenaAlign);
  if (!p) errno = ENOMEM;
  return p;
}

void __wrap_free(void* p) {
  if (ownedByArena(p)) return;
  __real_free(p);
}

void* __wrap_calloc(size_t n, size_t m) {
  Arena* a = current();
  if (!a) return __real_calloc(n, m);
  if (m != 0 && n > SIZE_MAX / m) {
    errno = ENOMEM;
    return nullptr;
  }
  if (a->measuring) {
    record(a, n * m, kArenaAlign);
    return __real_calloc(n, m);
  }
  void* p = bump(a, n * m, kArenaAlign);
  if (!p) {
    errno = ENOMEM;
    return nullptr;
  }
  std::memset(p, 0, n * m);  // caller memory is not zeroed
  return p;
}

void* __wrap_realloc(void* p, size_t n) {
  Arena* a = current();
  if (!a) return __real_realloc(p, n);
  if (a->measuring) {
    record(a, n, kArenaAlign);
    return __real_realloc(p, n);
  }
  if (p == nullptr) return __wrap_malloc(n);
  if (a->owns(p)) {  // sizes of arena blocks are not recorded: growing them is not supported
    errno = ENOMEM;
    return nullptr;
  }
  return __real_realloc(p, n);
}

int __wrap_posix_memalign(void** out, size_t align, size_t n) {
  Arena* a = current();
  if (!a) return __real_posix_memalign(out, align, n);
  if (a->measuring) {
    record(a, n, align);
    return __real_posix_memalign(out, align, n);
  }
  void* p = bump(a, n, align);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}

void* __wrap_aligned_alloc(size_t align, size_t n) {
  Arena* a = current();
  if (!a) return __real_aligned_alloc(align, n);
  if (a->measuring) {
    record(a, n, align);
    return __real_aligned_alloc(align, n);
  }
  return bump(a, n, align);
}

void* __wrap_memalign(size_t align, size_t n) {
  Arena* a = current();
  if (!a) return __real_memalign(align, n);
  if (a->measuring) {
    record(a, n, align);
    return __real_memalign(align, n);
  }
  return bump(a, n, align);
}

// ---- C++ operator new / delete ---------------------------------------------------------------

// Arena path of the throwing forms.
static void* arenaNew(Arena* a, size_t n, size_t align) {
  void* p = bump(a, n, align);
  if (!p) throw std::bad_alloc();
  return p;
}

void* __wrap__Znwm(size_t n) {
  Arena* a = current();
  if (!a) return __real__Znwm(n);
  if (a->measuring) {
    record(a, n, kArenaAlign);
    return __real__Znwm(n);
  }
  return arenaNew(a, n, kArenaAlign);
}

void* __wrap__Znam(size_t n) {
  Arena* a = current();
  if (!a) return __real__Znam(n);
  if (a->measuring) {
    record(a, n, kArenaAlign);
    return __real__Znam(n);
  }
  return arenaNew(a, n, kArenaAlign);
}

void* __wrap__ZnwmRKSt9nothrow_t(size_t n, const std::nothrow_t& t) {
  Arena* a = current();
  if (!a) return __real__ZnwmRKSt9nothrow_t(n, t);
  if (a->measuring) {
    record(a, n, kArenaAlign);
    return __real__ZnwmRKSt9nothrow_t(n, t);
  }
  return bump(a, n, kArenaAlign);
}

void* __wrap__ZnamRKSt9nothrow_t(size_t n, const std::nothrow_t& t) {
  Arena* a = current();
  if (!a) return __real__ZnamRKSt9nothrow_t(n, t);
  if (a->measuring) {
    record(a, n, kArenaAlign);
    return __real__ZnamRKSt9nothrow_t(n, t);
  }
  return bump(a, n, kArenaAlign);
}

void* __wrap__ZnwmSt11align_val_t(size_t n, size_t al) {
  Arena* a = current();
  if (!a) return __real__ZnwmSt11align_val_t(n, al);
  if (a->measuring) {
    record(a, n, al);
    return __real__ZnwmSt11align_val_t(n, al);
  }
  return arenaNew(a, n, al);
}

void* __wrap__ZnamSt11align_val_t(size_t n, size_t al) {
  Arena* a = current();
  if (!a) return __real__ZnamSt11align_val_t(n, al);
  if (a->measuring) {
    record(a, n, al);
    return __real__ZnamSt11align_val_t(n, al);
  }
  return arenaNew(a, n, al);
}

void* __wrap__ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const std::nothrow_t& t) {
  Arena* a = current();
  if (!a) return __real__ZnwmSt11align_val_tRKSt9nothrow_t(n, al, t);
  if (a->measuring) {
    record(a, n, al);
    return __real__ZnwmSt11align_val_tRKSt9nothrow_t(n, al, t);
  }
  return bump(a, n, al);
}

void* __wrap__ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t al, const std::nothrow_t& t) {
  Arena* a = current();
  if (!a) return __real__ZnamSt11align_val_tRKSt9nothrow_t(n, al, t);
  if (a->measuring) {
    record(a, n, al);
    return __real__ZnamSt11align_val_tRKSt9nothrow_t(n, al, t);
  }
  return bump(a, n, al);
}

void __wrap__ZdlPv(void* p) {
  if (!ownedByArena(p)) __real__ZdlPv(p);
}
void __wrap__ZdaPv(void* p) {
  if (!ownedByArena(p)) __real__ZdaPv(p);
}
void __wrap__ZdlPvm(void* p, size_t n) {
  if (!ownedByArena(p)) __real__ZdlPvm(p, n);
}
void __wrap__ZdaPvm(void* p, size_t n) {
  if (!ownedByArena(p)) __real__ZdaPvm(p, n);
}
void __wrap__ZdlPvRKSt9nothrow_t(void* p, const std::nothrow_t& t) {
  if (!ownedByArena(p)) __real__ZdlPvRKSt9nothrow_t(p, t);
}
void __wrap__ZdaPvRKSt9nothrow_t(void* p, const std::nothrow_t& t) {
  if (!ownedByArena(p)) __real__ZdaPvRKSt9nothrow_t(p, t);
}
void __wrap__ZdlPvSt11align_val_t(void* p, size_t al) {
  if (!ownedByArena(p)) __real__ZdlPvSt11align_val_t(p, al);
}
void __wrap__ZdaPvSt11align_val_t(void* p, size_t al) {
  if (!ownedByArena(p)) __real__ZdaPvSt11align_val_t(p, al);
}
void __wrap__ZdlPvmSt11align_val_t(void* p, size_t n, size_t al) {
  if (!ownedByArena(p)) __real__ZdlPvmSt11align_val_t(p, n, al);
}
void __wrap__ZdaPvmSt11align_val_t(void* p, size_t n, size_t al) {
  if (!ownedByArena(p)) __real__ZdaPvmSt11align_val_t(p, n, al);
}
void __wrap__ZdlPvSt11align_val_tRKSt9nothrow_t(void* p, size_t al, const std::nothrow_t& t) {
  if (!ownedByArena(p)) __real__ZdlPvSt11align_val_tRKSt9nothrow_t(p, al, t);
}
void __wrap__ZdaPvSt11align_val_tRKSt9nothrow_t(void* p, size_t al, const std::nothrow_t& t) {
  if (!ownedByArena(p)) __real__ZdaPvSt11align_val_tRKSt9nothrow_t(p, al, t);
}

}  // extern "C"
