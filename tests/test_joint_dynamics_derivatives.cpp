// The derivatives with joint dynamics (MJCF armature, springs, dampers; docs/mjcf.md §4):
// the passive-force partials (tree/joint_dynamics_derivatives.hpp) against central finite
// differences of addPassiveForces on the configuration manifold (q (+) delta = integrate(q,
// delta), Richardson-extrapolated), for every joint type.
#include <gtest/gtest.h>

#include <random>

#include "test_util.hpp"
#include "tree/joint_dynamics.hpp"
#include "tree/joint_dynamics_derivatives.hpp"

namespace clusterdyn::test {
namespace {

/// Random trees with every joint type (floating base, revolute, prismatic, spherical, planar)
/// carrying random joint dynamics: armature, damping, stiffness per coordinate (different per
/// axis of a ball / free joint; none on planar joints, which MuJoCo has no spring for) about a
/// random spring configuration (random quaternions: nonzero rotation vectors).
std::vector<Model> passiveModels() {
  std::vector<Model> out;
  std::mt19937_64 rng(77);
  for (int k = 0; k < 6; ++k) {
    RandomModelOptions o;
    o.nbodies = 6 + k;
    o.floatingBase = true;
    o.sphericalWeight = 2.0;
    o.prismaticWeight = 2.0;
    o.planarWeight = 1.0;
    Model m = randomTreeModel(rng, o);
    m.armature = randomVector(m.nv, rng, 0.01, 0.2);
    m.damping = randomVector(m.nv, rng, 0.1, 2.0);
    m.stiffness = randomVector(m.nv, rng, 0.5, 5.0);
    for (int b = 0; b < m.nbodies; ++b)
      if (m.joints[b].type == JointType::Planar)
        m.stiffness.segment(m.idx_v[b], m.nvs[b]).setZero();
    m.springPosition = randomConfiguration(m, rng);
    out.push_back(std::move(m));
  }
  return out;
}

VecX passiveForces(const Model& m, const VecX& q, const VecX& v) {
  VecX tau = VecX::Zero(m.nv);
  detail::addModelPassiveForces(m, q.data(), v.data(), 1.0, tau.data());
  return tau;
}

/// d tau_p / dq by central differences along the tangent, extrapolated twice (Richardson:
/// h, h/2, h/4, error O(h^6)); d tau_p / dv by one central difference (tau_p is linear in v).
void finiteDifferencePartials(const Model& m, const VecX& q, const VecX& v, MatX& dq, MatX& dv) {
  dq.resize(m.nv, m.nv);
  dv.resize(m.nv, m.nv);
  auto central = [&](int k, double h) {
    const VecX e = VecX::Unit(m.nv, k) * h;
    return VecX((passiveForces(m, integrate(m, q, e, 1.0), v) -
                 passiveForces(m, integrate(m, q, -e, 1.0), v)) /
                (2 * h));
  };
  for (int k = 0; k < m.nv; ++k) {
    const double h = 1e-2;
    const VecX d1 = central(k, h), d2 = central(k, h / 2), d4 = central(k, h / 4);
    dq.col(k) = (16.0 * (4.0 * d4 - d2) - (4.0 * d2 - d1)) / 45.0;
    const VecX e = VecX::Unit(m.nv, k);
    dv.col(k) = (passiveForces(m, q, v + e) - passiveForces(m, q, v - e)) / 2.0;
  }
}

TEST(PassiveForcePartials, MatchManifoldFiniteDifferencesForEveryJointType) {
  std::mt19937_64 rng(5);
  int seen[6] = {0, 0, 0, 0, 0, 0};
  for (const Model& m : passiveModels()) {
    for (int b = 0; b < m.nbodies; ++b) ++seen[static_cast<int>(m.joints[b].type)];
    for (int trial = 0; trial < 3; ++trial) {
      // Trial 0 at the spring configuration (r = 0: the series of J_r^-1), then random states
      // with rotations up to 2.1 rad from it (subQuat wraps at pi, where tau_p jumps).
      const VecX q = integrate(m, m.springPosition, randomVector(m.nv, rng, -1.2, 1.2),
                               trial == 0 ? 0.0 : 1.0);
      const VecX v = randomVector(m.nv, rng);
      MatX fdq, fdv;
      finiteDifferencePartials(m, q, v, fdq, fdv);
      // Added with a sign onto what the caller holds.
      const MatX q0 = MatX::Random(m.nv, m.nv), v0 = MatX::Random(m.nv, m.nv);
      MatX dq = q0, dv = v0;
      detail::addPassiveForcePartials(m, q.data(), -2.0, dq, dv);
      EXPECT_LT(relativeError((dq - q0) / -2.0, fdq), 1e-9) << m.name << " trial " << trial;
      EXPECT_LT(relativeError((dv - v0) / -2.0, fdv), 1e-12) << m.name << " trial " << trial;
      // Block diagonal: nothing outside the joints' own blocks.
      MatX mask = MatX::Zero(m.nv, m.nv);
      for (int b = 0; b < m.nbodies; ++b)
        mask.block(m.idx_v[b], m.idx_v[b], m.nvs[b], m.nvs[b]).setOnes();
      EXPECT_EQ((dq - q0).cwiseProduct(MatX::Ones(m.nv, m.nv) - mask).cwiseAbs().maxCoeff(), 0.0);
    }
  }
  for (JointType t : {JointType::Revolute, JointType::Prismatic, JointType::Spherical,
                      JointType::Planar, JointType::Floating})
    EXPECT_GT(seen[static_cast<int>(t)], 0) << jointTypeName(t);
}

TEST(PassiveForcePartials, SmallRotationsAndModelsWithoutPassiveForces) {
  // One ball joint a small angle t from its spring: the series branch of J_r^-1 (t < 1e-2) and
  // the closed form just above it agree with the finite differences.
  std::mt19937_64 rng(9);
  RandomModelOptions o;
  o.nbodies = 1;
  o.revoluteWeight = o.prismaticWeight = o.planarWeight = 0.0;
  Model m = randomTreeModel(rng, o);
  ASSERT_EQ(m.joints[0].type, JointType::Spherical);
  m.damping = VecX::Zero(3);
  m.stiffness = Vec3(1.0, 2.0, 3.0);
  m.springPosition = randomConfiguration(m, rng);
  for (double t : {1e-7, 1e-3, 0.9e-2, 1.1e-2, 3.0}) {
    const VecX q = integrate(m, m.springPosition, randomUnitVector(rng) * t, 1.0);
    MatX fdq, fdv, dq = MatX::Zero(3, 3), dv = MatX::Zero(3, 3);
    finiteDifferencePartials(m, q, VecX::Zero(3), fdq, fdv);
    detail::addPassiveForcePartials(m, q.data(), 1.0, dq, dv);
    EXPECT_LT(relativeError(dq, fdq), 1e-10) << t;
  }
  // Armature only (or nothing): the partials add nothing.
  Model a = m;
  a.damping.resize(0);
  a.stiffness.resize(0);
  a.springPosition.resize(0);
  a.armature = Vec3(0.1, 0.1, 0.1);
  MatX dq = MatX::Ones(3, 3), dv = MatX::Ones(3, 3);
  detail::addPassiveForcePartials(a, m.springPosition.data(), 1.0, dq, dv);
  EXPECT_EQ(dq, MatX::Ones(3, 3));
  EXPECT_EQ(dv, MatX::Ones(3, 3));
}

}  // namespace
}  // namespace clusterdyn::test
