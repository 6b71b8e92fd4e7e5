// Allocation redirection inside libclusterdyn.so.
//
// The shared library is linked with -Wl,--wrap=malloc,--wrap=_Znwm,... (see CMakeLists.txt), so
// every heap call made by code linked INTO the library (the C API and the static C++ core,
// including inlined std::vector / Eigen allocations) goes through the __wrap_* functions of
// arena.cpp. They forward to the process allocator (__real_*, i.e. whatever malloc/new the
// process uses, interposers included), except while an ArenaScope is active on the calling
// thread: then allocations are carved from that arena (a bump allocator over caller memory),
// frees of arena memory do nothing, and exhaustion is an allocation failure (never a silent
// fall back to the heap). A measuring arena forwards to the process allocator and records how
// many arena bytes the same allocations would need.
//
// Nothing here is exported (the version script keeps only cdyn_* symbols).
#pragma once

#include <cstddef>

namespace cdyn_internal {

/// Alignment of every arena allocation (malloc's guarantee on x86-64 / aarch64 glibc).
constexpr std::size_t kArenaAlign = 16;

struct Arena {
  unsigned char* begin = nullptr;
  unsigned char* cur = nullptr;
  unsigned char* end = nullptr;
  bool measuring = false;
  std::size_t measured = 0;  ///< measuring: bytes a bump arena would need

  static Arena over(void* mem, std::size_t size) {
    Arena a;
    a.begin = a.cur = static_cast<unsigned char*>(mem);
    a.end = a.begin + size;
    return a;
  }
  static Arena measure() {
    Arena a;
    a.measuring = true;
    return a;
  }
  bool owns(const void* p) const {
    const unsigned char* c = static_cast<const unsigned char*>(p);
    return c >= begin && c < end;
  }
  void reset() { cur = begin; }
};

/// Routes the calling thread's allocations (inside libclusterdyn) to `arena` while alive.
class ArenaScope {
 public:
  explicit ArenaScope(Arena* arena) noexcept;
  ~ArenaScope();
  ArenaScope(const ArenaScope&) = delete;
  ArenaScope& operator=(const ArenaScope&) = delete;

 private:
  Arena* previous_;
};

}  // namespace cdyn_internal
