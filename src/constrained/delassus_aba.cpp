// The Delassus matrix and the impulse response on the quantities of the CE-ABA that ran before
// (delassus_aba.hpp): the constraint-space propagation of delassus.cpp (PV-OSIMr, Sathya, Decré,
// Swevers 2024) and the reduced sweeps of the row forces (Sathya & Carpentier 2024, Alg. 2) read
// ceAba's poses, motion subspaces and pass-2 terms. Only the bodies that can carry rows are
// visited: the rotors ceAba keeps in their output body's frame have no pose of their own there.
#include "constrained/delassus_aba.hpp"

#include "cluster/cluster_aba_step.hpp"
#include "cluster/cluster_kinematics.hpp"
#include "constrained/constraint_detail.hpp"
#include "core/check.hpp"
#include "tree/axis_transforms.hpp"

namespace clusterdyn::detail {

namespace {

/// Backward step of cluster k (Alg. 2 line 3): du_k = -S^T dp over k's bodies and
/// dp_o += Xh^T dp + Ubar D^-1 du_k (Ubar = Xh^T U, stored by pass 2).
void backwardStep(const ClusterModel& cm, ClusterData& data, int k, Force* dp, double* du) {
  const Cluster& c = cm.clusters[k];
  const int o = c.outputBody;
  const Data& td = data.treeData;
  if (!c.constrained()) {
    const int b = c.firstBody;
    const Joint& joint = cm.treeModel.joints[b];
    if (joint.type == JointType::Floating && o < 0) {  // S = I
      Eigen::Map<Vec6>(du + c.y0) = -dp[b];
      return;
    }
    if (joint.type != JointType::Revolute || joint.alignedAxis < 0)
      return clusterForceBackwardStep(cm, data, k, dp, du);
    const double d = -(joint.alignedSign * dp[b][joint.alignedAxis]);  // -S^T dp
    du[c.y0] = d;
    if (o < 0) return;
    Force f = dp[b];
    f += td.U[b].col(0) * (td.Dinv[b](0, 0) * d);
    dp[o] += forceInParentFrame(cm.treeModel.axisRotation[b], td.liMi[b], f);
    return;
  }
  const ClusterScratch& scr = fullScratch(data);
  ClusterWorkspace& w = scratch(data)[k];
  Eigen::Map<VecX> duk(du + c.y0, c.ny);
  duk.setZero();
  Force po = Force::Zero();
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    if (isOutputFrameRotor(scr, b)) continue;  // no rows, no children: dp_b = 0
    const int l = b - c.firstBody;
    if (c.ny == 1)
      duk[0] -= w.S.block<6, 1>(6 * l, 0).dot(dp[b]);
    else
      duk.noalias() -= w.S.middleRows<6>(6 * l).transpose() * dp[b];
    if (o >= 0) po += w.outputTb[l].actForce(dp[b]);
  }
  if (o < 0) return;
  if (c.ny == 1) {
    po += w.Ubar.col(0) * (w.Dinv(0, 0) * duk[0]);
  } else {
    w.tmpd.noalias() = w.Dinv * duk;
    po.noalias() += w.Ubar * w.tmpd;
  }
  dp[o] += po;
}

/// Forward step of cluster k (Alg. 2 lines 5-6) from the output body's acceleration change dao:
/// dydd_k = D^-1 (du_k - Ubar^T dao), da_b = Xh_b dao + S_b dydd_k.
void forwardStep(const ClusterModel& cm, ClusterData& data, int k, const Motion& dao,
                 const double* du, double* dydd, Motion* da) {
  const Cluster& c = cm.clusters[k];
  if (!c.constrained()) return clusterForceForwardStep(cm, data, k, dao, du, dydd, da);
  const ClusterScratch& scr = fullScratch(data);
  ClusterWorkspace& w = scratch(data)[k];
  if (c.ny == 1) {
    const double x = w.Dinv(0, 0) * (du[c.y0] - w.Ubar.col(0).dot(dao));
    dydd[c.y0] = x;
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
      if (isOutputFrameRotor(scr, b)) continue;
      const int l = b - c.firstBody;
      da[b] = w.outputTb[l].actInvMotion(dao);
      da[b].noalias() += w.S.block<6, 1>(6 * l, 0) * x;
    }
    return;
  }
  w.tmpd = Eigen::Map<const VecX>(du + c.y0, c.ny);
  w.tmpd.noalias() -= w.Ubar.transpose() * dao;
  Eigen::Map<VecX> x(dydd + c.y0, c.ny);
  x.noalias() = w.Dinv * w.tmpd;
  for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) {
    if (isOutputFrameRotor(scr, b)) continue;
    const int l = b - c.firstBody;
    da[b] = w.outputTb[l].actInvMotion(dao);
    da[b].noalias() += w.S.middleRows<6>(6 * l) * x;
  }
}

}  // namespace

bool afterAbaServes(const ClusterModel& cm, const ClusterData& data, const ConstraintData& cd) {
  (void)cm;
  const ClusterScratch& scr = fullScratch(data);
  for (const ConstraintData::Attachment& a : cd.attachments)
    if (isOutputFrameRotor(scr, a.body)) return false;
  return true;
}

Status delassusAfterAba(const ClusterModel& cm, ClusterData& data, ConstraintData& cd) {
  ClusterScratch& scr = fullScratch(data);
  const Data& td = data.treeData;
  completeMotionSubspaces(cm, data);  // the S ceAba deferred (composite form), read below
  // ceAba's flat clusters (every body on the output body) leave outputTb unwritten: it is liMi.
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    ClusterWorkspace& w = scr.clusters[k];
    if (!w.flatScalar) continue;
    const Cluster& c = cm.clusters[k];
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)
      if (!isOutputFrameRotor(scr, b)) w.outputTb[b - c.firstBody] = td.liMi[b];
  }
  constraintRowsAt(cm, data, cd, RowTargets::Skip);
  delassusPropagationAfterAba(cm, data, cd, cd.delassus);
  if (!allFiniteFast(cd.delassus))
    return fail(data.treeData, Status::NonFinite,
                "delassusMatrix: D overflowed (not finite): the constraint placements of the set "
                "are out of range for this model");
  return Status::Ok;
}

void impulseResponseAfterAba(const ClusterModel& cm, ClusterData& data, ConstraintData& cd,
                             const Eigen::Ref<const VecX>& lambda, Eigen::Ref<VecX> dydd) {
  Force* dp = cd.dp.data();
  for (int k : cd.supportOrder) {
    const Cluster& c = cm.clusters[k];
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) dp[b].setZero();
  }
  for (const ConstraintData::Attachment& a : cd.attachments)
    dp[a.body].noalias() -= a.C.topRows(a.rows).transpose() * lambda.segment(a.row0, a.rows);
  cd.du.head(cm.ny).setZero();  // the clusters without rows below them: no force change
  for (auto it = cd.supportOrder.rbegin(); it != cd.supportOrder.rend(); ++it)
    backwardStep(cm, data, *it, dp, cd.du.data());
  Motion* da = data.treeData.a_gf.data();
  const Motion zero = Motion::Zero();
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const int o = cm.clusters[k].outputBody;
    forwardStep(cm, data, k, o >= 0 ? da[o] : zero, cd.du.data(), dydd.data(), da);
  }
}

}  // namespace clusterdyn::detail
