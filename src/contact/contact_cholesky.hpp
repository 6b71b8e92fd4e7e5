// The dense Cholesky factorization of the contact solvers' small m x m systems (ADMM's
// G + rho I, the active-set solve's G_AA), in place, left-looking, scalar loops: at the m ~ 12
// rows of a few contacts Eigen's blocked LLT costs several times the instructions. The row count
// is a template parameter for the common sizes (N > 0: the loops have compile-time bounds, the
// same operations in the same order as N = 0, which reads n at run time).
#pragma once

#include <Eigen/Core>
#include <cmath>

namespace clusterdyn::detail {

/// L <- the lower Cholesky factor of the n x n matrix whose lower triangle L holds on entry
/// (column-major, leading dimension lda; the strict upper triangle is not read). False when a
/// pivot (the diagonal before its square root) is not above minPivot (not positive definite, or
/// too close to singular, or NaN); L is then partly overwritten.
template <int N>
bool choleskyInPlace(double* L, Eigen::Index lda, int n, double minPivot) {
  const int m = N > 0 ? N : n;
  for (int j = 0; j < m; ++j) {
    double* lj = L + j * lda;
    for (int k = 0; k < j; ++k) {
      const double* lk = L + k * lda;
      const double f = lk[j];
      for (int i = j; i < m; ++i) lj[i] -= f * lk[i];
    }
    if (!(lj[j] > minPivot)) return false;
    const double d = std::sqrt(lj[j]);
    lj[j] = d;
    const double inv = 1.0 / d;
    for (int i = j + 1; i < m; ++i) lj[i] *= inv;
  }
  return true;
}

/// x <- (L L^T)^-1 x with the factor of choleskyInPlace (forward, then back substitution).
template <int N>
void choleskySolveInPlace(const double* L, Eigen::Index lda, int n, double* x) {
  const int m = N > 0 ? N : n;
  for (int k = 0; k < m; ++k) {
    const double* lk = L + k * lda;
    const double xk = x[k] / lk[k];
    x[k] = xk;
    for (int i = k + 1; i < m; ++i) x[i] -= lk[i] * xk;
  }
  for (int k = m - 1; k >= 0; --k) {
    const double* lk = L + k * lda;
    double s = x[k];
    for (int i = k + 1; i < m; ++i) s -= lk[i] * x[i];
    x[k] = s / lk[k];
  }
}

/// choleskyInPlace with the compile-time sizes of 4 and 8 point contacts (12, 24 rows).
inline bool cholesky(double* L, Eigen::Index lda, int n, double minPivot) {
  switch (n) {
    case 12:
      return choleskyInPlace<12>(L, lda, n, minPivot);
    case 24:
      return choleskyInPlace<24>(L, lda, n, minPivot);
    default:
      return choleskyInPlace<0>(L, lda, n, minPivot);
  }
}

/// choleskySolveInPlace with the compile-time sizes of cholesky.
inline void choleskySolve(const double* L, Eigen::Index lda, int n, double* x) {
  switch (n) {
    case 12:
      return choleskySolveInPlace<12>(L, lda, n, x);
    case 24:
      return choleskySolveInPlace<24>(L, lda, n, x);
    default:
      return choleskySolveInPlace<0>(L, lda, n, x);
  }
}

}  // namespace clusterdyn::detail
