// The loop closure keeps the assembly branch of its warm start (issue 22): a parallelogram
// linkage closed at y = +0.01 and then at y = -0.01 used to come back on the crossed branch
// (status Ok, kinetic energy for the same y_dot 12 times larger), and RK4 jumped branch
// mid-simulation. The closure now continues the branch by predictor-corrector steps
// (loop_closure.cpp, ClosureSettings::branchCorrection).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "clusterdyn/clusterdyn.hpp"
#include "test_util.hpp"

namespace clusterdyn {
namespace {

using test::sharedPath;

/// A parallelogram leg in the plane x-z (axes +y, gravity -z), folded at q = 0: the hip pivot
/// and the foot-link pivot 0.31 m below it on the body; the driver (thigh, 0.10 m, independent),
/// the coupler (shank, 0.31 m, from the driver's end) and the foot link (0.10 m) all hang along
/// -z. Branches through q = 0 (theta = driver angle): the parallelogram (coupler -theta, foot
/// link theta) and the crossed one (foot link ~ -(0.31 + 0.1) / (0.31 - 0.1) theta).
constexpr const char* kParallelogramLegUrdf = R"(<robot name="parallelogram_leg">
  <link name="body"/>
  <link name="driver"><inertial><origin xyz="0 0 -0.05"/><mass value="0.4"/>
    <inertia ixx="4e-4" ixy="0" ixz="0" iyy="4e-4" iyz="0" izz="2e-5"/></inertial></link>
  <link name="coupler"><inertial><origin xyz="0 0 -0.155"/><mass value="0.3"/>
    <inertia ixx="2.4e-3" ixy="0" ixz="0" iyy="2.4e-3" iyz="0" izz="1e-5"/></inertial></link>
  <link name="foot_link"><inertial><origin xyz="0 0 -0.05"/><mass value="0.1"/>
    <inertia ixx="1e-4" ixy="0" ixz="0" iyy="1e-4" iyz="0" izz="5e-6"/></inertial></link>
  <joint name="driver_joint" type="continuous" independent="true">
    <parent link="body"/><child link="driver"/><axis xyz="0 1 0"/></joint>
  <joint name="coupler_joint" type="continuous" independent="false">
    <parent link="driver"/><child link="coupler"/><origin xyz="0 0 -0.1"/><axis xyz="0 1 0"/></joint>
  <joint name="foot_joint" type="continuous" independent="false">
    <parent link="body"/><child link="foot_link"/><origin xyz="0 0 -0.31"/><axis xyz="0 1 0"/></joint>
  <loop name="foot_loop" type="revolute">
    <predecessor link="coupler"><origin xyz="0 0 -0.31"/></predecessor>
    <successor link="foot_link"><origin xyz="0 0 -0.1"/></successor>
    <axis xyz="0 1 0"/>
  </loop>
</robot>)";

ClusterModel legModel() { return buildClusterModel(parseUrdfString(kParallelogramLegUrdf, "leg")); }

VecX scalar(double x) { return VecX::Constant(1, x); }

/// Kinetic energy 1/2 ydot^T H(y) ydot on the branch the closure returns.
double energyForYdot(const ClusterModel& m, ClusterData& d, double y, double ydot) {
  if (independentToSpanning(m, d, scalar(y), scalar(ydot)) != Status::Ok) return NAN;
  const VecX q = d.q;
  if (clusterMassMatrix(m, d, q) != Status::Ok) return NAN;
  return 0.5 * ydot * d.H(0, 0) * ydot;
}

/// Parallelogram branch of the leg: (driver, coupler, foot link) = (t, -t, t).
::testing::AssertionResult onParallelogram(const VecX& q, double tol) {
  const double t = q[0];
  if (std::abs(q[1] + t) <= tol && std::abs(q[2] - t) <= tol) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "q = " << q.transpose() << " is not (t, -t, t)";
}

/// Puts the workspace's warm start on the parallelogram branch at driver angle t (the builder's
/// qReference of this model is on the crossed branch).
::testing::AssertionResult startOnParallelogram(const ClusterModel& m, ClusterData& d, double t) {
  VecX q(3);
  q << t, -t, t;
  if (setClosureWarmStart(m, d, q) != Status::Ok || solveLoopClosure(m, d, scalar(t)) != Status::Ok)
    return ::testing::AssertionFailure() << d.errorMessage();
  return onParallelogram(d.q, 1e-12);
}

// The report: closed at +0.01, then at -0.01 on the same workspace.
TEST(ClosureBranch, ParallelogramKeepsBranchAcrossFold) {
  const ClusterModel m = legModel();
  ClusterData d(m);
  ASSERT_TRUE(startOnParallelogram(m, d, 0.3));
  const double e0 = energyForYdot(m, d, 0.01, 1.0);
  ASSERT_TRUE(onParallelogram(d.q, 1e-9));
  const double e1 = energyForYdot(m, d, -0.01, 1.0);
  EXPECT_TRUE(onParallelogram(d.q, 1e-9)) << "crossed branch after the fold";
  EXPECT_NEAR(d.q[1], 0.01, 1e-9);
  EXPECT_NEAR(d.q[2], -0.01, 1e-9);
  // The parallelogram is symmetric in t: the energy for the same ydot is the same at +-0.01.
  EXPECT_NEAR(e1, e0, 1e-9 * e0);
  // And back.
  ASSERT_EQ(solveLoopClosure(m, d, scalar(0.01)), Status::Ok) << d.errorMessage();
  EXPECT_TRUE(onParallelogram(d.q, 1e-9));
}

// The same on the third-party parallelogram four-bar (shared/urdfplus/four_bar.urdf).
TEST(ClosureBranch, SharedFourBarKeepsBranchAcrossFold) {
  CLUSTERDYN_SKIP_WITHOUT_SHARED(sharedPath("urdfplus/four_bar.urdf"));
  const ClusterModel m = loadModel(sharedPath("urdfplus/four_bar.urdf"));
  ClusterData d(m);
  for (double y : {0.01, -0.01, 0.002, -0.3, 0.01}) {
    SCOPED_TRACE(y);
    ASSERT_EQ(solveLoopClosure(m, d, scalar(y)), Status::Ok) << d.errorMessage();
    EXPECT_TRUE(test::isClose(d.q, (VecX(3) << y, -y, y).finished(), 1e-9));
  }
}

// The crossed branch is kept as well: a warm start on it stays on it across the fold.
TEST(ClosureBranch, CrossedBranchIsKept) {
  const ClusterModel m = legModel();
  ClusterData d(m);
  // A closed configuration on the crossed branch at t = 0.2 (Newton from a nearby guess).
  const double t = 0.2;
  VecX guess(3);
  guess << t, 2.9 * t, -1.95 * t;
  ASSERT_EQ(setClosureWarmStart(m, d, guess), Status::Ok);
  ASSERT_EQ(projectToConstraints(m, d, guess, VecX::Zero(3)), Status::Ok) << d.errorMessage();
  ASSERT_FALSE(onParallelogram(d.q, 1e-3));
  const double slope0 = d.q[2] / d.q[0];
  for (double y : {0.05, 0.01, -0.01, -0.05, -0.2}) {
    SCOPED_TRACE(y);
    ASSERT_EQ(solveLoopClosure(m, d, scalar(y)), Status::Ok) << d.errorMessage();
    EXPECT_FALSE(onParallelogram(d.q, 1e-3 * std::abs(y)));
    EXPECT_LT(d.q[2] / d.q[0], -1.5);  // foot link opposite to the driver: crossed
  }
  EXPECT_LT(slope0, -1.5);
}

// A sweep through the fold in small steps, both ways: every solve is Ok on the parallelogram
// branch (the steps avoid y = 0 itself, the branch point, which is ConstraintFailure), and the
// kinetic energy for a fixed ydot is continuous.
TEST(ClosureBranch, SweepThroughFold) {
  const ClusterModel m = legModel();
  ClusterData d(m);
  ASSERT_TRUE(startOnParallelogram(m, d, 0.1));
  const double h = 0.002;
  double previous = NAN;
  for (int pass = 0; pass < 2; ++pass)
    for (int i = -40; i < 40; ++i) {
      const double y = (pass == 0 ? -1.0 : 1.0) * (i + 0.5) * h;
      SCOPED_TRACE(y);
      const double e = energyForYdot(m, d, y, 1.0);
      ASSERT_TRUE(std::isfinite(e)) << d.errorMessage();
      ASSERT_TRUE(onParallelogram(d.q, 1e-9));
      EXPECT_NEAR(d.v[2], 1.0, 1e-9);  // v = G ydot on the branch: foot link moves with driver
      if (std::isfinite(previous) && i != -40)
        EXPECT_NEAR(e, previous, 0.01 * previous);  // ~h^2 change per step
      previous = e;
    }
}

// RK4 with CE-ABA (gravity only) swinging the leg through the fold several times: the state
// stays on the parallelogram branch, and the total energy is conserved.
TEST(ClosureBranch, Rk4ThroughFoldKeepsBranch) {
  const ClusterModel m = legModel();
  ClusterData d(m);
  ASSERT_TRUE(startOnParallelogram(m, d, 0.25));
  const VecX tau = VecX::Zero(1);
  auto accel = [&](double y, double yd, double* ydd) {
    const Status s = ceAbaIndependent(m, d, scalar(y), scalar(yd), tau);
    *ydd = d.ydd[0];
    return s == Status::Ok && onParallelogram(d.q, 1e-9);
  };
  auto energy = [&](double y, double yd) {
    EXPECT_EQ(independentToSpanning(m, d, scalar(y), scalar(yd)), Status::Ok);
    const VecX q = d.q, v = d.v;
    Data td(m.treeModel);
    return clusterdyn::kineticEnergy(m.treeModel, td, q, v) +
           clusterdyn::potentialEnergy(m.treeModel, td, q);
  };
  double y = 0.25, yd = 0.0;
  const double e0 = energy(y, yd), dt = 1e-3;
  int crossings = 0;
  for (int step = 0; step < 1800; ++step) {
    double a1, a2, a3, a4;
    ASSERT_TRUE(accel(y, yd, &a1)) << step << ": " << d.errorMessage() << " q " << d.q.transpose();
    ASSERT_TRUE(accel(y + 0.5 * dt * yd, yd + 0.5 * dt * a1, &a2))
        << step << ": " << d.errorMessage() << " q " << d.q.transpose();
    ASSERT_TRUE(accel(y + 0.5 * dt * (yd + 0.5 * dt * a1), yd + 0.5 * dt * a2, &a3)) << step;
    ASSERT_TRUE(accel(y + dt * (yd + 0.5 * dt * a2), yd + dt * a3, &a4)) << step;
    const double yn = y + dt * (yd + dt / 6.0 * (a1 + a2 + a3));
    const double ydn = yd + dt / 6.0 * (a1 + 2 * a2 + 2 * a3 + a4);
    if ((yn < 0) != (y < 0)) ++crossings;
    y = yn;
    yd = ydn;
  }
  EXPECT_GE(crossings, 3);
  EXPECT_NEAR(energy(y, yd), e0, 1e-7 * std::abs(e0) + 1e-9);
}

// Jumps of every size across the fold, from warm starts on both branches: Ok on the warm
// start's branch, or a named ConstraintFailure (the branch point), never the other branch.
TEST(ClosureBranch, JumpsNeverChangeBranch) {
  const ClusterModel m = legModel();
  ClusterData d(m);
  int ok = 0;
  for (bool crossed : {false, true})
    for (double from : {0.4, 0.2, 0.05, 0.003, -0.003, -0.05, -0.2, -0.4})
      for (double to : {0.4, 0.2, 0.05, 0.003, 1e-6, -1e-6, -0.003, -0.05, -0.2, -0.4, 1.5, -1.5}) {
        SCOPED_TRACE(std::to_string(crossed) + " " + std::to_string(from) + " -> " +
                     std::to_string(to));
        if (crossed) {  // the model's qReference is on the crossed branch
          ClusterData fresh(m);
          ASSERT_EQ(solveLoopClosure(m, fresh, scalar(from)), Status::Ok) << fresh.errorMessage();
          ASSERT_EQ(setClosureWarmStart(m, d, fresh.q), Status::Ok);
        } else {
          ASSERT_TRUE(startOnParallelogram(m, d, from));
        }
        ASSERT_EQ(onParallelogram(d.q, 1e-9), !crossed);
        const Status s = solveLoopClosure(m, d, scalar(to));
        if (s != Status::Ok) {
          EXPECT_EQ(s, Status::ConstraintFailure);
          EXPECT_NE(std::string(d.errorMessage()).find("cluster 'foot_loop'"), std::string::npos);
          EXPECT_LE(std::abs(to), 1e-5) << d.errorMessage();  // only at the branch point
          continue;
        }
        ++ok;
        EXPECT_EQ(onParallelogram(d.q, 1e-9), !crossed) << d.q.transpose();
      }
  EXPECT_GT(ok, 150);
}

}  // namespace
}  // namespace clusterdyn
