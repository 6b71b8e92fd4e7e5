// The one error path of the C API (capi_errors.hpp): the exception table, the message sinks and
// cdyn_last_error.
#include "capi_errors.hpp"

#include <cstdarg>
#include <cstdio>
#include <exception>
#include <new>
#include <system_error>

namespace cd = clusterdyn;

static_assert(CDYN_ERR_INVALID_SIZE == static_cast<int>(cd::Status::InvalidSize) &&
                  CDYN_ERR_NON_FINITE == static_cast<int>(cd::Status::NonFinite) &&
                  CDYN_ERR_NOT_UNIT_QUATERNION == static_cast<int>(cd::Status::NotUnitQuaternion) &&
                  CDYN_ERR_NOT_POSITIVE_DEFINITE ==
                      static_cast<int>(cd::Status::NotPositiveDefinite) &&
                  CDYN_ERR_INVALID_INDEX == static_cast<int>(cd::Status::InvalidIndex) &&
                  CDYN_ERR_CONSTRAINT_FAILURE == static_cast<int>(cd::Status::ConstraintFailure) &&
                  CDYN_ERR_WORKSPACE_MISMATCH == static_cast<int>(cd::Status::WorkspaceMismatch) &&
                  CDYN_ERR_INVALID_ARGUMENT == static_cast<int>(cd::Status::InvalidArgument) &&
                  CDYN_ERR_NOT_CONVERGED == static_cast<int>(cd::Status::NotConverged),
              "cdyn_status 1..99 mirror clusterdyn::Status (fromStatus)");

namespace cdyn_internal {

namespace {
/// cdyn_last_error: a pointer to static text per thread (initial-exec: no allocation on first
/// use, as the arena pointer of arena.cpp).
__attribute__((tls_model("initial-exec"))) thread_local const char* t_lastError = "";

/// One row of the table: the status, and the message (what() appended when given).
cdyn_status row(Sink sink, cdyn_status s, const char* text, const char* what) noexcept {
  if (sink.buf == nullptr) return refuse(s, text);
  if (sink.len == 0) return s;
  if (what)
    std::snprintf(sink.buf, sink.len, "%s%s", text, what);
  else
    std::snprintf(sink.buf, sink.len, "%s", text);
  return s;
}

/// An exception the C API does not expect: a bug (what() only where a buffer can hold it).
cdyn_status internalError(Sink sink, const char* what) noexcept {
  return sink.buf ? row(sink, CDYN_ERR_INTERNAL, "internal error: ", what)
                  : row(sink, CDYN_ERR_INTERNAL, "internal error (an exception): please report",
                        nullptr);
}
}  // namespace

void setLastError(const char* staticMessage) noexcept { t_lastError = staticMessage; }

cdyn_status vsay(Sink sink, cdyn_status s, const char* fmt, va_list args) noexcept {
  if (sink.buf == nullptr) return refuse(s, fmt);
  if (sink.len > 0) std::vsnprintf(sink.buf, sink.len, fmt, args);
  return s;
}

cdyn_status say(Sink sink, cdyn_status s, const char* fmt, ...) noexcept {
  va_list args;
  va_start(args, fmt);
  vsay(sink, s, fmt, args);
  va_end(args);
  return s;
}

cdyn_status statusOfException(Sink sink, Phase phase) noexcept {
  try {
    throw;
  } catch (const std::bad_alloc&) {
    return row(sink, CDYN_ERR_OUT_OF_MEMORY, "out of memory", nullptr);
  } catch (const cd::ModelError& e) {
    const cdyn_status s = phase == Phase::Load ? CDYN_ERR_PARSE : CDYN_ERR_INVALID_ARGUMENT;
    const char* text = phase == Phase::Load
                           ? "the model could not be loaded (pass err to read the parse error)"
                           : "invalid argument (a model error; no handle holds its text)";
    return sink.buf ? row(sink, s, "", e.what()) : row(sink, s, text, nullptr);
  } catch (const std::system_error& e) {  // a thread that cannot start: out of resources
    if (e.code() == std::errc::resource_unavailable_try_again)
      return row(sink, CDYN_ERR_OUT_OF_MEMORY, "out of resources: a thread cannot start", nullptr);
    return internalError(sink, e.what());
  } catch (const std::exception& e) {
    return internalError(sink, e.what());
  } catch (...) {
    return row(sink, CDYN_ERR_INTERNAL, "internal error: unknown exception", nullptr);
  }
}

}  // namespace cdyn_internal

extern "C" const char* cdyn_last_error(void) { return cdyn_internal::t_lastError; }
