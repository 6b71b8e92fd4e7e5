// The table of constraint types and its projection hook (src/constrained/constraint_types.*):
// the rigid types' rows and names, the contact layer's cone kinds in the same table, the
// projections onto the multiplier sets and their duals, and the proximal loops' update.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "constrained/constraint_types.hpp"
#include "contact/contact_detail.hpp"
#include "test_util.hpp"

namespace clusterdyn::test {
namespace {

using detail::ConstraintKind;
using detail::constraintTypeInfo;
using detail::MultiplierSet;

TEST(ConstraintTypes, RigidTypesRowsAndComponents) {
  const int rows[5] = {3, 6, 5, 3, 5};
  for (int k = 0; k < 5; ++k) {
    const ConstraintType t = static_cast<ConstraintType>(k);
    const detail::ConstraintTypeInfo& info = constraintTypeInfo(t);
    EXPECT_EQ(constraintRows(t), rows[k]);
    EXPECT_EQ(info.rows, rows[k]);
    EXPECT_EQ(info.set, MultiplierSet::Equality);
    for (int r = 1; r < info.rows; ++r) EXPECT_LT(info.components[r - 1], info.components[r]);
  }
  // The free directions of the joint-like types are the ones left out (constraints.hpp).
  const auto has = [](ConstraintType t, int c) {
    const detail::ConstraintTypeInfo& i = constraintTypeInfo(t);
    for (int r = 0; r < i.rows; ++r)
      if (i.components[r] == c) return true;
    return false;
  };
  EXPECT_FALSE(has(ConstraintType::Revolute, 2));   // rotation about z
  EXPECT_FALSE(has(ConstraintType::Prismatic, 5));  // translation along z
  EXPECT_FALSE(has(ConstraintType::Planar, 2) || has(ConstraintType::Planar, 3) ||
               has(ConstraintType::Planar, 4));
  EXPECT_FALSE(has(ConstraintType::Point, 0) || has(ConstraintType::Point, 1) ||
               has(ConstraintType::Point, 2));
}

TEST(ConstraintTypes, ConeKindsAreEntriesOfTheTable) {
  EXPECT_EQ(detail::constraintTypeInfo(ConeType::Coulomb).set, MultiplierSet::Coulomb);
  EXPECT_EQ(detail::constraintTypeInfo(ConeType::Bilateral).set, MultiplierSet::Equality);
  EXPECT_EQ(detail::constraintTypeInfo(ConeType::Inactive).set, MultiplierSet::Zero);
  EXPECT_EQ(&detail::constraintTypeInfo(ConeType::Coulomb),
            &constraintTypeInfo(ConstraintKind::Coulomb));
  EXPECT_STREQ(detail::constraintTypeInfo(ConeType::Inactive).name, "inactive");
  EXPECT_EQ(detail::constraintTypeInfo(ConeType::Torsional).set, MultiplierSet::Elliptic);
  EXPECT_EQ(detail::constraintTypeInfo(ConeType::Rolling).set, MultiplierSet::Elliptic);
  EXPECT_EQ(detail::constraintTypeInfo(ConeType::Rolling).rows, 6);
  EXPECT_EQ(&detail::constraintTypeInfo(ConeType::Rolling),
            &constraintTypeInfo(ConstraintKind::Rolling));
}

TEST(ConstraintTypes, ProjectionsOntoTheSets) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  for (int trial = 0; trial < 200; ++trial) {
    const double mu = trial % 10 == 0 ? 0.0 : 0.1 + std::abs(u(rng));
    double x[3] = {u(rng), u(rng), u(rng)}, y[3] = {x[0], x[1], x[2]};
    detail::projectMultipliers(MultiplierSet::Coulomb, mu, 3, y);
    const double t = std::hypot(y[0], y[1]);
    EXPECT_LE(t, mu * y[2] + 1e-12);  // in K
    if (std::hypot(x[0], x[1]) <= mu * x[2])
      for (int i = 0; i < 3; ++i) EXPECT_EQ(y[i], x[i]);  // inside: unchanged
    // Moreau: x - P_K(x) lies in the polar cone -K* and is orthogonal to P_K(x).
    double d[3] = {x[0] - y[0], x[1] - y[1], x[2] - y[2]};
    EXPECT_NEAR(d[0] * y[0] + d[1] * y[1] + d[2] * y[2], 0.0, 1e-12);
    double nd[3] = {-d[0], -d[1], -d[2]}, pd[3] = {nd[0], nd[1], nd[2]};
    detail::projectDualMultipliers(MultiplierSet::Coulomb, mu, 3, pd);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(pd[i], nd[i], 1e-12);  // -d in K*
    double z[3] = {x[0], x[1], x[2]};
    detail::projectMultipliers(MultiplierSet::Zero, mu, 3, z);
    for (double v : z) EXPECT_EQ(v, 0.0);
    double e[3] = {x[0], x[1], x[2]};
    detail::projectMultipliers(MultiplierSet::Equality, mu, 3, e);
    for (int i = 0; i < 3; ++i) EXPECT_EQ(e[i], x[i]);
    detail::projectDualMultipliers(MultiplierSet::Equality, mu, 3, e);
    for (double v : e) EXPECT_EQ(v, 0.0);
  }
}

TEST(ConstraintTypes, EqualityUpdateIsThePlainSum) {
  const ClusterModel cm = loadModel(modelsPath("cd_quadruped.urdf"));
  ConstraintSet set(cm);
  RigidConstraint c;
  c.name = "w";
  c.type = ConstraintType::Weld;
  c.body1 = cm.treeModel.nbodies - 1;
  set.add(c);
  c.name = "r";
  c.type = ConstraintType::Revolute;
  c.body1 = cm.treeModel.nbodies - 2;
  set.add(c);
  EXPECT_EQ(set.rowNames()[6], "r:ang_x");
  EXPECT_EQ(set.rowNames()[8], "r:lin_x");
  std::mt19937_64 rng(5);
  const VecX lambda = randomVector(set.rows(), rng), step = randomVector(set.rows(), rng);
  VecX l = lambda, s = step;
  detail::updateMultipliers(set, l, s);
  EXPECT_EQ(l, VecX(lambda + step));
  EXPECT_EQ(s, step);
}

}  // namespace
}  // namespace clusterdyn::test
