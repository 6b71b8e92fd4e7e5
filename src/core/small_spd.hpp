// Inverse of a small symmetric positive definite matrix of fixed size (the D of a joint or of a
// cluster in the articulated-body steps), by Cholesky in fixed-size loops: no Eigen blocked
// triangular solves, no heap; and the working-precision test of the Cholesky factorisations of
// an articulated inertia D or of H in the dynamics of the mass matrix (docs/robustness.md,
// "Singular inertias").
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "clusterdyn/spatial.hpp"

namespace clusterdyn::detail {

/// Smallest Cholesky pivot, relative to the largest diagonal entry, of an articulated inertia D
/// or of H that is not singular to working precision (docs/robustness.md, "Singular inertias").
/// D's entries carry rounding errors of a few eps times its largest ones per body of the subtree
/// (the articulated inertias subtract U D^-1 U^T body by body), and an exactly singular D leaves
/// a pivot of that size, of either sign: measured up to 1e-13 of the largest diagonal entry (the
/// MIT humanoid leg with a massless floating root). Pivots of regular states measured 1.3e-7 or
/// more on every bundled and shared model (the delta's 1 g gimbal links). 1e-11 lies between,
/// with a margin of 100 below and 10^4 above; a pivot under it leaves fewer than 5 correct
/// digits in D^-1 anyway. Only for inertias of the mass matrix itself (also those of
/// delassusMatrix, proxPv and the factorization path of dampedDelassusInverse): the passes on
/// inertias augmented by mu C^T C (cABA-OSIM, constrainedAba; mu = 1/rho up to 1e10 and more),
/// whose legitimate pivots in the unconstrained directions lie below 1e-11 of the augmented
/// diagonal, keep the floor 0 (pivots > 0, as Eigen::LLT).
constexpr double kSingularPivot = 1e-11;

/// The pivot test of a Cholesky factorisation whose pivots p_j = L_jj^2 (the diagonal left after
/// eliminating the columns before j) are all > 0: true when floor == 0, else when the smallest
/// pivot exceeds floor * max_i A_ii (false for NaN). The max, not A_jj: a massless body leaves
/// diagonal entries that are themselves rounding noise.
inline bool pivotsAboveFloor(double minPivot, double maxDiagonal, double floor) {
  return floor == 0.0 || minPivot > floor * maxDiagonal;
}

/// An Eigen::LLT of A succeeded and its pivots pass pivotsAboveFloor (reads the n diagonals of A
/// and L). On false, *ratio (when given) = smallest pivot / largest diagonal entry, NaN when the
/// LLT itself failed (a pivot <= 0 or NaN, not kept by Eigen).
template <typename Llt, typename Matrix>
bool choleskyAboveFloor(const Llt& llt, const Matrix& A, double floor, double* ratio = nullptr) {
  if (llt.info() != Eigen::Success) {
    if (ratio) *ratio = std::numeric_limits<double>::quiet_NaN();
    return false;
  }
  if (floor == 0.0) return true;
  const auto& L = llt.matrixLLT();
  double minPivot = std::numeric_limits<double>::infinity(), maxDiagonal = 0.0;
  for (Eigen::Index j = 0; j < A.rows(); ++j) {
    minPivot = std::min(minPivot, L(j, j) * L(j, j));
    maxDiagonal = std::max(maxDiagonal, A(j, j));
  }
  if (pivotsAboveFloor(minPivot, maxDiagonal, floor)) return true;
  if (ratio) *ratio = minPivot / maxDiagonal;
  return false;
}

/// The text of a failed pivot test for a Status message: "smallest Cholesky pivot 3.2e-17 x the
/// largest diagonal entry, below 1e-11" from choleskyAboveFloor's / invertPositiveDefinite's
/// ratio (<= 0: "a Cholesky pivot -2e-17 x the largest diagonal entry"; NaN: "a Cholesky pivot
/// <= 0 or NaN").
struct PivotText {
  char text[80];
  PivotText(double ratio, double floor) {
    if (std::isnan(ratio))
      std::snprintf(text, sizeof text, "a Cholesky pivot <= 0 or NaN");
    else if (ratio > 0.0)
      std::snprintf(text, sizeof text,
                    "smallest Cholesky pivot %.2g x the largest diagonal entry, below %.0e", ratio,
                    floor);
    else
      std::snprintf(text, sizeof text, "a Cholesky pivot %.2g x the largest diagonal entry", ratio);
  }
  const char* c_str() const { return text; }
};

/// Sets a workspace's pivot floor (Data::pivotFloor, by default kSingularPivot, which aba and
/// ceAba use) for a scope and restores it on exit: the constrained and Delassus passes set 0.
class PivotFloorScope {
 public:
  PivotFloorScope(double& floor, double value) : floor_(floor), saved_(floor) { floor = value; }
  ~PivotFloorScope() { floor_ = saved_; }
  PivotFloorScope(const PivotFloorScope&) = delete;
  PivotFloorScope& operator=(const PivotFloorScope&) = delete;

 private:
  double& floor_;
  double saved_;
};

/// Ainv = A^-1 for a symmetric N x N A (lower triangle read), from its Cholesky factor L
/// (A = L L^T, A^-1 = L^-T L^-1). Returns false, Ainv unspecified, unless A is positive definite
/// (a pivot <= 0 or NaN, as Eigen::LLT) and its pivots pass pivotsAboveFloor(floor); then
/// *ratio (when given) = the smallest pivot / the largest diagonal entry (NaN for NaN).
template <int N>
bool invertPositiveDefinite(const Eigen::Matrix<double, N, N>& A, Eigen::Matrix<double, N, N>& Ainv,
                            double floor = 0.0, double* ratio = nullptr) {
  double L[N][N] = {}, X[N][N] = {};  // L, then X = L^-1 (both lower triangular)
  double minPivot = std::numeric_limits<double>::infinity(), maxDiagonal = 0.0;
  for (int j = 0; j < N; ++j) {
    double d = A(j, j);
    maxDiagonal = std::max(maxDiagonal, d);
    for (int k = 0; k < j; ++k) d -= L[j][k] * L[j][k];
    minPivot = std::min(minPivot, d);
    if (!(d > 0.0)) {
      if (ratio) {
        for (int i = j + 1; i < N; ++i) maxDiagonal = std::max(maxDiagonal, A(i, i));
        *ratio = std::isnan(d) ? d : d / maxDiagonal;
      }
      return false;
    }
    L[j][j] = std::sqrt(d);
    const double inv = 1.0 / L[j][j];
    for (int i = j + 1; i < N; ++i) {
      double x = A(i, j);
      for (int k = 0; k < j; ++k) x -= L[i][k] * L[j][k];
      L[i][j] = x * inv;
    }
  }
  if (!pivotsAboveFloor(minPivot, maxDiagonal, floor)) {
    if (ratio) *ratio = minPivot / maxDiagonal;
    return false;
  }
  for (int j = 0; j < N; ++j) {
    X[j][j] = 1.0 / L[j][j];
    for (int i = j + 1; i < N; ++i) {
      double x = 0.0;
      for (int k = j; k < i; ++k) x -= L[i][k] * X[k][j];
      X[i][j] = x / L[i][i];
    }
  }
  for (int j = 0; j < N; ++j)
    for (int i = j; i < N; ++i) {  // (X^T X)(i, j) = sum over k >= i of X(k, i) X(k, j)
      double x = 0.0;
      for (int k = i; k < N; ++k) x += X[k][i] * X[k][j];
      Ainv(i, j) = Ainv(j, i) = x;
    }
  return true;
}

}  // namespace clusterdyn::detail
