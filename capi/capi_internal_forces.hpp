// Accessors used by capi_forces.cpp, on the handle structs of capi_internal.hpp.
#pragma once

#include <cstdint>

#include "capi_internal.hpp"

namespace clusterdyn::capi_forces {

constexpr std::uint32_t kModelTag = cdyn_internal::kModelTag;
constexpr std::uint32_t kWorkspaceTag = cdyn_internal::kWorkspaceTag;

inline std::uint32_t modelTag(const void* m) { return static_cast<const cdyn_model*>(m)->tag; }
inline const ClusterModel& clusterModel(const void* m) {
  return static_cast<const cdyn_model*>(m)->cm;
}
inline std::uint32_t workspaceTag(const void* ws) {
  return static_cast<const cdyn_workspace*>(ws)->tag;
}
inline const void* workspaceModel(const void* ws) {
  return static_cast<const cdyn_workspace*>(ws)->model;
}
inline ClusterData& clusterData(void* ws) { return static_cast<cdyn_workspace*>(ws)->body->data; }
inline const VecX& lastTau(void* ws) { return static_cast<cdyn_workspace*>(ws)->body->lastTau; }
inline std::atomic<int>& liveHandles(const void* m) {
  return static_cast<const cdyn_model*>(m)->workspaces;
}
inline int lastDynamics(const void* ws) {
  return static_cast<const cdyn_workspace*>(ws)->lastDynamics;
}
using cdyn_internal::kCeAbaIndependent;
using cdyn_internal::kCeAbaSpanning;
using cdyn_internal::kCeRnea;

}  // namespace clusterdyn::capi_forces
