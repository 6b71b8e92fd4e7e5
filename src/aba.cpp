// Articulated-body algorithm (Featherstone Table 7.1, body coordinates).
#include "clusterdyn/aba.hpp"

#include <Eigen/Cholesky>

#include "check.hpp"
#include "tree_step.hpp"

namespace clusterdyn {

Status aba(const Model& model, Data& data, ConstVecRef q, ConstVecRef v, ConstVecRef tau,
           const Force* fext) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  CDYN_TRY(detail::checkConfiguration(model, data, q));
  CDYN_TRY(detail::checkVector(data, v, model.nv, "v"));
  CDYN_TRY(detail::checkVector(data, tau, model.nv, "tau"));
  CDYN_TRY(detail::checkForces(model, data, fext));
  const int n = model.nbodies;

  // Pass 1: kinematics, velocity products c_i, IA_i = I_i, pA_i = v_i x* I_i v_i - fext_i.
  for (int i = 0; i < n; ++i) {
    detail::placementStep(model, data, i, q);
    const int p = model.parent[i];
    const Motion vJ = detail::jointMotion(model.joints[i], v.data() + model.idx_v[i]);
    data.v[i] = p >= 0 ? Motion(data.liMi[i].actInvMotion(data.v[p]) + vJ) : vJ;
    data.c[i] = crossMotion(data.v[i], vJ);
    const SpatialInertia& I = model.inertias[i];
    data.IA[i] = I.matrix();
    data.pA[i] = crossForce(data.v[i], I * data.v[i]);
    if (fext) data.pA[i] -= fext[i];
  }

  // Pass 2: articulated inertias, leaf to root.
  for (int i = n - 1; i >= 0; --i) {
    const Joint& joint = model.joints[i];
    const int iv = model.idx_v[i];
    const int p = model.parent[i];
    Mat6& IA = data.IA[i];
    if (joint.nv == 1) {
      auto U = data.U[i].col(0);
      U.noalias() = IA * joint.S.col(0);
      const double D = joint.S.col(0).dot(U);
      if (!(D > 0.0))
        return detail::fail(data, Status::NotPositiveDefinite,
                            "articulated inertia of body '%s' is singular along its joint '%s'",
                            model.bodyNames[i].c_str(), model.jointNames[i].c_str());
      const double Dinv = 1.0 / D;
      data.Dinv[i](0, 0) = Dinv;
      const double u = tau[iv] - joint.S.col(0).dot(data.pA[i]);
      data.u[i](0) = u;
      if (p >= 0) {
        Mat6 Ia = IA;
        Ia.noalias() -= (U * Dinv) * U.transpose();
        Force pa = data.pA[i];
        pa.noalias() += Ia * data.c[i];
        pa += U * (Dinv * u);
        data.IA[p] += actInertia(data.liMi[i], Ia);
        data.pA[p] += data.liMi[i].actForce(pa);
      }
    } else {
      const int k = joint.nv;
      auto& U = data.U[i];
      U.noalias() = IA * joint.S;
      Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6> D(k, k);
      D.noalias() = joint.S.transpose() * U;
      Eigen::LLT<Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, 6, 6>> llt(D);
      if (llt.info() != Eigen::Success)
        return detail::fail(data, Status::NotPositiveDefinite,
                            "articulated inertia of body '%s' is singular along its joint '%s'",
                            model.bodyNames[i].c_str(), model.jointNames[i].c_str());
      data.Dinv[i].setIdentity(k, k);
      llt.solveInPlace(data.Dinv[i]);
      data.u[i] = tau.segment(iv, k);
      data.u[i].noalias() -= joint.S.transpose() * data.pA[i];
      if (p >= 0) {
        Mat6Xs UDinv(6, k);
        UDinv.noalias() = U * data.Dinv[i];
        Mat6 Ia = IA;
        Ia.noalias() -= UDinv * U.transpose();
        Force pa = data.pA[i];
        pa.noalias() += Ia * data.c[i];
        pa.noalias() += UDinv * data.u[i];
        data.IA[p] += actInertia(data.liMi[i], Ia);
        data.pA[p] += data.liMi[i].actForce(pa);
      }
    }
  }

  // Pass 3: accelerations, root to leaf.
  const Motion a0 = detail::gravityAcceleration(model);
  for (int i = 0; i < n; ++i) {
    const Joint& joint = model.joints[i];
    const int iv = model.idx_v[i];
    const int p = model.parent[i];
    Motion& a = data.a_gf[i];
    a = data.liMi[i].actInvMotion(p >= 0 ? data.a_gf[p] : a0) + data.c[i];
    if (joint.nv == 1) {
      const double qdd = data.Dinv[i](0, 0) * (data.u[i](0) - data.U[i].col(0).dot(a));
      data.ddq[iv] = qdd;
      a += joint.S.col(0) * qdd;
    } else {
      auto qdd = data.ddq.segment(iv, joint.nv);
      Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1> rhs = data.u[i];
      rhs.noalias() -= data.U[i].transpose() * a;
      qdd.noalias() = data.Dinv[i] * rhs;
      a.noalias() += joint.S * qdd;
    }
    // Body acceleration without the gravity offset: a_i = a_gf_i - iX0 a0.
    data.a[i] = a - data.oMi[i].actInvMotion(a0);
  }
  return detail::ok(data);
}

}  // namespace clusterdyn
