// The one error path of the C API (not installed; hidden visibility). Every entry point reports
// a refusal as a status plus a message in a Sink, and turns every exception into a status
// through one table (statusOfException, capi_errors.cpp):
//
//   thrown                    status                           message
//   std::bad_alloc            CDYN_ERR_OUT_OF_MEMORY           "out of memory"
//   std::system_error EAGAIN  CDYN_ERR_OUT_OF_MEMORY           "out of resources: a thread ..."
//   clusterdyn::ModelError    CDYN_ERR_PARSE (loading),        what()
//                             CDYN_ERR_INVALID_ARGUMENT (else)
//   std::exception            CDYN_ERR_INTERNAL                "internal error: " what()
//   anything else             CDYN_ERR_INTERNAL                "internal error: unknown exception"
//
// and a clusterdyn::Status into the cdyn_status of the same value (fromStatus). The message goes
// to the handle the call has (a workspace, a constraint workspace, a set, a pool, a loader's
// err buffer); a call with no handle to hold it records a static text for cdyn_last_error.
// Nothing here allocates.
#pragma once

#include <array>
#include <cstdarg>
#include <cstddef>

#include "clusterdyn.h"
#include "clusterdyn/status.hpp"

namespace cdyn_internal {

/// Where the message of a refusal goes: a caller- or handle-owned buffer of len chars, or, when
/// buf is NULL, the thread's cdyn_last_error (static text only: no formatting, no allocation).
struct Sink {
  char* buf = nullptr;
  std::size_t len = 0;
};

/// The sink of a handle's message buffer (what each handle's sinkOf returns).
template <std::size_t N>
Sink sinkIn(std::array<char, N>& buffer) {
  return Sink{buffer.data(), N};
}

/// What a clusterdyn::ModelError means where it is caught: a model that cannot be loaded, or an
/// invalid argument of a call (a constraint that does not fit the model).
enum class Phase { Load, Call };

/// Records the message of a refusal by a function that has no handle to keep it (per thread,
/// cdyn_last_error): static text only, so recording it never allocates (initial-exec TLS).
void setLastError(const char* staticMessage) noexcept;

/// setLastError(staticMessage) and returns s.
inline cdyn_status refuse(cdyn_status s, const char* staticMessage) noexcept {
  setLastError(staticMessage);
  return s;
}

/// Writes the printf-formatted message into the sink and returns s. A sink without a buffer
/// records fmt itself for cdyn_last_error (pass static text without conversions then).
__attribute__((format(printf, 3, 4))) cdyn_status say(Sink sink, cdyn_status s, const char* fmt,
                                                      ...) noexcept;

/// say with a va_list (fail forwards to it).
cdyn_status vsay(Sink sink, cdyn_status s, const char* fmt, va_list args) noexcept;

/// Writes the printf-formatted message into the buffer of handle h and returns s: the one fail
/// of every handle family. sinkOf(h), the handle's buffer, is found by argument-dependent lookup
/// next to the handle's struct (capi_constraints_internal.hpp, capi_contact_internal.hpp); the
/// workspace's fail (capi_internal.hpp) is an overload that also accepts an invalid workspace.
template <typename Handle>
__attribute__((format(printf, 3, 4))) cdyn_status fail(Handle* h, cdyn_status s, const char* fmt,
                                                       ...) noexcept {
  va_list args;
  va_start(args, fmt);
  vsay(sinkOf(h), s, fmt, args);
  va_end(args);
  return s;
}

/// The table above, applied to the exception being handled: call it only inside a catch block.
cdyn_status statusOfException(Sink sink, Phase phase) noexcept;

/// Runs f, turning every exception into a status and a message in the sink.
template <typename F>
cdyn_status guard(Sink sink, Phase phase, F&& f) noexcept {
  try {
    return f();
  } catch (...) {
    return statusOfException(sink, phase);
  }
}

/// clusterdyn::Status -> cdyn_status (the same values, 1..99; checked in capi_errors.cpp).
constexpr cdyn_status fromStatus(clusterdyn::Status s) {
  return static_cast<cdyn_status>(static_cast<int>(s));
}

}  // namespace cdyn_internal
