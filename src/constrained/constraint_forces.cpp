// Joint, loop and coupling constraint forces (docs/design/constraint-forces.md).
//
// 1. Spanning RNEA forces f^R (no loop or coupling force): after CE-ABA every body b has
//    h_b = IA_b a_b + pA_b (Jain, inter-body forces, eq. 18), its own inertial force plus what its
//    child clusters transmit, and f^R_b = h_b + sum over children c in b's cluster of cXb^T f^R_c.
//    After CE-RNEA, data.treeData.f already is f^R.
// 2. Per constrained cluster: M q_ddot + c - tau = K^T lambda (Chignoli et al. 2023, eq. 1-2
//    with multipliers);
//    on the dependent columns with the selected rows: Kd^T lambda = (S^T f^R - tau)_dep.
// 3. A loop row block lambda_l gives the cut-joint wrench w_l = [Trot lambda_rot; Tlin lambda_lin]
//    in frame P on the successor (-w_l on the predecessor); the tree joint forces are
//    f_b = f^R_b - (loop wrenches acting on b's subtree inside the cluster) (Jain, inter-body
//    forces, eq. 68).
#include "clusterdyn/constraint_forces.hpp"

#include <algorithm>

#include "cluster/cluster_kinematics.hpp"
#include "cluster/loop_constraints.hpp"
#include "core/check.hpp"
#include "core/small_lu.hpp"

namespace clusterdyn {

JointForces::JointForces(const ClusterModel& m) : model(&m) {
  const int n = m.treeModel.nbodies;
  joint.assign(n, Force::Zero());
  jointWorld.assign(n, Force::Zero());
  correction.assign(n, Force::Zero());
  leaf.assign(n, 0);
  for (int b = 0; b < n; ++b) leaf[b] = m.treeModel.children[b].empty();
  loopWrench.assign(m.loops.size(), Force::Zero());
  loopRowStart.assign(m.loops.size() + 1, 0);
  for (size_t l = 0; l < m.loops.size(); ++l)
    loopRowStart[l + 1] = loopRowStart[l] + m.loops[l].rows();
  loopRowForce.setZero(loopRowStart.back());
  relationMultiplier.setZero(static_cast<Eigen::Index>(m.relations.size()));
  relationTermStart.assign(m.relations.size() + 1, 0);
  for (size_t r = 0; r < m.relations.size(); ++r)
    relationTermStart[r + 1] = relationTermStart[r] + static_cast<int>(m.relations[r].terms.size());
  relationJointForce.setZero(relationTermStart.back());
  A.resize(m.clusters.size());
  piv.resize(m.clusters.size());
  int maxDep = 0;
  for (size_t k = 0; k < m.clusters.size(); ++k) {
    const int nd = static_cast<int>(m.clusters[k].dependent.size());
    A[k].setZero(nd, nd);
    piv[k].assign(nd, 0);
    maxDep = std::max(maxDep, nd);
  }
  rhs.setZero(maxDep);
}

namespace {

Status checkForcesArgs(const ClusterModel& model, ClusterData& data, const JointForces& forces) {
  if (data.model != &model)
    return detail::fail(data.treeData, Status::WorkspaceMismatch,
                        "the workspace was created for another model");
  if (forces.model != &model)
    return detail::fail(data.treeData, Status::WorkspaceMismatch,
                        "the JointForces were created for another model");
  return Status::Ok;
}

/// Steps 2-3 for constrained cluster k, with forces.joint holding f^R. tau: spanning forces
/// (nullptr: tauY on the independent joints, none on the dependent ones).
Status clusterConstraintForces(const ClusterModel& cm, ClusterData& data, JointForces& F, int k,
                               const double* tauSpanning) {
  const Model& tree = cm.treeModel;
  const Cluster& c = cm.clusters[k];
  if (!c.implicit() && c.relations.size() == 1 && c.dependent.size() == 1) {
    // One coupling with one dependent joint (a gear or a belt): lambda = r_dep / K_dep.
    const int iv = c.v0 + c.dependent[0];
    const int b = tree.velocityOwner[iv];
    double r = tree.joints[b].S.col(iv - tree.idx_v[b]).dot(F.joint[b]);
    if (tauSpanning) r -= tauSpanning[iv];
    const double kd = c.Kexplicit(0, c.dependent[0]);
    if (kd == 0.0)
      return detail::fail(data.treeData, Status::ConstraintFailure,
                          "cluster '%s': singular constraint block", c.name.c_str());
    const double l = r / kd;
    const int rel = c.relations[0];
    F.relationMultiplier[rel] = l;
    const auto& terms = cm.relations[rel].terms;
    double* out = F.relationJointForce.data() + F.relationTermStart[rel];
    for (size_t t = 0; t < terms.size(); ++t) out[t] = terms[t].second * l;
    return Status::Ok;
  }
  ClusterWorkspace& w = detail::scratch(data)[k];
  if (c.implicit()) detail::constraintJacobian(cm, data, k);  // K at the current poses
  const MatX& K = c.implicit() ? w.K : c.Kexplicit;
  const int nd = static_cast<int>(c.dependent.size());
  // Right-hand side (S^T f^R - tau)_dep.
  for (int i = 0; i < nd; ++i) {
    const int iv = c.v0 + c.dependent[i];
    const int b = tree.velocityOwner[iv];
    double r = tree.joints[b].S.col(iv - tree.idx_v[b]).dot(F.joint[b]);
    if (tauSpanning) r -= tauSpanning[iv];
    F.rhs[i] = r;
  }
  // Kd^T lambda_sel = rhs (Chignoli et al. 2023, eq. 1-2 on the dependent columns).
  auto lam = F.rhs.head(nd);
  if (nd == 1) {
    const double kd = K(c.selectedRows[0], c.dependent[0]);
    if (kd == 0.0)
      return detail::fail(data.treeData, Status::ConstraintFailure,
                          "cluster '%s': singular constraint block", c.name.c_str());
    lam[0] /= kd;
  } else if (nd > 1) {
    MatX& A = F.A[k];
    for (int i = 0; i < nd; ++i)
      for (int m = 0; m < nd; ++m) A(i, m) = K(c.selectedRows[m], c.dependent[i]);
    if (!detail::luFactor(A, F.piv[k]))
      return detail::fail(data.treeData, Status::ConstraintFailure,
                          "cluster '%s': singular constraint block", c.name.c_str());
    detail::luSolveInPlace(A, F.piv[k], lam);
  }
  // Scatter the multipliers: rows of the cluster are its relations, then its loops' rows.
  auto multiplier = [&](int row) {
    for (int m = 0; m < nd; ++m)
      if (c.selectedRows[m] == row) return lam[m];
    return 0.0;
  };
  int row = 0;
  for (int r : c.relations) {
    const double l = multiplier(row++);
    F.relationMultiplier[r] = l;
    const auto& terms = cm.relations[r].terms;
    for (size_t t = 0; t < terms.size(); ++t)
      F.relationJointForce[F.relationTermStart[r] + static_cast<int>(t)] = terms[t].second * l;
  }
  if (!c.implicit()) return Status::Ok;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) F.correction[b].setZero();
  const auto inCluster = [&](int b) { return b >= c.firstBody && b < c.firstBody + c.nbodies; };
  const auto poseInOutput = [&](int b) {
    return inCluster(b) ? w.outputTb[b - c.firstBody] : Transform();
  };
  for (int l : c.loops) {
    const LoopJoint& lj = cm.loops[l];
    const int nr = static_cast<int>(lj.Trot.cols()), nl = static_cast<int>(lj.Tlin.cols());
    auto rows = F.loopRowForce.segment(F.loopRowStart[l], nr + nl);
    for (int j = 0; j < nr + nl; ++j) rows[j] = multiplier(row + j);
    row += nr + nl;
    Force wP;
    wP.head<3>().noalias() = lj.Trot * rows.head(nr);
    wP.tail<3>().noalias() = lj.Tlin * rows.tail(nl);
    F.loopWrench[l] = wP;
    const int s = lj.successorBody, p = lj.predecessorBody;
    if (inCluster(s)) {
      const Transform sMP = poseInOutput(s).inverse() * (poseInOutput(p) * lj.predecessorPlacement);
      F.correction[s] += sMP.actForce(wP);
    }
    if (inCluster(p)) F.correction[p] -= lj.predecessorPlacement.actForce(wP);
  }
  // f_b = f^R_b - loop wrenches on b's subtree inside the cluster (Jain, inter-body forces, eq.
  // 68).
  for (int b = c.firstBody + c.nbodies - 1; b >= c.firstBody; --b) {
    F.joint[b] -= F.correction[b];
    const int p = tree.parent[b];
    if (inCluster(p)) F.correction[p] += data.treeData.liMi[b].actForce(F.correction[b]);
  }
  return Status::Ok;
}

Status constrainedClusters(const ClusterModel& cm, ClusterData& data, JointForces& F,
                           const double* tauSpanning) {
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k)
    if (cm.clusters[k].constrained())
      CDYN_TRY(clusterConstraintForces(cm, data, F, k, tauSpanning));
  return detail::ok(data.treeData);
}

}  // namespace

Status abaJointForces(const Model& model, Data& data, std::vector<Force>& f) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  if (static_cast<int>(f.size()) != model.nbodies)
    return detail::fail(data, Status::InvalidSize, "f has %ld entries, expected %d",
                        static_cast<long>(f.size()), model.nbodies);
  for (int i = 0; i < model.nbodies; ++i) {  // Jain, inter-body forces, eq. 18: f = P a + z
    f[i] = data.pA[i];
    f[i].noalias() += data.IA[i] * data.a_gf[i];
  }
  return detail::ok(data);
}

Status ceAbaConstraintForces(const ClusterModel& model, ClusterData& data, JointForces& forces,
                             ConstVecRef tau, GeneralizedForceLayout layout) {
  CDYN_TRY(checkForcesArgs(model, data, forces));
  const bool spanning = layout == GeneralizedForceLayout::Spanning;
  CDYN_TRY(
      detail::checkVector(data.treeData, tau, spanning ? model.treeModel.nv : model.ny, "tau"));
  detail::completeRotorBodies(model, data);
  const Model& tree = model.treeModel;
  const Data& td = data.treeData;
  std::vector<Force>& f = forces.joint;
  const int n = tree.nbodies;
  for (int b = 0; b < n; ++b) f[b].setZero();
  for (int b = n - 1; b >= 0; --b) {  // f^R_b = IA_b a_b + pA_b + in-cluster children (eq. 18)
    f[b] += td.pA[b];
    if (forces.leaf[b])  // nothing hangs below b: IA_b is the rigid-body inertia
      f[b] += tree.inertias[b] * td.a_gf[b];
    else
      f[b].noalias() += td.IA[b] * td.a_gf[b];
    const int p = tree.parent[b];
    if (p >= 0 && model.bodyCluster[p] == model.bodyCluster[b]) f[p] += td.liMi[b].actForce(f[b]);
  }
  return constrainedClusters(model, data, forces, spanning ? tau.data() : nullptr);
}

Status ceRneaConstraintForces(const ClusterModel& model, ClusterData& data, JointForces& forces) {
  CDYN_TRY(checkForcesArgs(model, data, forces));
  detail::completeRotorBodies(model, data);
  std::copy(data.treeData.f.begin(), data.treeData.f.end(), forces.joint.begin());
  return constrainedClusters(model, data, forces, nullptr);
}

Status jointForcesInWorld(const ClusterModel& model, ClusterData& data, JointForces& forces) {
  CDYN_TRY(checkForcesArgs(model, data, forces));
  detail::completeRotorBodies(model, data);
  for (int b = 0; b < model.treeModel.nbodies; ++b)
    forces.jointWorld[b] = data.treeData.oMi[b].actForce(forces.joint[b]);
  return detail::ok(data.treeData);
}

}  // namespace clusterdyn
