// Joint dynamics of MuJoCo models (Model::armature, damping, stiffness, springPosition): the
// passive joint forces tau_p(q, v) = -K (q (-) q_spring) - D v (MuJoCo's mj_passive, joint
// part; with the ball joints replaced by hinges, Model::ballHinges) and the armature term of the
// joint-space inertia, shared by the tree and cluster algorithms. Nothing here allocates.
#pragma once

#include <cmath>

#include "clusterdyn/model.hpp"
#include "tree/ball_hinge_passive.hpp"

namespace clusterdyn::detail {

/// MuJoCo's mju_subQuat(qa, qb): the rotation vector of qb^-1 qa (in qa's, the child, frame).
inline Vec3 quaternionDifference(const Eigen::Quaterniond& qa, const Eigen::Quaterniond& qb) {
  constexpr double kPi = 3.14159265358979323846;
  const Eigen::Quaterniond d = qb.conjugate() * qa;
  const Vec3 axis = d.vec();
  const double s = axis.norm();
  if (s < 1e-15) return Vec3::Zero();
  double angle = 2.0 * std::atan2(s, d.w());
  if (angle > kPi) angle -= 2.0 * kPi;
  return axis * (angle / s);
}

/// out += sign * tau_p(q, v) (v == nullptr: v = 0) for the passive parameters (stiffness,
/// damping: nv; springPosition: nq) on `model`'s joints. Ball and free joints: the rotational
/// spring is -k subQuat(q, q_spring) in the child frame; the free joint's translational spring
/// acts on the world position and is mapped to clusterdyn's body-frame linear velocity (R^T).
/// q must hold unit quaternions (checked by the callers). Planar joints: damping only.
inline void addPassiveForces(const Model& model, const double* stiffness, const double* damping,
                             const double* springPosition, const double* q, const double* v,
                             double sign, double* out) {
  auto quat = [](const double* x) { return Eigen::Quaterniond(x[3], x[0], x[1], x[2]); };
  for (int b = 0; b < model.nbodies; ++b) {
    const int iq = model.idx_q[b], iv = model.idx_v[b], nv = model.nvs[b];
    if (v)
      for (int k = 0; k < nv; ++k) out[iv + k] -= sign * damping[iv + k] * v[iv + k];
    const JointType type = model.joints[b].type;
    if (nv == 1 && model.nqs[b] == 1) {
      if (stiffness[iv] != 0.0) out[iv] -= sign * stiffness[iv] * (q[iq] - springPosition[iq]);
    } else if (type == JointType::Spherical || type == JointType::Floating) {
      const int qo = type == JointType::Floating ? iq + 3 : iq;
      const Eigen::Quaterniond qa = quat(q + qo);
      if (stiffness[iv] != 0.0 || stiffness[iv + 1] != 0.0 || stiffness[iv + 2] != 0.0) {
        const Vec3 r = quaternionDifference(qa, quat(springPosition + qo));
        for (int k = 0; k < 3; ++k) out[iv + k] -= sign * stiffness[iv + k] * r[k];
      }
      if (type == JointType::Floating &&
          (stiffness[iv + 3] != 0.0 || stiffness[iv + 4] != 0.0 || stiffness[iv + 5] != 0.0)) {
        Vec3 f;
        for (int k = 0; k < 3; ++k)
          f[k] = -stiffness[iv + 3 + k] * (q[iq + k] - springPosition[iq + k]);
        const Vec3 fb = qa.normalized().toRotationMatrix().transpose() * f;
        for (int k = 0; k < 3; ++k) out[iv + 3 + k] += sign * fb[k];
      }
    }
  }
}

/// out += sign * tau_a(v) for the floating joints with armature: MuJoCo's free-joint armature a
/// multiplies d/dt v_world, v_world = R v the world-frame linear velocity, so in clusterdyn's
/// [w; v] (body frame) it is R^T a d/dt (R v) = a (v_dot + w x v): diag(A) ddq (the armature of
/// the joint-space inertia) plus the velocity product a (w x v), carried as the passive force
/// tau_a = -a (w x v) on the translational rows. It does no work (v . (w x v) = 0). Model::
/// finalize() makes the three translational armatures equal and gives such a model passive
/// forces (hasPassiveForces()). v == nullptr: zero.
inline void addFloatingArmatureForces(const Model& model, const double* v, double sign,
                                      double* out) {
  if (!v || !model.hasArmature()) return;
  for (int b : model.quaternionBodies) {
    if (model.joints[b].type != JointType::Floating) continue;
    const int iv = model.idx_v[b];
    const double a = model.armature[iv + 3];
    if (a == 0.0) continue;
    const Vec3 w(v[iv], v[iv + 1], v[iv + 2]), vl(v[iv + 3], v[iv + 4], v[iv + 5]);
    const Vec3 t = (sign * a) * w.cross(vl);
    for (int k = 0; k < 3; ++k) out[iv + 3 + k] -= t[k];
  }
}

/// out += sign * tau_p(q, v) for the model's own joint dynamics (no-op without passive forces):
/// the per-coordinate springs and dampers, the ball joints replaced by hinges
/// (Model::ballHinges, ball_hinge_passive.hpp) and the velocity product of a floating joint's
/// armature (addFloatingArmatureForces).
inline void addModelPassiveForces(const Model& model, const double* q, const double* v, double sign,
                                  double* out) {
  if (!model.hasPassiveForces()) return;
  addPassiveForces(model, model.stiffness.data(), model.damping.data(), model.springPosition.data(),
                   q, v, sign, out);
  if (!model.ballHinges.empty()) addBallHingePassiveForces(model, q, v, sign, out);
  addFloatingArmatureForces(model, v, sign, out);
}

/// Inverse dynamics terms of the joint dynamics: out += armature .* a - tau_p(q, v) (a or v
/// nullptr: zero). No-op for a model without joint dynamics.
inline void addJointDynamicsForces(const Model& model, const double* q, const double* v,
                                   const double* a, double* out) {
  if (a && model.hasArmature())
    for (int j = 0; j < model.nv; ++j) out[j] += model.armature[j] * a[j];
  addModelPassiveForces(model, q, v, -1.0, out);
}

}  // namespace clusterdyn::detail
