// Logging control. clusterdyn logs (spdlog, logger name "clusterdyn", to stderr) only while a
// model is loaded: warnings about accepted-but-suspicious input (e.g. an inertia violating the
// triangle inequality, a URDF+ element ignored by the tree-only loader) and debug summaries.
// Compute functions never log.
#pragma once

namespace clusterdyn {

enum class LogLevel { Debug = 0, Info = 1, Warn = 2, Error = 3, Off = 4 };

/// Sets the level of the "clusterdyn" logger (default: Warn). Thread-safe.
void setLogLevel(LogLevel level);

/// Current level of the "clusterdyn" logger.
LogLevel logLevel();

}  // namespace clusterdyn
