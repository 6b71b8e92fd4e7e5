// Inverse of a small symmetric positive definite matrix of fixed size (the D of a joint or of a
// cluster in the articulated-body steps), by Cholesky in fixed-size loops: no Eigen blocked
// triangular solves, no heap.
#pragma once

#include <cmath>

#include "clusterdyn/spatial.hpp"

namespace clusterdyn::detail {

/// Ainv = A^-1 for a symmetric N x N A (lower triangle read), from its Cholesky factor L
/// (A = L L^T, A^-1 = L^-T L^-1). Returns false, Ainv unspecified, unless A is positive definite
/// (a pivot <= 0 or NaN, as Eigen::LLT).
template <int N>
bool invertPositiveDefinite(const Eigen::Matrix<double, N, N>& A,
                            Eigen::Matrix<double, N, N>& Ainv) {
  double L[N][N] = {}, X[N][N] = {};  // L, then X = L^-1 (both lower triangular)
  for (int j = 0; j < N; ++j) {
    double d = A(j, j);
    for (int k = 0; k < j; ++k) d -= L[j][k] * L[j][k];
    if (!(d > 0.0)) return false;
    L[j][j] = std::sqrt(d);
    const double inv = 1.0 / L[j][j];
    for (int i = j + 1; i < N; ++i) {
      double x = A(i, j);
      for (int k = 0; k < j; ++k) x -= L[i][k] * L[j][k];
      L[i][j] = x * inv;
    }
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
