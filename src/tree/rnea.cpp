// Recursive Newton-Euler algorithm (Featherstone Table 5.1, body coordinates).
#include "clusterdyn/rnea.hpp"

#include "core/check.hpp"
#include "tree/joint_dynamics.hpp"
#include "tree/rnea_passes.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn {

namespace detail {

Status rneaPasses(const Model& model, Data& data, ConstVecRef q, const double* v, const double* a,
                  const Force* fext, VecX& out) {
  const Motion a0 = detail::gravityAcceleration(model);
  for (int i = 0; i < model.nbodies; ++i) rneaForwardStep(model, data, i, q, v, a, fext, a0);
  for (int i = model.nbodies - 1; i >= 0; --i) rneaBackwardStep(model, data, i, out);
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
  detail::addJointDynamicsForces(model, q.data(), v.data(), a.data(), data.tau.data());
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
  detail::addJointDynamicsForces(model, q.data(), v.data(), nullptr, data.nle.data());
  return detail::checkOverflow(data, Status::Ok, data.nle, "nonLinearEffects: nle",
                               {{"q", detail::maxAbs(q), 1}, {"v", detail::maxAbs(v), 2}});
}

Status generalizedGravity(const Model& model, Data& data, ConstVecRef q) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  CDYN_TRY(detail::checkConfiguration(model, data, q));
  CDYN_TRY(detail::rneaPasses(model, data, q, nullptr, nullptr, nullptr, data.nle));
  detail::addJointDynamicsForces(model, q.data(), nullptr, nullptr, data.nle.data());
  return detail::checkOverflow(data, Status::Ok, data.nle, "generalizedGravity: g",
                               {{"q", detail::maxAbs(q), 1}});
}

}  // namespace clusterdyn
