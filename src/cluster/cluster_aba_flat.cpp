// CE-ABA's fused steps for a flat scalar cluster (ClusterWorkspace::flatScalar: explicit, one
// independent coordinate y, every body on the output body o), in RotorFrame::Output (without
// external forces). The
// generic steps (cluster_aba_step.cpp: articulatedScalar, accelerationsScalar, with the
// cluster-sized S, c and outputTb) compute the same; tests/test_cluster_flat_steps.cpp proves
// them equal. Each link b is a tree body (Featherstone Table 7.1) whose motion subspace is
// s_b = S_b G_b (Chignoli et al. 2023, eq. 15 without JXJ), each rotor r stays in o's frame with
// its constant axis s_r, inertia I_r and U_r = I_r s_r G_r (OutputFrameRotor: Iaxis g):
//   D    = sum_b s_b^T IA_b s_b + rotorD,   u = tau - sum_b s_b^T pA_b - sum_r G_r s_r^T p_r
//   Ubar = sum_b X_b^T IA_b s_b + rotorUbar,  U^T c = sum_b U_b^T c_b + sum_r U_r^T c_r    (eq. 53)
//   IA_o += sum_b X_b^T IA_b X_b + rotorInertia - Ubar D^-1 Ubar^T                       (eq. 59)
//   pA_o += sum_b X_b^T (pA_b + IA_b c_b) + sum_r (p_r + I_r c_r) + Ubar D^-1 (u - U^T c) (eq. 60)
//   y_ddot = D^-1 (u - U^T c - Ubar^T a_o),  a_b = X_b a_o + c_b + s_b y_ddot          (eq. 53, 61)
// with c_r = v_o x s_r qd_r and p_r = v_r x* I_r v_r (outputFrameRotorBias).
#include "cluster/cluster_aba_step.hpp"
#include "cluster/cluster_joint_dynamics.hpp"
#include "cluster/cluster_kinematics.hpp"
#include "core/check.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn::detail {

Status flatClusterKinematics(const ClusterModel& cm, ClusterData& data, int k,
                             const Eigen::Ref<const VecX>& q, const double* v, StateCheck check) {
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  const Cluster& c = cm.clusters[k];
  ClusterScratch& scr = fullScratch(data);
  const int o = c.outputBody, last = c.firstBody + c.nbodies;
  const Motion vo = o >= 0 ? td.v[o] : Motion::Zero();
  for (int b = c.firstBody; b < last; ++b) {
    const int iv = tree.idx_v[b];
    const int r = scr.rotorSlot[b];
    if (r >= 0) {
      outputFrameRotorBias(scr, r, vo, v[iv]);
      continue;
    }
    placementStep(tree, td, b, q);  // Featherstone Table 7.1, pass 1
    const Motion vJ = tree.joints[b].S.col(0) * v[iv];
    td.v[b] = td.liMi[b].actInvMotion(vo) + vJ;
    td.c[b] = crossMotion(td.v[b], vJ);
    const SpatialInertia& I = tree.inertias[b];
    td.IA[b] = I.matrix();
    td.pA[b] = crossForce(td.v[b], I * td.v[b]);
    data.rigidInertia[b] = 1;
  }
  if (check == StateCheck::Check) return checkClusterState(cm, data, k, q, v);
  return Status::Ok;
}

Status articulatedFlat(const ClusterModel& cm, ClusterData& data, int k, const double* tau,
                       ForceCoordinates forces) {
  const Model& tree = cm.treeModel;
  Data& td = data.treeData;
  const Cluster& c = cm.clusters[k];
  ClusterWorkspace& w = scratch(data)[k];
  const ClusterScratch& scr = fullScratch(data);
  const int o = c.outputBody, last = c.firstBody + c.nbodies;
  double D = w.rotorD(0, 0);
  double u = forces == ForceCoordinates::Spanning
                 ? w.G.col(0).dot(Eigen::Map<const VecX>(tau + c.v0, c.nv))
                 : tau[c.y0];
  double Utc = 0.0;  // U^T c
  Force Ubar = w.rotorUbar.col(0);
  Force po = Force::Zero();
  Mat6* IAo = o >= 0 ? &td.IA[o] : nullptr;
  for (int b = c.firstBody; b < last; ++b) {
    const int r = scr.rotorSlot[b];
    if (r >= 0) {
      const OutputFrameRotor& rotor = scr.rotors[r];
      u -= rotor.g * rotor.axis.dot(scr.rotorP[r]);  // eq. 53: u
      Utc += rotor.g * rotor.Iaxis.dot(scr.rotorC[r]);
      if (IAo) po += scr.rotorP[r] + rotor.inertia * scr.rotorC[r];
      continue;
    }
    const int i = 6 * (b - c.firstBody);
    const auto s = w.S.block<6, 1>(i, 0);  // constant: S_b G_b
    const Mat6& IA = td.IA[b];
    const Transform& X = td.liMi[b];
    auto U = w.U.block<6, 1>(i, 0);
    U.noalias() = IA * s;  // eq. 53: U, D, u
    D += s.dot(U);
    u -= s.dot(td.pA[b]);
    const Motion& cb = td.c[b];
    Utc += U.dot(cb);
    Ubar += X.actForce(U);
    if (!IAo) continue;
    if (scr.outputOfCluster[b] || !data.rigidInertia[b])  // eq. 59: X^T IA X
      *IAo += actInertia(X, IA);
    else
      tree.inertias[b].transformedBy(X).addTo(*IAo);
    Force pb = td.pA[b];
    pb.noalias() += IA * cb;
    po += X.actForce(pb);
  }
  if (tree.hasArmature()) D += clusterArmatureScalar(tree, c, w.G);
  if (!(D > 0.0))
    return fail(td, Status::NotPositiveDefinite, "articulated inertia of cluster '%s' is singular",
                c.name.c_str());
  const double Dinv = 1.0 / D;
  w.D(0, 0) = D;
  w.Dinv(0, 0) = Dinv;
  w.u[0] = u;
  w.Utc[0] = Utc;
  w.Ubar.col(0) = Ubar;
  if (!IAo) return Status::Ok;
  w.rotorInertia.addTo(*IAo);
  IAo->noalias() -= (Dinv * Ubar) * Ubar.transpose();  // eq. 59
  po += Ubar * (Dinv * (u - Utc));                     // eq. 60
  td.pA[o] += po;
  return Status::Ok;
}

void accelerationsFlat(const ClusterModel& cm, ClusterData& data, int k, const Motion& ao) {
  Data& td = data.treeData;
  const Cluster& c = cm.clusters[k];
  const ClusterWorkspace& w = scratch(data)[k];
  const ClusterScratch& scr = fullScratch(data);
  const int last = c.firstBody + c.nbodies;
  const double ydd = w.Dinv(0, 0) * (w.u[0] - w.Utc[0] - w.Ubar.col(0).dot(ao));  // eq. 53
  data.ydd[c.y0] = ydd;
  for (int b = c.firstBody; b < last; ++b) {  // eq. 61 (rotors: completeRotorBodies)
    if (scr.rotorSlot[b] >= 0) continue;
    Motion& a = td.a_gf[b];
    a = td.liMi[b].actInvMotion(ao) + td.c[b];
    a.noalias() += w.S.block<6, 1>(6 * (b - c.firstBody), 0) * ydd;
  }
  const double* G = w.G.data();
  double* qdd = data.qdd.data() + c.v0;
  for (int i = 0; i < c.nv; ++i) qdd[i] = G[i] * ydd;  // g = 0: no loop joint
}

}  // namespace clusterdyn::detail
