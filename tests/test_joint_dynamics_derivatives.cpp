// The derivatives with joint dynamics (MJCF armature, springs, dampers; docs/mjcf.md §4):
// the passive-force partials (tree/joint_dynamics_derivatives.hpp) against central finite
// differences of addPassiveForces on the configuration manifold (q (+) delta = integrate(q,
// delta), Richardson-extrapolated), for every joint type; the tree derivatives (RNEA, ABA,
// M^-1) against finite differences of rnea() / aba() (which model the joint dynamics), crba's
// M + A, and d ABA = -(M + A)^-1 d RNEA from a separate call.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>
#include <string>

#include "clusterdyn/mjcf.hpp"
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
    // MuJoCo's free joint has one armature: equal on its three translational coordinates
    // (Model::finalize requires it; the velocity product a (w x v) of tree/joint_dynamics.hpp).
    for (int b = 0; b < m.nbodies; ++b)
      if (m.joints[b].type == JointType::Floating)
        m.armature.segment<3>(m.idx_v[b] + 3).setConstant(m.armature[m.idx_v[b] + 3]);
    m.finalize();
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
      detail::addPassiveForcePartials(m, q.data(), v.data(), -2.0, dq, dv);
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
    detail::addPassiveForcePartials(m, q.data(), nullptr, 1.0, dq, dv);
    EXPECT_LT(relativeError(dq, fdq), 1e-10) << t;
  }
  // Armature only (or nothing): the partials add nothing.
  Model a = m;
  a.damping.resize(0);
  a.stiffness.resize(0);
  a.springPosition.resize(0);
  a.armature = Vec3(0.1, 0.1, 0.1);
  MatX dq = MatX::Ones(3, 3), dv = MatX::Ones(3, 3);
  detail::addPassiveForcePartials(a, m.springPosition.data(), nullptr, 1.0, dq, dv);
  EXPECT_EQ(dq, MatX::Ones(3, 3));
  EXPECT_EQ(dv, MatX::Ones(3, 3));
}

/// An MJCF tree with every MJCF joint type, each with armature and damping, the ball, hinge and
/// slide joints with springs (hinge and slide about a springref away from their ref; MuJoCo has
/// no springs on free joints, and springref does not apply to balls: their spring sits at q0).
const char* kJointDynamicsTree = R"(<mujoco model="jd_tree">
  <worldbody>
    <body name="base" pos="0.1 0 1" euler="10 -20 30">
      <joint name="root" type="free" damping="0.4" armature="0.05"/>
      <geom type="box" size="0.1 0.08 0.05"/>
      <body name="upper" pos="0.1 0.02 0">
        <joint name="shoulder" type="ball" stiffness="2" damping="0.3" armature="0.02"/>
        <geom type="capsule" fromto="0 0 0 0.02 0 -0.3" size="0.04"/>
        <body name="lower" pos="0 0 -0.3">
          <joint name="elbow" axis="0 1 0.2" ref="10" springref="40" stiffness="4" damping="0.2"
                 armature="0.01"/>
          <geom type="capsule" fromto="0 0 0 0 0.02 -0.25" size="0.03"/>
          <body name="tip" pos="0 0 -0.25">
            <joint name="extend" type="slide" axis="0.1 0 1" springref="0.05" stiffness="20"
                   damping="0.5" armature="0.03"/>
            <geom type="sphere" size="0.04"/>
          </body>
        </body>
      </body>
      <body name="side" pos="-0.1 0 0">
        <joint name="yaw" axis="0 0 1" stiffness="1.5" springref="-25" damping="0.1"
               armature="0.004"/>
        <geom type="box" size="0.05 0.05 0.02" pos="-0.05 0 0"/>
      </body>
    </body>
  </worldbody>
</mujoco>
)";

struct Case {
  std::string name;
  Model model;
};

/// Models with joint dynamics: the MJCF tree above, cd_geared_leg's spanning tree (free base,
/// rotors with armature, springs about springrefs, dampers), the random trees of
/// passiveModels() (free-joint springs too), one with armature only and one without armature.
std::vector<Case> jointDynamicsCases() {
  std::vector<Case> out;
  out.push_back({"jd_tree", buildTreeModel(parseMjcfString(kJointDynamicsTree).urdf)});
  out.push_back(
      {"cd_geared_leg", buildTreeModel(parseMjcfFile(modelsPath("cd_geared_leg.xml")).urdf)});
  std::vector<Model> random = passiveModels();
  for (size_t k = 0; k < random.size(); ++k)
    out.push_back({"random_" + std::to_string(k), random[k]});
  Model armatureOnly = random[0], passiveOnly = random[1];
  armatureOnly.damping.resize(0);
  armatureOnly.stiffness.resize(0);
  armatureOnly.springPosition.resize(0);
  armatureOnly.finalize();  // a floating joint's armature: zero damping and stiffness added
  passiveOnly.armature.resize(0);
  passiveOnly.finalize();
  out.push_back({"armature_only", armatureOnly});
  out.push_back({"passive_only", passiveOnly});
  for (const Case& c : out) EXPECT_TRUE(c.model.hasJointDynamics()) << c.name;
  return out;
}

using Fn = std::function<VecX(const VecX& q, const VecX& v)>;

/// d f / dq (tangent, Richardson-extrapolated twice) and d f / dv (f quadratic in v: one
/// central difference).
void finiteDifferences(const Model& m, const Fn& f, const VecX& q, const VecX& v, MatX& dq,
                       MatX& dv) {
  dq.resize(m.nv, m.nv);
  dv.resize(m.nv, m.nv);
  auto central = [&](int k, double h) {
    const VecX e = VecX::Unit(m.nv, k) * h;
    return VecX((f(integrate(m, q, e, 1.0), v) - f(integrate(m, q, -e, 1.0), v)) / (2 * h));
  };
  for (int k = 0; k < m.nv; ++k) {
    const double h = 1e-2;
    const VecX d1 = central(k, h), d2 = central(k, h / 2), d4 = central(k, h / 4);
    dq.col(k) = (16.0 * (4.0 * d4 - d2) - (4.0 * d2 - d1)) / 45.0;
    const VecX e = VecX::Unit(m.nv, k) * 0.1;
    dv.col(k) = (f(q, v + e) - f(q, v - e)) / 0.2;
  }
}

TEST(JointDynamicsDerivatives, RneaMinverseAndAbaAgainstOracles) {
  for (const Case& c : jointDynamicsCases()) {
    SCOPED_TRACE(c.name);
    const Model& m = c.model;
    std::mt19937_64 rng(123);
    Data data(m), other(m);
    DerivativeData dd(m), dd2(m);
    for (int s = 0; s < 3; ++s) {
      SCOPED_TRACE("state " + std::to_string(s));
      // Near the spring configuration (rotations well inside subQuat's wrap at pi).
      const VecX q = integrate(m, m.hasPassiveForces() ? m.springPosition : neutralConfiguration(m),
                               randomVector(m.nv, rng, -1.0, 1.0), 1.0);
      const VecX v = randomVector(m.nv, rng), a = randomVector(m.nv, rng),
                 tau = randomVector(m.nv, rng);
      const std::vector<Force> forces = randomForces(m, rng);
      const Force* fext = s == 1 ? forces.data() : nullptr;

      // RNEA (tau = rnea + A a - tau_p): tau, d/dq, d/dv by finite differences, d/da = M + A.
      ASSERT_EQ(computeRNEADerivatives(m, data, dd, q, v, a, fext), Status::Ok)
          << data.errorMessage();
      ASSERT_EQ(rnea(m, other, q, v, a, fext), Status::Ok);
      EXPECT_TRUE(isClose(dd.tau, other.tau, 1e-12));
      const Fn tauOf = [&](const VecX& x, const VecX& y) {
        EXPECT_EQ(rnea(m, other, x, y, a, fext), Status::Ok);
        return other.tau;
      };
      MatX fdq, fdv;
      finiteDifferences(m, tauOf, q, v, fdq, fdv);
      EXPECT_TRUE(isClose(dd.dtau_dq, fdq, 1e-8));
      EXPECT_TRUE(isClose(dd.dtau_dv, fdv, 1e-10));
      ASSERT_EQ(crba(m, other, q), Status::Ok);  // crba's M includes the armature
      const MatX M = other.M;
      EXPECT_TRUE(isClose(dd.dtau_da, M, 1e-12));

      // M^-1 = (M + A)^-1.
      ASSERT_EQ(computeMinverse(m, data, dd2, q), Status::Ok) << data.errorMessage();
      EXPECT_TRUE(isClose(dd2.Minv * M, MatX::Identity(m.nv, m.nv), 1e-10));

      // ABA: ddq, d/d(q, v) by finite differences of aba(), d ddq / d tau = (M + A)^-1.
      ASSERT_EQ(computeABADerivatives(m, data, dd, q, v, tau, fext), Status::Ok)
          << data.errorMessage();
      ASSERT_EQ(aba(m, other, q, v, tau, fext), Status::Ok);
      EXPECT_TRUE(isClose(dd.ddq, other.ddq, 1e-12));
      EXPECT_TRUE(isClose(dd.Minv, dd2.Minv, 1e-12));
      const Fn ddqOf = [&](const VecX& x, const VecX& y) {
        EXPECT_EQ(aba(m, other, x, y, tau, fext), Status::Ok);
        return other.ddq;
      };
      finiteDifferences(m, ddqOf, q, v, fdq, fdv);
      EXPECT_TRUE(isClose(dd.ddq_dq, fdq, 1e-7));
      EXPECT_TRUE(isClose(dd.ddq_dv, fdv, 1e-9));
      // dd.dtau_* and dd.tau at a = ddq: those of a separate computeRNEADerivatives, tau itself
      // (RNEA(ABA(tau)) = tau), and ddq_d* = -(M + A)^-1 dtau_d*.
      ASSERT_EQ(computeRNEADerivatives(m, other, dd2, q, v, dd.ddq, fext), Status::Ok);
      EXPECT_TRUE(isClose(dd.tau, tau, 1e-10));
      EXPECT_TRUE(isClose(dd.dtau_dq, dd2.dtau_dq, 1e-12));
      EXPECT_TRUE(isClose(dd.dtau_dv, dd2.dtau_dv, 1e-12));
      EXPECT_TRUE(isClose(dd.dtau_da, M, 1e-12));
      EXPECT_TRUE(isClose(dd.ddq_dq, -dd2.Minv * dd2.dtau_dq, 1e-10));
      EXPECT_TRUE(isClose(dd.ddq_dv, -dd2.Minv * dd2.dtau_dv, 1e-10));
    }
  }
}

TEST(JointDynamicsDerivatives, ModelsWithoutJointDynamicsUnchanged) {
  // The same mechanism with its joint dynamics removed: the rigid-body derivatives, and the
  // joint-dynamics ones differ from them by exactly the joint-space terms.
  const Model jd = buildTreeModel(parseMjcfString(kJointDynamicsTree).urdf);
  Model rigid = jd;
  rigid.armature.resize(0);
  rigid.damping.resize(0);
  rigid.stiffness.resize(0);
  rigid.springPosition.resize(0);
  std::mt19937_64 rng(4);
  const VecX q = randomConfiguration(jd, rng), v = randomVector(jd.nv, rng),
             tau = randomVector(jd.nv, rng);
  Data d1(jd), d2(rigid);
  DerivativeData a(jd), b(rigid);
  ASSERT_EQ(computeRNEADerivatives(jd, d1, a, q, v, tau), Status::Ok);
  ASSERT_EQ(computeRNEADerivatives(rigid, d2, b, q, v, tau), Status::Ok);
  MatX pq = MatX::Zero(jd.nv, jd.nv), pv = MatX::Zero(jd.nv, jd.nv);
  detail::addPassiveForcePartials(jd, q.data(), v.data(), 1.0, pq, pv);
  EXPECT_TRUE(isClose(a.dtau_dq, b.dtau_dq - pq, 1e-13));
  EXPECT_TRUE(isClose(a.dtau_dv, b.dtau_dv - pv, 1e-13));
  EXPECT_TRUE(isClose(a.dtau_da, b.dtau_da + MatX(jd.armature.asDiagonal()), 1e-13));
  EXPECT_TRUE(
      isClose(a.tau - b.tau, jd.armature.cwiseProduct(tau) - passiveForces(jd, q, v), 1e-13));
}

TEST(FloatingArmature, VelocityProductOfMuJoCosFreeJointArmature) {
  // MuJoCo's free-joint armature a multiplies d/dt v_world = R (v_dot + w x v): the model with
  // armature differs from the rigid one by A a (diagonal) and a (w x v) on the translational
  // rows, a passive force that does no work; its partials match finite differences (above).
  std::mt19937_64 rng(31);
  RandomModelOptions o;
  o.nbodies = 5;
  o.floatingBase = true;
  Model rigid = randomTreeModel(rng, o);
  Model m = rigid;
  m.armature = randomVector(m.nv, rng, 0.01, 0.2);
  m.armature.segment<3>(3).setConstant(0.07);
  m.finalize();
  ASSERT_TRUE(m.hasPassiveForces());  // zero damping and stiffness, the neutral spring
  EXPECT_EQ(m.damping, VecX::Zero(m.nv));
  EXPECT_EQ(m.springPosition, neutralConfiguration(m));
  Data d1(m), d2(rigid), d3(m);
  for (int s = 0; s < 3; ++s) {
    const VecX q = randomConfiguration(m, rng), v = randomVector(m.nv, rng),
               a = randomVector(m.nv, rng);
    ASSERT_EQ(rnea(m, d1, q, v, a), Status::Ok);
    ASSERT_EQ(rnea(rigid, d2, q, v, a), Status::Ok);
    VecX expected = m.armature.cwiseProduct(a);
    expected.segment<3>(3) += 0.07 * v.head<3>().cross(v.segment<3>(3));
    EXPECT_TRUE(isClose(d1.tau - d2.tau, expected, 1e-12));
    EXPECT_NEAR(v.dot(passiveForces(m, q, v)), 0.0, 1e-14);  // no work
    // aba inverts it: RNEA(ABA(tau)) = tau.
    ASSERT_EQ(aba(m, d3, q, v, d1.tau), Status::Ok);
    EXPECT_TRUE(isClose(d3.ddq, a, 1e-10));
  }
  // Unequal translational armatures have no diagonal form in the body-frame velocity.
  Model bad = rigid;
  bad.armature = VecX::Constant(bad.nv, 0.1);
  bad.armature[4] = 0.2;
  try {
    bad.finalize();
    ADD_FAILURE() << "unequal armature accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("translational coordinates must be equal"),
              std::string::npos)
        << e.what();
  }
}

TEST(PassiveJointModel, BallReplacedByHinges) {
  // cd_rod_leg's ball (damping 0.01) inside the loop becomes three hinges (Model::ballHinges):
  // passiveJointModel leaves them to the model, whose J^T tau_ball passiveForces adds, so
  // passiveForces equals the model's own passive forces; without the model's joint dynamics
  // the ball is an error naming it.
  const MjcfDescription mjcf = parseMjcfFile(modelsPath("cd_rod_leg.xml"));
  const ClusterModel cm = buildClusterModel(mjcf.urdf);
  const Model& m = cm.treeModel;
  ASSERT_EQ(m.ballHinges.size(), 1u);
  const PassiveJointModel p = passiveJointModel(m, mjcf);
  std::mt19937_64 rng(8);
  for (int s = 0; s < 3; ++s) {
    const VecX q = randomConfiguration(m, rng), v = randomVector(m.nv, rng);
    VecX tau(m.nv);
    ASSERT_EQ(clusterdyn::passiveForces(m, p, q, v, tau), Status::Ok);
    EXPECT_TRUE(isClose(tau, passiveForces(m, q, v), 1e-14));
    const BallHingeGroup& g = m.ballHinges[0];  // the ball's damper acts on its hinges
    EXPECT_GT(std::abs(tau[g.v[0]]) + std::abs(tau[g.v[1]]) + std::abs(tau[g.v[2]]), 0.0);
  }
  ModelOptions rigid;
  rigid.jointDynamics = false;
  const ClusterModel cr = buildClusterModel(mjcf.urdf, rigid);
  try {
    passiveJointModel(cr.treeModel, mjcf);
    ADD_FAILURE() << "ball replaced by hinges accepted without Model::ballHinges";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("ball joint 'rod_ball' was replaced"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace clusterdyn::test
