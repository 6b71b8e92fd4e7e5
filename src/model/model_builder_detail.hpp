#pragma once

#include "clusterdyn/model_builder.hpp"

namespace clusterdyn::detail {
/// Spanning tree of the URDF without chord warnings.
Model buildSpanningTree(const UrdfDescription& urdf, const ModelOptions& options);
/// The floating root body that, with the links welded to it, has no mass and no inertia, or -1.
/// Its mass matrix is singular wherever the joints below can undo a motion of the base
/// (docs/robustness.md, "Singular inertias").
int masslessFloatingRoot(const Model& model);
/// Warns (log::warn) that body b of the model is such a root, with the NotPositiveDefinite
/// message of the dynamics at the reference configuration (why).
void warnSingularFloatingRoot(const UrdfDescription& urdf, const Model& model, int b,
                              const char* why);
}  // namespace clusterdyn::detail
