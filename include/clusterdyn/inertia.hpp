// Rigid-body spatial inertia stored as (mass, first moment, rotational inertia about the frame
// origin) with cheap products (Featherstone eq. 2.62-2.63).
#pragma once

#include "clusterdyn/transform.hpp"

namespace clusterdyn {

/// Spatial inertia of a rigid body in the coordinates of its body frame.
///  mass  [kg]
///  h     first moment = mass * c, c = centre of mass in body coordinates [kg m]
///  Io    rotational inertia about the body-frame ORIGIN, body axes [kg m^2]
struct SpatialInertia {
  double mass = 0.0;
  Vec3 h = Vec3::Zero();
  Mat3 Io = Mat3::Zero();

  SpatialInertia() = default;
  /// From mass, centre of mass c and rotational inertia Ic about the centre of mass (body axes).
  static SpatialInertia fromMassComInertia(double mass, const Vec3& c, const Mat3& Ic) {
    SpatialInertia I;
    I.mass = mass;
    I.h = mass * c;
    const Mat3 cx = skew(c);
    I.Io = Ic + mass * cx * cx.transpose();  // parallel-axis theorem, eq. 2.63
    return I;
  }
  Vec3 com() const { return mass > 0.0 ? Vec3(h / mass) : Vec3::Zero(); }
  /// Rotational inertia about the centre of mass.
  Mat3 inertiaAboutCom() const {
    if (mass <= 0.0) return Io;
    const Mat3 cx = skew(com());
    return Io - mass * cx * cx.transpose();
  }

  /// I * v  (momentum of a body moving with spatial velocity v).
  Force operator*(const Motion& v) const {
    Force f;
    const auto w = v.head<3>();
    const auto vl = v.tail<3>();
    f.head<3>().noalias() = Io * w;
    f.head<3>() += h.cross(vl);
    f.tail<3>() = mass * vl - h.cross(w);
    return f;
  }
  /// Explicit 6x6 matrix [[Io, hx], [hx^T, m 1]].
  Mat6 matrix() const {
    Mat6 M;
    const Mat3 hx = skew(h);
    M.topLeftCorner<3, 3>() = Io;
    M.topRightCorner<3, 3>() = hx;
    M.bottomLeftCorner<3, 3>() = hx.transpose();
    M.bottomRightCorner<3, 3>() = mass * Mat3::Identity();
    return M;
  }
  /// Adds matrix() to M (M += I) without forming it.
  void addTo(Mat6& M) const {
    M.topLeftCorner<3, 3>() += Io;
    M(0, 4) -= h.z();
    M(0, 5) += h.y();
    M(1, 3) += h.z();
    M(1, 5) -= h.x();
    M(2, 3) -= h.y();
    M(2, 4) += h.x();
    M(4, 0) -= h.z();
    M(5, 0) += h.y();
    M(3, 1) += h.z();
    M(5, 1) -= h.x();
    M(3, 2) -= h.y();
    M(4, 2) += h.x();
    M(3, 3) += mass;
    M(4, 4) += mass;
    M(5, 5) += mass;
  }
  /// The inertia of this body (given in B coordinates) expressed in A coordinates.
  SpatialInertia transformedBy(const Transform& aMb) const {
    // Io_A = R Io R^T - (px hAx + hAx px) - m px px (Featherstone eq. 2.66 in (m, h, I) form);
    // with ax bx = b a^T - (a.b) 1 and u = hA + m p / 2 the translation terms are
    // -(u p^T + p u^T) + 2 (p.u) 1. Scalar form: 6 entries of the symmetric result only.
    const Mat3& R = aMb.R;
    const Vec3& p = aMb.p;
    SpatialInertia out;
    out.mass = mass;
    const Vec3 hA = R * h;
    out.h = hA + mass * p;
    const Vec3 u = hA + (0.5 * mass) * p;
    const double d = 2.0 * p.dot(u);
    double A[3][3];  // R Io
    for (int r = 0; r < 3; ++r)
      for (int k = 0; k < 3; ++k)
        A[r][k] = R(r, 0) * Io(0, k) + R(r, 1) * Io(1, k) + R(r, 2) * Io(2, k);
    for (int c = 0; c < 3; ++c)
      for (int r = c; r < 3; ++r) {
        double v =
            A[r][0] * R(c, 0) + A[r][1] * R(c, 1) + A[r][2] * R(c, 2) - (u[r] * p[c] + p[r] * u[c]);
        if (r == c) v += d;
        out.Io(r, c) = out.Io(c, r) = v;
      }
    return out;
  }
  SpatialInertia& operator+=(const SpatialInertia& o) {
    mass += o.mass;
    h += o.h;
    Io += o.Io;
    return *this;
  }
  SpatialInertia operator+(const SpatialInertia& o) const {
    SpatialInertia s;
    s.mass = mass + o.mass;
    s.h = h + o.h;
    s.Io = Io + o.Io;
    return s;
  }
};

}  // namespace clusterdyn
