// The articulated-inertia transform of the constraint algorithms' pass 2
// (src/constrained/symmetric_inertia.hpp) against the generic actInertia.
#include <gtest/gtest.h>

#include <random>

#include "constrained/symmetric_inertia.hpp"
#include "test_util.hpp"

using namespace clusterdyn;
using namespace clusterdyn::test;

namespace {

/// An articulated inertia: a rigid one minus a rank-one term along a random axis (as pass 2
/// forms it), so that the off-diagonal block is not of the rigid form.
Mat6 randomArticulatedInertia(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const Mat6 I = randomInertia(rng).matrix();
  Vec6 s;
  for (int k = 0; k < 6; ++k) s[k] = u(rng);
  const Vec6 U = I * s;
  return I - U * U.transpose() / s.dot(U);
}

TEST(SymmetricInertia, EqualsActInertiaAddedInPlace) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 500; ++trial) {
    const Transform X(randomRotation(rng), Vec3(u(rng), u(rng), u(rng)));
    const Mat6 Ia = randomArticulatedInertia(rng);
    const Mat6 base = randomArticulatedInertia(rng);
    Mat6 out = base;
    detail::addSymmetricInertia(X, Ia, out);
    const Mat6 expected = base + actInertia(X, Ia);
    const double scale = expected.cwiseAbs().maxCoeff();
    EXPECT_LE((out - expected).cwiseAbs().maxCoeff(), 1e-14 * scale) << "trial " << trial;
    EXPECT_LE((out - out.transpose()).cwiseAbs().maxCoeff(), 1e-14 * scale);
  }
}

TEST(SymmetricInertia, IdentityTransformAddsTheInertia) {
  std::mt19937_64 rng(8);
  const Mat6 Ia = randomArticulatedInertia(rng);
  Mat6 out = Mat6::Zero();
  detail::addSymmetricInertia(Transform::Identity(), Ia, out);
  EXPECT_LE((out - Ia).cwiseAbs().maxCoeff(), 1e-15 * Ia.cwiseAbs().maxCoeff());
}

}  // namespace
