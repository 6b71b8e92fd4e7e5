// Recursive inverse of the joint-space inertia matrix from the articulated-body factorisation,
// and the ABA derivatives d ddq / d(q, v, tau) = -M^-1 d RNEA / d(q, v) and M^-1 (Carpentier &
// Mansard 2018; docs/derivatives.md eq. D11-D14).
#include "clusterdyn/aba.hpp"
#include "clusterdyn/derivatives.hpp"
#include "core/check.hpp"
#include "core/joint_dynamics_refusal.hpp"
#include "tree/derivatives_steps.hpp"

namespace clusterdyn {

namespace detail {

namespace {

/// The M^-1 passes over the world-axes factors psi, oU (dd) and D^-1 (data), then the
/// lower triangle mirrored from the upper one.
void minversePasses(const Model& model, const Data& data, DerivativeData& dd) {
  const int n = model.nbodies, nv = model.nv;
  for (int i = 0; i < n; ++i) {
    const int iv = model.idx_v[i];
    dd.FA[i].middleCols(iv, dd.subtreeEnd[i] - iv).setZero();
  }
  for (int i = n - 1; i >= 0; --i) minverseBackwardStep(model, data, dd, i);
  for (int i = 0; i < n; ++i) minverseForwardStep(model, data, dd, i);
  MatX& Minv = dd.Minv;
  for (int c = 0; c < nv; ++c)
    for (int r = c + 1; r < nv; ++r) Minv(r, c) = Minv(c, r);
}

}  // namespace
}  // namespace detail

Status computeMinverse(const Model& model, Data& data, DerivativeData& dd, ConstVecRef q) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  if (model.hasJointDynamics())
    return detail::refuseJointDynamics(data, "computeABADerivatives", model.name.c_str());
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
  for (int i = n - 1; i >= 0; --i)
    if (double ratio; !detail::worldArticulatedInertiaStep(model, data, dd, i, &ratio))
      return detail::fail(data, Status::NotPositiveDefinite,
                          "articulated inertia of body '%s' is singular along its joint '%s' (%s)",
                          model.bodyNames[i].c_str(), model.jointNames[i].c_str(),
                          detail::PivotText(ratio, detail::kSingularPivot).c_str());
  detail::minversePasses(model, data, dd);
  detail::ok(data);
  return detail::checkOverflow(data, Status::Ok, dd.Minv, "computeMinverse: Minv",
                               {{"q", detail::maxAbs(q), 1}});
}

Status computeABADerivatives(const Model& model, Data& data, DerivativeData& dd, ConstVecRef q,
                             ConstVecRef v, ConstVecRef tau, const Force* fext) {
  CDYN_TRY(detail::checkDerivativeArguments(model, data, dd, q, v, tau, "tau", fext));
  CDYN_TRY(aba(model, data, q, v, tau, fext));  // ddq and the factors U, D^-1
  dd.ddq = data.ddq;
  for (int i = 0; i < model.nbodies; ++i) detail::worldFactorsFromBody(model, data, dd, i);
  detail::minversePasses(model, data, dd);
  // aba() left the world placements data.oMi of q: the passes reuse them.
  detail::rneaDerivativePasses(model, data, dd, q, v.data(), dd.ddq.data(), fext, false);
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
  CDYN_TRY(
      detail::checkOverflow(data, Status::Ok, dd.ddq_dq, "computeABADerivatives: ddq_dq", inputs));
  CDYN_TRY(
      detail::checkOverflow(data, Status::Ok, dd.ddq_dv, "computeABADerivatives: ddq_dv", inputs));
  return detail::checkOverflow(data, Status::Ok, dd.Minv, "computeABADerivatives: Minv", inputs);
}

}  // namespace clusterdyn
