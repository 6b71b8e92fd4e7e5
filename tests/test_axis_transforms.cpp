// The transforms specialised for joints that rotate about a coordinate axis (src/tree/
// axis_transforms.hpp) against their generic counterparts, and the CRBA that uses them against
// the generic path and against RNEA columns on trees whose joints are axis-aligned.
#include <gtest/gtest.h>

#include <random>

#include "clusterdyn/crba.hpp"
#include "clusterdyn/rnea.hpp"
#include "test_util.hpp"
#include "tree/axis_transforms.hpp"

using namespace clusterdyn;
using namespace clusterdyn::test;

namespace {

/// The joint transform of a revolute joint about +-e_a at angle q with an unrotated placement.
Transform axisTransform(int a, double sign, double q, const Vec3& p) {
  Vec3 axis = Vec3::Zero();
  axis[a] = sign;
  const Joint joint = Joint::revolute(axis);
  return Transform(Mat3::Identity(), p) * joint.transform(&q);
}

template <int A>
void checkAxis(std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  for (int trial = 0; trial < 200; ++trial) {
    const double sign = trial % 2 == 0 ? 1.0 : -1.0;
    const Transform X = axisTransform(A, sign, u(rng), Vec3(u(rng), u(rng), u(rng)) / 3.0);
    const SpatialInertia Y = randomInertia(rng);
    const SpatialInertia fast = detail::transformedAboutAxis<A>(Y, X);
    const SpatialInertia generic = Y.transformedBy(X);
    EXPECT_NEAR(fast.mass, generic.mass, 0.0);
    EXPECT_LE((fast.h - generic.h).cwiseAbs().maxCoeff(), 1e-14);
    EXPECT_LE((fast.Io - generic.Io).cwiseAbs().maxCoeff(), 1e-13);
    EXPECT_EQ(fast.Io, fast.Io.transpose());
    Force f;
    for (int k = 0; k < 6; ++k) f[k] = u(rng);
    EXPECT_LE((detail::actForceAboutAxis<A>(X, f) - X.actForce(f)).cwiseAbs().maxCoeff(), 1e-14);
    EXPECT_LE(
        (detail::rotateAboutAxis<A>(X.R, f.head<3>()) - X.R * f.head<3>()).cwiseAbs().maxCoeff(),
        1e-15);
  }
}

/// A random tree whose revolute joints turn about +-e_x, +-e_y or +-e_z, half of them with an
/// unrotated joint placement (the specialised path) and half with a rotated one.
Model axisAlignedModel(std::mt19937_64& rng, bool floatingBase) {
  RandomModelOptions options;
  options.nbodies = 9;
  options.floatingBase = floatingBase;
  Model m = randomTreeModel(rng, options);
  std::uniform_int_distribution<int> axis(0, 2);
  for (int i = 0; i < m.nbodies; ++i) {
    if (m.joints[i].type != JointType::Revolute) continue;
    Vec3 e = Vec3::Zero();
    e[axis(rng)] = i % 3 == 0 ? -1.0 : 1.0;
    m.joints[i] = Joint::revolute(e);
    if (i % 2 == 0) m.jointPlacement[i].R.setIdentity();
  }
  m.finalize();
  return m;
}

}  // namespace

TEST(AxisTransforms, EqualTheGenericTransforms) {
  std::mt19937_64 rng(11);
  checkAxis<0>(rng);
  checkAxis<1>(rng);
  checkAxis<2>(rng);
}

TEST(AxisTransforms, FinalizeMarksOnlyUnrotatedAxisAlignedRevolutes) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 10; ++trial) {
    const Model m = axisAlignedModel(rng, trial % 2 == 0);
    ASSERT_EQ(static_cast<int>(m.axisRotation.size()), m.nbodies);
    for (int i = 0; i < m.nbodies; ++i) {
      const Joint& j = m.joints[i];
      const bool expected = j.type == JointType::Revolute && j.alignedAxis >= 0 &&
                            m.jointPlacement[i].R == Mat3::Identity();
      EXPECT_EQ(m.axisRotation[i], expected ? j.alignedAxis : -1) << "body " << i;
    }
  }
}

TEST(AxisTransforms, CrbaMatchesGenericPathAndRneaColumns) {
  std::mt19937_64 rng(17);
  int specialised = 0;
  for (int trial = 0; trial < 12; ++trial) {
    const Model model = axisAlignedModel(rng, trial % 2 == 0);
    Model generic = model;  // the same tree with the specialisation switched off
    generic.axisRotation.assign(model.nbodies, -1);
    for (int a : model.axisRotation) specialised += a >= 0;
    Data data(model), genericData(generic);
    for (int s = 0; s < 4; ++s) {
      const RandomState st = randomState(model, rng);
      ASSERT_EQ(crba(model, data, st.q), Status::Ok) << data.errorMessage();
      ASSERT_EQ(crba(generic, genericData, st.q), Status::Ok) << genericData.errorMessage();
      EXPECT_TRUE(isClose(data.M, genericData.M, 1e-12));
      // Independent oracle: column j of M is rnea(q, 0, e_j) - rnea(q, 0, 0).
      ASSERT_EQ(rnea(model, data, st.q, VecX::Zero(model.nv), VecX::Zero(model.nv)), Status::Ok);
      const VecX g = data.tau;
      MatX Mrnea(model.nv, model.nv);
      for (int j = 0; j < model.nv; ++j) {
        ASSERT_EQ(rnea(model, data, st.q, VecX::Zero(model.nv), VecX::Unit(model.nv, j)),
                  Status::Ok);
        Mrnea.col(j) = data.tau - g;
      }
      ASSERT_EQ(crba(model, data, st.q), Status::Ok);
      EXPECT_TRUE(isClose(data.M, Mrnea, 1e-10));
      for (int r = 0; r < model.nv; ++r)
        for (int c = 0; c < r; ++c) EXPECT_EQ(data.M(r, c), data.M(c, r)) << r << " " << c;
    }
  }
  EXPECT_GE(specialised, 20) << "too few bodies took the specialised path";
}

TEST(AxisTransforms, CrbaJointTransformsEqualForwardKinematics) {
  // crba writes the joint transforms of axisRotation bodies itself (inline); they must be the
  // very values of the shared kinematic step, and the composite inertias those of the generic
  // path.
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < 8; ++trial) {
    const Model model = axisAlignedModel(rng, trial % 2 == 0);
    Model generic = model;
    generic.axisRotation.assign(model.nbodies, -1);
    Data data(model), kin(model), genericData(generic);
    for (int s = 0; s < 3; ++s) {
      const RandomState st = randomState(model, rng);
      ASSERT_EQ(crba(model, data, st.q), Status::Ok) << data.errorMessage();
      ASSERT_EQ(crba(generic, genericData, st.q), Status::Ok);
      ASSERT_EQ(forwardKinematics(model, kin, st.q), Status::Ok);
      for (int i = 0; i < model.nbodies; ++i) {
        EXPECT_EQ(data.liMi[i].R, kin.liMi[i].R) << "body " << i;
        EXPECT_EQ(data.liMi[i].p, kin.liMi[i].p) << "body " << i;
        EXPECT_LE((data.Ycrb[i].Io - genericData.Ycrb[i].Io).cwiseAbs().maxCoeff(), 1e-12);
        EXPECT_LE((data.Ycrb[i].h - genericData.Ycrb[i].h).cwiseAbs().maxCoeff(), 1e-12);
      }
    }
  }
}
