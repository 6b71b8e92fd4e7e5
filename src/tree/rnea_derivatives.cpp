// Analytical derivatives of the recursive Newton-Euler algorithm (Carpentier & Mansard 2018):
// one forward pass in world coordinates, one backward pass that accumulates the subtree sums
// and fills the (body, ancestor) blocks of d tau / dq, d tau / dv and M (docs/derivatives.md),
// then the joint-dynamics terms of MJCF models (armature, springs, dampers).
#include <algorithm>

#include "clusterdyn/derivatives.hpp"
#include "core/check.hpp"
#include "tree/derivatives_steps.hpp"
#include "tree/joint_dynamics.hpp"
#include "tree/joint_dynamics_derivatives.hpp"

namespace clusterdyn {

DerivativeData::DerivativeData(const Model& m) : model(&m) {
  const int n = m.nbodies, nv = m.nv;
  dtau_dq = MatX::Zero(nv, nv);
  dtau_dv = MatX::Zero(nv, nv);
  dtau_da = MatX::Zero(nv, nv);
  ddq_dq = MatX::Zero(nv, nv);
  ddq_dv = MatX::Zero(nv, nv);
  Minv = MatX::Zero(nv, nv);
  tau = VecX::Zero(nv);
  ddq = VecX::Zero(nv);
  psi.assign(n, Mat6Xs());
  ups.assign(n, Mat6Xs());
  wps.assign(n, Mat6Xs());
  zps.assign(n, Mat6Xs());
  oU.assign(n, Mat6Xs());
  for (int i = 0; i < n; ++i) {
    psi[i].setZero(6, m.nvs[i]);
    ups[i].setZero(6, m.nvs[i]);
    wps[i].setZero(6, m.nvs[i]);
    zps[i].setZero(6, m.nvs[i]);
    oU[i].setZero(6, m.nvs[i]);
  }
  ov.assign(n, Motion::Zero());
  oa.assign(n, Motion::Zero());
  oIc.assign(n, Mat6::Zero());
  oBc.assign(n, Mat6::Zero());
  oF.assign(n, Force::Zero());
  subtreeEnd.assign(n, 0);
  for (int i = n - 1; i >= 0; --i) {
    subtreeEnd[i] = std::max(subtreeEnd[i], m.idx_v[i] + m.nvs[i]);
    if (m.parent[i] >= 0)
      subtreeEnd[m.parent[i]] = std::max(subtreeEnd[m.parent[i]], subtreeEnd[i]);
  }
  // Runs of the strict descendants' columns (parents are numbered before their children).
  subtreeRunStart.assign(n + 1, 0);
  std::vector<char> inSubtree(n), column(nv);
  for (int i = 0; i < n; ++i) {
    subtreeRunStart[i] = static_cast<int>(subtreeRuns.size()) / 2;
    std::fill(column.begin(), column.end(), 0);
    inSubtree.assign(n, 0);
    inSubtree[i] = 1;
    for (int j = i + 1; j < n; ++j) {
      inSubtree[j] = m.parent[j] >= 0 && inSubtree[m.parent[j]];
      if (inSubtree[j]) std::fill_n(column.begin() + m.idx_v[j], m.nvs[j], 1);
    }
    const int from = m.idx_v[i] + m.nvs[i];
    const bool contiguous = std::find(column.begin() + from, column.begin() + subtreeEnd[i], 0) ==
                            column.begin() + subtreeEnd[i];
    contiguousSubtreeEnd.push_back(contiguous ? subtreeEnd[i] : -1);
    for (int c = from; c < nv; ++c) {
      if (!column[c]) continue;
      const int begin = c;
      while (c < nv && column[c]) ++c;
      subtreeRuns.push_back(begin);
      subtreeRuns.push_back(c);
    }
  }
  subtreeRunStart[n] = static_cast<int>(subtreeRuns.size()) / 2;
  F = Mat6X::Zero(6, nv);
  FA.assign(n, Mat6X::Zero(6, nv));
}

namespace detail {

Status checkDerivativeArguments(const Model& model, Data& data, const DerivativeData& dd,
                                ConstVecRef q, ConstVecRef v, ConstVecRef x, const char* xName,
                                const Force* fext) {
  CDYN_TRY(checkWorkspace(model, data));
  if (dd.model != &model)
    return fail(data, Status::WorkspaceMismatch,
                "the derivative workspace was created for another model");
  CDYN_TRY(checkConfiguration(model, data, q));
  CDYN_TRY(checkVector(data, v, model.nv, "v"));
  CDYN_TRY(checkVector(data, x, model.nv, xName));
  return checkForces(model, data, fext);
}

const double* appliedTorques(const Model& model, Data& data, const double* q, const double* v,
                             ConstVecRef tau) {
  if (!model.hasPassiveForces()) return tau.data();
  data.tauApplied = tau;
  addModelPassiveForces(model, q, v, 1.0, data.tauApplied.data());
  return data.tauApplied.data();
}

void addJointDynamicsDerivatives(const Model& model, const double* q, const double* v,
                                 const double* a, DerivativeData& dd) {
  addJointDynamicsForces(model, q, v, a, dd.tau.data());
  if (model.hasArmature()) dd.dtau_da.diagonal() += model.armature;
  addPassiveForcePartials(model, q, v, -1.0, dd.dtau_dq, dd.dtau_dv);
}

void rneaDerivativePasses(const Model& model, Data& data, DerivativeData& dd, ConstVecRef q,
                          const double* v, const double* a, const Force* fext, bool placements) {
  const Motion a0 = gravityAcceleration(model);
  for (int i = 0; i < model.nbodies; ++i)
    derivativeForwardStep(model, data, dd, i, q, v, a, fext, a0, placements);
  for (int k = model.nbodies - 1; k >= 0; --k) derivativeBackwardStep(model, dd, k);
}

}  // namespace detail

Status computeRNEADerivatives(const Model& model, Data& data, DerivativeData& dd, ConstVecRef q,
                              ConstVecRef v, ConstVecRef a, const Force* fext) {
  CDYN_TRY(detail::checkDerivativeArguments(model, data, dd, q, v, a, "a", fext));
  detail::rneaDerivativePasses(model, data, dd, q, v.data(), a.data(), fext);
  if (model.hasJointDynamics())  // + A a - tau_p(q, v) (MJCF armature, springs, dampers)
    detail::addJointDynamicsDerivatives(model, q.data(), v.data(), a.data(), dd);
  detail::ok(data);
  const std::initializer_list<detail::InputMagnitude> inputs = {
      {"q", detail::maxAbs(q), 1},
      {"v", detail::maxAbs(v), 2},
      {"a", detail::maxAbs(a), 1},
      {"fext", detail::maxAbsForces(model, fext), 1}};
  CDYN_TRY(detail::checkOverflow(data, Status::Ok, dd.dtau_dq, "computeRNEADerivatives: dtau_dq",
                                 inputs));
  return detail::checkOverflow(data, Status::Ok, dd.dtau_dv, "computeRNEADerivatives: dtau_dv",
                               inputs);
}

}  // namespace clusterdyn
