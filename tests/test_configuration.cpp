// Configuration-space operations: neutral, random, normalize and integrate (the exponential map
// of each joint's configuration group), checked against the joint definitions of joint.hpp and
// against finite differences of the body placements (the velocity recovered from
// q(t + h) and q(t - h) must be the v that was integrated).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "test_util.hpp"

namespace clusterdyn::test {
namespace {

std::vector<Model> models() {
  std::vector<Model> out;
  for (const std::string& path : sharedTreeModelFiles()) out.push_back(loadTreeModel(path));
  for (const std::string& path : bundledTreeModelFiles()) out.push_back(loadTreeModel(path));
  std::mt19937_64 rng(555);
  for (int k = 0; k < 12; ++k) {
    RandomModelOptions o;
    o.nbodies = 3 + k % 6;
    o.floatingBase = k % 2 == 0;
    o.branchProbability = k % 3 == 0 ? 0.0 : 0.5;
    o.fixedLinkProbability = k % 4 == 1 ? 0.3 : 0.0;
    o.sphericalWeight = o.planarWeight = 2.0;
    out.push_back(randomTreeModel(rng, o));
  }
  return out;
}

const std::vector<Model>& allModels() {
  static const std::vector<Model> m = models();
  return m;
}

Eigen::Quaterniond quatAt(const VecX& q, int k) {  // (x, y, z, w) at q[k..k+3]
  return Eigen::Quaterniond(q[k + 3], q[k], q[k + 1], q[k + 2]);
}

/// Start index in q of every quaternion of the model.
std::vector<int> quaternionIndices(const Model& m) {
  std::vector<int> idx;
  for (int i = 0; i < m.nbodies; ++i) {
    if (m.joints[i].type == JointType::Floating) idx.push_back(m.idx_q[i] + 3);
    if (m.joints[i].type == JointType::Spherical) idx.push_back(m.idx_q[i]);
  }
  return idx;
}

/// Configuration difference that is zero for q and -q quaternions (same rotation).
double configurationDistance(const Model& m, const VecX& a, const VecX& b) {
  VecX d = a - b;
  for (int k : quaternionIndices(m)) {
    const double dot = a.segment<4>(k).dot(b.segment<4>(k));
    d.segment<4>(k) = a.segment<4>(k) - (dot < 0 ? -1.0 : 1.0) * b.segment<4>(k);
  }
  return d.size() ? d.cwiseAbs().maxCoeff() : 0.0;
}

TEST(Configuration, ModelsCoverEveryJointType) {
  bool types[5] = {false, false, false, false, false};
  for (const Model& m : allModels())
    for (const Joint& j : m.joints) types[static_cast<int>(j.type)] = true;
  for (int t = 0; t < 5; ++t) EXPECT_TRUE(types[t]) << "joint type " << t;
}

TEST(Configuration, Neutral) {
  for (const Model& m : allModels()) {
    const VecX q = neutralConfiguration(m);
    ASSERT_EQ(q.size(), m.nq);
    VecX expected = VecX::Zero(m.nq);
    for (int k : quaternionIndices(m)) expected[k + 3] = 1.0;  // identity (x, y, z, w)
    EXPECT_EQ(relativeError(q, expected), 0.0);
    // At the neutral configuration every joint transform is the identity.
    Data data(m);
    ASSERT_EQ(forwardKinematics(m, data, q), Status::Ok);
    for (int i = 0; i < m.nbodies; ++i) {
      const Transform parent = m.parent[i] >= 0 ? data.oMi[m.parent[i]] : Transform();
      const Transform expectedX = parent * m.jointPlacement[i];
      EXPECT_TRUE(isClose(data.oMi[i].R, expectedX.R, 1e-15));
      EXPECT_TRUE(isClose(data.oMi[i].p, expectedX.p, 1e-15));
    }
  }
}

TEST(Configuration, RandomRespectsLimitsRangeAndUnitQuaternions) {
  std::mt19937_64 rng(1);
  for (const Model& m : allModels()) {
    for (double range : {0.3, 1.0, 2.5}) {
      for (int s = 0; s < 20; ++s) {
        const VecX q = randomConfiguration(m, rng, range);
        ASSERT_EQ(q.size(), m.nq);
        EXPECT_TRUE(q.allFinite());
        for (int i = 0; i < m.nbodies; ++i) {
          const int k = m.idx_q[i];
          switch (m.joints[i].type) {
            case JointType::Revolute:
            case JointType::Prismatic:
              EXPECT_GE(q[k], std::max(-range, m.lowerPositionLimit[k]));
              EXPECT_LE(q[k], std::min(range, m.upperPositionLimit[k]));
              break;
            case JointType::Planar:
              EXPECT_LE(q.segment<3>(k).cwiseAbs().maxCoeff(), range);
              break;
            case JointType::Floating:
              EXPECT_LE(q.segment<3>(k).cwiseAbs().maxCoeff(), range);
              EXPECT_NEAR(q.segment<4>(k + 3).norm(), 1.0, 1e-14);
              EXPECT_GE(q[k + 6], 0.0);
              break;
            case JointType::Spherical:
              EXPECT_NEAR(q.segment<4>(k).norm(), 1.0, 1e-14);
              EXPECT_GE(q[k + 3], 0.0);
              break;
            case JointType::Fixed:
              break;
          }
        }
      }
    }
  }
}

TEST(Configuration, RandomIsReproducibleAndVaries) {
  const Model& m = allModels().back();
  std::mt19937_64 a(42), b(42), c(43);
  const VecX qa = randomConfiguration(m, a), qb = randomConfiguration(m, b),
             qc = randomConfiguration(m, c);
  EXPECT_EQ(relativeError(qa, qb), 0.0);
  EXPECT_GT(relativeError(qa, qc), 1e-3);
  EXPECT_GT(relativeError(qa, randomConfiguration(m, a)), 1e-3);
}

TEST(Configuration, RandomQuaternionsAreUniformOnSO3) {
  // For the uniform (Haar) distribution E[R] = 0 and E[R_ij^2] = 1/3.
  RandomModelOptions o;
  o.nbodies = 1;
  o.floatingBase = true;
  std::mt19937_64 rng(8);
  const Model m = randomTreeModel(rng, o);
  const int n = 4000;
  Mat3 mean = Mat3::Zero(), meanSq = Mat3::Zero();
  double meanPosition = 0.0;
  for (int s = 0; s < n; ++s) {
    const VecX q = randomConfiguration(m, rng);
    const Mat3 R = quatAt(q, 3).toRotationMatrix();
    mean += R / n;
    meanSq += R.cwiseAbs2() / n;
    meanPosition += q[0] / n;
  }
  EXPECT_LT(mean.cwiseAbs().maxCoeff(), 0.06);
  EXPECT_LT((meanSq - Mat3::Constant(1.0 / 3.0)).cwiseAbs().maxCoeff(), 0.03);
  EXPECT_LT(std::abs(meanPosition), 0.05);  // positions uniform in [-1, 1]
}

TEST(Configuration, RandomWithLimitsOutsideRangeStaysWithinLimits) {
  Model m;
  m.parent = {-1, 0};
  m.joints = {Joint::revolute(Vec3::UnitZ()), Joint::prismatic(Vec3::UnitX())};
  m.jointPlacement = {Transform(), Transform()};
  m.inertias = {SpatialInertia::fromMassComInertia(1, Vec3::Zero(), Mat3::Identity()),
                SpatialInertia::fromMassComInertia(1, Vec3::Zero(), Mat3::Identity())};
  m.bodyNames = {"a", "b"};
  m.jointNames = {"ja", "jb"};
  m.lowerPositionLimit = (VecX(2) << 2.0, -0.2).finished();
  m.upperPositionLimit = (VecX(2) << 3.0, -0.1).finished();
  m.finalize();
  std::mt19937_64 rng(4);
  for (int s = 0; s < 50; ++s) {
    const VecX q = randomConfiguration(m, rng, 1.0);
    EXPECT_GE(q[0], 2.0);
    EXPECT_LE(q[0], 3.0);
    EXPECT_GE(q[1], -0.2);
    EXPECT_LE(q[1], -0.1);
  }
}

TEST(Configuration, NormalizeMakesQuaternionsUnitAndKeepsTheRest) {
  std::mt19937_64 rng(2);
  for (const Model& m : allModels()) {
    const VecX q0 = randomConfiguration(m, rng);
    VecX q = q0;
    for (int k : quaternionIndices(m))
      q.segment<4>(k) *= std::uniform_real_distribution<double>(0.2, 5.0)(rng);
    normalizeConfiguration(m, q);
    EXPECT_LE(relativeError(q, q0), 1e-15);
    for (int k : quaternionIndices(m)) EXPECT_NEAR(q.segment<4>(k).norm(), 1.0, 1e-15);
    // Already-normal input is unchanged; a map into a bigger buffer works too.
    VecX buffer = VecX::Constant(m.nq + 2, 7.0);
    buffer.head(m.nq) = q0;
    normalizeConfiguration(m, buffer.head(m.nq));
    EXPECT_LE(relativeError(buffer.head(m.nq), q0), 1e-15);
    EXPECT_EQ(buffer[m.nq], 7.0);
  }
}

TEST(Configuration, IntegrateZeroIsIdentity) {
  std::mt19937_64 rng(3);
  for (const Model& m : allModels()) {
    const RandomState st = randomState(m, rng);
    EXPECT_LE(configurationDistance(m, integrate(m, st.q, st.v, 0.0), st.q), 1e-15);
    EXPECT_LE(configurationDistance(m, integrate(m, st.q, VecX::Zero(m.nv), 1.3), st.q), 1e-15);
  }
}

TEST(Configuration, IntegrateForwardThenBackwardReturns) {
  std::mt19937_64 rng(4);
  for (const Model& m : allModels()) {
    for (double dt : {1e-3, 0.1, 1.0, 4.0}) {
      const RandomState st = randomState(m, rng, 2.0);
      const VecX q1 = integrate(m, st.q, st.v, dt);
      EXPECT_GT(configurationDistance(m, q1, st.q), 0.0);
      EXPECT_LE(configurationDistance(m, integrate(m, q1, st.v, -dt), st.q), 1e-12) << dt;
      for (int k : quaternionIndices(m)) EXPECT_NEAR(q1.segment<4>(k).norm(), 1.0, 1e-14);
    }
  }
}

TEST(Configuration, IntegrateIsAOneParameterSubgroup) {
  // q (+) s v (+) t v = q (+) (s + t) v: integrate follows the constant-velocity motion exactly.
  std::mt19937_64 rng(5);
  for (const Model& m : allModels()) {
    const RandomState st = randomState(m, rng, 1.5);
    for (auto [s, t] : {std::pair{0.3, 0.9}, std::pair{1.7, -0.4}, std::pair{2.5, 2.5}}) {
      const VecX a = integrate(m, integrate(m, st.q, st.v, s), st.v, t);
      const VecX b = integrate(m, st.q, st.v, s + t);
      EXPECT_LE(configurationDistance(m, a, b), 1e-12) << s << " " << t;
    }
    // 1000 small steps = one big step, and quaternions stay unit.
    VecX q = st.q;
    for (int k = 0; k < 1000; ++k) q = integrate(m, q, st.v, 0.002);
    EXPECT_LE(configurationDistance(m, q, integrate(m, st.q, st.v, 2.0)), 1e-10);
    for (int k : quaternionIndices(m)) EXPECT_NEAR(q.segment<4>(k).norm(), 1.0, 1e-14);
  }
}

TEST(Configuration, IntegrateKeepsQuaternionSignContinuous) {
  std::mt19937_64 rng(6);
  for (const Model& m : allModels()) {
    const RandomState st = randomState(m, rng);
    VecX q = st.q;
    for (int k = 0; k < 200; ++k) {
      const VecX q1 = integrate(m, q, st.v, 0.05);
      for (int j : quaternionIndices(m)) EXPECT_GT(q1.segment<4>(j).dot(q.segment<4>(j)), 0.0);
      q = q1;
    }
  }
}

TEST(Configuration, FiniteDifferenceOfIntegrateRecoversBodyVelocities) {
  // For every body: the body twist from placements at q (+) h v and q (+) -h v equals the body
  // velocity forward kinematics computes from (q, v).
  std::mt19937_64 rng(7);
  const double h = 1e-5;
  for (const Model& m : allModels()) {
    Data data(m), dp(m), dm(m);
    for (int s = 0; s < 3; ++s) {
      const RandomState st = randomState(m, rng);
      ASSERT_EQ(forwardKinematics(m, data, st.q, st.v), Status::Ok);
      ASSERT_EQ(forwardKinematics(m, dp, integrate(m, st.q, st.v, h)), Status::Ok);
      ASSERT_EQ(forwardKinematics(m, dm, integrate(m, st.q, st.v, -h)), Status::Ok);
      for (int i = 0; i < m.nbodies; ++i) {
        const Transform& X0 = data.oMi[i];
        Motion fd;
        fd.head<3>() = (rotationLog(X0.R.transpose() * dp.oMi[i].R) -
                        rotationLog(X0.R.transpose() * dm.oMi[i].R)) /
                       (2 * h);
        fd.tail<3>() = X0.R.transpose() * (dp.oMi[i].p - dm.oMi[i].p) / (2 * h);
        EXPECT_TRUE(isClose(fd, data.v[i], 1e-8)) << "body " << m.bodyNames[i];
      }
    }
  }
}

TEST(Configuration, FloatingJointFiniteDifferenceDefinition) {
  // Directly from the documented layout q = (p world, quat x y z w), v = (w body, v body):
  // R^T dp/dt = v and R^T dR/dt = [w].
  std::mt19937_64 rng(8);
  RandomModelOptions o;
  o.nbodies = 1;
  o.floatingBase = true;
  const Model m = randomTreeModel(rng, o);
  const double h = 1e-6;
  for (int s = 0; s < 20; ++s) {
    const RandomState st = randomState(m, rng, 2.0);
    const VecX qp = integrate(m, st.q, st.v, h), qm = integrate(m, st.q, st.v, -h);
    const Mat3 R = quatAt(st.q, 3).toRotationMatrix();
    const Mat3 Rdot =
        (quatAt(qp, 3).toRotationMatrix() - quatAt(qm, 3).toRotationMatrix()) / (2 * h);
    const Mat3 W = R.transpose() * Rdot;
    EXPECT_TRUE(isClose(Vec3(W(2, 1), W(0, 2), W(1, 0)), Vec3(st.v.head<3>()), 1e-8));
    EXPECT_TRUE(isClose(W + W.transpose(), Mat3::Zero(), 1e-8));
    const Vec3 pdot = (qp.head<3>() - qm.head<3>()) / (2 * h);
    EXPECT_TRUE(isClose(Vec3(R.transpose() * pdot), Vec3(st.v.segment<3>(3)), 1e-8));
  }
  // Exact cases: pure body-frame translation and pure rotation.
  VecX q = randomConfiguration(m, rng);
  const Mat3 R = quatAt(q, 3).toRotationMatrix();
  VecX v = VecX::Zero(6);
  v[3] = 0.5;
  const VecX q1 = integrate(m, q, v, 2.0);
  EXPECT_TRUE(isClose(q1.head<3>(), Vec3(q.head<3>() + R.col(0) * 1.0), 1e-14));
  EXPECT_LE(std::min((q1.tail<4>() - q.tail<4>()).cwiseAbs().maxCoeff(),
                     (q1.tail<4>() + q.tail<4>()).cwiseAbs().maxCoeff()),
            1e-15);
  v.setZero();
  v[2] = 0.8;  // about the body z axis
  const VecX q2 = integrate(m, q, v, 1.5);
  EXPECT_TRUE(isClose(q2.head<3>(), q.head<3>(), 1e-15));
  EXPECT_TRUE(isClose(quatAt(q2, 3).toRotationMatrix(),
                      Mat3(R * Eigen::AngleAxisd(1.2, Vec3::UnitZ()).toRotationMatrix()), 1e-14));
  // Screw motion: rotation about body z with body velocity along body x moves on a circle of
  // radius |v| / |w| (closed form of the SE(3) exponential).
  v.setZero();
  v[2] = 2.0;
  v[3] = 1.0;
  const double t = 0.7;
  const VecX q3 = integrate(m, q, v, t);
  const Vec3 local(std::sin(2.0 * t) / 2.0, (1.0 - std::cos(2.0 * t)) / 2.0, 0.0);
  EXPECT_TRUE(isClose(q3.head<3>(), Vec3(q.head<3>() + R * local), 1e-14));
}

TEST(Configuration, SphericalAndPlanarFollowTheirDefinitions) {
  Model m;
  m.parent = {-1, -1};
  m.joints = {Joint::spherical(), Joint::planar(Vec3(0.0, -1.0, 1.0))};
  m.jointPlacement = {Transform(), Transform()};
  const SpatialInertia I = SpatialInertia::fromMassComInertia(1, Vec3::Zero(), Mat3::Identity());
  m.inertias = {I, I};
  m.bodyNames = {"ball", "slider"};
  m.jointNames = {"sph", "pla"};
  m.finalize();
  ASSERT_EQ(m.nq, 7);
  ASSERT_EQ(m.nv, 6);
  std::mt19937_64 rng(9);
  const VecX q = randomConfiguration(m, rng);
  const Joint& pj = m.joints[1];
  // Spherical: body-frame angular velocity w for dt rotates by exp(w dt) on the right.
  VecX v = VecX::Zero(6);
  v.head<3>() = Vec3(0.3, -0.2, 0.9);
  const VecX q1 = integrate(m, q, v, 1.1);
  const Mat3 expected =
      quatAt(q, 0).toRotationMatrix() *
      Eigen::AngleAxisd(1.1 * v.head<3>().norm(), v.head<3>().normalized()).toRotationMatrix();
  EXPECT_TRUE(isClose(quatAt(q1, 0).toRotationMatrix(), expected, 1e-14));
  EXPECT_EQ(relativeError(q1.tail<3>(), q.tail<3>()), 0.0);
  // Planar, pure translation (vx, vy) in child axes: the origin moves along
  // R(theta) (vx t1 + vy t2) with R(theta) the rotation about the normal.
  v.setZero();
  v[3] = 0.4;
  v[4] = -0.7;
  const double th = q[6];
  const VecX q2 = integrate(m, q, v, 0.5);
  EXPECT_NEAR(q2[4] - q[4], 0.5 * (std::cos(th) * 0.4 - std::sin(th) * -0.7), 1e-15);
  EXPECT_NEAR(q2[5] - q[5], 0.5 * (std::sin(th) * 0.4 + std::cos(th) * -0.7), 1e-15);
  EXPECT_EQ(q2[6], th);
  // The same displacement seen through the joint transform.
  const Transform X0 = pj.transform(q.data() + 4), X2 = pj.transform(q2.data() + 4);
  EXPECT_TRUE(isClose(Vec3(X2.p - X0.p), Vec3(X0.R * (0.5 * (0.4 * pj.t1 - 0.7 * pj.t2))), 1e-14));
  // Planar, pure rotation: position fixed, theta advances.
  v.setZero();
  v[5] = 1.3;
  const VecX q3 = integrate(m, q, v, 0.5);
  EXPECT_EQ(q3[4], q[4]);
  EXPECT_EQ(q3[5], q[5]);
  EXPECT_NEAR(q3[6], th + 0.65, 1e-15);
  // Planar, combined constant twist: the child origin follows the circular arc.
  v.setZero();
  v[3] = 1.0;
  v[5] = 2.0;
  const VecX q4 = integrate(m, q, v, 0.6);
  const Transform X4 = pj.transform(q4.data() + 4);
  const Vec3 arc = (std::sin(1.2) / 2.0) * pj.t1 + ((1.0 - std::cos(1.2)) / 2.0) * pj.t2;
  EXPECT_TRUE(isClose(Vec3(X4.p - X0.p), Vec3(X0.R * arc), 1e-14));
}

TEST(Configuration, RevoluteAndPrismaticIntegrateLinearly) {
  for (const Model& m : allModels()) {
    std::mt19937_64 rng(10);
    const RandomState st = randomState(m, rng);
    const VecX q1 = integrate(m, st.q, st.v, 0.37);
    for (int i = 0; i < m.nbodies; ++i)
      if (m.joints[i].nq == 1) {
        EXPECT_DOUBLE_EQ(q1[m.idx_q[i]], st.q[m.idx_q[i]] + 0.37 * st.v[m.idx_v[i]]);
      }
  }
}

// Joint types are named once (model/joint_types.hpp): the names round-trip, every type builds
// through Joint::ofType with the sizes of its layout, and an unknown name leaves the type alone.
TEST(Configuration, JointTypeNamesAndFactories) {
  const int nq[6] = {1, 1, 4, 3, 7, 0}, nv[6] = {1, 1, 3, 3, 6, 0};
  for (int k = 0; k < 6; ++k) {
    const JointType t = static_cast<JointType>(k);
    JointType parsed = k == 0 ? JointType::Fixed : JointType::Revolute;
    EXPECT_TRUE(jointTypeFromName(jointTypeName(t), parsed)) << jointTypeName(t);
    EXPECT_EQ(parsed, t);
    const Joint j = Joint::ofType(t, Vec3(0.0, 0.0, 2.0));
    EXPECT_EQ(j.type, t);
    EXPECT_EQ(j.nq, nq[k]) << jointTypeName(t);
    EXPECT_EQ(j.nv, nv[k]) << jointTypeName(t);
    EXPECT_EQ(j.S.cols(), nv[k]);
  }
  JointType t = JointType::Planar;
  EXPECT_FALSE(jointTypeFromName("continuous", t));  // a URDF spelling, not a type
  EXPECT_FALSE(jointTypeFromName("Revolute", t));
  EXPECT_EQ(t, JointType::Planar);
  EXPECT_EQ(Joint::ofType(JointType::Revolute, Vec3(0.0, 0.0, 2.0)).S,
            Joint::revolute(Vec3::UnitZ()).S);
  EXPECT_EQ(Joint::ofType(JointType::Revolute, Vec3(0.0, 0.0, -2.0)).alignedSign, -1.0);
  EXPECT_EQ(Joint::ofType(JointType::Planar, Vec3::UnitX()).S, Joint::planar(Vec3::UnitX()).S);
}

}  // namespace
}  // namespace clusterdyn::test
