// Internal logging: the library's own spdlog logger "clusterdyn" (stderr), used at model-load
// time only (never in compute functions). Level: clusterdyn::setLogLevel (logging.hpp).
#pragma once

#include <spdlog/spdlog.h>

#include <utility>

namespace clusterdyn::log {

/// The "clusterdyn" logger: the one an application registered under that name, else a
/// stderr logger created on first use (never the default stdout logger).
spdlog::logger& logger();

template <typename... Args>
void warn(spdlog::format_string_t<Args...> fmt, Args&&... args) {
  logger().warn(fmt, std::forward<Args>(args)...);
}

template <typename... Args>
void debug(spdlog::format_string_t<Args...> fmt, Args&&... args) {
  logger().debug(fmt, std::forward<Args>(args)...);
}

}  // namespace clusterdyn::log
