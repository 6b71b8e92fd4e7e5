// Constraint-embedding RNEA (Chignoli et al. 2023, §V): spanning accelerations v_dot = G y_ddot + g
// per cluster, Newton-Euler on the tree, then tau_k = S_k^T f_k = G_k^T (S^T f)_k (eq. 62-65, 23).
#include "cluster/cluster_detail.hpp"
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

/// tau_y = G^T tau for every cluster (eq. 23 and 65, tau = S^T f of the spanning tree in
/// data.treeData.tau).
void independentForces(const ClusterModel& cm, ClusterData& data, VecX& out) {
  const double* const tau = data.treeData.tau.data();
  const std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const Cluster& c = cm.clusters[k];
    if (!c.constrained()) {
      for (int i = 0; i < c.nv; ++i) out[c.y0 + i] = tau[c.v0 + i];
    } else if (c.ny == 1) {
      const double* const G = ws[k].G.data();
      double x = 0.0;
      for (int i = 0; i < c.nv; ++i) x += G[i] * tau[c.v0 + i];
      out[c.y0] = x;
    } else {
      out.segment(c.y0, c.ny).noalias() =
          ws[k].G.transpose() * data.treeData.tau.segment(c.v0, c.nv);
    }
  }
}

/// Force of a rotor in its output body's frame: v_r = v_o + s qd, a_r = a_o + s qdd + v_o x s qd,
/// f = I a_r + v_r x* I v_r (Featherstone Table 5.1 with constant s and I), in scalar form.
inline Force rotorForce(const OutputFrameRotor& rotor, const Motion& vo, const Motion& ao,
                        double qd, double qdd) {
  const Motion& s = rotor.axis;
  const SpatialInertia& I = rotor.inertia;
  double w[3], u[3], a[3], b[3];  // v_r = [w; u], a_r = [a; b]
  for (int i = 0; i < 3; ++i) w[i] = vo[i] + s[i] * qd, u[i] = vo[i + 3] + s[i + 3] * qd;
  for (int i = 0; i < 3; ++i) {  // v_o x s = [wo x sw; wo x sv + vo x sw]
    const int j = (i + 1) % 3, k = (i + 2) % 3;
    a[i] = ao[i] + s[i] * qdd + (vo[j] * s[k] - vo[k] * s[j]) * qd;
    b[i] = ao[i + 3] + s[i + 3] * qdd +
           (vo[j] * s[k + 3] - vo[k] * s[j + 3] + vo[j + 3] * s[k] - vo[k + 3] * s[j]) * qd;
  }
  const double* h = I.h.data();
  const Mat3& J = I.Io;
  double Ia[6], Iv[6];  // I a_r and I v_r: I [x; y] = [J x + h x y; m y - h x x]
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3, k = (i + 2) % 3;
    Ia[i] = J(i, 0) * a[0] + J(i, 1) * a[1] + J(i, 2) * a[2] + h[j] * b[k] - h[k] * b[j];
    Ia[i + 3] = I.mass * b[i] - (h[j] * a[k] - h[k] * a[j]);
    Iv[i] = J(i, 0) * w[0] + J(i, 1) * w[1] + J(i, 2) * w[2] + h[j] * u[k] - h[k] * u[j];
    Iv[i + 3] = I.mass * u[i] - (h[j] * w[k] - h[k] * w[j]);
  }
  Force f;  // I a_r + v_r x* [n; l] = I a_r + [w x n + u x l; w x l]
  for (int i = 0; i < 3; ++i) {
    const int j = (i + 1) % 3, k = (i + 2) % 3;
    f[i] = Ia[i] + w[j] * Iv[k] - w[k] * Iv[j] + u[j] * Iv[k + 3] - u[k] * Iv[j + 3];
    f[i + 3] = Ia[i + 3] + w[j] * Iv[k + 3] - w[k] * Iv[j + 3];
  }
  return f;
}

/// The tree RNEA (Featherstone Table 5.1) with the rotors in their output body's frame, where
/// their axis s = X_T S and inertia I are constants: v_r = v_o + s qd, a_r = a_o + s qdd +
/// v_o x s qd, f_r = I a_r + v_r x* I v_r, tau_r = s^T f_r, f_o += f_r (added in the forward
/// pass: o comes first and the backward pass only adds to it); no joint transform of their own
/// (ClusterScratch::rotorsPending, completeRotorBodies). No external forces.
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
      detail::rneaForwardStep(tree, td, i, q, v, qdd, nullptr, a0);
      continue;
    }
    const OutputFrameRotor& rotor = s.rotors[r];
    const int o = rotor.parent;  // -1: a rotor on the world
    const Force f = rotorForce(rotor, o >= 0 ? td.v[o] : Motion::Zero(), o >= 0 ? td.a_gf[o] : a0,
                               v ? v[rotor.iv] : 0.0, qdd[rotor.iv]);
    td.tau[rotor.iv] = rotor.axis.dot(f);
    if (o >= 0) td.f[o] += f;
  }
  for (int i = tree.nbodies - 1; i >= 0; --i)
    if (s.rotorSlot[i] < 0) detail::rneaBackwardStep(tree, td, i, td.tau);
  s.rotorQ = q;
  if (v)
    s.rotorVelocity = Eigen::Map<const VecX>(v, tree.nv);
  else
    s.rotorVelocity.setZero();
  s.rotorsPending = true;
}

/// Models whose clusters all have a constant G (couplings, mimics): check the state, q_ddot =
/// G y_ddot, the tree RNEA in one fused pass (rotors in their output body's frame when there
/// are no external forces), tau_y = G^T tau.
Status ceRneaConstantG(const ClusterModel& cm, ClusterData& data, ConstVecRef q, const double* v,
                       const double* ydd, const Force* fext, VecX& out) {
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k)
    if (cm.clusters[k].constrained()) CDYN_TRY(detail::checkClusterState(cm, data, k, q, v));
  ClusterScratch& s = detail::fullScratch(data);
  double* const qdd = data.qdd.data();  // q_ddot = G y_ddot over the entries of G (eq. 3)
  data.qdd.setZero();
  if (ydd)
    for (const ClusterScratch::GEntry& e : s.constantG) qdd[e.v] += e.value * ydd[e.y];
  s.rotorsPending = false;
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
  detail::addJointDynamicsForces(tree, q.data(), v, data.qdd.data(), td.tau.data());
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
