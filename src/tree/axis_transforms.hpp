// Spatial transforms whose rotation is about a coordinate axis (and the products of a joint axis
// with forces and inertias that go with them): the joint transform
// liMi = (R_a(theta), p) of a revolute joint about axis a whose joint placement has no rotation.
// Each function equals its generic counterpart (Transform::actForce,
// SpatialInertia::transformedBy) to rounding; tests/test_axis_transforms.cpp checks them.
#pragma once

#include "clusterdyn/data.hpp"

namespace clusterdyn::detail {

/// The rotation plane (I, J) of axis A, (I, J) = (A + 1, A + 2) mod 3, as compile-time indices:
/// with them every function below compiles to straight-line code.
template <int A>
struct AxisPlane {
  static constexpr int a = A, i = (A + 1) % 3, j = (A + 2) % 3;
};

/// R x for R a rotation about axis A: c = R(i, i), s = R(j, i).
template <int A>
inline Vec3 rotateAboutAxis(const Mat3& R, const Vec3& x) {
  using P = AxisPlane<A>;
  const double c = R(P::i, P::i), s = R(P::j, P::i);
  Vec3 r;
  r[P::a] = x[P::a];
  r[P::i] = c * x[P::i] - s * x[P::j];
  r[P::j] = s * x[P::i] + c * x[P::j];
  return r;
}

/// X.actForce(f) for X.R a rotation about axis A.
template <int A>
inline Force actForceAboutAxis(const Transform& X, const Force& f) {
  Force r;
  const Vec3 fl = rotateAboutAxis<A>(X.R, f.tail<3>());
  r.head<3>() = rotateAboutAxis<A>(X.R, f.head<3>()) + X.p.cross(fl);
  r.tail<3>() = fl;
  return r;
}

/// Y.transformedBy(X) for X.R a rotation about axis A: the rotation touches the four
/// entries of the (i, j) plane and the two couplings with a; the translation then adds
/// -(u p^T + p u^T) + 2 (p.u) 1 with u = h + m p / 2 (Featherstone eq. 2.66, as in
/// SpatialInertia::transformedBy).
template <int A>
inline SpatialInertia transformedAboutAxis(const SpatialInertia& Y, const Transform& X) {
  constexpr int a = AxisPlane<A>::a, i = AxisPlane<A>::i, j = AxisPlane<A>::j;
  const double c = X.R(i, i), s = X.R(j, i);
  const Mat3& I = Y.Io;
  SpatialInertia out;
  out.mass = Y.mass;
  const Vec3 h = rotateAboutAxis<A>(X.R, Y.h);
  const Vec3& p = X.p;
  out.h = h + Y.mass * p;
  const Vec3 u = h + (0.5 * Y.mass) * p;
  const double d = 2.0 * p.dot(u);
  const double cc = c * c, ss = s * s, cs = c * s;
  Mat3& O = out.Io;
  O(a, a) = I(a, a) + d - 2.0 * u[a] * p[a];
  O(i, i) = cc * I(i, i) - 2.0 * cs * I(i, j) + ss * I(j, j) + d - 2.0 * u[i] * p[i];
  O(j, j) = ss * I(i, i) + 2.0 * cs * I(i, j) + cc * I(j, j) + d - 2.0 * u[j] * p[j];
  O(a, i) = O(i, a) = c * I(a, i) - s * I(a, j) - (u[a] * p[i] + p[a] * u[i]);
  O(a, j) = O(j, a) = s * I(a, i) + c * I(a, j) - (u[a] * p[j] + p[a] * u[j]);
  O(i, j) = O(j, i) = cs * (I(i, i) - I(j, j)) + (cc - ss) * I(i, j) - (u[i] * p[j] + p[i] * u[j]);
  return out;
}

/// X.actForce(f), specialised when axis (model.axisRotation of the child body) names a
/// coordinate axis.
inline Force forceInParentFrame(int axis, const Transform& X, const Force& f) {
  switch (axis) {
    case 0:
      return actForceAboutAxis<0>(X, f);
    case 1:
      return actForceAboutAxis<1>(X, f);
    case 2:
      return actForceAboutAxis<2>(X, f);
    default:
      return X.actForce(f);
  }
}

/// liMi[j].actForce(f): a force in body j's coordinates expressed in its parent's.
inline Force forceInParentFrame(const Model& model, const Data& data, int j, const Force& f) {
  return forceInParentFrame(model.axisRotation[j], data.liMi[j], f);
}

/// Y.transformedBy(liMi[j]): inertia of body j's coordinates in its parent's, specialised
/// likewise.
inline SpatialInertia inertiaInParentFrame(const Model& model, const Data& data, int j,
                                           const SpatialInertia& Y) {
  const Transform& X = data.liMi[j];
  switch (model.axisRotation[j]) {
    case 0:
      return transformedAboutAxis<0>(Y, X);
    case 1:
      return transformedAboutAxis<1>(Y, X);
    case 2:
      return transformedAboutAxis<2>(Y, X);
    default:
      return Y.transformedBy(X);
  }
}

/// out[0 .. nv_j) = S_j^T f (body coordinates of body j).
inline void projectOnSubspace(const Joint& joint, const Force& f, double* out) {
  if (joint.type == JointType::Revolute && joint.alignedAxis >= 0) {
    out[0] = joint.alignedSign * f[joint.alignedAxis];
  } else if (joint.type == JointType::Revolute) {
    out[0] = joint.axis.dot(f.head<3>());
  } else if (joint.type == JointType::Prismatic) {
    out[0] = joint.axis.dot(f.tail<3>());
  } else if (joint.type == JointType::Floating) {  // S = 1 (6 x 6)
    Vec6::Map(out) = f;
  } else {
    Eigen::Map<VecX>(out, joint.nv).noalias() = joint.S.transpose() * f;
  }
}

/// I S for a 1-dof joint (Featherstone eq. 2.63 with a single motion axis).
inline Force inertiaTimesAxis(const Joint& joint, const SpatialInertia& I) {
  if (joint.type == JointType::Revolute && joint.alignedAxis >= 0) {
    // S = s [e_a; 0]: I S = s [Io e_a; e_a x h].
    const int a = joint.alignedAxis;
    const double s = joint.alignedSign;
    Force f;
    f.head<3>() = s * I.Io.col(a);
    const Vec3& h = I.h;
    f[3] = a == 0 ? 0.0 : (a == 1 ? s * h.z() : -s * h.y());
    f[4] = a == 1 ? 0.0 : (a == 0 ? -s * h.z() : s * h.x());
    f[5] = a == 2 ? 0.0 : (a == 0 ? s * h.y() : -s * h.x());
    return f;
  }
  return I * Motion(joint.S.col(0));
}

}  // namespace clusterdyn::detail
