// In-place LU with partial pivoting on preallocated storage (no heap allocation), for the small
// dependent blocks of loop constraints.
#pragma once

#include <cmath>
#include <vector>

#include "clusterdyn/spatial.hpp"

namespace clusterdyn::detail {

/// Default relative pivot threshold of luFactor: below it the block counts as singular.
inline constexpr double kLuPivotTolerance = 1e-12;

/// Factors A (n x n) in place; piv must have size n. Returns false if a pivot is below
/// relTol * max |A_ij| (singular block).
inline bool luFactor(MatX& A, std::vector<int>& piv, double relTol = kLuPivotTolerance) {
  const Eigen::Index n = A.rows();
  double scale = 0.0;
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i) scale = std::max(scale, std::abs(A(i, j)));
  if (!(scale > 0.0)) return n == 0;
  for (Eigen::Index k = 0; k < n; ++k) {
    Eigen::Index p = k;
    for (Eigen::Index i = k + 1; i < n; ++i)
      if (std::abs(A(i, k)) > std::abs(A(p, k))) p = i;
    piv[k] = static_cast<int>(p);
    if (!(std::abs(A(p, k)) > relTol * scale)) return false;
    if (p != k) A.row(p).swap(A.row(k));
    const double inv = 1.0 / A(k, k);
    for (Eigen::Index i = k + 1; i < n; ++i) {
      A(i, k) *= inv;
      const double l = A(i, k);
      for (Eigen::Index j = k + 1; j < n; ++j) A(i, j) -= l * A(k, j);
    }
  }
  return true;
}

/// Solves A X = B in place (B overwritten by X) with the factors of luFactor.
template <typename Mat>
void luSolveInPlace(const MatX& LU, const std::vector<int>& piv, Mat&& B) {
  const Eigen::Index n = LU.rows();
  for (Eigen::Index k = 0; k < n; ++k)
    if (piv[k] != k) B.row(k).swap(B.row(piv[k]));
  for (Eigen::Index c = 0; c < B.cols(); ++c) {
    for (Eigen::Index i = 1; i < n; ++i)
      for (Eigen::Index j = 0; j < i; ++j) B(i, c) -= LU(i, j) * B(j, c);
    for (Eigen::Index i = n - 1; i >= 0; --i) {
      for (Eigen::Index j = i + 1; j < n; ++j) B(i, c) -= LU(i, j) * B(j, c);
      B(i, c) /= LU(i, i);
    }
  }
}

}  // namespace clusterdyn::detail
