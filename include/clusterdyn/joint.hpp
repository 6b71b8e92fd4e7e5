// Tree joints: joint transform, motion subspace S, and velocity-product term c_J.
//
// Coordinate layouts (nq / nv), all velocities in the CHILD (successor) body frame:
//  * Revolute  (URDF revolute, continuous): q = angle about axis [rad], v = rate [rad/s]; 1 / 1.
//  * Prismatic: q = displacement along axis [m], v = rate [m/s]; 1 / 1.
//  * Spherical: q = unit quaternion (x, y, z, w) of the child frame in the parent joint frame,
//               v = angular velocity in child coordinates; 4 / 3.
//  * Planar (URDF planar, axis = plane normal n, in-plane basis t1, t2 with t1 x t2 = n):
//               q = (x, y, theta): origin at x t1 + y t2, rotation theta about n;
//               v = (vx, vy, omega) with vx, vy the in-plane origin velocity in CHILD axes; 3 / 3.
//  * Floating:  q = (px, py, pz, qx, qy, qz, qw): child origin in parent frame and unit
//               quaternion (Hamilton, x y z w as in Pinocchio); v = [omega; v] of the child in
//               child (body) coordinates, angular first; 7 / 6.
//  * Fixed: 0 / 0 (only exists before fixed joints are fused into their parent).
// For all these joints S is constant in child coordinates, so c_J = dS/dt q_dot = 0.
// Each type's code (S, X_J(q), coordinate names, configuration operations) is in one place,
// src/model/joint_types.hpp; docs/design/extending.md says how to add a type.
#pragma once

#include <string>

#include "clusterdyn/transform.hpp"

namespace clusterdyn {

enum class JointType { Revolute, Prismatic, Spherical, Planar, Floating, Fixed };

/// Lower-case name of the type ("revolute", ...; URDF's spelling).
const char* jointTypeName(JointType t);
/// The type named `name` (a jointTypeName); false (type unchanged) for any other name.
bool jointTypeFromName(const std::string& name, JointType& type);

struct Joint {
  JointType type = JointType::Fixed;
  Vec3 axis = Vec3::UnitZ();  ///< unit axis (revolute, prismatic) or plane normal (planar)
  Vec3 t1 = Vec3::UnitX(), t2 = Vec3::UnitY();  ///< planar in-plane basis
  int nq = 0, nv = 0;
  /// Revolute joints about a coordinate axis: its index (0, 1, 2; -1 otherwise) and the sign
  /// (+1 or -1) of the axis along it, for the specialised rotation in the kinematic step.
  int alignedAxis = -1;
  double alignedSign = 1.0;
  Mat6Xs S;  ///< motion subspace, 6 x nv, child coordinates (constant)

  /// A joint of the given type; `axis` is the axis (revolute, prismatic) or plane normal
  /// (planar), ignored by the others.
  static Joint ofType(JointType type, const Vec3& axis = Vec3::UnitZ());
  static Joint revolute(const Vec3& axis);
  static Joint prismatic(const Vec3& axis);
  static Joint spherical();
  static Joint planar(const Vec3& normal);
  static Joint floating();
  static Joint fixed();

  /// Pose of the child (joint) frame relative to the joint's parent-side frame at q
  /// (q points at nq values).
  Transform transform(const double* q) const;
  /// Joint velocity S v in child coordinates (v points at nv values).
  Motion motion(const double* v) const { return S * Eigen::Map<const VecX>(v, nv); }
  /// True for 1-dof joints (S is a single column).
  bool isSingleDof() const { return nv == 1; }
};

}  // namespace clusterdyn
