// Inverse of a small symmetric positive definite matrix of fixed size (the D of a joint or of a
// cluster in the articulated-body steps), by Cholesky in fixed-size loops: no Eigen blocked
// triangular solves, no heap; and the working-precision test of a Cholesky factorisation that
// every factorisation of an articulated inertia D or of H applies (docs/robustness.md).
#pragma once

#include <algorithm>
#include <cmath>
#include <limits>

#include "clusterdyn/spatial.hpp"

namespace clusterdyn::detail {

/// Smallest Cholesky pivot, relative to the largest diagonal entry, of an articulated inertia D
/// or of H that is not singular to working precision (docs/robustness.md, "Singular inertias").
/// D's entries carry rounding errors of a few eps times its largest ones per body of the subtree
/// (the articulated inertias subtract U D^-1 U^T body by body), and an exactly singular D leaves
/// a pivot of that size: measured up to 1e-13 of the largest diagonal entry (the MIT humanoid
/// leg with a massless floating root). Pivots of regular states measured 1.3e-7 or more on every
/// bundled and shared model (the delta's 1 g gimbal links). 1e-11 lies between, with a margin of
/// 100 below and 10^4 above; a pivot under it leaves fewer than 5 correct digits in D^-1 anyway.
constexpr double kSingularPivot = 1e-11;

/// The working-precision test of a Cholesky factorisation A = L L^T of a symmetric A: true when
/// its smallest pivot p_j = L_jj^2 (the diagonal left after eliminating the columns before j)
/// exceeds kSingularPivot max_i A_ii (false for NaN). The max, not A_jj: a massless body leaves
/// diagonal entries that are themselves rounding noise.
inline bool pivotsAboveRounding(double minPivot, double maxDiagonal) {
  return minPivot > kSingularPivot * maxDiagonal;
}

/// An Eigen::LLT of A succeeded and passes pivotsAboveRounding (reads the n diagonals of A and L).
template <typename Llt, typename Matrix>
bool choleskyAboveRounding(const Llt& llt, const Matrix& A) {
  if (llt.info() != Eigen::Success) return false;
  const auto& L = llt.matrixLLT();
  double minPivot = std::numeric_limits<double>::infinity(), maxDiagonal = 0.0;
  for (Eigen::Index j = 0; j < A.rows(); ++j) {
    minPivot = std::min(minPivot, L(j, j) * L(j, j));
    maxDiagonal = std::max(maxDiagonal, A(j, j));
  }
  return pivotsAboveRounding(minPivot, maxDiagonal);
}

/// Ainv = A^-1 for a symmetric N x N A (lower triangle read), from its Cholesky factor L
/// (A = L L^T, A^-1 = L^-T L^-1). Returns false, Ainv unspecified, unless A is positive definite
/// to working precision (a pivot <= 0 or NaN, as Eigen::LLT, or one that fails
/// pivotsAboveRounding).
template <int N>
bool invertPositiveDefinite(const Eigen::Matrix<double, N, N>& A,
                            Eigen::Matrix<double, N, N>& Ainv) {
  double L[N][N] = {}, X[N][N] = {};  // L, then X = L^-1 (both lower triangular)
  double minPivot = std::numeric_limits<double>::infinity(), maxDiagonal = 0.0;
  for (int j = 0; j < N; ++j) {
    double d = A(j, j);
    maxDiagonal = std::max(maxDiagonal, d);
    for (int k = 0; k < j; ++k) d -= L[j][k] * L[j][k];
    if (!(d > 0.0)) return false;
    minPivot = std::min(minPivot, d);
    L[j][j] = std::sqrt(d);
    const double inv = 1.0 / L[j][j];
    for (int i = j + 1; i < N; ++i) {
      double x = A(i, j);
      for (int k = 0; k < j; ++k) x -= L[i][k] * L[j][k];
      L[i][j] = x * inv;
    }
  }
  if (!pivotsAboveRounding(minPivot, maxDiagonal)) return false;
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
