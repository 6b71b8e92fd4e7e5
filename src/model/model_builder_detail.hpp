#pragma once

#include "clusterdyn/model_builder.hpp"

namespace clusterdyn::detail {
/// Spanning tree of the URDF without chord warnings.
Model buildSpanningTree(const UrdfDescription& urdf, const ModelOptions& options);
}  // namespace clusterdyn::detail
