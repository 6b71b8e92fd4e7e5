// Kinematic-tree model: constant after construction, shareable between threads.
//
// Bodies are numbered 0..nbodies-1 in regular order (parent[i] < i); parent -1 is the fixed
// world (the URDF root link when the model has no floating base). Links attached by fixed
// joints are fused into their parent body (inertia combined) and stay addressable as frames.
// Generalized coordinates: body i owns q[idx_q[i] .. idx_q[i]+nqs[i]) and
// v[idx_v[i] .. idx_v[i]+nvs[i]); layouts per joint type are documented in joint.hpp.
// Units: SI (m, kg, s, rad; N, N m).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "clusterdyn/inertia.hpp"
#include "clusterdyn/joint.hpp"

namespace clusterdyn {

/// A named frame rigidly attached to a body (or to the world, body == -1).
struct Frame {
  std::string name;
  int body = -1;        ///< body the frame is attached to (-1 = world)
  Transform placement;  ///< pose of the frame in the body frame
  bool isBody = false;  ///< true when the frame is a body's own frame (placement = identity)
};

/// The damper and spring of a spherical joint that the cluster builder replaced by three revolute
/// joints J:swing1, J:swing2, J:spin about b1, b2, a (docs/mjcf.md section 3): the ball's
/// rotation is R(t) = exp(b1 t1) exp(b2 t2) exp(a t3), its angular velocity in the child frame
/// w = J(t) t_dot with J = [R3^T R2^T b1, R3^T b2, a], and MuJoCo's ball passive torque
/// tau_ball = -d w - k subQuat(R(t), q_spring) (child frame) acts on the hinges exactly as the
/// generalized forces J^T tau_ball = -d J^T J t_dot - k J^T subQuat(R(t), q_spring) (potential
/// energy 1/2 k |subQuat|^2; src/tree/ball_hinge_passive.hpp). The hinges' own damping and
/// stiffness stay 0. A ball's armature has no such exact form (J^T A J depends on the swing
/// angles): the builder refuses to replace a ball with armature.
struct BallHingeGroup {
  std::string ball;                   ///< the replaced spherical joint's name
  std::array<std::string, 3> joints;  ///< the hinges' joint names: swing1, swing2, spin
  double damping = 0.0;               ///< d (N m s/rad), >= 0
  double stiffness = 0.0;             ///< k (N m/rad), >= 0
  /// q_spring: the ball's spring rest rotation (unit; MJCF: the identity, MuJoCo's qpos0).
  Eigen::Quaterniond spring = Eigen::Quaterniond::Identity();
  // Set by Model::finalize() from `joints` (which must be revolute, each the child of the one
  // before, swing2 and spin with the identity jointPlacement):
  std::array<int, 3> v{{-1, -1, -1}};  ///< velocity indices of swing1, swing2, spin
  std::array<int, 3> q{{-1, -1, -1}};  ///< position indices
  std::array<Vec3, 3> axes{{Vec3::Zero(), Vec3::Zero(), Vec3::Zero()}};  ///< b1, b2, a (unit)
};

struct Model {
  std::string name;
  int nbodies = 0;
  int nq = 0;
  int nv = 0;

  // Per body (index = body id).
  std::vector<int> parent;
  std::vector<std::vector<int>> children;
  std::vector<Joint> joints;
  std::vector<Transform> jointPlacement;  ///< pose of joint frame (q = 0) in the parent body frame
  std::vector<SpatialInertia>
      inertias;                         ///< body inertia in body coordinates (fused links included)
  std::vector<std::string> bodyNames;   ///< URDF link name of the body
  std::vector<std::string> jointNames;  ///< URDF joint name of the body's joint
  std::vector<int> idx_q, idx_v, nqs, nvs;
  /// Body whose joint owns velocity coordinate j (size nv).
  std::vector<int> velocityOwner;
  /// Per body: the coordinate axis a (0, 1, 2) when liMi.R is a rotation about it for every q
  /// (a revolute joint about axis a whose jointPlacement rotation is exactly the identity),
  /// else -1. Selects specialised transforms in the algorithms; set by finalize().
  std::vector<int> axisRotation;
  /// Bodies whose joint has a unit quaternion in q (floating, spherical); set by finalize().
  std::vector<int> quaternionBodies;

  // Per position coordinate (size nq) / velocity coordinate (size nv).
  VecX lowerPositionLimit, upperPositionLimit;  ///< -inf/+inf when unlimited
  VecX velocityLimit, effortLimit;              ///< +inf when unlimited
  std::vector<std::string> positionNames;       ///< e.g. "knee", "base:px", "base:qw"
  std::vector<std::string> velocityNames;       ///< e.g. "knee", "base:wx", "base:vx"

  /// Joint dynamics that MuJoCo models carry (MJCF `armature`, `stiffness` about `springref`,
  /// `damping`; docs/mjcf.md §4), applied by the dynamics algorithms: armature is added to the
  /// diagonal of the joint-space inertia, the passive forces tau_p(q, v) = -K (q (-) q_spring) -
  /// D v to the applied forces. Empty (size 0) when the model has none (every URDF model), so
  /// the algorithms skip them; else armature, damping, stiffness have size nv, springPosition
  /// (a configuration of the model) size nq. Filled by the builders (ModelOptions::jointDynamics).
  VecX armature;
  VecX damping, stiffness, springPosition;
  /// Ball joints replaced by three hinges whose damper and spring act on the hinges together
  /// (BallHingeGroup; filled by the cluster builder, ModelOptions::jointDynamics); a model with
  /// any has damping, stiffness, springPosition (zero on the hinges) too, checked by finalize().
  std::vector<BallHingeGroup> ballHinges;
  bool hasArmature() const { return armature.size() > 0; }
  /// Passive forces tau_p(q, v): per-coordinate springs and dampers, and ballHinges.
  bool hasPassiveForces() const { return damping.size() > 0 || !ballHinges.empty(); }
  bool hasJointDynamics() const { return hasArmature() || hasPassiveForces(); }

  std::vector<Frame> frames;
  std::string rootLink;                  ///< URDF root link (world when fixed base)
  Vec3 gravity = Vec3(0.0, 0.0, -9.81);  ///< m/s^2 in world coordinates

  int bodyId(const std::string& linkName) const;    ///< -1 when absent
  int jointId(const std::string& jointName) const;  ///< body index of the joint, -1 when absent
  int frameId(const std::string& frameName) const;  ///< -1 when absent
  /// Index into v of a 1-dof joint or of a named velocity coordinate; -1 when absent.
  int velocityIndex(const std::string& coordinateName) const;
  int positionIndex(const std::string& coordinateName) const;
  /// Total mass (kg).
  double totalMass() const;
  /// Rebuilds children / velocityOwner / names from parent and joints (used by builders), and
  /// the indices and axes of ballHinges; checks the joint dynamics (ModelError).
  void finalize();
};

}  // namespace clusterdyn
