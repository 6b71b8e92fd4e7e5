// The articulated-body steps of one body (Featherstone Table 7.1), shared by the tree ABA and
// the single-body clusters of CE-ABA.
#pragma once

#include <Eigen/Cholesky>

#include "clusterdyn/data.hpp"
#include "core/check.hpp"
#include "core/small_spd.hpp"

namespace clusterdyn::detail {

/// NotPositiveDefinite for the D of body i's joint (ratio, PivotText: the failed pivot test).
inline Status singularJoint(const Model& model, Data& data, int i, double ratio) {
  return fail(data, Status::NotPositiveDefinite,
              "articulated inertia of body '%s' is singular along its joint '%s' (%s)",
              model.bodyNames[i].c_str(), model.jointNames[i].c_str(),
              PivotText(ratio, data.pivotFloor).c_str());
}

/// Pass 2 for body i: U = IA S, D = S^T U + armature_i, D^-1, u = tau - S^T pA (tau: nv_i
/// values), then the articulated inertia and bias seen through the joint are added to body p
/// (p < 0: none). The joint's armature (Model::armature, a joint-space term) adds to D only.
inline Status articulatedBodyStep(const Model& model, Data& data, int i, int p, const double* tau) {
  const Joint& joint = model.joints[i];
  const int k = joint.nv;
  Mat6& IA = data.IA[i];
  const double* arm = model.hasArmature() ? model.armature.data() + model.idx_v[i] : nullptr;
  Mat6 Ia;
  Force pa;
  if (k == 1) {
    auto U = data.U[i].col(0);
    U.noalias() = IA * joint.S.col(0);
    double D = joint.S.col(0).dot(U);
    if (arm) D += arm[0];
    if (!(D > 0.0))
      return fail(data, Status::NotPositiveDefinite,
                  "articulated inertia of body '%s' is singular along its joint '%s'",
                  model.bodyNames[i].c_str(), model.jointNames[i].c_str());
    const double Dinv = 1.0 / D;
    data.Dinv[i](0, 0) = Dinv;
    const double u = tau[0] - joint.S.col(0).dot(data.pA[i]);
    data.u[i](0) = u;
    if (p < 0) return Status::Ok;
    Ia = IA;
    Ia.noalias() -= (U * Dinv) * U.transpose();
    pa = data.pA[i];
    pa.noalias() += Ia * data.c[i];
    pa += U * (Dinv * u);
  } else if (k == 6) {  // a floating joint: fixed-size products and inverse
    const Mat6 S = joint.S;
    Mat6 U;
    U.noalias() = IA * S;
    data.U[i] = U;
    Mat6 D;
    D.noalias() = S.transpose() * U;
    if (arm) D.diagonal() += Eigen::Map<const Vec6>(arm);
    Mat6 Dinv;
    double ratio;
    if (!invertPositiveDefinite<6>(D, Dinv, data.pivotFloor, &ratio))
      return singularJoint(model, data, i, ratio);
    data.Dinv[i] = Dinv;
    Vec6 u = Eigen::Map<const Vec6>(tau);
    u.noalias() -= S.transpose() * data.pA[i];
    data.u[i] = u;
    if (p < 0) return Status::Ok;
    const Mat6 UDinv = U * Dinv;
    Ia = IA;
    Ia.noalias() -= UDinv * U.transpose();
    pa = data.pA[i];
    pa.noalias() += Ia * data.c[i];
    pa.noalias() += UDinv * u;
  } else {
    auto U = data.U[i].leftCols(k);
    U.noalias() = IA * joint.S;
    Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6> D(k, k);
    D.noalias() = joint.S.transpose() * U;
    if (arm)
      for (int r = 0; r < k; ++r) D(r, r) += arm[r];
    Eigen::LLT<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>> llt(D);
    double ratio;
    if (!choleskyAboveFloor(llt, D, data.pivotFloor, &ratio))
      return singularJoint(model, data, i, ratio);
    data.Dinv[i].setIdentity(k, k);
    llt.solveInPlace(data.Dinv[i]);
    data.u[i] = Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1>>(tau, k);
    data.u[i].noalias() -= joint.S.transpose() * data.pA[i];
    if (p < 0) return Status::Ok;
    Mat6Xs UDinv(6, k);
    UDinv.noalias() = U * data.Dinv[i];
    Ia = IA;
    Ia.noalias() -= UDinv * U.transpose();
    pa = data.pA[i];
    pa.noalias() += Ia * data.c[i];
    pa.noalias() += UDinv * data.u[i];
  }
  data.IA[p] += actInertia(data.liMi[i], Ia);
  data.pA[p] += data.liMi[i].actForce(pa);
  return Status::Ok;
}

/// Pass 3 for body i: a_i = iX_p a_p + c_i + S qdd with qdd = D^-1 (u - U^T (iX_p a_p + c_i)),
/// written to qdd (nv_i values). aParent: the parent's acceleration (gravity-offset).
inline void accelerationStep(const Model& model, Data& data, int i, const Motion& aParent,
                             double* qdd) {
  const Joint& joint = model.joints[i];
  Motion& a = data.a_gf[i];
  a = data.liMi[i].actInvMotion(aParent) + data.c[i];
  if (joint.nv == 1) {
    qdd[0] = data.Dinv[i](0, 0) * (data.u[i](0) - data.U[i].col(0).dot(a));
    a.noalias() += joint.S.col(0) * qdd[0];
    return;
  }
  Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1> rhs = data.u[i];
  rhs.noalias() -= data.U[i].leftCols(joint.nv).transpose() * a;
  Eigen::Map<VecX> out(qdd, joint.nv);
  out.noalias() = data.Dinv[i] * rhs;
  a.noalias() += joint.S * out;
}

}  // namespace clusterdyn::detail
