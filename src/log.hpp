// Internal logging: spdlog, used at model-load time only (never in compute functions).
#pragma once

#include <spdlog/spdlog.h>

namespace clusterdyn::log {
using spdlog::debug;
using spdlog::warn;
}  // namespace clusterdyn::log
