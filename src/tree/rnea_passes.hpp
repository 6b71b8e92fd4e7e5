// The two passes of the recursive Newton-Euler algorithm (Featherstone Table 5.1), shared by
// rnea() and CE-RNEA on models whose clusters have constant G (no implicit loop).
#pragma once

#include "clusterdyn/kinematics.hpp"
#include "tree/tree_step.hpp"

namespace clusterdyn::detail {

/// Forward step of body i: pose, v_i, a_i (gravity offset a0 at the root), f_i = I a + v x* I v
/// - fext (Featherstone Table 5.1) with the inertia I. v, a, fext as in rneaPasses.
[[gnu::always_inline]] inline void rneaForwardStep(const Model& model, Data& data, int i,
                                                   ConstVecRef q, const double* v, const double* a,
                                                   const Force* fext, const Motion& a0,
                                                   const SpatialInertia& I) {
  placementStep(model, data, i, q);
  const int p = model.parent[i];
  const Joint& joint = model.joints[i];
  const Motion vJ = v ? jointMotion(joint, v + model.idx_v[i]) : Motion::Zero();
  Motion& vi = data.v[i];
  Motion& ai = data.a_gf[i];
  vi = p >= 0 ? Motion(data.liMi[i].actInvMotion(data.v[p]) + vJ) : vJ;
  ai = data.liMi[i].actInvMotion(p >= 0 ? data.a_gf[p] : a0);
  if (a) ai += jointMotion(joint, a + model.idx_v[i]);
  if (v) ai += crossMotion(vi, vJ);
  data.f[i] = I * ai;
  if (v) data.f[i] += crossForce(vi, I * vi);
  if (fext) data.f[i] -= fext[i];
}

/// rneaForwardStep with the body's own inertia.
[[gnu::always_inline]] inline void rneaForwardStep(const Model& model, Data& data, int i,
                                                   ConstVecRef q, const double* v, const double* a,
                                                   const Force* fext, const Motion& a0) {
  rneaForwardStep(model, data, i, q, v, a, fext, a0, model.inertias[i]);
}

/// Backward step of body i: out_i = S_i^T f_i, f_parent += X^T f_i.
[[gnu::always_inline]] inline void rneaBackwardStep(const Model& model, Data& data, int i,
                                                    VecX& out) {
  const Joint& joint = model.joints[i];
  const int iv = model.idx_v[i];
  if (joint.nv == 1)
    out[iv] = joint.S.col(0).dot(data.f[i]);
  else
    out.segment(iv, joint.nv).noalias() = joint.S.transpose() * data.f[i];
  const int p = model.parent[i];
  if (p >= 0) data.f[p] += data.liMi[i].actForce(data.f[i]);
}

/// Forward and backward passes without argument checks: out = S^T f (nv). a == nullptr means
/// zero acceleration, v == nullptr zero velocity, fext == nullptr no external force.
Status rneaPasses(const Model& model, Data& data, ConstVecRef q, const double* v, const double* a,
                  const Force* fext, VecX& out);

}  // namespace clusterdyn::detail
