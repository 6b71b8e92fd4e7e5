// The position-level closure of a cluster's loops (loop_closure.cpp): the dependent positions
// from the independent ones, and the warm start the next solve starts from.
#pragma once

#include "clusterdyn/cluster_data.hpp"

namespace clusterdyn::detail {

/// Solves the dependent positions of cluster k in q (in place), keeping its independent ones.
/// warmStart (nullable): the cluster's positions before its independent ones were set. When it
/// is closed and regular, predictor-corrector continuation of its branch only; otherwise
/// damped Newton on the selected rows from q, continuation from warmStart, then the same from
/// the model's qReference (ClosureSettings).
Status solveClusterPositions(const ClusterModel& cm, ClusterData& data, int k, Eigen::Ref<VecX> q,
                             const double* warmStart);
/// Builder version: least squares on all rows (allocates; load time only).
Status closeClusterPositions(const ClusterModel& cm, ClusterData& data, int k, Eigen::Ref<VecX> q);
/// The closure's warm-start policy: after a ConstraintFailure, or when data.q is no longer
/// finite, data.q is reset to the model's qReference so that the next solve starts from a
/// closed configuration. Returns s; does nothing when s is Ok.
Status keepWarmStartUsable(const ClusterModel& cm, ClusterData& data, Status s);

}  // namespace clusterdyn::detail
