// Constraint-embedding RNEA (Chignoli et al. 2023, §V): spanning accelerations v_dot = G y_ddot + g
// per cluster, Newton-Euler on the tree, then tau_k = S_k^T f_k = G_k^T (S^T f)_k (eq. 62-65, 23).
// ceRnea, and clusterBias: C = ceRnea at y_ddot = 0 (the same passes, as Pinocchio's
// nonLinearEffects is its RNEA at zero acceleration).
#include "cluster/cluster_kinematics.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "core/check.hpp"
#include "tree/joint_dynamics.hpp"
#include "tree/rnea_passes.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn {

namespace {

/// Spanning accelerations of cluster k: q_ddot_k = G_k y_ddot_k + g_k (eq. 3; g_k = 0 and G_k
/// constant for couplings and mimics, G_k = 1 without constraints). ydd == nullptr: y_ddot = 0.
void spanningAccelerations(const ClusterModel& cm, ClusterData& data, int k, const double* ydd) {
  const Cluster& c = cm.clusters[k];
  double* const qdd = data.qdd.data() + c.v0;
  if (!c.constrained()) {
    for (int i = 0; i < c.nv; ++i) qdd[i] = ydd ? ydd[c.y0 + i] : 0.0;
    return;
  }
  const ClusterWorkspace& w = detail::scratch(data)[k];
  const double* const g = w.g.data();
  if (c.ny == 1) {
    const double* const G = w.G.data();
    const double y = ydd ? ydd[c.y0] : 0.0;
    for (int i = 0; i < c.nv; ++i) qdd[i] = g[i] + G[i] * y;
    return;
  }
  auto out = data.qdd.segment(c.v0, c.nv);
  out = w.g;
  if (ydd) out.noalias() += w.G * Eigen::Map<const VecX>(ydd + c.y0, c.ny);
}

/// The tree RNEA (Featherstone Table 5.1) with the rotors in their output body's frame, where
/// their axis s = X_T S and inertia I are constants: v_r = v_o + s qd, a_r = a_o + s qdd +
/// v_o x s qd and f_r = I a_r + v_r x* I v_r split into the rigid part I a_o + v_o x* I v_o,
/// carried by the output body's step with its inertia plus its rotors' (rneaInertias), and
///   f_r - (I a_o + v_o x* I v_o) = I s qdd + qd M v_o + qd^2 s x* I s,
///   tau_r = s^T f_r = (I s)^T a_o + s^T I s qdd - v_o^T M v_o / 2,
/// with M v = I (v x s) + v x* (I s) + s x* (I v) (OutputFrameRotor::velocityForce; v^T M v =
/// 2 (v x s)^T I v, and the qd terms of s^T f_r cancel). f_o += f_r in the forward pass (o
/// comes first and the backward pass only adds to it); no joint transform of their own
/// (deferRotorBodies, completeRotorBodies). No external forces.
void rneaOutputFrameRotors(const ClusterModel& cm, ClusterData& data, ConstVecRef q,
                           const double* v) {
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  ClusterScratch& s = detail::fullScratch(data);
  const double* const qdd = data.qdd.data();
  const Motion a0 = detail::gravityAcceleration(tree);
  for (int i = 0; i < tree.nbodies; ++i) {
    const int r = s.rotorSlot[i];
    if (r < 0) {
      detail::rneaForwardStep(tree, td, i, q, v, qdd, nullptr, a0, s.rneaInertias[i]);
      continue;
    }
    const OutputFrameRotor& rotor = s.rotors[r];
    const int o = rotor.parent;
    const double qd = v ? v[rotor.iv] : 0.0, qdd_r = qdd[rotor.iv];
    if (o < 0) {  // a rotor on the world: v_o = 0, a_o = a0
      Force f = rotor.Iaxis * qdd_r + (qd * qd) * rotor.axisForce;
      f.noalias() += rotor.inertia * a0;
      td.tau[rotor.iv] = rotor.axis.dot(f);
      continue;
    }
    const Motion& vo = td.v[o];
    const Force Mv = rotor.velocityForce * vo;
    td.f[o] += rotor.Iaxis * qdd_r + qd * Mv + (qd * qd) * rotor.axisForce;
    td.tau[rotor.iv] = rotor.Iaxis.dot(td.a_gf[o]) + rotor.axisInertia * qdd_r - 0.5 * vo.dot(Mv);
  }
  for (int i = tree.nbodies - 1; i >= 0; --i)
    if (s.rotorSlot[i] < 0) detail::rneaBackwardStep(tree, td, i, td.tau);
  detail::deferRotorBodies(s, q, v);
}

/// Models whose clusters all have a constant G (couplings, mimics): check the state, q_ddot =
/// G y_ddot, the tree RNEA in one fused pass (rotors in their output body's frame when there
/// are no external forces), tau_y = G^T tau.
Status ceRneaConstantG(const ClusterModel& cm, ClusterData& data, ConstVecRef q, const double* v,
                       const double* ydd, const Force* fext, VecX& out) {
  ClusterScratch& s = detail::fullScratch(data);
  // The state check of every relation in one loop (ClusterScratch::relationChecks); a relation
  // above the tolerance gets its cluster's full check (checkClusterState: the scaled velocity
  // bound and the message).
  const ClusterWorkspace::RelationTerm* term = s.relationCheckTerms.data();
  for (const ClusterScratch::RelationCheck& rel : s.relationChecks) {
    double pos = -rel.offset, vel = 0.0;
    for (const auto* end = s.relationCheckTerms.data() + rel.end; term != end; ++term) {
      pos += term->coeff * q[term->q];
      if (v) vel += term->coeff * v[term->v];
    }
    if (std::abs(pos) <= kClosureSettings.stateTolerance &&
        std::abs(vel) <= kClosureSettings.stateTolerance)
      continue;
    CDYN_TRY(detail::checkClusterState(cm, data, rel.cluster, q, v));
  }
  double* const qdd = data.qdd.data();  // q_ddot = G y_ddot over the entries of G (eq. 3)
  data.qdd.setZero();
  if (ydd)
    for (const ClusterScratch::GEntry& e : s.constantG) qdd[e.v] += e.value * ydd[e.y];
  detail::discardDeferredRotors(s);
  if (!fext && !s.rotors.empty())
    rneaOutputFrameRotors(cm, data, q, v);
  else
    CDYN_TRY(detail::rneaPasses(cm.treeModel, data.treeData, q, v, data.qdd.data(), fext,
                                data.treeData.tau));
  detail::addJointDynamicsForces(cm.treeModel, q.data(), v, data.qdd.data(),
                                 data.treeData.tau.data());  // + A q_ddot - tau_p (MJCF)
  out.setZero();                                             // tau_y = G^T tau (eq. 23, 65)
  const double* const tau = data.treeData.tau.data();
  for (const ClusterScratch::GEntry& e : s.constantG) out[e.y] += e.value * tau[e.v];
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
    CDYN_TRY(detail::clusterVelocityStep(
        cm, data, k, q, v, detail::Bias::Compute, detail::StateCheck::Check,
        detail::OutputPoses::ImplicitOnly, detail::RotorFrame::Body));
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
  detail::addJointDynamicsForces(tree, q.data(), v, data.qdd.data(), td.tau.data());
  detail::independentForces(cm, data, out);
  return detail::ok(td);
}

}  // namespace

Status ceRnea(const ClusterModel& model, ClusterData& data, ConstVecRef q, ConstVecRef v,
              ConstVecRef ydd, const Force* fext) {
  CDYN_TRY(detail::checkClusterArgs(model, data, q, &v));
  CDYN_TRY(detail::checkVector(data.treeData, ydd, model.ny, "ydd"));
  CDYN_TRY(detail::checkForces(model.treeModel, data.treeData, fext));
  const Status s = ceRneaCore(model, data, q, v.data(), ydd.data(), fext, data.tauY);
  if (s == Status::Ok && detail::allFiniteFast(data.tauY)) return s;  // the input magnitudes below
  return detail::checkOverflow(data.treeData, s, data.tauY, "ceRnea: tau",
                               {{"q", detail::maxAbs(q), 1},
                                {"v", detail::maxAbs(v), 2},
                                {"ydd", detail::maxAbs(ydd), 1},
                                {"fext", detail::maxAbsForces(model.treeModel, fext), 1}});
}

Status clusterBias(const ClusterModel& model, ClusterData& data, ConstVecRef q, ConstVecRef v) {
  CDYN_TRY(detail::checkClusterArgs(model, data, q, &v));
  const Status s = ceRneaCore(model, data, q, v.data(), nullptr, nullptr, data.C);
  if (s == Status::Ok && detail::allFiniteFast(data.C)) return s;
  return detail::checkOverflow(data.treeData, s, data.C, "clusterBias: C",
                               {{"q", detail::maxAbs(q), 1}, {"v", detail::maxAbs(v), 2}});
}

}  // namespace clusterdyn
