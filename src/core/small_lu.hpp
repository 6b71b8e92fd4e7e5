// In-place LU with partial pivoting on preallocated storage (no heap allocation), for the small
// dependent blocks of loop constraints.
#pragma once

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>
#include <vector>

#include "clusterdyn/spatial.hpp"

namespace clusterdyn::detail {

/// Default relative pivot threshold of luFactor: below it the block counts as singular.
inline constexpr double kLuPivotTolerance = 1e-12;

/// max |A_ij| of a square A (the scale of the pivot threshold).
inline double luScale(const MatX& A) {
  double scale = 0.0;
  for (Eigen::Index j = 0; j < A.cols(); ++j)
    for (Eigen::Index i = 0; i < A.rows(); ++i) scale = std::max(scale, std::abs(A(i, j)));
  return scale;
}

/// Partial pivoting at step k of an in-place LU on column-major storage a (n x n): the largest
/// |a(i, k)|, i >= k, is recorded in piv[k] and its row swapped with row k. False if that pivot
/// is not above relTol * scale (singular block).
inline bool luPivotStep(double* a, Eigen::Index n, Eigen::Index k, std::vector<int>& piv,
                        double relTol, double scale) {
  const double* ak = a + k * n;
  Eigen::Index p = k;
  for (Eigen::Index i = k + 1; i < n; ++i)
    if (std::abs(ak[i]) > std::abs(ak[p])) p = i;
  piv[k] = static_cast<int>(p);
  if (!(std::abs(ak[p]) > relTol * scale)) return false;
  if (p != k)
    for (Eigen::Index j = 0; j < n; ++j) std::swap(a[k + j * n], a[p + j * n]);
  return true;
}

/// Factors A (n x n) in place; piv must have size n. Returns false if a pivot is below
/// relTol * max |A_ij| (singular block). The update runs column by column on the contiguous
/// storage; every entry receives the same operations, in the same order, as the textbook
/// row-oriented loop (bit-identical results).
inline bool luFactor(MatX& A, std::vector<int>& piv, double relTol = kLuPivotTolerance) {
  const Eigen::Index n = A.rows();
  const double scale = luScale(A);
  if (!(scale > 0.0)) return n == 0;
  double* a = A.data();  // column major: A(i, j) = a[i + j n]
  for (Eigen::Index k = 0; k < n; ++k) {
    double* ak = a + k * n;
    if (!luPivotStep(a, n, k, piv, relTol, scale)) return false;
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

/// Solves (P^T L U) X = B in place (B overwritten by X) with the factors of luFactor (piv: its
/// first n entries, the row pivots). Forward substitution by columns of L, backward by rows of
/// U, each entry accumulated in the order of the textbook loops (bit-identical results).
template <typename Mat>
void luSolveFactors(const MatX& LU, const std::vector<int>& piv, Mat&& B) {
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

/// Column order of a factorization of A Q instead of A (Q a column permutation, the columns of
/// A in the order order[0..n)), kept in piv[n..2n) as the transpositions that take the
/// solution y of (A Q) y = b to the solution x = Q y of A x = b: for t = 0..n-1, swap rows t
/// and piv[n + t]. A piv of size n means Q = I.
inline void setColumnOrder(const std::vector<int>& order, std::vector<int>& piv) {
  const int n = static_cast<int>(order.size());
  piv.resize(2 * static_cast<size_t>(n));
  std::vector<int> at(n), target(n);  // at[t]: the entry of y now in row t
  for (int j = 0; j < n; ++j) at[j] = j, target[order[j]] = j;
  for (int t = 0; t < n; ++t) {
    int p = t;
    while (at[p] != target[t]) ++p;
    std::swap(at[t], at[p]);
    piv[n + t] = p;
  }
}

/// x = Q y in place (rows of B), with the column order of piv (setColumnOrder); no-op for Q = I.
template <typename Mat>
void applyColumnOrder(const std::vector<int>& piv, Eigen::Index n, Mat&& B) {
  if (static_cast<Eigen::Index>(piv.size()) != 2 * n) return;
  for (Eigen::Index t = 0; t < n; ++t)
    if (piv[n + t] != t) B.row(t).swap(B.row(piv[n + t]));
}

/// b' = Q^T b in place (the right-hand side of a transposed solve (A Q)^T z = Q^T b).
template <typename Vec>
void applyColumnOrderTransposed(const std::vector<int>& piv, Eigen::Index n, Vec&& b) {
  if (static_cast<Eigen::Index>(piv.size()) != 2 * n) return;
  for (Eigen::Index t = n - 1; t >= 0; --t)
    if (piv[n + t] != t) std::swap(b[t], b[piv[n + t]]);
}

/// Solves A X = B in place with the factors of A Q (luFactor of the columns in the order of
/// piv, setColumnOrder; Q = I when piv has n entries).
template <typename Mat>
void luSolveInPlace(const MatX& LU, const std::vector<int>& piv, Mat&& B) {
  luSolveFactors(LU, piv, B);
  applyColumnOrder(piv, LU.rows(), B);
}

/// Nonzero pattern of LU factors (sparseLuFactor): column j of L below the diagonal has its
/// nonzeros in rows lRows[lStart[j] .. lStart[j + 1]), row i of U right of the diagonal in
/// columns uCols[uStart[i] .. uStart[i + 1]). Sized by sparseLuReserve (no allocation after).
struct SparseLuPattern {
  std::vector<int> lStart, lRows, uStart, uCols, rows;
};

inline void sparseLuReserve(SparseLuPattern& p, int n) {
  p.lStart.assign(n + 1, 0);
  p.uStart.assign(n + 1, 0);
  p.lRows.assign(static_cast<size_t>(n) * n, 0);
  p.uCols.assign(static_cast<size_t>(n) * n, 0);
  p.rows.assign(n, 0);
}

/// luFactor that skips the exact zeros of a sparse A (a loop cluster's K_d with its columns
/// ordered by the number of loops they enter: the private columns of each loop first, then the
/// shared ones, so that eliminating a loop's own columns only touches that loop's rows) and
/// records the nonzero pattern of the factors for sparseLuSolve. Partial pivoting as luFactor;
/// the entries equal luFactor's but for the skipped products with an exact zero.
/// scale: max |A_ij| when the caller has it (gatherDependentBlock), negative to compute it.
inline bool sparseLuFactor(MatX& A, std::vector<int>& piv, SparseLuPattern& pat,
                           double relTol = kLuPivotTolerance, double scale = -1.0) {
  const Eigen::Index n = A.rows();
  if (scale < 0.0) scale = luScale(A);
  if (!(scale > 0.0)) return n == 0;
  double* a = A.data();
  int* rows = pat.rows.data();
  for (Eigen::Index k = 0; k < n; ++k) {
    double* ak = a + k * n;
    if (!luPivotStep(a, n, k, piv, relTol, scale)) return false;
    const double inv = 1.0 / ak[k];
    int nr = 0;
    for (Eigen::Index i = k + 1; i < n; ++i)
      if (ak[i] != 0.0) {
        ak[i] *= inv;
        rows[nr++] = static_cast<int>(i);
      }
    if (nr == 0) continue;
    for (Eigen::Index j = k + 1; j < n; ++j) {
      double* aj = a + j * n;
      const double akj = aj[k];
      if (akj == 0.0) continue;
      for (int r = 0; r < nr; ++r) aj[rows[r]] -= ak[rows[r]] * akj;
    }
  }
  int nl = 0, nu = 0;  // the pattern of the final factors (the row swaps move L's entries)
  for (Eigen::Index j = 0; j < n; ++j) {
    pat.lStart[j] = nl;
    for (Eigen::Index i = j + 1; i < n; ++i)
      if (a[i + j * n] != 0.0) pat.lRows[nl++] = static_cast<int>(i);
  }
  pat.lStart[n] = nl;
  for (Eigen::Index i = 0; i < n; ++i) {
    pat.uStart[i] = nu;
    for (Eigen::Index j = i + 1; j < n; ++j)
      if (a[i + j * n] != 0.0) pat.uCols[nu++] = static_cast<int>(j);
  }
  pat.uStart[n] = nu;
  return true;
}

namespace lu_detail {

/// Forward and backward substitution of sparseLuSolveFactors on nc <= 8 nonzero columns (each
/// of n contiguous entries, rows already in pivot order), in a row-major copy x so that each
/// factor entry is read once for all of them.
inline void sparseLuSubstitute(const MatX& LU, const SparseLuPattern& pat, double* const* col,
                               int nc) {
  constexpr int kChunk = 8, kMaxN = 64;
  const Eigen::Index n = LU.rows();
  const double* lu = LU.data();
  const int *lStart = pat.lStart.data(), *lRows = pat.lRows.data();
  const int *uStart = pat.uStart.data(), *uCols = pat.uCols.data();
  double x[kMaxN * kChunk];  // x[i * nc + t]: row i of column t
  for (int t = 0; t < nc; ++t)
    for (Eigen::Index i = 0; i < n; ++i) x[i * nc + t] = col[t][i];
  for (Eigen::Index j = 0; j + 1 < n; ++j) {  // b_i -= L_ij b_j, j ascending for each i
    const double* lj = lu + j * n;
    const double* xj = x + j * nc;
    for (int e = lStart[j]; e < lStart[j + 1]; ++e) {
      const int i = lRows[e];
      const double l = lj[i];
      double* xi = x + i * nc;
      for (int t = 0; t < nc; ++t) xi[t] -= l * xj[t];
    }
  }
  for (Eigen::Index i = n - 1; i >= 0; --i) {
    double* xi = x + i * nc;
    for (int e = uStart[i]; e < uStart[i + 1]; ++e) {
      const int j = uCols[e];
      const double u = lu[i + j * n];
      const double* xj = x + j * nc;
      for (int t = 0; t < nc; ++t) xi[t] -= u * xj[t];
    }
    const double d = lu[i + i * n];
    for (int t = 0; t < nc; ++t) xi[t] /= d;
  }
  for (int t = 0; t < nc; ++t)
    for (Eigen::Index i = 0; i < n; ++i) col[t][i] = x[i * nc + t];
}

/// sparseLuSolveFactors of one column b (n entries, any n), in place.
inline void sparseLuSolveColumn(const MatX& LU, const std::vector<int>& piv,
                                const SparseLuPattern& pat, double* b) {
  const Eigen::Index n = LU.rows();
  for (Eigen::Index k = 0; k < n; ++k)
    if (piv[k] != k) std::swap(b[k], b[piv[k]]);
  Eigen::Index first = 0;  // a zero column (a delta rod's idle spin) stays zero
  while (first < n && b[first] == 0.0) ++first;
  if (first == n) return;
  const double* lu = LU.data();
  const int *lStart = pat.lStart.data(), *lRows = pat.lRows.data();
  const int *uStart = pat.uStart.data(), *uCols = pat.uCols.data();
  for (Eigen::Index j = first; j + 1 < n; ++j) {
    const double bj = b[j];
    if (bj == 0.0) continue;
    const double* lj = lu + j * n;
    for (int e = lStart[j]; e < lStart[j + 1]; ++e) b[lRows[e]] -= lj[lRows[e]] * bj;
  }
  for (Eigen::Index i = n - 1; i >= 0; --i) {
    double bi = b[i];
    for (int e = uStart[i]; e < uStart[i + 1]; ++e) {
      const int j = uCols[e];
      bi -= lu[i + j * n] * b[j];
    }
    b[i] = bi / lu[i + i * n];
  }
}

}  // namespace lu_detail

/// luSolveFactors over the nonzeros of the factors only (pattern of sparseLuFactor) of the
/// columns of B and, when b is not null, of the vector b (n entries) too; the column order of
/// piv is NOT applied (the caller scatters the rows of the solution). For n <= 64 and 4 or more
/// columns, the nonzero ones are solved together, up to 8 at a time
/// (lu_detail::sparseLuSubstitute). Every column gets the operations of luSolveFactors in the same
/// order, but for the products with an exact zero of the factors; a zero column stays zero.
template <typename Mat>
void sparseLuSolveFactors(const MatX& LU, const std::vector<int>& piv, const SparseLuPattern& pat,
                          Mat&& B, double* b = nullptr) {
  using B_t = std::decay_t<Mat>;
  static_assert(
      B_t::InnerStrideAtCompileTime == 1 && (B_t::ColsAtCompileTime == 1 || !B_t::IsRowMajor),
      "sparseLuSolveFactors: B needs contiguous columns");
  constexpr int kChunk = 8, kMaxN = 64;
  const Eigen::Index n = LU.rows(), m = B.cols() + (b ? 1 : 0);
  if (n == 0) return;
  const auto column = [&](Eigen::Index c) { return c < B.cols() ? &B.coeffRef(0, c) : b; };
  if (n > kMaxN || m < 4) {  // column by column (a few columns: the copies cost more)
    for (Eigen::Index c = 0; c < m; ++c) lu_detail::sparseLuSolveColumn(LU, piv, pat, column(c));
    return;
  }
  double* col[kChunk];
  for (Eigen::Index c = 0; c < m;) {
    int nc = 0;  // the next nonzero columns, rows in pivot order
    for (; c < m && nc < kChunk; ++c) {
      double* x = column(c);
      Eigen::Index i = 0;
      while (i < n && x[i] == 0.0) ++i;
      if (i == n) continue;
      for (Eigen::Index k = 0; k < n; ++k)
        if (piv[k] != k) std::swap(x[k], x[piv[k]]);
      col[nc++] = x;
    }
    if (nc > 0) lu_detail::sparseLuSubstitute(LU, pat, col, nc);
  }
}

}  // namespace clusterdyn::detail
