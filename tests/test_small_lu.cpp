// The small LU of loop clusters (core/small_lu.hpp): the sparse factor and solve of a K_d with
// its columns reordered give the dense solution of the original matrix (Eigen's full-pivot LU as
// the oracle), also through luSolveInPlace and the transposed column order.
#include <gtest/gtest.h>

#include <Eigen/LU>
#include <random>

#include "core/small_lu.hpp"

using namespace clusterdyn;
using namespace clusterdyn::detail;

namespace {

/// A bordered block-diagonal matrix like a multi-dof loop cluster's K_d: nb loops of 3 rows,
/// each with 2 private columns (after the shared ones) and n - 2 loops shared columns.
MatX borderedBlocks(int loops, std::mt19937& rng) {
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  const int n = 3 * loops, shared = n - 2 * loops;
  MatX A = MatX::Zero(n, n);
  for (int l = 0; l < loops; ++l)
    for (int r = 3 * l; r < 3 * l + 3; ++r) {
      for (int j = 0; j < shared; ++j) A(r, j) = uni(rng);
      A(r, shared + 2 * l) = uni(rng);
      A(r, shared + 2 * l + 1) = uni(rng);
    }
  return A;
}

}  // namespace

TEST(SmallLu, SparseFactorWithColumnOrderSolvesTheOriginalMatrix) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  for (int loops : {2, 5}) {
    const MatX A = borderedBlocks(loops, rng);
    const int n = static_cast<int>(A.rows()), shared = n - 2 * loops;
    std::vector<int> order;  // private columns first, as setDependentOrder
    for (int j = shared; j < n; ++j) order.push_back(j);
    for (int j = 0; j < shared; ++j) order.push_back(j);
    MatX LU(n, n);
    for (int j = 0; j < n; ++j) LU.col(j) = A.col(order[j]);
    std::vector<int> piv;
    setColumnOrder(order, piv);
    ASSERT_EQ(piv.size(), 2u * n);
    SparseLuPattern pat;
    sparseLuReserve(pat, n);
    ASSERT_TRUE(sparseLuFactor(LU, piv, pat));
    MatX B = MatX::Random(n, 4);
    B.col(2).setZero();  // a zero right-hand side (an idle column) stays zero
    const MatX X = A.fullPivLu().solve(B);
    MatX Y = B;  // solve over the pattern, then scatter by the order
    sparseLuSolveFactors(LU, piv, pat, Y);
    MatX Xs(n, 4);
    for (int j = 0; j < n; ++j) Xs.row(order[j]) = Y.row(j);
    EXPECT_LT((Xs - X).cwiseAbs().maxCoeff(), 1e-12 * (1.0 + X.cwiseAbs().maxCoeff()));
    EXPECT_TRUE(Xs.col(2).isZero(0.0));
    MatX Z = B;  // the dense solve applies the column order itself
    luSolveInPlace(LU, piv, Z);
    EXPECT_LT((Z - X).cwiseAbs().maxCoeff(), 1e-12 * (1.0 + X.cwiseAbs().maxCoeff()));
    VecX b = VecX::Random(n), bt = b;  // Q^T b: the right-hand side of (A Q)^T z = Q^T b
    applyColumnOrderTransposed(piv, n, bt);
    for (int j = 0; j < n; ++j) EXPECT_EQ(bt[j], b[order[j]]);
    applyColumnOrder(piv, n, bt);
    EXPECT_TRUE(bt == b);
  }
}

TEST(SmallLu, SparseFactorRejectsASingularBlock) {
  std::mt19937 rng(3);
  MatX A = borderedBlocks(3, rng);
  A.col(5) = A.col(4);  // two dependent private columns
  std::vector<int> piv(A.rows());
  SparseLuPattern pat;
  sparseLuReserve(pat, static_cast<int>(A.rows()));
  EXPECT_FALSE(sparseLuFactor(A, piv, pat));
}

TEST(SmallLu, SparseFactorEqualsTheDenseFactorEntryForEntry) {
  // The bit-set elimination (n <= 64) and the scanning one (n > 64) take luFactor's pivots and
  // give its factors exactly, fill-in included; the pattern solve equals the dense solve.
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> uni(-1.0, 1.0);
  for (int trial = 0; trial < 40; ++trial) {
    const int n = trial < 10 ? 3 * (1 + trial % 5) : trial < 36 ? 2 + trial % 30 : 64 + trial % 8;
    MatX A = trial < 10 ? borderedBlocks(1 + trial % 5, rng) : MatX::Zero(n, n);
    if (trial >= 10) {
      for (int i = 0; i < n; ++i)
        for (int j = 0; j < n; ++j)
          if (i == j || uni(rng) > 0.6) A(i, j) = uni(rng);
      if (trial % 3 == 0) A.row(n / 2) = A.row(0) * 0.5;  // equal |entries|: the pivot ties
    }
    MatX dense = A, sparse = A;
    std::vector<int> pd(n), ps(n);
    SparseLuPattern pat;
    sparseLuReserve(pat, n);
    const bool okd = luFactor(dense, pd), oks = sparseLuFactor(sparse, ps, pat);
    ASSERT_EQ(okd, oks) << "n = " << n;
    if (!okd) continue;
    ASSERT_EQ(pd, ps) << "n = " << n;
    EXPECT_TRUE(dense == sparse) << "n = " << n;
    for (int cols : {1, 3, 9}) {  // column by column, and 8 + 2 together (with the vector)
      MatX B = MatX::Random(n, cols), Bd = B;
      VecX b = VecX::Random(n), bd = b;
      luSolveFactors(dense, pd, Bd);
      luSolveFactors(dense, pd, bd);
      sparseLuSolveFactors(sparse, ps, pat, B, b.data());
      EXPECT_TRUE(B == Bd) << "n = " << n;
      EXPECT_TRUE(b == bd) << "n = " << n;
    }
  }
}
