// Passive joint forces of MJCF models: MuJoCo's joint springs and dampers (the joint part of
// mj_passive: qfrc_passive = -stiffness (q (-) q_spring) - damping v), and the armature
// MuJoCo adds to the mass-matrix diagonal, per coordinate of a clusterdyn Model.
#include <cmath>

#include "clusterdyn/configuration.hpp"
#include "clusterdyn/mjcf.hpp"

namespace clusterdyn {
namespace {

constexpr double kPi = 3.14159265358979323846;

/// MuJoCo's mju_subQuat(qa, qb): the rotation vector of qb^-1 qa (in qa's / the child frame).
Vec3 subQuat(const Eigen::Quaterniond& qa, const Eigen::Quaterniond& qb) {
  const Eigen::Quaterniond d = qb.conjugate() * qa;
  const Vec3 axis = d.vec();
  const double s = axis.norm();
  if (s < 1e-15) return Vec3::Zero();
  double angle = 2.0 * std::atan2(s, d.w());
  if (angle > kPi) angle -= 2.0 * kPi;
  return axis * (angle / s);
}

Eigen::Quaterniond quatAt(ConstVecRef q, int i) {  // clusterdyn layout x y z w
  return Eigen::Quaterniond(q[i + 3], q[i], q[i + 1], q[i + 2]);
}

}  // namespace

PassiveJointModel passiveJointModel(const Model& model, const MjcfDescription& mjcf) {
  PassiveJointModel p;
  p.stiffness = VecX::Zero(model.nv);
  p.damping = VecX::Zero(model.nv);
  p.armature = VecX::Zero(model.nv);
  p.springPosition = neutralConfiguration(model);
  for (const MjcfJointDynamics& d : mjcf.jointDynamics) {
    const int b = model.jointId(d.joint);
    if (b < 0)
      throw ModelError(mjcf.urdf.where(d.line) + ": joint '" + d.joint +
                       "' is not a joint of the model given to passiveJointModel");
    for (int k = 0; k < model.nvs[b]; ++k) {
      p.stiffness[model.idx_v[b] + k] = d.stiffness;
      p.damping[model.idx_v[b] + k] = d.damping;
      p.armature[model.idx_v[b] + k] = d.armature;
    }
    if (model.nqs[b] == 1) p.springPosition[model.idx_q[b]] = d.springPosition;
  }
  return p;
}

Status passiveForces(const Model& model, const PassiveJointModel& passive, ConstVecRef q,
                     ConstVecRef v, Eigen::Ref<VecX> tau) {
  if (q.size() != model.nq || v.size() != model.nv || tau.size() != model.nv ||
      passive.stiffness.size() != model.nv || passive.damping.size() != model.nv ||
      passive.springPosition.size() != model.nq)
    return Status::InvalidSize;
  if (!q.allFinite() || !v.allFinite()) return Status::NonFinite;
  for (int b = 0; b < model.nbodies; ++b) {
    const int iq = model.idx_q[b], iv = model.idx_v[b];
    const JointType type = model.joints[b].type;
    if (type == JointType::Spherical || type == JointType::Floating) {
      const int qo = type == JointType::Floating ? iq + 3 : iq;  // quaternion offset
      const int wo = iv;                                         // [w; v] for both
      const Eigen::Quaterniond qa = quatAt(q, qo), qs = quatAt(passive.springPosition, qo);
      if (std::abs(qa.norm() - 1.0) > 1e-6) return Status::NotUnitQuaternion;
      for (int k = 0; k < 3; ++k) tau[wo + k] = -passive.damping[wo + k] * v[wo + k];
      if (passive.stiffness.segment<3>(wo).any())
        tau.segment<3>(wo) -= passive.stiffness.segment<3>(wo).cwiseProduct(subQuat(qa, qs));
      if (type == JointType::Floating) {
        // MuJoCo's translational spring acts on the world position: f = -k (p - p_spring);
        // clusterdyn's linear velocity is in the body frame, so tau = R^T f.
        const Vec3 f = -passive.stiffness.segment<3>(iv + 3).cwiseProduct(
            q.segment<3>(iq) - passive.springPosition.segment<3>(iq));
        tau.segment<3>(iv + 3) = qa.normalized().toRotationMatrix().transpose() * f;
        for (int k = 3; k < 6; ++k) tau[iv + k] -= passive.damping[iv + k] * v[iv + k];
      }
    } else {
      for (int k = 0; k < model.nvs[b]; ++k) tau[iv + k] = -passive.damping[iv + k] * v[iv + k];
      if (model.nqs[b] == 1)
        tau[iv] -= passive.stiffness[iv] * (q[iq] - passive.springPosition[iq]);
      else if (passive.stiffness.segment(iv, model.nvs[b]).any())
        return Status::InvalidArgument;  // planar joints: no MJCF counterpart
    }
  }
  return tau.allFinite() ? Status::Ok : Status::NonFinite;
}

}  // namespace clusterdyn
