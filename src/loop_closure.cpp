// Position and velocity level: spanning state from independent coordinates and projection
// onto the constraint manifold.
#include "check.hpp"
#include "cluster_detail.hpp"
#include "clusterdyn/cluster_algorithms.hpp"

namespace clusterdyn {

Status solveLoopClosure(const ClusterModel& cm, ClusterData& data, ConstVecRef y) {
  if (data.model != &cm)
    return detail::fail(data.tree, Status::WorkspaceMismatch,
                        "the workspace was created for another model");
  CDYN_TRY(detail::checkVector(data.tree, y, cm.nyq, "y"));
  for (int k = 0; k < cm.nyq; ++k) data.q[cm.independentPosition[k]] = y[k];
  int totalIterations = 0;
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    if (!cm.clusters[k].constrained()) continue;
    CDYN_TRY(detail::solveClusterPositions(cm, data, k, data.q));
    totalIterations = std::max(totalIterations, data.lastIterations);
  }
  data.lastIterations = totalIterations;
  return detail::checkConfiguration(cm.tree, data.tree, data.q) == Status::Ok
             ? detail::ok(data.tree)
             : Status::NotUnitQuaternion;
}

namespace {
/// v = G y_dot cluster by cluster, with G at data.q.
Status velocitiesFromIndependent(const ClusterModel& cm, ClusterData& data, ConstVecRef ydot) {
  CDYN_TRY(detail::clusterVelocityPass(cm, data, data.q, nullptr, false, false));
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    if (c.constrained())
      data.v.segment(c.v0, c.nv).noalias() = data.clusters[k].G * ydot.segment(c.y0, c.ny);
    else
      data.v.segment(c.v0, c.nv) = ydot.segment(c.y0, c.ny);
  }
  return Status::Ok;
}
}  // namespace

Status independentToSpanning(const ClusterModel& cm, ClusterData& data, ConstVecRef y,
                             ConstVecRef ydot) {
  CDYN_TRY(detail::checkVector(data.tree, ydot, cm.ny, "ydot"));
  CDYN_TRY(solveLoopClosure(cm, data, y));
  CDYN_TRY(velocitiesFromIndependent(cm, data, ydot));
  return detail::ok(data.tree);
}

Status spanningToIndependent(const ClusterModel& cm, ClusterData& data, ConstVecRef q,
                             ConstVecRef v, Eigen::Ref<VecX> y, Eigen::Ref<VecX> ydot) {
  CDYN_TRY(detail::checkClusterArgs(cm, data, q, &v));
  if (y.size() != cm.nyq || ydot.size() != cm.ny)
    return detail::fail(data.tree, Status::InvalidSize, "y / ydot must have sizes %d / %d",
                        cm.nyq, cm.ny);
  for (int k = 0; k < cm.nyq; ++k) y[k] = q[cm.independentPosition[k]];
  for (int k = 0; k < cm.ny; ++k) ydot[k] = v[cm.independentVelocity[k]];
  return detail::ok(data.tree);
}

Status projectToConstraints(const ClusterModel& cm, ClusterData& data, ConstVecRef q,
                            ConstVecRef v) {
  CDYN_TRY(detail::checkClusterArgs(cm, data, q, &v));
  data.q = q;
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    if (!cm.clusters[k].constrained()) continue;
    CDYN_TRY(detail::solveClusterPositions(cm, data, k, data.q));
  }
  CDYN_TRY(detail::clusterVelocityPass(cm, data, data.q, nullptr, false, false));
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    if (!c.constrained()) {
      data.v.segment(c.v0, c.nv) = v.segment(c.v0, c.nv);
      continue;
    }
    ClusterWorkspace& w = data.clusters[k];
    for (int j = 0; j < c.ny; ++j) w.tmpd[j] = v[c.v0 + c.independent[j]];
    data.v.segment(c.v0, c.nv).noalias() = w.G * w.tmpd;
  }
  return detail::ok(data.tree);
}

Status clusterConstraintMatrices(const ClusterModel& cm, ClusterData& data, ConstVecRef q,
                                 ConstVecRef v) {
  CDYN_TRY(detail::checkClusterArgs(cm, data, q, &v));
  CDYN_TRY(detail::clusterVelocityPass(cm, data, q, v.data(), true, false));
  return detail::ok(data.tree);
}

}  // namespace clusterdyn
