// Loops left open in the cluster tree (URDF+ closure="cut", ModelOptions::cutLoops).
#pragma once

#include <set>
#include <string>

#include "clusterdyn/model_builder.hpp"
#include "clusterdyn/urdf.hpp"

namespace clusterdyn::detail {

inline bool isCutLoop(const UrdfLoop& l, const ModelOptions& options) {
  return l.cut || options.cutLoops;
}

/// Names of the joints on the tree paths closed by cut loops only (not by an embedded loop or
/// a coupling): once the loop is cut they are ordinary independent coordinates, even when the
/// file marks them independent="false".
std::set<std::string> cutLoopPathJoints(const UrdfDescription& urdf, const ModelOptions& options);

}  // namespace clusterdyn::detail
