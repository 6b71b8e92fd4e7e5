// JSON views of clusterdyn objects for the command-line tool (nlohmann-json: tools/tests only).
#pragma once

#include <nlohmann/json.hpp>

#include "clusterdyn/cluster_model.hpp"
#include "clusterdyn/model.hpp"

namespace clusterdyn::cli {

/// Bodies, joints (type, parent, q/v index, limits), frames, dof counts and total mass of a
/// model. Infinite limits are written as null.
nlohmann::ordered_json modelInfoJson(const Model& model);

/// Summary of a cluster tree: counts (clusters, spanning / independent dofs), independent
/// coordinate names, loop joints and explicit relations (couplings, mimics).
nlohmann::ordered_json clusterTreeJson(const ClusterModel& model);

/// One entry per cluster (regular order): name, parent, output body, bodies, joints, spanning and
/// independent dof counts and ranges, constraint kind, loops, relations, constant G.
nlohmann::ordered_json clustersJson(const ClusterModel& model);

/// A number, or null when it is not finite (JSON has no infinity).
nlohmann::ordered_json finiteOrNull(double x);

}  // namespace clusterdyn::cli
