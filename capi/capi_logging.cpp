// C API: logging (clusterdyn.h, "Logging").
#include "capi_internal.hpp"

using namespace cdyn_internal;

extern "C" {

static_assert(CDYN_LOG_DEBUG == static_cast<int>(cd::LogLevel::Debug) &&
                  CDYN_LOG_INFO == static_cast<int>(cd::LogLevel::Info) &&
                  CDYN_LOG_WARN == static_cast<int>(cd::LogLevel::Warn) &&
                  CDYN_LOG_ERROR == static_cast<int>(cd::LogLevel::Error) &&
                  CDYN_LOG_OFF == static_cast<int>(cd::LogLevel::Off),
              "cdyn_log_level mirrors clusterdyn::LogLevel");

cdyn_status cdyn_set_log_level(int level) {
  if (level < CDYN_LOG_DEBUG || level > CDYN_LOG_OFF)
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_set_log_level: level is not a cdyn_log_level (0..4)");
  return guard(Sink{}, Phase::Call, [&] {
    cd::setLogLevel(static_cast<cd::LogLevel>(level));
    return CDYN_OK;
  });
}

cdyn_status cdyn_get_log_level(int* level) {
  if (level == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "cdyn_get_log_level: level is NULL");
  return guard(Sink{}, Phase::Call, [&] {
    *level = static_cast<int>(cd::logLevel());
    return CDYN_OK;
  });
}

}  // extern "C"
