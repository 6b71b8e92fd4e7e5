// detail::invertPositiveDefinite (core/small_spd.hpp), the fixed-size inverse of the D blocks of
// the articulated-body steps, against Eigen's LLT on random matrices of every size it serves.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

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
