// The library's logger (see log.hpp, logging.hpp).
#include "clusterdyn/logging.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

#include "core/log.hpp"

namespace clusterdyn {
namespace log {

spdlog::logger& logger() {
  static const std::shared_ptr<spdlog::logger> instance = [] {
    std::shared_ptr<spdlog::logger> l = spdlog::get("clusterdyn");
    if (!l) {
      try {
        l = spdlog::stderr_color_mt("clusterdyn");
      } catch (const spdlog::spdlog_ex&) {  // registered concurrently by the application
        l = spdlog::get("clusterdyn");
      }
    }
    return l;
  }();
  return *instance;
}

}  // namespace log

void setLogLevel(LogLevel level) {
  log::logger().set_level(
      static_cast<spdlog::level::level_enum>(level == LogLevel::Debug   ? spdlog::level::debug
                                             : level == LogLevel::Info  ? spdlog::level::info
                                             : level == LogLevel::Warn  ? spdlog::level::warn
                                             : level == LogLevel::Error ? spdlog::level::err
                                                                        : spdlog::level::off));
}

LogLevel logLevel() {
  switch (log::logger().level()) {
    case spdlog::level::trace:
    case spdlog::level::debug:
      return LogLevel::Debug;
    case spdlog::level::info:
      return LogLevel::Info;
    case spdlog::level::warn:
      return LogLevel::Warn;
    case spdlog::level::err:
    case spdlog::level::critical:
      return LogLevel::Error;
    default:
      return LogLevel::Off;
  }
}

}  // namespace clusterdyn
