// Kinematics on the cluster tree and the per-cluster explicit constraint (G, g).
#include "check.hpp"
#include "cluster_detail.hpp"
#include "tree_step.hpp"

namespace clusterdyn::detail {

Status checkClusterArgs(const ClusterModel& cm, ClusterData& data, const Eigen::Ref<const VecX>& q,
                        const Eigen::Ref<const VecX>* v) {
  if (data.model != &cm)
    return fail(data.tree, Status::WorkspaceMismatch,
                "the workspace was created for another model");
  CDYN_TRY(checkConfiguration(cm.tree, data.tree, q));
  if (v) CDYN_TRY(checkVector(data.tree, *v, cm.tree.nv, "v"));
  return Status::Ok;
}

Status clusterVelocityPass(const ClusterModel& cm, ClusterData& data,
                           const Eigen::Ref<const VecX>& q, const double* v, bool withBias,
                           bool checkState) {
  const Model& tree = cm.tree;
  Data& td = data.tree;
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    const int last = c.firstBody + c.nbodies;
    for (int b = c.firstBody; b < last; ++b) {
      placementStep(tree, td, b, q);
      const int p = tree.parent[b];
      const Motion vJ = v ? jointMotion(tree.joints[b], v + tree.idx_v[b]) : Motion::Zero();
      td.v[b] = p >= 0 ? Motion(td.liMi[b].actInvMotion(td.v[p]) + vJ) : vJ;
      td.c[b] = crossMotion(td.v[b], vJ);
    }
    if (!c.constrained()) continue;
    ClusterWorkspace& w = data.clusters[k];
    clusterRelativePoses(cm, data, k);
    if (c.implicit()) {
      for (int b = c.firstBody; b < last; ++b) {
        const int p = tree.parent[b];
        data.localBias[b] = td.c[b];
        if (p >= c.firstBody) data.localBias[b] += td.liMi[b].actInvMotion(data.localBias[p]);
      }
      constraintJacobian(cm, data, k);
      if (withBias) constraintBias(cm, data, k);
      CDYN_TRY(explicitForm(cm, data, k, withBias));
    }
    if (checkState) {
      constraintResidual(cm, data, k, q);
      const double pos = w.phi.size() ? w.phi.cwiseAbs().maxCoeff() : 0.0;
      if (pos > 1e-6)
        return fail(td, Status::ConstraintFailure,
                    "q violates the constraints of cluster '%s' (residual %.3g); use "
                    "solveLoopClosure or projectToConstraints",
                    c.name.c_str(), pos);
      if (v) {
        const Eigen::Map<const VecX> vk(v + c.v0, c.nv);
        const double scale = 1.0 + vk.cwiseAbs().maxCoeff();
        const MatX& K = c.implicit() ? w.K : c.Kexplicit;
        double vel = 0.0;
        for (Eigen::Index r = 0; r < K.rows(); ++r) vel = std::max(vel, std::abs(K.row(r).dot(vk)));
        if (vel > 1e-6 * scale)
          return fail(td, Status::ConstraintFailure,
                      "v violates the velocity constraints of cluster '%s' (|K v| = %.3g)",
                      c.name.c_str(), vel);
      }
    }
  }
  return Status::Ok;
}

}  // namespace clusterdyn::detail
