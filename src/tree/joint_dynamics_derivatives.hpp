// Partial derivatives of the passive joint forces tau_p(q, v) = -K (q (-) q_spring) - D v of
// MuJoCo models (tree/joint_dynamics.hpp) with respect to q, along the tangent of the
// configuration (the right exponential of configuration.hpp, docs/derivatives.md
// "Conventions"), and v: the one entry point the tree, cluster and constrained derivatives use
// for the springs and dampers. Block diagonal (a joint's passive force depends on its own
// coordinates only; a ball joint replaced by three hinges couples its three angles, all inside
// one cluster); nothing here allocates.
#pragma once

#include <cmath>

#include "clusterdyn/model.hpp"
#include "tree/ball_hinge_passive.hpp"
#include "tree/joint_dynamics.hpp"

namespace clusterdyn::detail {

/// The inverse right Jacobian of SO(3) at the rotation vector r: d Log(R exp([delta])) / d delta
/// at delta = 0 when r = Log(R), i.e. J_r^-1(r) = 1 + [r]/2 + (1/t^2 - cot(t/2)/(2 t)) [r]^2 with
/// t = |r| (Sola, Deray & Atchuthan 2018, "A micro Lie theory"). Series below t = 1e-2.
inline Mat3 inverseRightJacobianSO3(const Vec3& r) {
  const double t2 = r.squaredNorm();
  double c;
  if (t2 < 1e-4) {
    c = 1.0 / 12.0 + t2 * (1.0 / 720.0 + t2 / 30240.0);
  } else {
    const double t = std::sqrt(t2);
    c = 1.0 / t2 - std::cos(0.5 * t) / (2.0 * t * std::sin(0.5 * t));  // half angles: finite at pi
  }
  const Mat3 R = skew(r);
  Mat3 J = Mat3::Identity() + 0.5 * R;
  J.noalias() += c * (R * R);
  return J;
}

/// dtau_dq += sign * d tau_p / dq (tangent columns) and dtau_dv += sign * d tau_p / dv for the
/// model's own passive parameters (Model::stiffness, damping, springPosition; no-op without
/// them). Per joint:
///   hinge / slide: d/dq = -k;
///   ball (and a free joint's rotation): tau = -k .* r, r = subQuat(q, q_s) = Log(R_s^T R), so
///     d/d omega = -diag(k) J_r^-1(r) (R <- R exp([omega]));
///   free joint's translation: f_b = R^T f, f = -K_t (p - p_s) (world), with p <- p + R v_lin and
///     R^T <- exp(-[omega]) R^T: d f_b / d omega = [f_b]x, d f_b / d v_lin = -R^T K_t R;
///   planar: damping only; every joint: d/dv = -D;
///   a ball joint replaced by hinges (Model::ballHinges): addBallHingePassivePartials, whose
///   q-partial depends on v (v == nullptr: v = 0);
///   a floating joint's armature a (addFloatingArmatureForces): tau_a = -a (w x v) on the
///   translational rows, d/dw = a [v]x, d/dv = -a [w]x.
/// q must hold unit quaternions (checked by the callers).
inline void addPassiveForcePartials(const Model& model, const double* q, const double* v,
                                    double sign, Eigen::Ref<MatX> dtau_dq,
                                    Eigen::Ref<MatX> dtau_dv) {
  if (!model.hasPassiveForces()) return;
  // The ball joints replaced by hinges (their q-partial depends on v: v == nullptr means 0).
  if (!model.ballHinges.empty()) addBallHingePassivePartials(model, q, v, sign, dtau_dq, dtau_dv);
  // A floating joint's armature, tau_a = -a (w x v) = a [v]x w (addFloatingArmatureForces):
  // d/dw = a [v]x, d/dv = -a [w]x, no q-partial (v == nullptr: v = 0, both zero).
  for (int b : model.quaternionBodies) {
    if (!v || !model.hasArmature()) break;
    const int iv = model.idx_v[b];
    if (model.joints[b].type != JointType::Floating || model.armature[iv + 3] == 0.0) continue;
    const double sa = sign * model.armature[iv + 3];
    const Vec3 w(v[iv], v[iv + 1], v[iv + 2]), vl(v[iv + 3], v[iv + 4], v[iv + 5]);
    dtau_dv.block<3, 3>(iv + 3, iv) += sa * skew(vl);
    dtau_dv.block<3, 3>(iv + 3, iv + 3) -= sa * skew(w);
  }
  if (model.damping.size() == 0) return;
  const double* K = model.stiffness.data();
  const double* qs = model.springPosition.data();
  for (int j = 0; j < model.nv; ++j) dtau_dv(j, j) -= sign * model.damping[j];
  auto quat = [](const double* x) { return Eigen::Quaterniond(x[3], x[0], x[1], x[2]); };
  for (int b = 0; b < model.nbodies; ++b) {
    const int iq = model.idx_q[b], iv = model.idx_v[b], nv = model.nvs[b];
    const JointType type = model.joints[b].type;
    if (nv == 1 && model.nqs[b] == 1) {
      dtau_dq(iv, iv) -= sign * K[iv];
    } else if (type == JointType::Spherical || type == JointType::Floating) {
      const int qo = type == JointType::Floating ? iq + 3 : iq;
      const Eigen::Quaterniond qa = quat(q + qo);
      if (K[iv] != 0.0 || K[iv + 1] != 0.0 || K[iv + 2] != 0.0) {
        const Vec3 r = quaternionDifference(qa, quat(qs + qo));
        const Mat3 J = inverseRightJacobianSO3(r);
        for (int k = 0; k < 3; ++k)
          dtau_dq.block<1, 3>(iv + k, iv) -= (sign * K[iv + k]) * J.row(k);
      }
      if (type == JointType::Floating &&
          (K[iv + 3] != 0.0 || K[iv + 4] != 0.0 || K[iv + 5] != 0.0)) {
        const Mat3 R = qa.normalized().toRotationMatrix();
        Vec3 f;
        for (int k = 0; k < 3; ++k) f[k] = -K[iv + 3 + k] * (q[iq + k] - qs[iq + k]);
        const Vec3 fb = R.transpose() * f;
        dtau_dq.block<3, 3>(iv + 3, iv) += sign * skew(fb);
        Mat3 KR = R;  // K_t R
        for (int k = 0; k < 3; ++k) KR.row(k) *= K[iv + 3 + k];
        dtau_dq.block<3, 3>(iv + 3, iv + 3).noalias() -= sign * (R.transpose() * KR);
      }
    }
  }
}

}  // namespace clusterdyn::detail
