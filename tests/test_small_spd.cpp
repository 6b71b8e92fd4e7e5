// detail::invertPositiveDefinite (core/small_spd.hpp), the fixed-size inverse of the D blocks of
// the articulated-body steps, against Eigen's LLT on random matrices of every size it serves.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "core/small_spd.hpp"

using namespace clusterdyn;

namespace {

template <int N>
void checkSize(std::mt19937_64& rng) {
  using Mat = Eigen::Matrix<double, N, N>;
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    Mat B;
    for (int i = 0; i < N; ++i)
      for (int j = 0; j < N; ++j) B(i, j) = u(rng);
    // Condition numbers from ~1 to ~1e6 (a diagonal shift of a Gram matrix, then a scaling).
    const double shift = std::pow(10.0, -6.0 * (trial % 7) / 6.0);
    Mat A = B * B.transpose() + shift * Mat::Identity();
    A *= std::pow(10.0, (trial % 5) - 2.0);
    Mat Ainv;
    ASSERT_TRUE(detail::invertPositiveDefinite<N>(A, Ainv));
    const Mat ref = A.llt().solve(Mat::Identity());
    const double cond = A.norm() * ref.norm();
    EXPECT_LE((Ainv - ref).cwiseAbs().maxCoeff(), 1e-13 * cond * ref.cwiseAbs().maxCoeff());
    EXPECT_EQ(Ainv, Ainv.transpose());  // exactly symmetric
    // Only the lower triangle is read.
    Mat Aupper = A;
    Aupper.template triangularView<Eigen::StrictlyUpper>().setConstant(1e300);
    Mat again;
    ASSERT_TRUE(detail::invertPositiveDefinite<N>(Aupper, again));
    EXPECT_EQ(again, Ainv);
  }
}

template <int N>
void checkRejects() {
  using Mat = Eigen::Matrix<double, N, N>;
  Mat Ainv;
  Mat A = Mat::Identity();
  A(N - 1, N - 1) = 0.0;  // singular
  EXPECT_FALSE(detail::invertPositiveDefinite<N>(A, Ainv));
  A(N - 1, N - 1) = -1.0;  // indefinite
  EXPECT_FALSE(detail::invertPositiveDefinite<N>(A, Ainv));
  A = Mat::Identity();
  A(0, 0) = std::numeric_limits<double>::quiet_NaN();
  EXPECT_FALSE(detail::invertPositiveDefinite<N>(A, Ainv));
  if (N > 1) {  // positive diagonal, indefinite through an off-diagonal entry
    A = Mat::Identity();
    A(1, 0) = A(0, 1) = 2.0;
    EXPECT_FALSE(detail::invertPositiveDefinite<N>(A, Ainv));
  }
}

}  // namespace

TEST(SmallSpd, InverseMatchesLltForEverySize) {
  std::mt19937_64 rng(42);
  checkSize<1>(rng);
  checkSize<2>(rng);
  checkSize<3>(rng);
  checkSize<6>(rng);
}

TEST(SmallSpd, RejectsSingularIndefiniteAndNaN) {
  checkRejects<1>();
  checkRejects<2>();
  checkRejects<3>();
  checkRejects<6>();
}

// The working-precision floor (kSingularPivot, used by the dynamics of the mass matrix): a
// rank-deficient Gram matrix plus 1e-12 I (1e-13 of its diagonal) passes the plain test (pivots >
// 0) and fails with the floor, with the ratio reported; a well-conditioned matrix with a 1e-6 pivot
// passes both. The fixed-size inverse and Eigen's LLT (choleskyAboveFloor) agree.
TEST(SmallSpd, FloorRejectsPivotsAtRoundingLevel) {
  using Mat6 = Eigen::Matrix<double, 6, 6>;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Eigen::Matrix<double, 6, 5> B;
  for (int i = 0; i < 6; ++i)
    for (int j = 0; j < 5; ++j) B(i, j) = u(rng);
  const Eigen::Matrix<double, 6, 1> z = Eigen::Matrix<double, 6, 1>::Constant(1.0 / std::sqrt(6.0));
  B -= z * (z.transpose() * B);       // null vector z: no coordinate direction
  Mat6 A = 10.0 * B * B.transpose();  // rank 5
  A += 1e-12 * Mat6::Identity();      // smallest eigenvalue 1e-12 against a diagonal ~10
  Mat6 Ainv;
  ASSERT_TRUE(detail::invertPositiveDefinite<6>(A, Ainv));  // floor 0: as Eigen::LLT
  double ratio = -1.0;
  EXPECT_FALSE(detail::invertPositiveDefinite<6>(A, Ainv, detail::kSingularPivot, &ratio));
  EXPECT_GT(ratio, 0.0);
  EXPECT_LT(ratio, detail::kSingularPivot);
  const Eigen::LLT<Eigen::MatrixXd> llt(A);
  ASSERT_EQ(llt.info(), Eigen::Success);
  double lltRatio = -1.0;
  EXPECT_TRUE(detail::choleskyAboveFloor(llt, A, 0.0));
  EXPECT_FALSE(detail::choleskyAboveFloor(llt, A, detail::kSingularPivot, &lltRatio));
  EXPECT_NEAR(lltRatio, ratio, 1e-3 * ratio);
  EXPECT_NE(std::string(detail::PivotText(ratio, detail::kSingularPivot).c_str())
                .find("x the largest diagonal entry, below 1e-11"),
            std::string::npos);
  // A regular matrix whose smallest pivot is 1e-6 of its diagonal: accepted, same inverse.
  Mat6 R = Mat6::Identity();
  R(5, 5) = 1e-6;
  Mat6 Rinv, Rinv0;
  ASSERT_TRUE(detail::invertPositiveDefinite<6>(R, Rinv, detail::kSingularPivot, &ratio));
  ASSERT_TRUE(detail::invertPositiveDefinite<6>(R, Rinv0));
  EXPECT_EQ(Rinv, Rinv0);
  EXPECT_TRUE(
      detail::choleskyAboveFloor(Eigen::LLT<Eigen::MatrixXd>(R), R, detail::kSingularPivot));
  // A negative pivot: its ratio (<= 0); Eigen's failed LLT: NaN.
  Mat6 N = Mat6::Identity();
  N(2, 2) = -0.5;
  EXPECT_FALSE(detail::invertPositiveDefinite<6>(N, Ainv, detail::kSingularPivot, &ratio));
  EXPECT_EQ(ratio, -0.5);
  EXPECT_FALSE(detail::choleskyAboveFloor(Eigen::LLT<Eigen::MatrixXd>(N), N, 0.0, &lltRatio));
  EXPECT_TRUE(std::isnan(lltRatio));
}
