// One place per joint type (docs/design/extending.md, "How to add a joint type"): its
// coordinates and their names, motion subspace S, transform X_J(q), and its configuration-space
// operations (neutral, random, integrate, difference). In
// the spirit of Pinocchio's JointModel (Carpentier et al. 2019) without its templates on the
// scalar: each type is a struct of static functions on the Joint's constants, and
// visitJointType() is the one switch from JointType to that struct. The recursions' hot paths
// (tree/tree_step.hpp, tree/axis_transforms.hpp, tree/crba.cpp) do not go through it: they keep
// their fixed-size branches for revolute, prismatic and floating joints and reach every other
// type through S and Joint::transform (dispatching there cost 1-5 % more instructions).
#pragma once

#include <Eigen/LU>
#include <cmath>

#include "clusterdyn/joint.hpp"

namespace clusterdyn::detail {

/// Rotation exp([w]) (Rodrigues).
inline Mat3 expSO3(const Vec3& w) {
  const double th = w.norm();
  if (th < 1e-12) return Mat3::Identity() + skew(w);
  return Eigen::AngleAxisd(th, w / th).toRotationMatrix();
}

/// V(w) with exp of the twist (w, v) = (exp(w), V(w) v) (SE(3) left Jacobian).
inline Mat3 leftJacobianSO3(const Vec3& w) {
  const double th = w.norm();
  const Mat3 W = skew(w);
  if (th < 1e-6) return Mat3::Identity() + 0.5 * W + W * W / 6.0;
  return Mat3::Identity() + (1.0 - std::cos(th)) / (th * th) * W +
         (th - std::sin(th)) / (th * th * th) * W * W;
}

/// log(R): the rotation vector w with exp([w]) = R (angle in [0, pi]).
inline Vec3 logSO3(const Mat3& R) {
  const Eigen::AngleAxisd aa(R);
  return aa.angle() * aa.axis();
}

/// Rotation of a unit quaternion stored (x, y, z, w) at p.
inline Mat3 rotationOf(const double* p) {
  return Eigen::Quaterniond(p[3], p[0], p[1], p[2]).normalized().toRotationMatrix();
}

/// Integration of a unit quaternion (x, y, z, w) at q by the body rotation exp([w dt]) (w in
/// child coordinates), R(q1) = R(q0) exp([w dt]), q1 in q0's hemisphere.
inline void integrateQuaternion(const Mat3& R0, const Eigen::Quaterniond& q0, const Vec3& wdt,
                                double* out) {
  Eigen::Quaterniond q1(R0 * expSO3(wdt));
  q1.normalize();
  if (q1.w() * q0.w() + q1.vec().dot(q0.vec()) < 0) q1.coeffs() *= -1.0;
  Eigen::Vector4d::Map(out) = q1.coeffs();
}

/// Defaults shared by the types.
struct JointTypeBase {
  static constexpr int quaternion = -1;  ///< offset of a unit quaternion (x y z w) in q, or -1
  /// Random joint coordinates: each type draws through `draw` (uniform `unit()` in [-1, 1],
  /// `quaternion(out)` a unit quaternion); lower/upper are the joint's position limits.
  template <class Draw>
  static void random(const double*, const double*, double, Draw&, double*) {}
};

/// Revolute (URDF revolute, continuous): q = angle about `axis`, v = its rate; S = [axis; 0].
struct RevoluteJoint : JointTypeBase {
  static constexpr JointType type = JointType::Revolute;
  static constexpr const char* name = "revolute";
  static constexpr int nq = 1, nv = 1;
  static constexpr const char* positionSuffixes[] = {""};
  static constexpr const char* velocitySuffixes[] = {""};
  static void init(Joint& j, const Vec3& axis) {
    j.axis = axis.normalized();
    j.S.col(0).head<3>() = j.axis;
    for (int a = 0; a < 3; ++a)
      if (std::abs(j.axis[a]) == 1.0 && j.axis.squaredNorm() == 1.0) {
        j.alignedAxis = a;
        j.alignedSign = j.axis[a];
      }
  }
  static Transform transform(const Joint& j, const double* q) {
    return Transform(Eigen::AngleAxisd(q[0], j.axis).toRotationMatrix(), Vec3::Zero());
  }
  template <class Draw>
  static void random(const double* lower, const double* upper, double range, Draw& draw,
                     double* q) {
    const double lo = std::max(-range, lower[0]), hi = std::min(range, upper[0]);
    const double t = 0.5 * (draw.unit() + 1.0);
    q[0] = lo <= hi ? lo + t * (hi - lo) : 0.5 * (lower[0] + upper[0]);
  }
  static void integrate(const Joint&, const double*, const double* v, double dt, double* out) {
    out[0] += v[0] * dt;
  }
  /// The tangent v with integrate(q0, v, 1) = q1.
  static void difference(const Joint&, const double* q0, const double* q1, double* out) {
    out[0] = q1[0] - q0[0];
  }
};

/// Prismatic: q = displacement along `axis`, v = its rate; S = [0; axis].
struct PrismaticJoint : JointTypeBase {
  static constexpr JointType type = JointType::Prismatic;
  static constexpr const char* name = "prismatic";
  static constexpr int nq = 1, nv = 1;
  static constexpr const char* positionSuffixes[] = {""};
  static constexpr const char* velocitySuffixes[] = {""};
  static void init(Joint& j, const Vec3& axis) {
    j.axis = axis.normalized();
    j.S.col(0).tail<3>() = j.axis;
  }
  static Transform transform(const Joint& j, const double* q) {
    return Transform(Mat3::Identity(), q[0] * j.axis);
  }
  template <class Draw>
  static void random(const double* lower, const double* upper, double range, Draw& draw,
                     double* q) {
    RevoluteJoint::random(lower, upper, range, draw, q);
  }
  static void integrate(const Joint&, const double*, const double* v, double dt, double* out) {
    out[0] += v[0] * dt;
  }
  /// The tangent v with integrate(q0, v, 1) = q1.
  static void difference(const Joint&, const double* q0, const double* q1, double* out) {
    out[0] = q1[0] - q0[0];
  }
};

/// Spherical: q = unit quaternion (x, y, z, w) of the child in the parent joint frame, v = the
/// angular velocity in child coordinates; S = [1; 0].
struct SphericalJoint : JointTypeBase {
  static constexpr JointType type = JointType::Spherical;
  static constexpr const char* name = "spherical";
  static constexpr int nq = 4, nv = 3;
  static constexpr int quaternion = 0;
  static constexpr const char* positionSuffixes[] = {":qx", ":qy", ":qz", ":qw"};
  static constexpr const char* velocitySuffixes[] = {":wx", ":wy", ":wz"};
  static void init(Joint& j, const Vec3&) { j.S.topRows<3>().setIdentity(); }
  static Transform transform(const Joint&, const double* q) {
    const Eigen::Quaterniond quat(q[3], q[0], q[1], q[2]);
    return Transform(quat.normalized().toRotationMatrix(), Vec3::Zero());
  }
  template <class Draw>
  static void random(const double*, const double*, double, Draw& draw, double* q) {
    draw.quaternion(q);
  }
  static void integrate(const Joint&, const double* q, const double* v, double dt, double* out) {
    const Eigen::Quaterniond q0(q[3], q[0], q[1], q[2]);
    integrateQuaternion(q0.toRotationMatrix(), q0, Vec3::Map(v) * dt, out);
  }
  static void difference(const Joint&, const double* q0, const double* q1, double* out) {
    Vec3::Map(out) = logSO3(rotationOf(q0).transpose() * rotationOf(q1));
  }
};

/// Planar (URDF planar, `axis` = plane normal n, in-plane basis t1, t2 with t1 x t2 = n):
/// q = (x, y, theta), v = (vx, vy, omega) with vx, vy in CHILD axes.
struct PlanarJoint : JointTypeBase {
  static constexpr JointType type = JointType::Planar;
  static constexpr const char* name = "planar";
  static constexpr int nq = 3, nv = 3;
  static constexpr const char* positionSuffixes[] = {":x", ":y", ":theta"};
  static constexpr const char* velocitySuffixes[] = {":vx", ":vy", ":wz"};
  static void init(Joint& j, const Vec3& normal) {
    j.axis = normal.normalized();
    // Any orthonormal in-plane basis with t1 x t2 = n.
    const Vec3 helper = std::abs(j.axis.x()) < 0.9 ? Vec3::UnitX() : Vec3::UnitY();
    j.t1 = (helper - helper.dot(j.axis) * j.axis).normalized();
    j.t2 = j.axis.cross(j.t1);
    j.S.col(0).tail<3>() = j.t1;
    j.S.col(1).tail<3>() = j.t2;
    j.S.col(2).head<3>() = j.axis;
  }
  static Transform transform(const Joint& j, const double* q) {
    return Transform(Eigen::AngleAxisd(q[2], j.axis).toRotationMatrix(), q[0] * j.t1 + q[1] * j.t2);
  }
  template <class Draw>
  static void random(const double*, const double*, double range, Draw& draw, double* q) {
    for (int k = 0; k < 3; ++k) q[k] = range * draw.unit();
  }
  static void integrate(const Joint&, const double* q, const double* v, double dt, double* out) {
    // Constant body twist in the plane: SE(2) exponential.
    const double th = q[2], w = v[2] * dt;
    const double vx = v[0] * dt, vy = v[1] * dt;
    double a, b;  // displacement in the body axes at the start
    if (std::abs(w) < 1e-9) {
      a = vx - 0.5 * w * vy;
      b = vy + 0.5 * w * vx;
    } else {
      const double s = std::sin(w) / w, c = (1.0 - std::cos(w)) / w;
      a = s * vx - c * vy;
      b = c * vx + s * vy;
    }
    out[0] += std::cos(th) * a - std::sin(th) * b;
    out[1] += std::sin(th) * a + std::cos(th) * b;
    out[2] += w;
  }
  static void difference(const Joint&, const double* q0, const double* q1, double* out) {
    // Inverse of integrate's SE(2) exponential: the displacement in the start's body axes is
    // [s -c; c s] (vx, vy) with s = sin(w) / w, c = (1 - cos(w)) / w.
    const double th = q0[2], w = q1[2] - q0[2];
    const double dx = q1[0] - q0[0], dy = q1[1] - q0[1];
    const double a = std::cos(th) * dx + std::sin(th) * dy;
    const double b = -std::sin(th) * dx + std::cos(th) * dy;
    double s, c;
    if (std::abs(w) < 1e-9) {
      s = 1.0;
      c = 0.5 * w;
    } else {
      s = std::sin(w) / w;
      c = (1.0 - std::cos(w)) / w;
    }
    const double det = s * s + c * c;
    out[0] = (s * a + c * b) / det;
    out[1] = (-c * a + s * b) / det;
    out[2] = w;
  }
};

/// Floating: q = (px, py, pz, qx, qy, qz, qw), the child origin in the parent frame and a unit
/// quaternion (Hamilton, x y z w as in Pinocchio); v = [omega; v] in child coordinates; S = 1.
struct FloatingJoint : JointTypeBase {
  static constexpr JointType type = JointType::Floating;
  static constexpr const char* name = "floating";
  static constexpr int nq = 7, nv = 6;
  static constexpr int quaternion = 3;
  static constexpr const char* positionSuffixes[] = {":px", ":py", ":pz", ":qx",
                                                     ":qy", ":qz", ":qw"};
  static constexpr const char* velocitySuffixes[] = {":wx", ":wy", ":wz", ":vx", ":vy", ":vz"};
  static void init(Joint& j, const Vec3&) { j.S.setIdentity(6, 6); }
  static Transform transform(const Joint&, const double* q) {
    const Eigen::Quaterniond quat(q[6], q[3], q[4], q[5]);
    return Transform(quat.normalized().toRotationMatrix(), Vec3(q[0], q[1], q[2]));
  }
  template <class Draw>
  static void random(const double*, const double*, double range, Draw& draw, double* q) {
    for (int k = 0; k < 3; ++k) q[k] = range * draw.unit();
    draw.quaternion(q + 3);
  }
  static void integrate(const Joint&, const double* q, const double* v, double dt, double* out) {
    const Eigen::Quaterniond q0(q[6], q[3], q[4], q[5]);
    const Mat3 R = q0.normalized().toRotationMatrix();
    const Vec3 w = Vec3::Map(v) * dt, vl = Vec3::Map(v + 3) * dt;
    Vec3::Map(out) += R * (leftJacobianSO3(w) * vl);
    integrateQuaternion(R, q0, w, out + 3);
  }
  static void difference(const Joint&, const double* q0, const double* q1, double* out) {
    const Mat3 R0 = rotationOf(q0 + 3);
    const Vec3 w = logSO3(R0.transpose() * rotationOf(q1 + 3));
    const Vec3 dp = R0.transpose() * (Vec3::Map(q1) - Vec3::Map(q0));
    Vec3::Map(out) = w;
    Vec3::Map(out + 3) = leftJacobianSO3(w).partialPivLu().solve(dp);
  }
};

/// Fixed: no coordinates (exists only before fixed joints are fused into their parent).
struct FixedJoint : JointTypeBase {
  static constexpr JointType type = JointType::Fixed;
  static constexpr const char* name = "fixed";
  static constexpr int nq = 0, nv = 0;
  static constexpr const char* positionSuffixes[] = {""};  // unused (nq = 0)
  static constexpr const char* velocitySuffixes[] = {""};
  static void init(Joint&, const Vec3&) {}
  static Transform transform(const Joint&, const double*) { return Transform(); }
  static void integrate(const Joint&, const double*, const double*, double, double*) {}
  static void difference(const Joint&, const double*, const double*, double*) {}
};

/// The one switch from a JointType to its struct: returns f(TypeStruct{}).
template <class F>
inline decltype(auto) visitJointType(JointType t, F&& f) {
  switch (t) {
    case JointType::Revolute:
      return f(RevoluteJoint{});
    case JointType::Prismatic:
      return f(PrismaticJoint{});
    case JointType::Spherical:
      return f(SphericalJoint{});
    case JointType::Planar:
      return f(PlanarJoint{});
    case JointType::Floating:
      return f(FloatingJoint{});
    case JointType::Fixed:
      break;
  }
  return f(FixedJoint{});
}

/// Number of JointType values (the enum's values are 0 .. kJointTypeCount - 1, fixed by the C
/// enum cdyn_joint_type: a new type takes the next value).
constexpr int kJointTypeCount = 6;

/// Offset of the joint's unit quaternion in its q (-1: none).
inline int quaternionOffset(JointType t) {
  return visitJointType(t, [](auto J) { return decltype(J)::quaternion; });
}

/// The joint's neutral coordinates (zero, unit quaternions at the identity) into q.
inline void neutralJointConfiguration(const Joint& joint, double* q) {
  for (int k = 0; k < joint.nq; ++k) q[k] = 0.0;
  const int o = quaternionOffset(joint.type);
  if (o >= 0) q[o + 3] = 1.0;
}

}  // namespace clusterdyn::detail
