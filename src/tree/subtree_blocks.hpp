// Building blocks of the composite-rigid-body algorithms by subtree blocks (crba,
// src/tree/crba.cpp; clusterMassMatrix, src/cluster/cluster_mass_matrix.cpp): with bodies
// (clusters) numbered depth first, the columns of a subtree are contiguous, and the forces F_c =
// I^c S_c of all of them are carried to the parent by one transform on raw doubles (no aliasing
// reloads, independent columns).
#pragma once

#include <cmath>

#include "clusterdyn/data.hpp"
#include "tree/axis_transforms.hpp"

namespace clusterdyn::detail {

/// f <- X.actForce(f) = (R n + p x R l, R l) (Featherstone eq. 2.24-2.28, the force transform
/// (B_X_A)^T of X = liMi) on the six doubles at f = (n, l), from scalar copies of R and p (the
/// stores to M could alias data.liMi and would reload them each time). ForceTransport<A>: R a
/// rotation about axis A (c = R(i, i), s = R(j, i)); ForceTransport<-1>: any R.
struct Translation {
  double p0, p1, p2;
  explicit Translation(const Vec3& p) : p0(p[0]), p1(p[1]), p2(p[2]) {}
  /// f = (n + p x l, l) for the rotated n and l.
  void store(const double* n, const double* l, double* f) const {
    f[0] = n[0] + (p1 * l[2] - p2 * l[1]);
    f[1] = n[1] + (p2 * l[0] - p0 * l[2]);
    f[2] = n[2] + (p0 * l[1] - p1 * l[0]);
    f[3] = l[0], f[4] = l[1], f[5] = l[2];
  }
};

template <int A>
struct ForceTransport {
  using P = AxisPlane<A>;
  double c, s;
  Translation t;
  explicit ForceTransport(const Transform& X) : c(X.R(P::i, P::i)), s(X.R(P::j, P::i)), t(X.p) {}
  void operator()(double* f) const {
    double n[3], l[3];
    n[P::a] = f[P::a];
    n[P::i] = c * f[P::i] - s * f[P::j];
    n[P::j] = s * f[P::i] + c * f[P::j];
    l[P::a] = f[3 + P::a];
    l[P::i] = c * f[3 + P::i] - s * f[3 + P::j];
    l[P::j] = s * f[3 + P::i] + c * f[3 + P::j];
    t.store(n, l, f);
  }
};

template <>
struct ForceTransport<-1> {
  double r[9];  // row major
  Translation t;
  explicit ForceTransport(const Transform& X) : t(X.p) {
    for (int k = 0; k < 9; ++k) r[k] = X.R(k / 3, k % 3);
  }
  void operator()(double* f) const {
    double n[3], l[3];
    for (int k = 0; k < 3; ++k) {
      n[k] = r[3 * k] * f[0] + r[3 * k + 1] * f[1] + r[3 * k + 2] * f[2];
      l[k] = r[3 * k] * f[3] + r[3 * k + 1] * f[4] + r[3 * k + 2] * f[5];
    }
    t.store(n, l, f);
  }
};

/// liMi = R_a(theta) for an axisRotation body: the values of detail::localPlacementStep,
/// written with compile-time indices.
template <int A>
inline void setAxisTransform(Transform& X, const Vec3& p, double c, double s) {
  using P = detail::AxisPlane<A>;
  Mat3& R = X.R;
  R(P::a, P::a) = 1.0;
  R(P::i, P::a) = R(P::j, P::a) = R(P::a, P::i) = R(P::a, P::j) = 0.0;
  R(P::i, P::i) = R(P::j, P::j) = c;
  R(P::j, P::i) = s;
  R(P::i, P::j) = -s;
  X.p = p;
}

/// detail::localPlacementStep for a body with model.axisRotation[i] >= 0, inline.
inline void axisJointTransform(const Model& model, Data& data, int i, const double* q) {
  const Joint& joint = model.joints[i];
  const double th = joint.alignedSign * q[model.idx_q[i]], c = std::cos(th), s = std::sin(th);
  Transform& X = data.liMi[i];
  const Vec3& p = model.jointPlacement[i].p;
  switch (model.axisRotation[i]) {
    case 0:
      return setAxisTransform<0>(X, p, c, s);
    case 1:
      return setAxisTransform<1>(X, p, c, s);
    default:
      return setAxisTransform<2>(X, p, c, s);
  }
}

/// M(iv.., iv..) = I (6 x 6, Featherstone eq. 2.63) for a floating root (S = 1), from the upper
/// triangle of Io so that the block is exactly symmetric.
inline void writeRootInertia(const SpatialInertia& I, MatX& M, int iv) {
  auto B = M.block<6, 6>(iv, iv);
  const Mat3& Io = I.Io;
  const Vec3& h = I.h;
  B(0, 0) = Io(0, 0), B(1, 1) = Io(1, 1), B(2, 2) = Io(2, 2);
  B(0, 1) = B(1, 0) = Io(0, 1);
  B(0, 2) = B(2, 0) = Io(0, 2);
  B(1, 2) = B(2, 1) = Io(1, 2);
  B.topRightCorner<3, 3>() = skew(h);  // h x
  B.bottomLeftCorner<3, 3>() = B.topRightCorner<3, 3>().transpose();
  B.bottomRightCorner<3, 3>() = I.mass * Mat3::Identity();
}

}  // namespace clusterdyn::detail
