// Rigid transforms stored as rotation + translation, applied to spatial vectors without forming
// 6x6 matrices (Featherstone eq. 2.24-2.28).
#pragma once

#include "clusterdyn/spatial.hpp"

namespace clusterdyn {

/// Pose of a frame B relative to a frame A ("aMb" in Pinocchio's notation):
///  * R: rotation whose columns are B's axes in A coordinates (p_A = R p_B + p);
///  * p: position of B's origin in A coordinates (m).
/// As an operator, act() maps spatial vectors from B coordinates to A coordinates and actInv()
/// maps them from A coordinates to B coordinates. In Featherstone's notation actInvMotion is
/// the motion transform  B_X_A = rot(R^T) xlt(p)  and actForce is (B_X_A)^T.
struct Transform {
  Mat3 R = Mat3::Identity();
  Vec3 p = Vec3::Zero();

  Transform() = default;
  Transform(const Mat3& rotation, const Vec3& translation) : R(rotation), p(translation) {}
  static Transform Identity() { return Transform(); }

  /// Motion in B coordinates -> A coordinates.
  Motion actMotion(const Motion& m) const {
    Motion r;
    r.head<3>().noalias() = R * m.head<3>();
    r.tail<3>().noalias() = R * m.tail<3>();
    r.tail<3>() += p.cross(r.head<3>());
    return r;
  }
  /// Motion in A coordinates -> B coordinates (B_X_A m).
  Motion actInvMotion(const Motion& m) const {
    Motion r;
    r.head<3>().noalias() = R.transpose() * m.head<3>();
    r.tail<3>().noalias() = R.transpose() * (m.tail<3>() - p.cross(m.head<3>()));
    return r;
  }
  /// Force in B coordinates -> A coordinates ((B_X_A)^T f).
  Force actForce(const Force& f) const {
    Force r;
    r.tail<3>().noalias() = R * f.tail<3>();
    r.head<3>().noalias() = R * f.head<3>();
    r.head<3>() += p.cross(r.tail<3>());
    return r;
  }
  /// Force in A coordinates -> B coordinates.
  Force actInvForce(const Force& f) const {
    Force r;
    r.head<3>().noalias() = R.transpose() * (f.head<3>() - p.cross(f.tail<3>()));
    r.tail<3>().noalias() = R.transpose() * f.tail<3>();
    return r;
  }
  /// Point given in B coordinates -> A coordinates.
  Vec3 actPoint(const Vec3& x) const { return R * x + p; }

  /// Composition: (aMb * bMc) = aMc.
  Transform operator*(const Transform& other) const {
    return Transform(R * other.R, p + R * other.p);
  }
  Transform inverse() const { return Transform(R.transpose(), -R.transpose() * p); }

  /// Explicit 6x6 matrix of actInvMotion (B_X_A), for tests.
  Mat6 toActInvMotionMatrix() const {
    Mat6 X = Mat6::Zero();
    X.topLeftCorner<3, 3>() = R.transpose();
    X.bottomRightCorner<3, 3>() = R.transpose();
    X.bottomLeftCorner<3, 3>() = -R.transpose() * skew(p);
    return X;
  }
  /// Explicit 6x6 matrix of actMotion (A_X_B).
  Mat6 toActMotionMatrix() const { return inverse().toActInvMotionMatrix(); }

  bool isApprox(const Transform& o, double tol = 1e-12) const {
    return (R - o.R).cwiseAbs().maxCoeff() <= tol && (p - o.p).cwiseAbs().maxCoeff() <= tol;
  }
};

/// Symmetric 6x6 inertia-like matrix I_B given in B coordinates, expressed in A coordinates:
/// (B_X_A)^T I_B (B_X_A). Block form avoids the 6x6 products (Featherstone eq. 2.66).
inline Mat6 actInertia(const Transform& aMb, const Mat6& I) {
  const Mat3& R = aMb.R;
  const Mat3 A = R * I.topLeftCorner<3, 3>() * R.transpose();
  const Mat3 B = R * I.topRightCorner<3, 3>() * R.transpose();
  const Mat3 C = R * I.bottomRightCorner<3, 3>() * R.transpose();
  const Mat3 px = skew(aMb.p);
  const Mat3 pxC = px * C;
  const Mat3 Bpx = B * px;
  Mat6 out;
  out.topLeftCorner<3, 3>() = A - Bpx - Bpx.transpose() - pxC * px;
  out.topRightCorner<3, 3>() = B + pxC;
  out.bottomLeftCorner<3, 3>() = out.topRightCorner<3, 3>().transpose();
  out.bottomRightCorner<3, 3>() = C;
  return out;
}

}  // namespace clusterdyn
