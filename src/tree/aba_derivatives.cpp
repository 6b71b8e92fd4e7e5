// Recursive inverse of the joint-space inertia matrix from the articulated-body factorisation,
// and the ABA derivatives d ddq / d(q, v, tau) = -M^-1 d RNEA / d(q, v) and M^-1 (Carpentier &
// Mansard 2018; docs/derivatives.md eq. D11-D14), with ABA (Featherstone Table 7.1), M^-1 and
// the RNEA-derivative terms fused into four passes in world axes.
#include "clusterdyn/derivatives.hpp"
#include "core/check.hpp"
#include "tree/aba_step.hpp"
#include "tree/derivatives_steps.hpp"

namespace clusterdyn {

namespace detail {

namespace {

/// The M^-1 passes over the world-axes factors psi, oU (dd) and D^-1 (data); the forward one
/// mirrors each row block to the lower triangle.
void minversePasses(const Model& model, const Data& data, DerivativeData& dd) {
  const int n = model.nbodies;
  for (int i = n - 1; i >= 0; --i) minverseBackwardStep(model, data, dd, i);
  for (int i = 0; i < n; ++i) minverseForwardStep(model, data, dd, i);
}

/// Pass 1 of the fused ABA derivatives, body i (forward, world axes): placement, psi_i, ov_i
/// (eq. D1), the velocity-product acceleration c_i = ov_i x psi_i qd_i (data.c), the body's
/// inertia I_i (oIc_i, and the articulated seed data.IA_i), its Coriolis matrix (oBc_i, eq. D3)
/// and bias force p_i = ov_i x* I_i ov_i - fext_i (oF_i, and the articulated seed data.pA_i).
inline void abaKinematicStep(const Model& model, Data& data, DerivativeData& dd, int i,
                             ConstVecRef q, const double* v, const Force* fext) {
  placementStep(model, data, i, q);
  const Transform& oMi = data.oMi[i];
  const Joint& joint = model.joints[i];
  const int p = model.parent[i], k = joint.nv, iv = model.idx_v[i];
  Mat6Xs& psi = dd.psi[i];
  Motion vJ = Motion::Zero();
  for (int c = 0; c < k; ++c) {
    psi.col(c) = oMi.actMotion(joint.S.col(c));
    vJ += psi.col(c) * v[iv + c];
  }
  const Motion& ov = dd.ov[i] = p >= 0 ? Motion(dd.ov[p] + vJ) : vJ;  // eq. D1
  data.c[i] = crossMotion(ov, vJ);
  const SpatialInertia oI = model.inertias[i].transformedBy(oMi);
  const Force h = oI * ov;
  Force& f = dd.oF[i];
  f = crossForce(ov, h);
  if (fext) f -= oMi.actForce(fext[i]);
  data.pA[i] = f;
  data.IA[i] = dd.oIc[i] = oI.matrix();
  coriolisMatrix(oI, ov, h, dd.oBc[i]);  // eq. D3
}

/// Pass 3, body i (forward, world axes): ddq_i = D_i^-1 (u_i - oU_i^T (a_parent + c_i))
/// (Featherstone Table 7.1), oa_i (eq. D1, gravity offset a0 at the root), u_i, w_i, z_i
/// (eq. D4-D6) and the body force f_i = I_i oa_i + p_i (eq. D2), then the M^-1 forward step.
inline void abaAccelerationStep(const Model& model, Data& data, DerivativeData& dd, int i,
                                const Motion& a0) {
  const int p = model.parent[i], k = model.nvs[i], iv = model.idx_v[i];
  const Motion ovp = p >= 0 ? dd.ov[p] : Motion::Zero();
  const Motion& oap = p >= 0 ? dd.oa[p] : a0;
  const Mat6Xs& psi = dd.psi[i];
  Motion& oa = dd.oa[i];
  oa = oap + data.c[i];
  if (k == 1) {
    const double qdd = data.Dinv[i](0, 0) * (data.u[i](0) - dd.oU[i].col(0).dot(oa));
    data.ddq[iv] = qdd;
    oa += psi.col(0) * qdd;
  } else {
    using Vk = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, 6, 1>;
    Vk r = data.u[i];
    r.noalias() -= dd.oU[i].transpose() * oa;
    auto qdd = data.ddq.segment(iv, k);
    qdd.noalias() = data.Dinv[i] * r;
    oa.noalias() += psi * qdd;
  }
  const Motion ovSum = ovp + dd.ov[i];
  for (int c = 0; c < k; ++c) {
    dd.ups[i].col(c) = crossMotion(psi.col(c), ovp);                                       // eq. D4
    dd.wps[i].col(c) = crossMotion(psi.col(c), oap) - crossMotion(dd.ups[i].col(c), ovp);  // eq. D5
    dd.zps[i].col(c) = -crossMotion(psi.col(c), ovSum);                                    // eq. D6
  }
  dd.oF[i].noalias() += dd.oIc[i] * oa;  // eq. D2
  minverseForwardStep(model, data, dd, i);
}

}  // namespace
}  // namespace detail

Status computeMinverse(const Model& model, Data& data, DerivativeData& dd, ConstVecRef q) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  if (dd.model != &model)
    return detail::fail(data, Status::WorkspaceMismatch,
                        "the derivative workspace was created for another model");
  CDYN_TRY(detail::checkConfiguration(model, data, q));
  const int n = model.nbodies;
  // Articulated inertias in world axes (ABA at zero velocity and torque; Featherstone Table
  // 7.1): data.IA is the scratch.
  for (int i = 0; i < n; ++i) {
    detail::placementStep(model, data, i, q);
    const Joint& joint = model.joints[i];
    for (int c = 0; c < joint.nv; ++c) dd.psi[i].col(c) = data.oMi[i].actMotion(joint.S.col(c));
    data.IA[i] = model.inertias[i].transformedBy(data.oMi[i]).matrix();
  }
  // The armature (MJCF) adds to each D_i: (M + A)^-1.
  const double* arm = model.hasArmature() ? model.armature.data() : nullptr;
  for (int i = n - 1; i >= 0; --i)
    if (double ratio;
        !detail::worldArticulatedInertiaStep(model, data, dd, i, &ratio, nullptr, arm))
      return detail::singularJoint(model, data, i, ratio);
  detail::minversePasses(model, data, dd);
  detail::ok(data);
  return detail::checkOverflow(data, Status::Ok, dd.Minv, "computeMinverse: Minv",
                               {{"q", detail::maxAbs(q), 1}});
}

Status computeABADerivatives(const Model& model, Data& data, DerivativeData& dd, ConstVecRef q,
                             ConstVecRef v, ConstVecRef tau, const Force* fext) {
  CDYN_TRY(detail::checkDerivativeArguments(model, data, dd, q, v, tau, "tau", fext));
  const int n = model.nbodies;
  // MJCF joint dynamics (one test; none: the rigid-body passes unchanged): the passive forces
  // join tau (ddq = (M + A)^-1 (tau + tau_p - nle)), the armature joins each D_i (Minv =
  // (M + A)^-1), and dd.dtau_* become those of tau = rnea + A a - tau_p at a = ddq, so ddq_dq =
  // -(M + A)^-1 (d rnea / dq - d tau_p / dq) and ddq_dv likewise.
  const bool jointDynamics = model.hasJointDynamics();
  const double* tauIn = tau.data();
  const double* arm = nullptr;
  if (jointDynamics) {
    tauIn = detail::appliedTorques(model, data, q.data(), v.data(), tau);
    if (model.hasArmature()) arm = model.armature.data();
  }
  for (int i = 0; i < n; ++i) detail::abaKinematicStep(model, data, dd, i, q, v.data(), fext);
  // Articulated inertias and bias forces with the M^-1 backward terms (eq. D11, D12).
  for (int i = n - 1; i >= 0; --i) {
    if (double ratio; !detail::worldArticulatedInertiaStep(model, data, dd, i, &ratio, tauIn, arm))
      return detail::singularJoint(model, data, i, ratio);
    detail::minverseBackwardStep(model, data, dd, i);
  }
  const Motion a0 = detail::gravityAcceleration(model);
  for (int i = 0; i < n; ++i) detail::abaAccelerationStep(model, data, dd, i, a0);
  dd.ddq = data.ddq;

  for (int k = n - 1; k >= 0; --k) detail::derivativeBackwardStep(model, dd, k);  // eq. D7-D10
  if (jointDynamics)
    detail::addJointDynamicsDerivatives(model, q.data(), v.data(), dd.ddq.data(), dd);
  // eq. D14. Eigen's blocked product keeps its panels on the stack while they fit in
  // EIGEN_STACK_ALLOCATION_LIMIT (128 kB: 2 panels of at most nv x nv doubles below nv = 64);
  // above, the coefficient-wise product, which never allocates.
  if (model.nv <= 64) {
    dd.ddq_dq.noalias() = -dd.Minv * dd.dtau_dq;
    dd.ddq_dv.noalias() = -dd.Minv * dd.dtau_dv;
  } else {
    dd.ddq_dq.noalias() = -dd.Minv.lazyProduct(dd.dtau_dq);
    dd.ddq_dv.noalias() = -dd.Minv.lazyProduct(dd.dtau_dv);
  }
  detail::ok(data);
  const std::initializer_list<detail::InputMagnitude> inputs = {
      {"q", detail::maxAbs(q), 1},
      {"v", detail::maxAbs(v), 2},
      {"tau", detail::maxAbs(tau), 1},
      {"fext", detail::maxAbsForces(model, fext), 1}};
  CDYN_TRY(detail::checkOverflow(data, Status::Ok, dd.ddq, "computeABADerivatives: ddq", inputs));
  CDYN_TRY(
      detail::checkOverflow(data, Status::Ok, dd.ddq_dq, "computeABADerivatives: ddq_dq", inputs));
  CDYN_TRY(
      detail::checkOverflow(data, Status::Ok, dd.ddq_dv, "computeABADerivatives: ddq_dv", inputs));
  return detail::checkOverflow(data, Status::Ok, dd.Minv, "computeABADerivatives: Minv", inputs);
}

}  // namespace clusterdyn
