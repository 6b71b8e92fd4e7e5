// Constraint rows on the cluster tree: the covectors C that map body accelerations to row
// accelerations, their bias, position errors and Baumgarte targets; the dense row Jacobian.
#include "cluster/cluster_aba_step.hpp"
#include "cluster/cluster_kinematics.hpp"
#include "constrained/constraint_detail.hpp"
#include "constrained/constraint_types.hpp"
#include "core/check.hpp"
#include "tree/axis_transforms.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn {

namespace {

/// The components of nu the rows of the type select (the table of constraint types).
const int* selection(ConstraintType t) { return detail::constraintTypeInfo(t).components; }

Vec3 rotationLog(const Mat3& R) {
  const Eigen::AngleAxisd aa(R);
  return aa.angle() * aa.axis();
}

/// Pass 3 of cluster k (detail::clusterAccelerationStep) with a0 the root's parent
/// acceleration; a floating root (S = I) in fixed-size products: a = X a0 + c,
/// ydd = D^-1 (u - U^T a), a += ydd.
void accelerationOf(const ClusterModel& cm, ClusterData& data, int k, const Motion& a0) {
  const Cluster& c = cm.clusters[k];
  const int o = c.outputBody, b = c.firstBody;
  Data& td = data.treeData;
  if (c.constrained() || o >= 0 || cm.treeModel.joints[b].type != JointType::Floating)
    return detail::clusterAccelerationStep(cm, data, k, o >= 0 ? td.a_gf[o] : a0,
                                           detail::RotorFrame::Body);
  Motion& a = td.a_gf[b];
  a = td.liMi[b].actInvMotion(a0) + td.c[b];
  Vec6 rhs = Eigen::Map<const Vec6>(td.u[b].data());
  rhs.noalias() -= Eigen::Map<const Mat6>(td.U[b].data()).transpose() * a;
  Vec6 x;
  x.noalias() = Eigen::Map<const Mat6>(td.Dinv[b].data()) * rhs;
  a += x;
  data.qdd.segment<6>(cm.treeModel.idx_v[b]) = x;
  data.ydd.segment<6>(c.y0) = x;
}

/// The backward step of the row forces dp (detail::clusterForceBackwardStep) into du; a single
/// body on a revolute joint about a coordinate axis, or a floating root, without the
/// products with S (S^T f is one coefficient of f, or f).
void forceBackwardOf(const ClusterModel& cm, ClusterData& data, int k, Force* dp, double* du) {
  const Cluster& c = cm.clusters[k];
  const int b = c.firstBody, o = c.outputBody;
  const Joint& joint = cm.treeModel.joints[b];
  const Data& td = data.treeData;
  if (!c.constrained() && joint.type == JointType::Floating && o < 0) {
    Eigen::Map<Vec6>(du + c.y0) = -dp[b];
    return;
  }
  if (c.constrained() || joint.type != JointType::Revolute || joint.alignedAxis < 0)
    return detail::clusterForceBackwardStep(cm, data, k, dp, du);
  const double d = -(joint.alignedSign * dp[b][joint.alignedAxis]);  // -S^T dp
  du[c.y0] = d;
  if (o < 0) return;
  Force f = dp[b];
  f += td.U[b].col(0) * (td.Dinv[b](0, 0) * d);
  dp[o] += detail::forceInParentFrame(cm.treeModel.axisRotation[b], td.liMi[b], f);
}

}  // namespace

namespace detail {

Status checkConstraintArgs(const ClusterModel& cm, ClusterData& data, const ConstraintSet& set,
                           const ConstraintData& cd) {
  if (data.model != &cm)
    return fail(data.treeData, Status::WorkspaceMismatch,
                "the workspace was created for another model");
  if (&set.model() != &cm)
    return fail(data.treeData, Status::WorkspaceMismatch,
                "the constraint set was created for another model");
  if (cd.set != &set || cd.model != &cm)
    return fail(data.treeData, Status::WorkspaceMismatch,
                "the constraint workspace was created for another constraint set or model");
  return Status::Ok;
}

void constraintRowsAt(const ClusterModel& cm, const ClusterData& data, ConstraintData& cd,
                      RowTargets targets) {
  const Data& td = data.treeData;
  const ConstraintSet& set = *cd.set;
  const Motion a0 = gravityAcceleration(cm.treeModel);
  int att = 0;
  for (int j = 0; j < set.size(); ++j) {
    const RigidConstraint& c = set.constraints()[j];
    const int m = c.rows(), r0 = set.rowOffset(j);
    const int* sel = selection(c.type);
    const bool lwa = c.frame == ReferenceFrame::LocalWorldAligned;
    // World poses: read for world-aligned rows, two bodies and the targets only (the Delassus
    // matrix of local rows on the world does not compute them).
    const bool poses = lwa || c.body2 >= 0 || targets == RowTargets::Compute;
    const Transform oMA = poses ? td.oMi[c.body1] * c.placement1 : Transform();
    const Transform oMB = c.body2 >= 0 ? td.oMi[c.body2] * c.placement2 : c.placement2;
    // Row basis E (m x 6) on 6-vectors in A coordinates.
    Eigen::Matrix<double, 6, 6> E = Eigen::Matrix<double, 6, 6>::Zero();
    for (int r = 0; r < m; ++r) {
      const int s = sel[r];
      if (!lwa)
        E(r, s) = 1.0;
      else if (s < 3)
        E.block<1, 3>(r, 0) = oMA.R.row(s);
      else
        E.block<1, 3>(r, 3) = oMA.R.row(s - 3);
    }
    // C1 rows = (A_X_b1)^T e, C2 rows = -(A_X_b2)^T e (covectors moved like forces).
    ConstraintData::Attachment& a1 = cd.attachments[att++];
    for (int r = 0; r < m; ++r) a1.C.row(r) = c.placement1.actForce(E.row(r).transpose());
    Transform Ab2;  // pose of body2 (or the world) in A
    if (c.body2 >= 0) {
      ConstraintData::Attachment& a2 = cd.attachments[att++];
      const Transform b2A = td.oMi[c.body2].inverse() * oMA;
      for (int r = 0; r < m; ++r) a2.C.row(r) = -b2A.actForce(E.row(r).transpose());
      Ab2 = b2A.inverse();
    } else if (targets == RowTargets::Compute) {
      Ab2 = oMA.inverse();
    }
    if (targets == RowTargets::Skip) continue;  // the Delassus matrix needs the rows only
    // Relative velocity nu = v_A - A_X_B v_B and the bias of the row accelerations.
    const Motion vA = c.placement1.actInvMotion(td.v[c.body1]);
    const Motion vB = c.body2 >= 0 ? Ab2.actMotion(td.v[c.body2]) : Motion::Zero();
    const Motion nu = vA - vB;
    Motion e = crossMotion(vA, vB);  // d/dt nu = a_A - A_X_B a_B + v_A x (A_X_B v_B)
    const Vec3 w = vA.head<3>();
    if (c.type == ConstraintType::Point || lwa) e.tail<3>() += w.cross(nu.tail<3>());
    if (lwa) e.head<3>() += w.cross(nu.head<3>());
    if (c.body2 < 0) e -= Ab2.actMotion(a0);  // the world does not carry the gravity offset
    bool angular = false;  // a row on the rotation (else phi's rotation part is not read)
    for (int r = 0; r < m; ++r) angular = angular || sel[r] < 3;
    Vec6 phi6;
    phi6.head<3>() = angular ? rotationLog(oMB.R.transpose() * oMA.R) : Vec3::Zero();
    phi6.tail<3>() = oMA.R.transpose() * (oMA.p - oMB.p);
    for (int r = 0; r < m; ++r) {
      const double phi = E.row(r).dot(phi6), phidot = E.row(r).dot(nu);
      cd.phi[r0 + r] = phi;
      cd.desired[r0 + r] = -c.kp * phi - c.kd * phidot;
      cd.kprime[r0 + r] = cd.desired[r0 + r] - E.row(r).dot(e);
    }
  }
}

double rowResidual(const ClusterModel& cm, const ClusterData& data, const ConstraintData& cd,
                   Eigen::Ref<VecX> r) {
  (void)cm;
  r = cd.kprime;
  for (const ConstraintData::Attachment& a : cd.attachments)
    r.segment(a.row0, a.rows).noalias() -= a.C.topRows(a.rows) * data.treeData.a_gf[a.body];
  return r.size() ? r.cwiseAbs().maxCoeff() : 0.0;
}

double rowRoundingFloor(const ConstraintData& cd, const Data& td) {
  // S <= |kprime|_inf + sides x max over attachments and rows of sum_j |C_ij| |a_j| (a row has
  // one attachment per body it couples: 1 for contacts, 2 for constraints between two bodies).
  double products = 0.0, sides = 1.0;
  for (const ConstraintData::Attachment& a : cd.attachments) {
    const Motion& acc = td.a_gf[a.body];
    Vec6 t = a.C.col(0).cwiseAbs() * std::abs(acc[0]);  // rows past a.rows are zero
    for (int j = 1; j < 6; ++j) t += a.C.col(j).cwiseAbs() * std::abs(acc[j]);
    products = std::max(products, t.maxCoeff());
    if (a.side == 1) sides = 2.0;
  }
  const double kmax = cd.kprime.size() ? cd.kprime.cwiseAbs().maxCoeff() : 0.0;
  return kRowRounding * std::numeric_limits<double>::epsilon() * (kmax + sides * products);
}

double rowRoundingFloorDense(const ConstraintData& cd, const VecX& ydd) {
  double scale = 0.0;  // max_i |k_i| + |gamma_i| + sum_j |J_ij| |ydd_j|
  for (int i = 0; i < static_cast<int>(cd.gamma.size()); ++i)
    scale = std::max(scale, std::abs(cd.desired[i]) + std::abs(cd.gamma[i]) +
                                cd.jacobian.row(i).cwiseAbs().dot(ydd.cwiseAbs()));
  return kRowRounding * std::numeric_limits<double>::epsilon() * scale;
}

void bodyJacobian(const ClusterModel& cm, const ClusterData& data, int b,
                  Eigen::Ref<Eigen::Matrix<double, 6, Eigen::Dynamic>> J) {
  const Model& tree = cm.treeModel;
  const Data& td = data.treeData;
  const std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  J.setZero();
  Transform T;  // pose of b in the frame of `cur`
  int cur = b;
  while (cur >= 0) {
    const int k = cm.bodyCluster[cur];
    const Cluster& c = cm.clusters[k];
    if (!c.constrained()) {
      const Joint& joint = tree.joints[cur];
      for (int j = 0; j < joint.nv; ++j) J.col(c.y0 + j) = T.actInvMotion(joint.S.col(j));
      T = td.liMi[cur] * T;
      cur = tree.parent[cur];
    } else {
      const ClusterWorkspace& w = ws[k];
      const int i = 6 * (cur - c.firstBody);
      for (int j = 0; j < c.ny; ++j) J.col(c.y0 + j) = T.actInvMotion(w.S.block<6, 1>(i, j));
      T = w.outputTb[cur - c.firstBody] * T;
      cur = c.outputBody;
    }
  }
}

void supportAccelerations(const ClusterModel& cm, ClusterData& data, const ConstraintData& cd) {
  const Motion a0 = gravityAcceleration(cm.treeModel);
  for (int k : cd.supportOrder) accelerationOf(cm, data, k, a0);
}

void freeAccelerations(const ClusterModel& cm, ClusterData& data, const ConstraintData& cd) {
  const Motion a0 = gravityAcceleration(cm.treeModel);
  for (int k : cd.freeOrder) accelerationOf(cm, data, k, a0);
}

void allAccelerations(const ClusterModel& cm, ClusterData& data) {
  const Motion a0 = gravityAcceleration(cm.treeModel);
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) accelerationOf(cm, data, k, a0);
}

void applyRowForces(const ClusterModel& cm, ClusterData& data, ConstraintData& cd,
                    const Eigen::Ref<const VecX>& lambda) {
  for (int k : cd.supportOrder) {
    const Cluster& c = cm.clusters[k];
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b) cd.dp[b].setZero();
  }
  for (const ConstraintData::Attachment& a : cd.attachments)
    cd.dp[a.body].noalias() -= a.C.topRows(a.rows).transpose() * lambda.segment(a.row0, a.rows);
  std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  for (auto it = cd.supportOrder.rbegin(); it != cd.supportOrder.rend(); ++it) {
    const int k = *it;
    const Cluster& c = cm.clusters[k];
    forceBackwardOf(cm, data, k, cd.dp.data(), cd.du.data());
    if (c.constrained())
      ws[k].u += cd.du.segment(c.y0, c.ny);
    else
      data.treeData.u[c.firstBody] += cd.du.segment(c.y0, c.ny);
  }
}

}  // namespace detail

namespace detail {

Status denseConstraintJacobian(const ClusterModel& model, ClusterData& data, ConstraintData& cd,
                               const Eigen::Ref<const VecX>& q, const double* v) {
  CDYN_TRY(clusterVelocityPass(model, data, q, v, Bias::Compute, StateCheck::Check));
  for (int k = 0; k < static_cast<int>(model.clusters.size()); ++k)
    if (model.clusters[k].constrained())
      clusterMotionSubspace(model, data, k, Bias::Compute, RotorFrame::Body);
  constraintRowsAt(model, data, cd);
  // Bias accelerations (y_ddot = 0), gravity-offset: a_b = Xh a_out + c_b.
  Data& td = data.treeData;
  const Motion a0 = gravityAcceleration(model.treeModel);
  const std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  for (int k = 0; k < static_cast<int>(model.clusters.size()); ++k) {
    const Cluster& c = model.clusters[k];
    const Motion& ao = c.outputBody >= 0 ? td.a_gf[c.outputBody] : a0;
    if (!c.constrained()) {
      td.a_gf[c.firstBody] = td.liMi[c.firstBody].actInvMotion(ao) + td.c[c.firstBody];
      continue;
    }
    const ClusterWorkspace& w = ws[k];
    for (int b = c.firstBody; b < c.firstBody + c.nbodies; ++b)
      td.a_gf[b] =
          w.outputTb[b - c.firstBody].actInvMotion(ao) + w.c.segment<6>(6 * (b - c.firstBody));
  }
  rowResidual(model, data, cd, cd.residual);
  cd.gamma = cd.desired - cd.residual;  // C a + bias at y_ddot = 0
  cd.jacobian.setZero();
  auto Jb = td.J.leftCols(model.ny);
  for (const ConstraintData::Attachment& a : cd.attachments) {
    bodyJacobian(model, data, a.body, Jb);
    cd.jacobian.middleRows(a.row0, a.rows).noalias() += a.C.topRows(a.rows) * Jb;
  }
  return Status::Ok;
}

}  // namespace detail

Force constraintWrench(const ConstraintSet& set, const ConstraintData& cd, int j) {
  Force w = Force::Zero();
  if (j < 0 || j >= set.size() || cd.set != &set) return w;
  const RigidConstraint& c = set.constraints()[j];
  const int* sel = selection(c.type);
  for (int r = 0; r < c.rows(); ++r) w[sel[r]] = cd.lambda[set.rowOffset(j) + r];
  return w;
}

Status constraintJacobian(const ClusterModel& model, ClusterData& data, const ConstraintSet& set,
                          ConstraintData& cd, ConstVecRef q, ConstVecRef v) {
  CDYN_TRY(detail::checkConstraintArgs(model, data, set, cd));
  CDYN_TRY(detail::checkClusterArgs(model, data, q, &v));
  CDYN_TRY(detail::denseConstraintJacobian(model, data, cd, q, v.data()));
  if (!(detail::allFiniteFast(cd.jacobian) && detail::allFiniteFast(cd.gamma)))
    return detail::nonFiniteOutput(data.treeData, "constraintJacobian: J / gamma",
                                   {{"q", detail::maxAbs(q), 1}, {"v", detail::maxAbs(v), 2}});
  return detail::ok(data.treeData);
}

}  // namespace clusterdyn
