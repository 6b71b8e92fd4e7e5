#include "clusterdyn/model.hpp"

#include <cmath>
#include <limits>

#include "clusterdyn/status.hpp"
#include "model/joint_types.hpp"

namespace clusterdyn {

namespace {

/// The group's indices and axes from its joint names, checked (ModelError).
void finalizeBallHingeGroup(const Model& m, BallHingeGroup& g, bool passive) {
  const std::string what = "model '" + m.name + "': ball joint '" + g.ball + "' as three hinges: ";
  if (!passive)
    throw ModelError(what + "a model with ballHinges needs damping, stiffness and springPosition");
  if (!(std::isfinite(g.damping) && g.damping >= 0.0 && std::isfinite(g.stiffness) &&
        g.stiffness >= 0.0))
    throw ModelError(what + "damping and stiffness must be finite and >= 0");
  if (!(g.spring.coeffs().allFinite() && std::abs(g.spring.norm() - 1.0) <= 1e-9))
    throw ModelError(what + "the spring rotation must be a unit quaternion");
  int before = -1;
  for (int k = 0; k < 3; ++k) {
    const int b = m.jointId(g.joints[k]);
    if (b < 0 || m.joints[b].type != JointType::Revolute)
      throw ModelError(what + "'" + g.joints[k] + "' is not a revolute joint of the model");
    // R(t) = exp(b1 t1) exp(b2 t2) exp(a t3) needs a chain with coincident joint frames.
    if (k > 0 && (m.parent[b] != before || !(m.jointPlacement[b].R == Mat3::Identity()) ||
                  !m.jointPlacement[b].p.isZero(0.0)))
      throw ModelError(what + "joint '" + g.joints[k] + "' must be the child of '" +
                       g.joints[k - 1] + "' with the identity joint placement");
    g.v[k] = m.idx_v[b];
    g.q[k] = m.idx_q[b];
    g.axes[k] = m.joints[b].axis.normalized();
    before = b;
  }
}

}  // namespace

int Model::bodyId(const std::string& linkName) const {
  for (int i = 0; i < nbodies; ++i)
    if (bodyNames[i] == linkName) return i;
  return -1;
}

int Model::jointId(const std::string& jointName) const {
  for (int i = 0; i < nbodies; ++i)
    if (jointNames[i] == jointName) return i;
  return -1;
}

int Model::frameId(const std::string& frameName) const {
  for (size_t i = 0; i < frames.size(); ++i)
    if (frames[i].name == frameName) return static_cast<int>(i);
  return -1;
}

int Model::velocityIndex(const std::string& name) const {
  for (int i = 0; i < nv; ++i)
    if (velocityNames[i] == name) return i;
  return -1;
}

int Model::positionIndex(const std::string& name) const {
  for (int i = 0; i < nq; ++i)
    if (positionNames[i] == name) return i;
  return -1;
}

double Model::totalMass() const {
  double m = 0.0;
  for (const auto& I : inertias) m += I.mass;
  return m;
}

void Model::finalize() {
  nbodies = static_cast<int>(parent.size());
  children.assign(nbodies, {});
  idx_q.resize(nbodies);
  idx_v.resize(nbodies);
  nqs.resize(nbodies);
  nvs.resize(nbodies);
  nq = nv = 0;
  positionNames.clear();
  velocityNames.clear();
  velocityOwner.clear();
  axisRotation.assign(nbodies, -1);
  quaternionBodies.clear();
  for (int i = 0; i < nbodies; ++i) {
    if (parent[i] >= 0) children[parent[i]].push_back(i);
    if (detail::quaternionOffset(joints[i].type) >= 0) quaternionBodies.push_back(i);
    if (joints[i].type == JointType::Revolute && joints[i].alignedAxis >= 0 &&
        jointPlacement[i].R == Mat3::Identity())
      axisRotation[i] = joints[i].alignedAxis;
    idx_q[i] = nq;
    idx_v[i] = nv;
    nqs[i] = joints[i].nq;
    nvs[i] = joints[i].nv;
    nq += nqs[i];
    nv += nvs[i];
    // Coordinate names: a 1-dof joint's own name, else "<joint>:<suffix>" (joint_types.hpp).
    detail::visitJointType(joints[i].type, [&](auto J) {
      using T = decltype(J);
      const std::string& jn = jointNames[i];
      for (int k = 0; k < T::nq; ++k) positionNames.push_back(jn + T::positionSuffixes[k]);
      for (int k = 0; k < T::nv; ++k) velocityNames.push_back(jn + T::velocitySuffixes[k]);
    });
    for (int k = 0; k < nvs[i]; ++k) velocityOwner.push_back(i);
  }
  const double inf = std::numeric_limits<double>::infinity();
  if (lowerPositionLimit.size() != nq) lowerPositionLimit = VecX::Constant(nq, -inf);
  if (upperPositionLimit.size() != nq) upperPositionLimit = VecX::Constant(nq, inf);
  if (velocityLimit.size() != nv) velocityLimit = VecX::Constant(nv, inf);
  if (effortLimit.size() != nv) effortLimit = VecX::Constant(nv, inf);
  // Joint dynamics: empty, or complete (armature alone; damping, stiffness, springPosition
  // together), finite, non-negative; springs only on joints MuJoCo has (not planar).
  const bool passive = damping.size() || stiffness.size() || springPosition.size();
  if ((armature.size() && armature.size() != nv) ||
      (passive && (damping.size() != nv || stiffness.size() != nv || springPosition.size() != nq)))
    throw ModelError("model '" + name +
                     "': armature, damping, stiffness must be empty or of size nv and "
                     "springPosition of size nq (together with damping and stiffness)");
  if ((armature.size() && !(armature.array() >= 0.0).all()) ||
      (passive &&
       (!(damping.array() >= 0.0).all() || !(stiffness.array() >= 0.0).all() ||
        !springPosition.allFinite() || !damping.allFinite() || !stiffness.allFinite())) ||
      !armature.allFinite())
    throw ModelError("model '" + name +
                     "': armature, damping and stiffness must be finite and >= 0");
  for (int i = 0; passive && i < nbodies; ++i)
    if (joints[i].type == JointType::Planar && stiffness.segment(idx_v[i], nvs[i]).any())
      throw ModelError("model '" + name + "': joint '" + jointNames[i] +
                       "': springs on planar joints are not supported");
  // A floating joint's armature (MuJoCo's free joint: one scalar a) adds the velocity product
  // a (w x v) of tree/joint_dynamics.hpp, a passive force: the model gets zero damping and
  // stiffness and the neutral springPosition when it has none.
  bool floatingArmature = false;
  for (int i = 0; armature.size() == nv && i < nbodies; ++i) {
    if (joints[i].type != JointType::Floating) continue;
    const Vec3 at = armature.segment<3>(idx_v[i] + 3);
    if (at[0] != at[1] || at[0] != at[2])
      throw ModelError("model '" + name + "': floating joint '" + jointNames[i] +
                       "': the armature of its three translational coordinates must be equal "
                       "(MuJoCo's free joint has one; unequal ones act as R^T A R on the "
                       "body-frame velocity, which depends on the orientation)");
    if (at[0] != 0.0) floatingArmature = true;
  }
  if (floatingArmature && !passive) {
    damping = VecX::Zero(nv);
    stiffness = VecX::Zero(nv);
    springPosition.resize(nq);
    for (int i = 0; i < nbodies; ++i)
      detail::neutralJointConfiguration(joints[i], springPosition.data() + idx_q[i]);
  }
  for (BallHingeGroup& g : ballHinges) finalizeBallHingeGroup(*this, g, passive);
}

}  // namespace clusterdyn
