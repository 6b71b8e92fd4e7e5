// Spatial vector algebra (Featherstone, "Rigid Body Dynamics Algorithms", ch. 2).
//
// Conventions used throughout clusterdyn:
//  * Spatial vectors are 6-vectors with the ANGULAR part first: a motion vector is
//    [omega; v] (rad/s; m/s, velocity of the point at the frame origin), a force vector is
//    [n; f] (N m about the frame origin; N).
//  * All quantities are expressed in the coordinates of a named frame; the function names say
//    which one.
#pragma once

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace clusterdyn {

using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;
using Vec6 = Eigen::Matrix<double, 6, 1>;
using Mat6 = Eigen::Matrix<double, 6, 6>;
using Motion = Vec6;  // [angular; linear] motion vector
using Force = Vec6;   // [moment; force] force vector
using VecX = Eigen::VectorXd;
using MatX = Eigen::MatrixXd;
using Mat6X = Eigen::Matrix<double, 6, Eigen::Dynamic>;
/// 6 x k matrix with k <= 6 and no heap storage (joint motion subspaces).
using Mat6Xs = Eigen::Matrix<double, 6, Eigen::Dynamic, Eigen::ColMajor, 6, 6>;

/// Skew-symmetric matrix: skew(a) * b == a.cross(b).
inline Mat3 skew(const Vec3& a) {
  Mat3 s;
  s << 0.0, -a.z(), a.y(), a.z(), 0.0, -a.x(), -a.y(), a.x(), 0.0;
  return s;
}

/// Motion cross product v x m (Featherstone eq. 2.31 "crm").
inline Motion crossMotion(const Motion& v, const Motion& m) {
  Motion r;
  const Vec3 w = v.head<3>(), vl = v.tail<3>();
  r.head<3>() = w.cross(m.head<3>());
  r.tail<3>() = w.cross(m.tail<3>()) + vl.cross(m.head<3>());
  return r;
}

/// Force cross product v x* f (Featherstone eq. 2.32 "crf").
inline Force crossForce(const Motion& v, const Force& f) {
  Force r;
  const Vec3 w = v.head<3>(), vl = v.tail<3>();
  r.head<3>() = w.cross(f.head<3>()) + vl.cross(f.tail<3>());
  r.tail<3>() = w.cross(f.tail<3>());
  return r;
}

/// Explicit 6x6 matrix of v x (for tests and documentation).
inline Mat6 crossMotionMatrix(const Motion& v) {
  Mat6 m = Mat6::Zero();
  m.topLeftCorner<3, 3>() = skew(v.head<3>());
  m.bottomRightCorner<3, 3>() = skew(v.head<3>());
  m.bottomLeftCorner<3, 3>() = skew(v.tail<3>());
  return m;
}

/// Explicit 6x6 matrix of v x* = -(v x)^T.
inline Mat6 crossForceMatrix(const Motion& v) { return -crossMotionMatrix(v).transpose(); }

/// Rotation matrix from URDF roll-pitch-yaw (fixed axes X, Y, Z): R = Rz(yaw) Ry(pitch) Rx(roll).
inline Mat3 rpyToMatrix(const Vec3& rpy) {
  return (Eigen::AngleAxisd(rpy.z(), Vec3::UnitZ()) * Eigen::AngleAxisd(rpy.y(), Vec3::UnitY()) *
          Eigen::AngleAxisd(rpy.x(), Vec3::UnitX()))
      .toRotationMatrix();
}

}  // namespace clusterdyn
