// The articulated inertia of a body seen from its parent, for the constraint algorithms' pass 2
// (delassus.cpp, constrained_aba.cpp).
#pragma once

#include "clusterdyn/transform.hpp"

namespace clusterdyn::detail {

/// IA_p += X^* Ia X^-1 (actInertia(X, Ia), Featherstone 2008, eq. 2.66) for a symmetric Ia =
/// [A B; B^T C]: R A R^T and R C R^T by their lower triangles, the products with skew(p) as
/// cross products (M skew(p) has rows M_i x p), the upper-left block from its lower triangle.
/// Equal to actInertia to rounding.
inline void addSymmetricInertia(const Transform& X, const Mat6& Ia, Mat6& IAp) {
  const Mat3& R = X.R;
  const Vec3& p = X.p;
  Mat3 RA, RB, RC, Bp, Ap, Cp, pxC;
  RA.noalias() = R * Ia.topLeftCorner<3, 3>();
  RB.noalias() = R * Ia.topRightCorner<3, 3>();
  RC.noalias() = R * Ia.bottomRightCorner<3, 3>();
  Bp.noalias() = RB * R.transpose();  // R B R^T
  for (int j = 0; j < 3; ++j)
    for (int i = j; i < 3; ++i) {  // R A R^T, R C R^T (symmetric)
      Ap(i, j) = Ap(j, i) = RA.row(i).dot(R.row(j));
      Cp(i, j) = Cp(j, i) = RC.row(i).dot(R.row(j));
    }
  for (int j = 0; j < 3; ++j) pxC.col(j) = p.cross(Cp.col(j));  // skew(p) C'
  Mat3 Bpx, pxCpx;                                              // B' skew(p), skew(p) C' skew(p)
  for (int i = 0; i < 3; ++i) {
    Bpx.row(i) = Bp.row(i).cross(p.transpose());
    pxCpx.row(i) = pxC.row(i).cross(p.transpose());
  }
  for (int j = 0; j < 3; ++j)
    for (int i = j; i < 3; ++i) {
      const double t = Ap(i, j) - Bpx(i, j) - Bpx(j, i) - pxCpx(i, j);
      IAp(i, j) += t;
      if (i != j) IAp(j, i) += t;
    }
  const Mat3 TR = Bp + pxC;
  IAp.topRightCorner<3, 3>() += TR;
  IAp.bottomLeftCorner<3, 3>() += TR.transpose();
  IAp.bottomRightCorner<3, 3>() += Cp;
}

}  // namespace clusterdyn::detail
