// Recursive Newton-Euler algorithm (Featherstone Table 5.1, body coordinates).
#include "clusterdyn/rnea.hpp"

#include "core/check.hpp"
#include "tree/rnea_passes.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn {

namespace detail {

Status rneaPasses(const Model& model, Data& data, ConstVecRef q, const double* v, const double* a,
                  const Force* fext, VecX& out) {
  const Motion a0 = detail::gravityAcceleration(model);
  // Forward pass: v_i, a_i (with -g at the root), f_i = I a + v x* I v - fext.
  for (int i = 0; i < model.nbodies; ++i) {
    detail::placementStep(model, data, i, q);
    const int p = model.parent[i];
    const Joint& joint = model.joints[i];
    const Motion vJ = v ? detail::jointMotion(joint, v + model.idx_v[i]) : Motion::Zero();
    Motion& vi = data.v[i];
    Motion& ai = data.a_gf[i];
    vi = p >= 0 ? Motion(data.liMi[i].actInvMotion(data.v[p]) + vJ) : vJ;
    ai = data.liMi[i].actInvMotion(p >= 0 ? data.a_gf[p] : a0);
    if (a) ai += detail::jointMotion(joint, a + model.idx_v[i]);
    if (v) ai += crossMotion(vi, vJ);
    const SpatialInertia& I = model.inertias[i];
    data.f[i] = I * ai;
    if (v) data.f[i] += crossForce(vi, I * vi);
    if (fext) data.f[i] -= fext[i];
  }
  // Backward pass: tau_i = S_i^T f_i, f_parent += X^T f_i.
  for (int i = model.nbodies - 1; i >= 0; --i) {
    const Joint& joint = model.joints[i];
    const int iv = model.idx_v[i];
    if (joint.nv == 1)
      out[iv] = joint.S.col(0).dot(data.f[i]);
    else
      out.segment(iv, joint.nv).noalias() = joint.S.transpose() * data.f[i];
    const int p = model.parent[i];
    if (p >= 0) data.f[p] += data.liMi[i].actForce(data.f[i]);
  }
  return detail::ok(data);
}

}  // namespace detail

Status rnea(const Model& model, Data& data, ConstVecRef q, ConstVecRef v, ConstVecRef a,
            const Force* fext) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  CDYN_TRY(detail::checkConfiguration(model, data, q));
  CDYN_TRY(detail::checkVector(data, v, model.nv, "v"));
  CDYN_TRY(detail::checkVector(data, a, model.nv, "a"));
  CDYN_TRY(detail::checkForces(model, data, fext));
  CDYN_TRY(detail::rneaPasses(model, data, q, v.data(), a.data(), fext, data.tau));
  return detail::checkOverflow(data, Status::Ok, data.tau, "rnea: tau",
                               {{"q", detail::maxAbs(q), 1},
                                {"v", detail::maxAbs(v), 2},
                                {"a", detail::maxAbs(a), 1},
                                {"fext", detail::maxAbsForces(model, fext), 1}});
}

Status nonLinearEffects(const Model& model, Data& data, ConstVecRef q, ConstVecRef v) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  CDYN_TRY(detail::checkConfiguration(model, data, q));
  CDYN_TRY(detail::checkVector(data, v, model.nv, "v"));
  CDYN_TRY(detail::rneaPasses(model, data, q, v.data(), nullptr, nullptr, data.nle));
  return detail::checkOverflow(data, Status::Ok, data.nle, "nonLinearEffects: nle",
                               {{"q", detail::maxAbs(q), 1}, {"v", detail::maxAbs(v), 2}});
}

Status generalizedGravity(const Model& model, Data& data, ConstVecRef q) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  CDYN_TRY(detail::checkConfiguration(model, data, q));
  CDYN_TRY(detail::rneaPasses(model, data, q, nullptr, nullptr, nullptr, data.nle));
  return detail::checkOverflow(data, Status::Ok, data.nle, "generalizedGravity: g",
                               {{"q", detail::maxAbs(q), 1}});
}

}  // namespace clusterdyn
