// Delassus matrix and proximal constrained dynamics on cluster trees, against the dense KKT
// oracle (support/dense_oracles.hpp), the spanning-tree frame kinematics, and each other.
#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <sstream>

#include "closed_states.hpp"
#include "dense_oracles.hpp"
#include "loop_model_generator.hpp"
#include "test_util.hpp"

using namespace clusterdyn;
using test::isClose;

namespace {

// Random closed state (independent coordinates, loop closure): support::randomClosedState.
bool closedState(const ClusterModel& cm, ClusterData& data, std::mt19937_64& rng, VecX& q,
                 VecX& v) {
  support::ClosedState s;
  if (!support::randomClosedState(cm, data, rng, s)) return false;
  q = s.q, v = s.v;
  return true;
}

Transform randomPose(std::mt19937_64& rng, double s = 0.2) {
  std::uniform_real_distribution<double> u(-s, s);
  return Transform(test::randomRotation(rng), Vec3(u(rng), u(rng), u(rng)));
}

/// Random constraints: contacts on random bodies and, with twoBody, loops between bodies.
void addRandomConstraints(ConstraintSet& set, const ClusterModel& cm, std::mt19937_64& rng,
                          int count, bool twoBody, int maxRows) {
  std::uniform_int_distribution<int> body(0, cm.treeModel.nbodies - 1), type(0, 4), coin(0, 1);
  int rows = 0;
  for (int i = 0; i < 40 && set.size() < count; ++i) {
    RigidConstraint c;
    c.name = "c" + std::to_string(set.size());
    c.type = static_cast<ConstraintType>(type(rng));
    c.body1 = body(rng);
    c.body2 = twoBody && coin(rng) ? body(rng) : -1;
    if (c.body2 == c.body1) c.body2 = -1;
    c.placement1 = randomPose(rng);
    c.placement2 = randomPose(rng, 1.0);
    const bool axesOnly = c.type == ConstraintType::Revolute || c.type == ConstraintType::Planar ||
                          c.type == ConstraintType::Prismatic;
    c.frame = !axesOnly && coin(rng) ? ReferenceFrame::LocalWorldAligned : ReferenceFrame::Local;
    if (rows + c.rows() > maxRows) continue;
    rows += c.rows();
    set.add(c);
  }
}

struct Case {
  std::string name;
  ClusterModel cm;
};

std::vector<Case> randomLoopModels(int count, bool floating, unsigned seed) {
  std::vector<Case> out;
  std::mt19937_64 rng(seed);
  for (int i = 0; i < count; ++i) {
    testgen::GeneratorOptions o;
    o.floatingBase = floating;
    o.treeLinks = 4;
    o.mechanisms = 3;
    o.robotName = "gen" + std::to_string(i);
    const auto r = testgen::generateLoopModel(rng, o);
    out.push_back({o.robotName, buildClusterModel(parseUrdfString(r.urdf, o.robotName + ".urdf"))});
  }
  return out;
}

}  // namespace

TEST(Constraints, SetRejectsBadConstraintsByName) {
  const ClusterModel cm = loadModel(test::modelsPath("cd_quadruped.urdf"));
  ConstraintSet set(cm);
  RigidConstraint c;
  c.name = "bad";
  c.body1 = cm.treeModel.nbodies;
  EXPECT_THROW(set.add(c), ModelError);
  c.body1 = 0;
  c.body2 = 0;
  EXPECT_THROW(set.add(c), ModelError);
  c.body2 = -1;
  c.type = ConstraintType::Revolute;
  c.frame = ReferenceFrame::LocalWorldAligned;
  try {
    set.add(c);
    FAIL() << "LocalWorldAligned revolute accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("'bad'"), std::string::npos) << e.what();
  }
  c.frame = ReferenceFrame::Local;
  c.kp = -1.0;
  EXPECT_THROW(set.add(c), ModelError);
  c.kp = 0.0;
  EXPECT_EQ(set.add(c), 0);
  EXPECT_THROW(set.add(c), ModelError);  // duplicate name
  EXPECT_THROW(set.addContact("no_such_link", ConstraintType::Point), ModelError);
  EXPECT_EQ(set.rows(), 5);
  EXPECT_EQ(set.rowNames()[0], "bad:ang_x");
}

// J y_dot equals the rows of the relative frame velocity computed on the spanning tree, and at
// the accelerations of a solve the rows' accelerations from the spanning-tree frame kinematics
// equal J y_ddot + gamma (world contacts: classical / spatial frame accelerations).
TEST(Constraints, JacobianAndBiasMatchSpanningFrameKinematics) {
  std::mt19937_64 rng(7);
  for (auto& mc : randomLoopModels(6, true, 11)) {
    const ClusterModel& cm = mc.cm;
    ClusterData data(cm);
    VecX q, v;
    ASSERT_TRUE(closedState(cm, data, rng, q, v)) << mc.name;
    ConstraintSet set(cm);
    for (int b = 0; b < cm.treeModel.nbodies && set.size() < 4; b += 2) {
      RigidConstraint c;
      c.name = "k" + std::to_string(b);
      c.type = set.size() % 2 ? ConstraintType::Point : ConstraintType::Weld;
      c.frame = set.size() % 3 ? ReferenceFrame::Local : ReferenceFrame::LocalWorldAligned;
      c.body1 = b;
      c.placement1 = randomPose(rng);
      set.add(c);
    }
    ConstraintData cd(cm, set);
    ASSERT_EQ(constraintJacobian(cm, data, set, cd, q, v), Status::Ok) << data.errorMessage();
    // Spanning accelerations from a random y_ddot.
    const VecX ydd = test::randomVector(cm.ny, rng);
    ASSERT_EQ(ceRnea(cm, data, q, v, ydd), Status::Ok);
    const VecX qdd = data.qdd;
    Data td(cm.treeModel);
    ASSERT_EQ(forwardKinematics(cm.treeModel, td, q, v, qdd), Status::Ok);
    const VecX rows = cd.jacobian * ydd + cd.gamma;
    VecX ydot(cm.ny);
    VecX y(cm.nyq);
    ASSERT_EQ(spanningToIndependent(cm, data, q, v, y, ydot), Status::Ok);
    const VecX rowVel = cd.jacobian * ydot;
    for (int j = 0; j < set.size(); ++j) {
      const RigidConstraint& c = set.constraints()[j];
      const Transform oMA = td.oMi[c.body1] * c.placement1;
      const Motion vA = c.placement1.actInvMotion(td.v[c.body1]);
      const Motion aA = c.placement1.actInvMotion(td.a[c.body1]);
      Vec6 vel, acc;
      if (c.frame == ReferenceFrame::Local) {
        vel = vA;
        acc = aA;
        if (c.type == ConstraintType::Point) acc.tail<3>() += vA.head<3>().cross(vA.tail<3>());
      } else {
        vel << oMA.R * vA.head<3>(), oMA.R * vA.tail<3>();
        acc << oMA.R * aA.head<3>(), oMA.R * (aA.tail<3>() + vA.head<3>().cross(vA.tail<3>()));
      }
      const int r0 = set.rowOffset(j);
      const VecX expectVel = c.type == ConstraintType::Point ? VecX(vel.tail<3>()) : VecX(vel);
      const VecX expectAcc = c.type == ConstraintType::Point ? VecX(acc.tail<3>()) : VecX(acc);
      EXPECT_TRUE(isClose(rowVel.segment(r0, c.rows()), expectVel, 1e-10))
          << mc.name << " " << c.name;
      EXPECT_TRUE(isClose(rows.segment(r0, c.rows()), expectAcc, 1e-9)) << mc.name << " " << c.name;
    }
  }
}

// Delassus matrix: propagation == dense J H^-1 J^T == L^T D L baseline, on random loop models
// with random contacts and two-body constraints.
TEST(Constraints, DelassusMatchesDenseAndLtl) {
  std::mt19937_64 rng(3);
  for (bool floating : {true, false})
    for (auto& mc : randomLoopModels(8, floating, floating ? 21 : 22)) {
      const ClusterModel& cm = mc.cm;
      ClusterData data(cm);
      VecX q, v;
      ASSERT_TRUE(closedState(cm, data, rng, q, v)) << mc.name;
      ConstraintSet set(cm);
      addRandomConstraints(set, cm, rng, 4, true, cm.ny + 6);
      ConstraintData cd(cm, set);
      const auto kkt = oracle::denseClusterKkt(cm, data, set, cd, q, v, VecX::Zero(cm.ny));
      ASSERT_TRUE(kkt.ok) << data.errorMessage();
      ASSERT_EQ(delassusMatrix(cm, data, set, cd, q), Status::Ok) << data.errorMessage();
      EXPECT_TRUE(isClose(cd.delassus, kkt.delassus, 1e-9)) << mc.name;
      ASSERT_EQ(delassusMatrixLtl(cm, data, set, cd, q), Status::Ok) << data.errorMessage();
      EXPECT_TRUE(isClose(cd.delassus, kkt.delassus, 1e-9)) << mc.name;
      // Damped inverse.
      const double rho = 1e-3;
      ASSERT_EQ(dampedDelassusInverse(cm, data, set, cd, q, rho), Status::Ok);
      const MatX expect = oracle::dampedInverse(kkt.delassus, rho);
      EXPECT_TRUE(isClose(cd.dampedInverse, expect, 1e-8, 1e3)) << mc.name;
    }
}

// The dense KKT oracle on an empty constraint set is the unconstrained dynamics (it crashed in
// the complete orthogonal decomposition of a 0 x 0 Delassus matrix).
TEST(Constraints, DenseKktOfAnEmptySetIsCeAba) {
  std::mt19937_64 rng(11);
  for (auto& mc : randomLoopModels(3, true, 41)) {
    const ClusterModel& cm = mc.cm;
    ClusterData data(cm);
    VecX q, v;
    ASSERT_TRUE(closedState(cm, data, rng, q, v)) << mc.name;
    const ConstraintSet set(cm);
    ConstraintData cd(cm, set);
    const VecX tau = VecX::Random(cm.ny);
    const auto kkt = oracle::denseClusterKkt(cm, data, set, cd, q, v, tau);
    ASSERT_TRUE(kkt.ok) << mc.name;
    EXPECT_EQ(kkt.lambda.size(), 0);
    EXPECT_EQ(kkt.delassus.rows(), 0);
    ASSERT_EQ(ceAba(cm, data, q, v, tau), Status::Ok) << data.errorMessage();
    EXPECT_TRUE(isClose(kkt.ydd, data.ydd, 1e-9)) << mc.name;
  }
}

// Contacts: up to 32 rows the damped inverse is factorized first (cABA-OSIM when rho is large
// against the Delassus matrix); above, cABA-OSIM's augmented inertias first (here with redundant
// rows: the Delassus matrix is singular, so its result is kept).
TEST(Constraints, DampedInverseOfContactsUsesTheAugmentedInertias) {
  std::mt19937_64 rng(5);
  for (auto& mc : randomLoopModels(6, true, 31))
    for (const bool many : {false, true}) {
      const ClusterModel& cm = mc.cm;
      ClusterData data(cm);
      VecX q, v;
      ASSERT_TRUE(closedState(cm, data, rng, q, v));
      ConstraintSet set(cm);
      addRandomConstraints(set, cm, rng, many ? 12 : 3, false, many ? 60 : cm.ny);
      ASSERT_TRUE(set.allWorldAttached());
      if (many) ASSERT_GT(set.rows(), 32) << mc.name;
      ConstraintData cd(cm, set);
      const auto kkt = oracle::denseClusterKkt(cm, data, set, cd, q, v, VecX::Zero(cm.ny));
      for (double rho : {1.0, 1e-2, 1e-4}) {
        ASSERT_EQ(dampedDelassusInverse(cm, data, set, cd, q, rho), Status::Ok);
        const MatX expect = oracle::dampedInverse(kkt.delassus, rho);
        EXPECT_TRUE(isClose(cd.dampedInverse, expect, 1e-7, 1.0 / rho)) << mc.name << " " << rho;
      }
    }
}

// Forward dynamics: constrainedAba (contacts), proxPv (any set) and the dense baseline agree
// with the KKT oracle on y_ddot and lambda and satisfy the rows.
// Smallest over largest singular value of a Delassus matrix (0 for an empty set).
double relativeSmallestSingularValue(const MatX& delassus) {
  if (delassus.size() == 0) return 1.0;
  const VecX sv = Eigen::JacobiSVD<MatX>(delassus).singularValues();
  return sv[sv.size() - 1] / sv[0];
}

TEST(Constraints, ForwardDynamicsMatchesKkt) {
  std::mt19937_64 rng(9);
  int singularSets = 0;
  for (bool twoBody : {false, true})
    for (auto& mc : randomLoopModels(8, true, twoBody ? 41 : 42)) {
      const ClusterModel& cm = mc.cm;
      ClusterData data(cm);
      VecX q, v;
      ASSERT_TRUE(closedState(cm, data, rng, q, v)) << mc.name;
      const VecX tau = test::randomVector(cm.ny, rng, -5, 5);
      // Random constraints are often dependent (two on the same body, a weld above a point):
      // the oracle's y_ddot is then a least-squares compromise the iterations approach only
      // slowly. Draw sets until one is well conditioned (sigma_min / sigma_max >= 1e-4, so that
      // 1e-8 agreement is meaningful); the singular ones drawn on the way must still give Ok or
      // NotConverged with finite outputs, never NaN.
      std::unique_ptr<ConstraintSet> set;
      std::unique_ptr<ConstraintData> cd;
      oracle::ClusterKkt kkt;
      double sigma = 0.0;
      for (int attempt = 0; attempt < 40 && sigma < 1e-4; ++attempt) {
        set = std::make_unique<ConstraintSet>(cm);
        addRandomConstraints(*set, cm, rng, 3 - attempt / 20, twoBody, cm.ny - 3);
        cd = std::make_unique<ConstraintData>(cm, *set);
        kkt = oracle::denseClusterKkt(cm, data, *set, *cd, q, v, tau);
        ASSERT_TRUE(kkt.ok);
        sigma = relativeSmallestSingularValue(kkt.delassus);
        if (sigma < 1e-8) {
          ++singularSets;
          const Status st = proxPv(cm, data, *set, *cd, q, v, tau, ProximalSettings{});
          EXPECT_TRUE(st == Status::Ok || st == Status::NotConverged) << data.errorMessage();
          EXPECT_TRUE(data.ydd.allFinite() && cd->lambda.allFinite()) << mc.name;
        }
      }
      ASSERT_GE(sigma, 1e-4) << mc.name << ": no well-conditioned random set";
      ProximalSettings s;
      s.tolerance = 1e-10;
      // The proximal iteration contracts the multiplier error by about mu / (mu + sigma_min) per
      // step (Sathya & Carpentier 2024): keep that ratio at most about 0.1 so the sets with a
      // small sigma_min converge within a few iterations.
      const Eigen::JacobiSVD<MatX> svd(kkt.delassus);
      const double sigmaMin = svd.singularValues().minCoeff();
      s.mu = std::min(1e-4, 0.1 * sigmaMin);
      if (set->allWorldAttached()) {
        // constrainedAba's rounding in the directions the rows leave free grows like eps / mu
        // (the 1/mu-augmented inertias): use the largest mu that still converges quickly.
        ProximalSettings sAba = s;
        sAba.mu = std::min(1e-3, 0.1 * sigmaMin);
        ASSERT_EQ(constrainedAba(cm, data, *set, *cd, q, v, tau, sAba), Status::Ok)
            << mc.name << ": " << data.errorMessage();
        EXPECT_TRUE(isClose(data.ydd, kkt.ydd, 1e-8)) << mc.name;
        EXPECT_TRUE(isClose(cd->lambda, kkt.lambda, 1e-6)) << mc.name;
        EXPECT_LE(cd->result.iterations, 15);
      }
      ASSERT_EQ(proxPv(cm, data, *set, *cd, q, v, tau, s), Status::Ok)
          << mc.name << ": " << data.errorMessage();
      EXPECT_TRUE(isClose(data.ydd, kkt.ydd, 1e-8)) << mc.name;
      EXPECT_TRUE(isClose(cd->lambda, kkt.lambda, 1e-6)) << mc.name;
      EXPECT_TRUE(isClose(cd->delassus, kkt.delassus, 1e-9)) << mc.name;
      const VecX yddPv = data.ydd, qddPv = data.qdd;
      ASSERT_EQ(constrainedDynamicsDense(cm, data, *set, *cd, q, v, tau, s), Status::Ok);
      EXPECT_TRUE(isClose(data.ydd, kkt.ydd, 1e-8)) << mc.name;
      EXPECT_TRUE(isClose(data.qdd, qddPv, 1e-8)) << mc.name;
      // Spanning accelerations are G y_ddot + g: CE-RNEA at y_ddot gives the same q_ddot.
      ASSERT_EQ(ceRnea(cm, data, q, v, yddPv), Status::Ok);
      EXPECT_TRUE(isClose(data.qdd, qddPv, 1e-10)) << mc.name;
    }
  EXPECT_GT(singularSets, 0);  // the singular branch above was exercised
}

// A weld plus four points on the same foot (redundant, consistent): finite lambda, the rows hold,
// and y_ddot equals the oracle's unique solution. A singular (rank-deficient) set at the same
// state gives the same.
TEST(Constraints, RedundantSetsConvergeWithFiniteMultipliers) {
  const ClusterModel cm = loadModel(test::modelsPath("cd_quadruped.urdf"));
  ClusterData data(cm);
  std::mt19937_64 rng(1);
  VecX q, v;
  ASSERT_TRUE(closedState(cm, data, rng, q, v));
  v.setZero();  // the foot at rest: the weld's and the points' acceleration rows are consistent
  const int foot = cm.treeModel.nbodies - 1;
  ConstraintSet set(cm);
  RigidConstraint w;
  w.name = "weld";
  w.type = ConstraintType::Weld;
  w.body1 = foot;
  set.add(w);
  for (int i = 0; i < 4; ++i) {
    RigidConstraint p;
    p.name = "p" + std::to_string(i);
    p.type = ConstraintType::Point;
    p.body1 = foot;
    p.placement1.p = Vec3(0.05 * (i % 2 ? 1 : -1), 0.03 * (i / 2 ? 1 : -1), -0.02);
    p.frame = i % 2 ? ReferenceFrame::Local : ReferenceFrame::LocalWorldAligned;
    set.add(p);
  }
  ConstraintData cd(cm, set);
  const VecX tau = test::randomVector(cm.ny, rng, -5, 5);
  const auto kkt = oracle::denseClusterKkt(cm, data, set, cd, q, v, tau);
  ProximalSettings s;
  s.tolerance = 1e-9;
  s.maxIterations = 200;
  for (int algo = 0; algo < 3; ++algo) {
    const Status st = algo == 0   ? constrainedAba(cm, data, set, cd, q, v, tau, s)
                      : algo == 1 ? proxPv(cm, data, set, cd, q, v, tau, s)
                                  : constrainedDynamicsDense(cm, data, set, cd, q, v, tau, s);
    ASSERT_EQ(st, Status::Ok) << algo << ": " << data.errorMessage();
    EXPECT_TRUE(cd.lambda.allFinite());
    EXPECT_TRUE(data.ydd.allFinite());
    EXPECT_TRUE(isClose(data.ydd, kkt.ydd, 1e-6)) << algo;
    EXPECT_LE(cd.result.residual, 1e-9) << algo;
    // The net wrench the multipliers apply equals the oracle's (lambda itself is not unique).
    EXPECT_TRUE(isClose(cd.jacobian.transpose() * cd.lambda, cd.jacobian.transpose() * kkt.lambda,
                        1e-6, 10.0))
        << algo;
  }
}

TEST(Constraints, ArgumentErrorsLeaveTheWorkspaceUsable) {
  const ClusterModel cm = loadModel(test::modelsPath("cd_quadruped.urdf"));
  const ClusterModel other = loadModel(test::modelsPath("cd_four_bar.urdf"));
  ClusterData data(cm);
  std::mt19937_64 rng(2);
  VecX q, v;
  ASSERT_TRUE(closedState(cm, data, rng, q, v));
  ConstraintSet set(cm);
  set.addContact(cm.treeModel.bodyNames.back(), ConstraintType::Point);
  ConstraintData cd(cm, set);
  ConstraintSet otherSet(other);
  EXPECT_THROW(ConstraintData(cm, otherSet), ModelError);
  const VecX tau = VecX::Zero(cm.ny);
  ProximalSettings bad;
  bad.mu = 0.0;
  EXPECT_EQ(proxPv(cm, data, set, cd, q, v, tau, bad), Status::InvalidArgument);
  EXPECT_NE(std::string(data.errorMessage()).find("mu"), std::string::npos);
  VecX qn = q;
  qn[0] = std::nan("");
  EXPECT_EQ(constrainedAba(cm, data, set, cd, qn, v, tau), Status::NonFinite);
  EXPECT_EQ(delassusMatrix(cm, data, set, cd, VecX::Zero(3)), Status::InvalidSize);
  EXPECT_EQ(dampedDelassusInverse(cm, data, set, cd, q, -1.0), Status::InvalidArgument);
  ConstraintSet loops(cm);
  RigidConstraint l;
  l.name = "loop";
  l.body1 = 1;
  l.body2 = 2;
  loops.add(l);
  ConstraintData cdl(cm, loops);
  EXPECT_EQ(constrainedAba(cm, data, loops, cdl, q, v, tau), Status::InvalidArgument);
  EXPECT_EQ(constrainedAba(cm, data, loops, cd, q, v, tau), Status::WorkspaceMismatch);
  // Still usable.
  EXPECT_EQ(constrainedAba(cm, data, set, cd, q, v, tau), Status::Ok) << data.errorMessage();
  EXPECT_EQ(std::string(data.errorMessage()), "");
  // Too few iterations: a status, outputs finite.
  ProximalSettings one;
  one.maxIterations = 1;
  one.tolerance = 1e-300;
  EXPECT_EQ(proxPv(cm, data, set, cd, q, v, tau, one), Status::NotConverged);
  EXPECT_TRUE(data.ydd.allFinite());
  EXPECT_EQ(cd.result.iterations, 1);
}

// PV-OSIMr reduction: a stem whose tip carries three welded branches; the 18 rows leave the
// branching link as 6 virtual rows. The result equals the dense Delassus matrix.
TEST(Constraints, CompressedRowsAboveABranchingLinkMatchDense) {
  std::ostringstream links, joints;
  auto link = [&](const std::string& n) {
    links << "<link name=\"" << n
          << "\"><inertial><mass value=\"1.3\"/><origin xyz=\"0.02 0 0.1\"/>"
          << "<inertia ixx=\"0.01\" iyy=\"0.012\" izz=\"0.008\" ixy=\"0.001\" ixz=\"0\" iyz=\"0\"/>"
          << "</inertial></link>\n";
  };
  int count = 0;
  auto joint = [&](const std::string& p, const std::string& c, const char* axis) {
    joints << "<joint name=\"j" << count++ << "\" type=\"continuous\"><parent link=\"" << p
           << "\"/><child link=\"" << c << "\"/><origin xyz=\"0.05 0 0.2\" rpy=\"0.3 0 0.1\"/>"
           << "<axis xyz=\"" << axis << "\"/></joint>\n";
  };
  const char* axes[3] = {"1 0 0", "0 1 0", "0 0 1"};
  std::string prev = "world";
  for (int i = 0; i < 5; ++i) {
    const std::string n = "s" + std::to_string(i);
    link(n);
    joint(prev, n, axes[i % 3]);
    prev = n;
  }
  std::vector<std::string> tips;
  for (int b = 0; b < 3; ++b) {
    std::string p = prev;
    for (int i = 0; i < 7; ++i) {
      const std::string n = "b" + std::to_string(b) + "_" + std::to_string(i);
      link(n);
      joint(p, n, axes[(i + b) % 3]);
      p = n;
    }
    tips.push_back(p);
  }
  const std::string urdf =
      "<robot name=\"stem\"><link name=\"world\"/>" + links.str() + joints.str() + "</robot>";
  const ClusterModel cm = buildClusterModel(parseUrdfString(urdf, "stem.urdf"));
  ConstraintSet set(cm);
  for (const std::string& t : tips) set.addContact(t, ConstraintType::Weld);
  ConstraintData cd(cm, set);
  EXPECT_GE(cd.compressions.size(), 1u);
  ClusterData data(cm);
  std::mt19937_64 rng(8);
  VecX q, v;
  ASSERT_TRUE(closedState(cm, data, rng, q, v));
  const auto kkt = oracle::denseClusterKkt(cm, data, set, cd, q, v, VecX::Zero(cm.ny));
  ASSERT_EQ(delassusMatrix(cm, data, set, cd, q), Status::Ok);
  EXPECT_TRUE(isClose(cd.delassus, kkt.delassus, 1e-9));
  ASSERT_EQ(dampedDelassusInverse(cm, data, set, cd, q, 1e-2), Status::Ok);
  const MatX expect = oracle::dampedInverse(kkt.delassus, 1e-2);
  EXPECT_TRUE(isClose(cd.dampedInverse, expect, 1e-8, 100.0));
}

// The wrenches of the constraints are the multipliers placed in their components, and a point
// contact's wrench applied as an external force at the contact point reproduces the constrained
// motion in an unconstrained CE-ABA.
TEST(Constraints, WrenchesReproduceTheMotionAsExternalForces) {
  const ClusterModel cm = loadModel(test::modelsPath("cd_quadruped.urdf"));
  ClusterData data(cm);
  std::mt19937_64 rng(12);
  VecX q, v;
  ASSERT_TRUE(closedState(cm, data, rng, q, v));
  ConstraintSet set(cm);
  std::vector<int> feet;
  for (const char* foot : {"lf_foot", "rf_foot", "lh_foot"})
    feet.push_back(
        cm.treeModel.frames[cm.treeModel.frameId(foot)].body);  // the foot is fused: its shank
  for (int b : feet) {
    RigidConstraint c;
    c.name = "foot" + std::to_string(b);
    c.type = ConstraintType::Point;
    c.body1 = b;
    c.placement1 = randomPose(rng, 0.05);
    c.frame = b % 2 ? ReferenceFrame::Local : ReferenceFrame::LocalWorldAligned;
    set.add(c);
  }
  ConstraintData cd(cm, set);
  const VecX tau = test::randomVector(cm.ny, rng, -3, 3);
  ASSERT_EQ(proxPv(cm, data, set, cd, q, v, tau), Status::Ok) << data.errorMessage();
  const VecX ydd = data.ydd;
  std::vector<Force> fext(cm.treeModel.nbodies, Force::Zero());
  for (int j = 0; j < set.size(); ++j) {
    const RigidConstraint& c = set.constraints()[j];
    Force w = constraintWrench(set, cd, j);
    EXPECT_EQ(w.isZero(), cd.lambda.segment(set.rowOffset(j), c.rows()).isZero());
    if (c.frame == ReferenceFrame::LocalWorldAligned) {  // world axes -> frame A axes
      const Mat3 R = (data.treeData.oMi[c.body1] * c.placement1).R;
      w << R.transpose() * w.head<3>(), R.transpose() * w.tail<3>();
    }
    fext[c.body1] += c.placement1.actForce(w);  // frame A -> body coordinates
  }
  ASSERT_EQ(ceAba(cm, data, q, v, tau, fext.data()), Status::Ok);
  EXPECT_TRUE(isClose(data.ydd, ydd, 1e-8));
}
