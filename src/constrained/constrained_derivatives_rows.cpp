// Derivatives of the constraint rows for computeConstrainedDynamicsDerivatives: the row residual
// J y_ddot + gamma - k of constraints.hpp differentiated with respect to the spanning (q, v, a)
// from the world-frame kinematics derivatives of Carpentier & Mansard 2018 (docs/derivatives.md
// eq. D1-D6, C3), the chain rule to y through G, dv/dy, da/dy of the cluster derivatives, and the
// part of d(J^T lambda)/dy that CE-RNEA's body-fixed external forces miss (docs/derivatives.md,
// "Constrained-dynamics derivatives", eq. K1-K6).
#include <cmath>

#include "constrained/constrained_derivatives_detail.hpp"
#include "tree/joint_dynamics_derivatives.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn::detail {

namespace {

/// One constraint at the current state (eq. K1-K2): world poses, twists, accelerations and the
/// frame-A quantities the row residual is made of.
struct RowGeometry {
  Eigen::Matrix<double, 6, 6> E;  ///< rows (first `rows` used) on 6-vectors in A coordinates
  int rows = 0;
  bool point = false, lwa = false;
  double kp = 0.0, kd = 0.0;
  Transform oMA, oMB;
  Motion ov1, ov2, oa1, oa2;  ///< world twists / accelerations (world: 0, a0)
  Motion w, Delta;            ///< ov1 - ov2, oa1 - oa2 + ov1 x ov2 (eq. K1)
  Motion nu, vA;              ///< A coordinates
  Mat3 JrInv;
  Force of1;   ///< world wrench of the multipliers on body1 (eq. K6)
  Vec3 muLin;  ///< world-aligned force components (LocalWorldAligned)
};

/// A tangent of the state seen by one constraint: world twists d1, d2 of the two body frames
/// (the configuration change) and the changes of their world twists and accelerations.
struct Tangent {
  Motion d1 = Motion::Zero(), d2 = Motion::Zero();
  Motion dov1 = Motion::Zero(), dov2 = Motion::Zero(), doa1 = Motion::Zero(), doa2 = Motion::Zero();
};

/// eq. K3: d (E x) along a tangent, x of eq. K2 (6-vector before the row selection E).
Vec6 rowTangent(const RowGeometry& g, const Tangent& t) {
  const Transform& A = g.oMA;
  const Motion dw = t.dov1 - t.dov2;
  const Motion dDelta = t.doa1 - t.doa2 + crossMotion(t.dov1, g.ov2) + crossMotion(g.ov1, t.dov2);
  const Motion dnu = A.actInvMotion(dw - crossMotion(t.d1, g.w));
  Vec6 dx = A.actInvMotion(dDelta - crossMotion(t.d1, g.Delta));  // d nu_dot
  const Vec3 om = g.vA.head<3>();
  const Vec3 dom = A.R.transpose() * (t.dov1.head<3>() - t.d1.head<3>().cross(g.ov1.head<3>()));
  if (g.point || g.lwa) dx.tail<3>() += dom.cross(g.nu.tail<3>()) + om.cross(dnu.tail<3>());
  if (g.lwa) dx.head<3>() += dom.cross(g.nu.head<3>()) + om.cross(dnu.head<3>());
  if (g.kp != 0.0) {  // d phi6: log(R_B^T R_A) and R_A^T (p_A - p_B)
    Vec6 dphi;
    dphi.head<3>() = g.JrInv * (A.R.transpose() * (t.d1.head<3>() - t.d2.head<3>()));
    const Vec3 dpA = t.d1.tail<3>() + t.d1.head<3>().cross(A.p);
    const Vec3 dpB = t.d2.tail<3>() + t.d2.head<3>().cross(g.oMB.p);
    dphi.tail<3>() = A.R.transpose() * (dpA - dpB - t.d1.head<3>().cross(A.p - g.oMB.p));
    dx += g.kp * dphi;
  }
  if (g.kd != 0.0) dx += g.kd * dnu;
  // The change of E itself (world-aligned rows turn with A) multiplies the selected parts of x,
  // which are the row residual, zero at the solution: it drops out (eq. K3).
  return dx;
}

RowGeometry geometry(const ClusterModel& cm, const ClusterData& data, const ConstraintSet& set,
                     const ConstrainedDerivativeData& cdd, int j) {
  const Data& td = data.treeData;
  const DerivativeData& t = cdd.cluster.tree;
  const RigidConstraint& c = set.constraints()[j];
  RowGeometry g;
  g.rows = c.rows();
  g.point = c.type == ConstraintType::Point;
  g.lwa = c.frame == ReferenceFrame::LocalWorldAligned;
  g.kp = c.kp;
  g.kd = c.kd;
  // E from body1's covectors C1 = (A_X_b1)^T E (constraint_kinematics.cpp).
  for (const ConstraintData::Attachment& a : cdd.constraints.attachments)
    if (a.constraint == j && a.side == 0)
      for (int r = 0; r < g.rows; ++r)
        g.E.row(r) = c.placement1.actInvForce(a.C.row(r).transpose()).transpose();
  g.oMA = td.oMi[c.body1] * c.placement1;
  g.oMB = c.body2 >= 0 ? td.oMi[c.body2] * c.placement2 : c.placement2;
  g.ov1 = t.ov[c.body1];
  g.oa1 = t.oa[c.body1];
  g.ov2 = c.body2 >= 0 ? t.ov[c.body2] : Motion::Zero();
  g.oa2 = c.body2 >= 0 ? t.oa[c.body2] : gravityAcceleration(cm.treeModel);
  g.w = g.ov1 - g.ov2;
  g.Delta = g.oa1 - g.oa2 + crossMotion(g.ov1, g.ov2);
  g.nu = g.oMA.actInvMotion(g.w);
  g.vA = g.oMA.actInvMotion(g.ov1);
  const Eigen::AngleAxisd aa(g.oMB.R.transpose() * g.oMA.R);
  const Vec3 theta = aa.angle() * aa.axis();
  g.JrInv = inverseRightJacobianSO3(theta);
  // Multiplier wrench on body1 (A coordinates E^T lambda, then world).
  const Force mu = g.E.topRows(g.rows).transpose() * cdd.lambda.segment(set.rowOffset(j), g.rows);
  g.of1 = g.oMA.actForce(mu);
  g.muLin = g.oMA.R * mu.tail<3>();
  return g;
}

/// eq. K6: world wrench corrections (true change minus body-fixed change) of the two bodies for
/// the frame motions d1, d2.
void forceCorrection(const RowGeometry& g, const Motion& d1, const Motion& d2, Force& c1,
                     Force& c2) {
  const Force of2 = -g.of1;
  if (!g.lwa) {  // fixed in frame A, i.e. in body1
    c1.setZero();
    c2 = crossForce(d1 - d2, of2);
    return;
  }
  Force dof1 = Force::Zero();  // world-aligned components at A's origin: only the moment arm moves
  dof1.head<3>() = (d1.tail<3>() + d1.head<3>().cross(g.oMA.p)).cross(g.muLin);
  c1 = dof1 - crossForce(d1, g.of1);
  c2 = -dof1 - crossForce(d2, of2);
}

/// out (rows x ny) = A (rows x nv) G, G from the cluster derivatives' entry list.
template <typename In, typename Out>
void timesG(const ClusterDerivativeData& dd, const In& A, Out&& out) {
  out.setZero();
  for (const ClusterDerivativeData::GEntry& e : dd.Gentries) out.col(e.y) += e.value * A.col(e.v);
}

}  // namespace

void constrainedRowDerivatives(const ClusterModel& cm, const ClusterData& data,
                               const ConstraintSet& set, ConstrainedDerivativeData& cdd) {
  const Model& tree = cm.treeModel;
  const DerivativeData& t = cdd.cluster.tree;
  const Motion a0 = gravityAcceleration(tree);
  cdd.Rq.setZero();
  cdd.Rv.setZero();
  cdd.Ra.setZero();
  for (int j = 0; j < set.size(); ++j) {
    const RigidConstraint& c = set.constraints()[j];
    const RowGeometry g = geometry(cm, data, set, cdd, j);
    const int r0 = set.rowOffset(j), m = g.rows;
    const auto E = g.E.topRows(m);
    cdd.force.setZero();  // corrections on body1 (force) and body2 (side) as world wrenches
    cdd.side.setZero();
    for (int s = 0; s < 2; ++s) {
      const int body = s == 0 ? c.body1 : c.body2;
      const Motion& ovb = t.ov[body < 0 ? 0 : body];
      const Motion& oab = t.oa[body < 0 ? 0 : body];
      for (int cur = body; cur >= 0; cur = tree.parent[cur]) {
        const int p = tree.parent[cur];
        const Motion ovp = p >= 0 ? t.ov[p] : Motion::Zero();
        const Motion oap = p >= 0 ? t.oa[p] : a0;
        for (int i = 0; i < tree.nvs[cur]; ++i) {
          const int col = tree.idx_v[cur] + i;
          const Motion psi = t.psi[cur].col(i);
          // eq. K4 with D1-D6: q (body frames turn with psi), v and a tangents of this side.
          Tangent tq, tv, ta;
          Motion& dq = s == 0 ? tq.d1 : tq.d2;
          dq = psi;
          (s == 0 ? tq.dov1 : tq.dov2) = crossMotion(psi, ovb - ovp);
          (s == 0 ? tq.doa1 : tq.doa2) =
              crossMotion(psi, oab - oap) - crossMotion(crossMotion(psi, ovp), ovb - ovp);
          (s == 0 ? tv.dov1 : tv.dov2) = psi;
          (s == 0 ? tv.doa1 : tv.doa2) = crossMotion(psi, ovb - ovp - t.ov[cur]);
          (s == 0 ? ta.doa1 : ta.doa2) = psi;
          cdd.Rq.block(r0, col, m, 1) += E * rowTangent(g, tq);
          cdd.Rv.block(r0, col, m, 1) += E * rowTangent(g, tv);
          cdd.Ra.block(r0, col, m, 1) += E * rowTangent(g, ta);
          Force c1, c2;
          forceCorrection(g, tq.d1, tq.d2, c1, c2);
          cdd.force.col(col) += c1;
          cdd.side.col(col) += c2;
        }
      }
    }
    // eq. K6: dF/dy -= (Psi_b G)^T (W_b G) for b = body1 (W in force), body2 (W in side).
    for (int s = 0; s < 2; ++s) {
      const int body = s == 0 ? c.body1 : c.body2;
      if (body < 0) continue;
      if (s == 0 && !g.lwa) continue;  // no correction on body1 of a frame-A constraint
      timesG(cdd.cluster, s == 0 ? cdd.force : cdd.side, cdd.forceY);
      cdd.force.setZero();  // reused for Psi_b
      for (int cur = body; cur >= 0; cur = tree.parent[cur])
        for (int i = 0; i < tree.nvs[cur]; ++i)
          cdd.force.col(tree.idx_v[cur] + i) = t.psi[cur].col(i);
      timesG(cdd.cluster, cdd.force, cdd.sideY);
      cdd.dF_dy.noalias() -= cdd.sideY.transpose().lazyProduct(cdd.forceY);
    }
  }
  // eq. K5: chain rule to y.
  timesG(cdd.cluster, cdd.Rq, cdd.dR_dy);
  timesG(cdd.cluster, cdd.Rv, cdd.dR_dydot);
  if (cm.hasImplicitClusters()) {
    const ClusterDerivativeData& dd = cdd.cluster;
    cdd.dR_dy.noalias() += cdd.Rv.lazyProduct(dd.dv_dy);
    cdd.dR_dy.noalias() += cdd.Ra.lazyProduct(dd.da_dy);
    cdd.dR_dydot.noalias() += cdd.Ra.lazyProduct(dd.da_dyd);
  }
}

void jacobiEigen(Eigen::Ref<MatX> A, Eigen::Ref<MatX> V) {
  const Eigen::Index n = A.rows();
  V.setIdentity();
  for (int sweep = 0; sweep < 60; ++sweep) {
    double off = 0.0;
    for (Eigen::Index p = 0; p < n; ++p)
      for (Eigen::Index q = p + 1; q < n; ++q) off += A(p, q) * A(p, q);
    if (!(off > 1e-32 * A.squaredNorm())) return;  // converged (or A = 0)
    for (Eigen::Index p = 0; p < n; ++p)
      for (Eigen::Index q = p + 1; q < n; ++q) {
        if (A(p, q) == 0.0) continue;
        const double tau = (A(q, q) - A(p, p)) / (2.0 * A(p, q));
        const double tr = (tau >= 0.0 ? 1.0 : -1.0) / (std::abs(tau) + std::sqrt(1.0 + tau * tau));
        const double cs = 1.0 / std::sqrt(1.0 + tr * tr), sn = tr * cs;
        for (Eigen::Index k = 0; k < n; ++k) {  // A J
          const double akp = A(k, p), akq = A(k, q);
          A(k, p) = cs * akp - sn * akq;
          A(k, q) = sn * akp + cs * akq;
        }
        for (Eigen::Index k = 0; k < n; ++k) {  // J^T A
          const double apk = A(p, k), aqk = A(q, k);
          A(p, k) = cs * apk - sn * aqk;
          A(q, k) = sn * apk + cs * aqk;
        }
        for (Eigen::Index k = 0; k < n; ++k) {  // V J
          const double vkp = V(k, p), vkq = V(k, q);
          V(k, p) = cs * vkp - sn * vkq;
          V(k, q) = sn * vkp + cs * vkq;
        }
      }
  }
}

}  // namespace clusterdyn::detail
