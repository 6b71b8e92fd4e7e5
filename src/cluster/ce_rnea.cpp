// Constraint-embedding RNEA (Chignoli et al. 2023, §V): spanning accelerations v_dot = G y_ddot + g
// per cluster, Newton-Euler on the tree, then tau_k = S_k^T f_k = G_k^T (S^T f)_k (eq. 62-65, 23).
#include "cluster/cluster_detail.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "core/check.hpp"
#include "tree/rnea_passes.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn {

namespace {

/// Spanning accelerations of cluster k: q_ddot_k = G_k y_ddot_k + g_k (eq. 3; g_k = 0 and G_k
/// constant for couplings and mimics, G_k = 1 without constraints). ydd == nullptr: y_ddot = 0.
void spanningAccelerations(const ClusterModel& cm, ClusterData& data, int k, const double* ydd) {
  const Cluster& c = cm.clusters[k];
  auto qdd = data.qdd.segment(c.v0, c.nv);
  if (!c.constrained()) {
    if (ydd)
      qdd = Eigen::Map<const VecX>(ydd + c.y0, c.ny);
    else
      qdd.setZero();
    return;
  }
  const ClusterWorkspace& w = detail::scratch(data)[k];
  qdd = w.g;
  if (ydd && c.ny == 1)
    qdd.noalias() += w.G.col(0) * ydd[c.y0];
  else if (ydd)
    qdd.noalias() += w.G * Eigen::Map<const VecX>(ydd + c.y0, c.ny);
}

/// tau_y = G^T tau for every cluster (eq. 23 and 65, tau = S^T f of the spanning tree in
/// data.treeData.tau).
void independentForces(const ClusterModel& cm, ClusterData& data, VecX& out) {
  const VecX& tau = data.treeData.tau;
  const std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    if (c.constrained() && c.ny == 1)
      out[c.y0] = ws[k].G.col(0).dot(tau.segment(c.v0, c.nv));
    else if (c.constrained())
      out.segment(c.y0, c.ny).noalias() = ws[k].G.transpose() * tau.segment(c.v0, c.nv);
    else
      out.segment(c.y0, c.ny) = tau.segment(c.v0, c.nv);
  }
}

/// Models whose clusters all have a constant G (couplings, mimics): check the state, q_ddot =
/// G y_ddot, the tree RNEA in one fused pass, tau_y = G^T tau.
Status ceRneaConstantG(const ClusterModel& cm, ClusterData& data, ConstVecRef q, const double* v,
                       const double* ydd, const Force* fext, VecX& out) {
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    if (cm.clusters[k].constrained()) CDYN_TRY(detail::checkClusterState(cm, data, k, q, v));
    spanningAccelerations(cm, data, k, ydd);
  }
  CDYN_TRY(detail::rneaPasses(cm.treeModel, data.treeData, q, v, data.qdd.data(), fext,
                              data.treeData.tau));
  independentForces(cm, data, out);
  return detail::ok(data.treeData);
}

Status ceRneaCore(const ClusterModel& cm, ClusterData& data, ConstVecRef q, const double* v,
                  const double* ydd, const Force* fext, VecX& out) {
  if (!cm.hasImplicitClusters()) return ceRneaConstantG(cm, data, q, v, ydd, fext, out);
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  const Motion a0 = detail::gravityAcceleration(tree);
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    // Kinematics (and G, g) of cluster k, then its accelerations and forces (eq. 62-63).
    CDYN_TRY(detail::clusterVelocityStep(cm, data, k, q, v, detail::Bias::Compute,
                                         detail::StateCheck::Check,
                                         detail::OutputPoses::ImplicitOnly));
    spanningAccelerations(cm, data, k, ydd);
    const Cluster& c = cm.clusters[k];
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
      const int p = tree.parent[b];
      Motion& a = td.a_gf[b];
      a = td.liMi[b].actInvMotion(p >= 0 ? td.a_gf[p] : a0) + td.c[b];
      a += detail::jointMotion(tree.joints[b], data.qdd.data() + tree.idx_v[b]);
      const SpatialInertia& I = tree.inertias[b];
      td.f[b] = I * a + crossForce(td.v[b], I * td.v[b]);
      if (fext) td.f[b] -= fext[b];
    }
  }
  for (int b = tree.nbodies - 1; b >= 0; --b) {
    const Joint& joint = tree.joints[b];
    if (joint.nv == 1)
      td.tau[tree.idx_v[b]] = joint.S.col(0).dot(td.f[b]);
    else
      td.tau.segment(tree.idx_v[b], joint.nv).noalias() = joint.S.transpose() * td.f[b];
    const int p = tree.parent[b];
    if (p >= 0) td.f[p] += td.liMi[b].actForce(td.f[b]);
  }
  independentForces(cm, data, out);
  return detail::ok(td);
}

}  // namespace

Status ceRnea(const ClusterModel& model, ClusterData& data, ConstVecRef q, ConstVecRef v,
              ConstVecRef ydd, const Force* fext) {
  CDYN_TRY(detail::checkClusterArgs(model, data, q, &v));
  CDYN_TRY(detail::checkVector(data.treeData, ydd, model.ny, "ydd"));
  CDYN_TRY(detail::checkForces(model.treeModel, data.treeData, fext));
  const Status s = ceRneaCore(model, data, q, v.data(), ydd.data(), fext, data.tauY);
  return detail::checkOverflow(data.treeData, s, data.tauY, "ceRnea: tau",
                               {{"q", detail::maxAbs(q), 1},
                                {"v", detail::maxAbs(v), 2},
                                {"ydd", detail::maxAbs(ydd), 1},
                                {"fext", detail::maxAbsForces(model.treeModel, fext), 1}});
}

Status clusterBias(const ClusterModel& model, ClusterData& data, ConstVecRef q, ConstVecRef v) {
  CDYN_TRY(detail::checkClusterArgs(model, data, q, &v));
  const Status s = ceRneaCore(model, data, q, v.data(), nullptr, nullptr, data.C);
  return detail::checkOverflow(data.treeData, s, data.C, "clusterBias: C",
                               {{"q", detail::maxAbs(q), 1}, {"v", detail::maxAbs(v), 2}});
}

}  // namespace clusterdyn
