// Articulated-body algorithm (Featherstone Table 7.1, body coordinates).
#include "clusterdyn/aba.hpp"

#include "core/check.hpp"
#include "tree/aba_step.hpp"
#include "tree/joint_dynamics.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn {

Status aba(const Model& model, Data& data, ConstVecRef q, ConstVecRef v, ConstVecRef tau,
           const Force* fext) {
  CDYN_TRY(detail::checkWorkspace(model, data));
  CDYN_TRY(detail::checkConfiguration(model, data, q));
  CDYN_TRY(detail::checkVector(data, v, model.nv, "v"));
  CDYN_TRY(detail::checkVector(data, tau, model.nv, "tau"));
  CDYN_TRY(detail::checkForces(model, data, fext));
  const int n = model.nbodies;
  // Passive joint forces (MJCF springs, dampers) join the applied forces: tau + tau_p(q, v).
  const double* tauIn = tau.data();
  if (model.hasPassiveForces()) {
    data.tauApplied = tau;
    detail::addModelPassiveForces(model, q.data(), v.data(), 1.0, data.tauApplied.data());
    tauIn = data.tauApplied.data();
  }

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

  // Pass 2: articulated inertias, leaf to root; a D singular to working precision (pivot below
  // data.pivotFloor, kSingularPivot: only the constrained passes lower it, in their scope) fails.
  for (int i = n - 1; i >= 0; --i)
    CDYN_TRY(detail::articulatedBodyStep(model, data, i, model.parent[i], tauIn + model.idx_v[i]));

  // Pass 3: accelerations, root to leaf.
  const Motion a0 = detail::gravityAcceleration(model);
  for (int i = 0; i < n; ++i) {
    const int p = model.parent[i];
    detail::accelerationStep(model, data, i, p >= 0 ? data.a_gf[p] : a0,
                             data.ddq.data() + model.idx_v[i]);
    // Body acceleration without the gravity offset: a_i = a_gf_i - iX0 a0.
    data.a[i] = data.a_gf[i] - data.oMi[i].actInvMotion(a0);
  }
  detail::ok(data);
  return detail::checkOverflow(data, Status::Ok, data.ddq, "aba: ddq",
                               {{"q", detail::maxAbs(q), 1},
                                {"v", detail::maxAbs(v), 2},
                                {"tau", detail::maxAbs(tau), 1},
                                {"fext", detail::maxAbsForces(model, fext), 1}});
}

}  // namespace clusterdyn
