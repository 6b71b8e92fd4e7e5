// In-place LU with partial pivoting on preallocated storage (no heap allocation), for the small
// dependent blocks of loop constraints.
#pragma once

#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

#include "clusterdyn/spatial.hpp"

namespace clusterdyn::detail {

/// Default relative pivot threshold of luFactor: below it the block counts as singular.
inline constexpr double kLuPivotTolerance = 1e-12;

/// Factors A (n x n) in place; piv must have size n. Returns false if a pivot is below
/// relTol * max |A_ij| (singular block). The update runs column by column on the contiguous
/// storage; every entry receives the same operations, in the same order, as the textbook
/// row-oriented loop (bit-identical results).
inline bool luFactor(MatX& A, std::vector<int>& piv, double relTol = kLuPivotTolerance) {
  const Eigen::Index n = A.rows();
  double scale = 0.0;
  for (Eigen::Index j = 0; j < n; ++j)
    for (Eigen::Index i = 0; i < n; ++i) scale = std::max(scale, std::abs(A(i, j)));
  if (!(scale > 0.0)) return n == 0;
  double* a = A.data();  // column major: A(i, j) = a[i + j n]
  for (Eigen::Index k = 0; k < n; ++k) {
    double* ak = a + k * n;
    Eigen::Index p = k;
    for (Eigen::Index i = k + 1; i < n; ++i)
      if (std::abs(ak[i]) > std::abs(ak[p])) p = i;
    piv[k] = static_cast<int>(p);
    if (!(std::abs(ak[p]) > relTol * scale)) return false;
    if (p != k)
      for (Eigen::Index j = 0; j < n; ++j) std::swap(a[k + j * n], a[p + j * n]);
    const double inv = 1.0 / ak[k];
    for (Eigen::Index i = k + 1; i < n; ++i) ak[i] *= inv;
    for (Eigen::Index j = k + 1; j < n; ++j) {
      double* aj = a + j * n;
      const double akj = aj[k];
      for (Eigen::Index i = k + 1; i < n; ++i) aj[i] -= ak[i] * akj;
    }
  }
  return true;
}

/// Solves A X = B in place (B overwritten by X) with the factors of luFactor. Forward
/// substitution by columns of L, backward by rows of U, each entry accumulated in the order
/// of the textbook loops (bit-identical results).
template <typename Mat>
void luSolveInPlace(const MatX& LU, const std::vector<int>& piv, Mat&& B) {
  using B_t = std::decay_t<Mat>;
  static_assert(
      B_t::InnerStrideAtCompileTime == 1 && (B_t::ColsAtCompileTime == 1 || !B_t::IsRowMajor),
      "luSolveInPlace: B needs contiguous columns");
  const Eigen::Index n = LU.rows();
  for (Eigen::Index k = 0; k < n; ++k)
    if (piv[k] != k) B.row(k).swap(B.row(piv[k]));
  const double* lu = LU.data();
  for (Eigen::Index c = 0; c < B.cols(); ++c) {
    double* b = &B.coeffRef(0, c);              // a column of B: contiguous (static_assert above)
    for (Eigen::Index j = 0; j + 1 < n; ++j) {  // b_i -= L_ij b_j, j ascending for each i
      const double* lj = lu + j * n;
      const double bj = b[j];
      for (Eigen::Index i = j + 1; i < n; ++i) b[i] -= lj[i] * bj;
    }
    for (Eigen::Index i = n - 1; i >= 0; --i) {
      double bi = b[i];
      for (Eigen::Index j = i + 1; j < n; ++j) bi -= lu[i + j * n] * b[j];
      b[i] = bi / lu[i + i * n];
    }
  }
}

}  // namespace clusterdyn::detail
