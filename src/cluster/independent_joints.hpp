// The joints whose coordinates are independent (y, y_dot) in a cluster: every joint of an
// unconstrained cluster, the joints marked independent in a constrained one. A joint is
// independent or dependent as a whole (a spherical joint's quaternion and its 3 velocities), so
// y holds each independent joint's nq positions and y_dot its nv velocities, consecutive and in
// the cluster's body order.
#pragma once

#include "clusterdyn/cluster_model.hpp"

namespace clusterdyn::detail {

/// Calls f(body, yq, yv, j) for each independent joint of cluster c in order: its body, the index
/// of its first position in y (global), of its first velocity in y_dot (global), and of that
/// velocity in c.independent.
template <class F>
void forEachIndependentJoint(const ClusterModel& cm, const Cluster& c, F&& f) {
  const Model& tree = cm.treeModel;
  int yq = c.yq0, yv = c.y0;
  for (int j = 0; j < c.ny;) {
    const int b = tree.velocityOwner[c.v0 + c.independent[j]];
    f(b, yq, yv, j);
    yq += tree.nqs[b];
    yv += tree.nvs[b];
    j += tree.nvs[b];
  }
}

}  // namespace clusterdyn::detail
