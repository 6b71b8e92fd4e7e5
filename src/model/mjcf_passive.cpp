// Passive joint forces of MJCF models: MuJoCo's joint springs and dampers (the joint part of
// mj_passive: qfrc_passive = -stiffness (q (-) q_spring) - damping v), and the armature
// MuJoCo adds to the mass-matrix diagonal, per coordinate of a clusterdyn Model.
#include <algorithm>
#include <cmath>

#include "clusterdyn/configuration.hpp"
#include "clusterdyn/mjcf.hpp"
#include "tree/joint_dynamics.hpp"

namespace clusterdyn {

PassiveJointModel passiveJointModel(const Model& model, const MjcfDescription& mjcf) {
  PassiveJointModel p;
  p.stiffness = VecX::Zero(model.nv);
  p.damping = VecX::Zero(model.nv);
  p.armature = VecX::Zero(model.nv);
  p.springPosition = neutralConfiguration(model);
  for (const MjcfJointDynamics& d : mjcf.jointDynamics) {
    const int b = model.jointId(d.joint);
    if (b < 0 && std::any_of(model.ballHinges.begin(), model.ballHinges.end(),
                             [&](const BallHingeGroup& g) { return g.ball == d.joint; }))
      continue;  // a ball as three hinges: its damper and spring are the model's (passiveForces)
    if (b < 0 && model.jointId(d.joint + ":swing1") >= 0)
      throw ModelError(mjcf.urdf.where(d.line) + ": ball joint '" + d.joint +
                       "' was replaced by the three hinges '" + d.joint + ":swing1', '" + d.joint +
                       ":swing2', '" + d.joint +
                       ":spin' in the model given to passiveJointModel, whose coupled damper "
                       "and spring only a model built with its joint dynamics carries "
                       "(ModelOptions::jointDynamics, Model::ballHinges)");
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
  for (int b : model.quaternionBodies) {
    const int qo = model.idx_q[b] + (model.joints[b].type == JointType::Floating ? 3 : 0);
    if (std::abs(q.segment<4>(qo).norm() - 1.0) > 1e-6) return Status::NotUnitQuaternion;
  }
  for (int b = 0; b < model.nbodies; ++b)
    if (model.joints[b].type == JointType::Planar &&
        passive.stiffness.segment(model.idx_v[b], model.nvs[b]).any())
      return Status::InvalidArgument;  // planar joints: no MJCF counterpart
  tau.setZero();
  detail::addPassiveForces(model, passive.stiffness.data(), passive.damping.data(),
                           passive.springPosition.data(), q.data(), v.data(), 1.0, tau.data());
  // Balls replaced by three hinges (passiveJointModel leaves their coordinates 0): the damper
  // and spring the model carries for them, J^T tau_ball (ball_hinge_passive.hpp).
  if (!model.ballHinges.empty())
    detail::addBallHingePassiveForces(model, q.data(), v.data(), 1.0, tau.data());
  return tau.allFinite() ? Status::Ok : Status::NonFinite;
}

}  // namespace clusterdyn
