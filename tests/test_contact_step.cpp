// The time step with contacts (src/contact/): a block on a slope (sticks below tan theta = mu,
// slides above with the analytic acceleration g (sin theta - mu cos theta)), a passive drop of
// the loop robot cd_parallel_walker (energy never increases, the loops stay closed), PGS and ADMM
// on the same assembled problem, embedded loops against the same loops cut into bilateral rows.
#include <gtest/gtest.h>

#include <cmath>

#include "clusterdyn/clusterdyn.hpp"
#include "contact_fixtures.hpp"
#include "test_util.hpp"

using namespace clusterdyn;

namespace {

const char* kBlock = R"(<robot name="block">
  <link name="box">
    <inertial><mass value="2.0"/>
      <inertia ixx="0.00833" ixy="0" ixz="0" iyy="0.0183" iyz="0" izz="0.0217"/></inertial>
  </link>
</robot>)";

ClusterModel blockModel() {
  ModelOptions o;
  o.floatingBase = true;
  return buildClusterModel(parseUrdfString(kBlock), o);
}

/// Block with four point feet at (+-0.1, +-0.05, -0.05) resting on a plane tilted by theta about
/// y (normal (-sin, 0, cos)); state in q (floating: position, quaternion xyzw), v = 0.
struct Slope {
  ClusterModel model = blockModel();
  ContactProblem problem{model};
  VecX q, v;
  Vec3 downhill;
  Slope(double theta, double mu) {
    int k = 0;
    for (const double x : {0.1, -0.1})
      for (const double y : {0.05, -0.05})
        problem.addGroundFoot("foot" + std::to_string(k++), 0, Vec3(x, y, -0.05), 0.0, mu);
    const Vec3 n(-std::sin(theta), 0.0, std::cos(theta));
    problem.setGround(n, 0.0);
    downhill = -Vec3(std::cos(theta), 0.0, std::sin(theta));
    q = VecX::Zero(7);
    q.head<3>() = 0.05 * n;
    q.segment<4>(3) << 0.0, std::sin(-theta / 2), 0.0, std::cos(-theta / 2);
    v = VecX::Zero(6);
  }
};

double totalEnergy(const ClusterModel& cm, const VecX& q, const VecX& v) {
  Data d(cm.treeModel);
  return kineticEnergy(cm.treeModel, d, q, v) + potentialEnergy(cm.treeModel, d, q);
}

}  // namespace

TEST(ContactStep, BlockOnSlopeSticksBelowTanThetaEqualsMu) {
  for (const auto solver : {StepSettings::Solver::Admm, StepSettings::Solver::Pgs}) {
    Slope s(std::atan(0.4), 0.5);
    ClusterData data(s.model);
    ContactData cd(s.model, s.problem);
    StepSettings st;
    st.solver = solver;
    st.contact.maxIterations = 5000;
    const VecX q0 = s.q;
    for (int k = 0; k < 300; ++k) {
      ASSERT_EQ(contactStep(s.model, data, s.problem, cd, s.q, s.v, VecX::Zero(6), st), Status::Ok)
          << k << ": " << data.errorMessage();
      EXPECT_LT(cd.result.residuals.complementarity, 1e-8);
      EXPECT_LT(cd.result.residuals.velocity, 1e-8);
    }
    EXPECT_LT(s.v.cwiseAbs().maxCoeff(), 1e-8);
    EXPECT_LT((s.q - q0).cwiseAbs().maxCoeff(), 1e-8);
    // The feet carry the weight: total normal impulse m g cos(theta) dt.
    double normal = 0.0;
    for (int i = 0; i < 4; ++i) normal += cd.lambda[3 * i + 2];
    EXPECT_NEAR(normal, 2.0 * 9.81 * std::cos(std::atan(0.4)) * st.dt, 1e-9);
  }
}

TEST(ContactStep, BlockOnSlopeSlidesWithTheAnalyticAcceleration) {
  const double theta = std::atan(0.5), mu = 0.3, g = 9.81;
  const double a = g * (std::sin(theta) - mu * std::cos(theta));
  for (const auto solver : {StepSettings::Solver::Admm, StepSettings::Solver::Pgs}) {
    Slope s(theta, mu);
    ClusterData data(s.model);
    ContactData cd(s.model, s.problem);
    StepSettings st;
    st.solver = solver;
    st.contact.maxIterations = 5000;
    const Vec3 p0 = s.q.head<3>();
    const int N = 400;
    for (int k = 0; k < N; ++k)
      ASSERT_EQ(contactStep(s.model, data, s.problem, cd, s.q, s.v, VecX::Zero(6), st), Status::Ok)
          << k << ": " << data.errorMessage();
    // Semi-implicit Euler from rest with a constant acceleration: speed N dt a, displacement
    // dt^2 a N (N + 1) / 2; no rotation, no motion off the slope.
    const Vec3 d = s.q.head<3>() - p0;
    EXPECT_NEAR(d.dot(s.downhill), st.dt * st.dt * a * N * (N + 1) / 2.0, 1e-9);
    EXPECT_LT((d - d.dot(s.downhill) * s.downhill).norm(), 1e-9);
    const Mat3 R = Eigen::Quaterniond(s.q[6], s.q[3], s.q[4], s.q[5]).toRotationMatrix();
    const Vec3 vWorld = R * s.v.tail<3>();  // floating velocity: body frame (angular, linear)
    EXPECT_NEAR(vWorld.dot(s.downhill), N * st.dt * a, 1e-9);
    EXPECT_LT(s.v.head<3>().norm(), 1e-9);
  }
}

namespace {

ClusterModel walkerModel(bool cutLoops = false) {
  ModelOptions o;
  o.floatingBase = true;
  o.cutLoops = cutLoops;
  return loadModel(test::modelsPath("cd_parallel_walker.urdf"), o);
}

/// The four sphere feet of cd_parallel_walker (centre 0.05 m below the coupler's middle).
void addFeet(const ClusterModel& cm, ContactProblem& p, double mu) {
  for (const char* leg : {"lf", "rf", "lh", "rh"}) {
    const int b = cm.treeModel.bodyId(std::string(leg) + "_coupler");
    p.addGroundFoot(std::string(leg) + "_foot", b, Vec3(0.03, 0.0, -0.05), 0.02, mu);
  }
}

}  // namespace

TEST(ContactStep, PassiveDropOfALoopRobotNeverGainsEnergy) {
  const ClusterModel cm = walkerModel();
  ContactProblem problem(cm);
  addFeet(cm, problem, 0.8);
  ClusterData data(cm);
  ContactData cd(cm, problem);
  // Trunk 0.05 m above touch-down, slightly rolled, cranks spread: y = (base, 4 cranks).
  VecX y = VecX::Zero(cm.nyq), ydot = VecX::Zero(cm.ny);
  y[2] = 0.27 + 0.05 + 0.02;
  const Eigen::Quaterniond rot(Eigen::AngleAxisd(0.05, Vec3::UnitX()));
  y.segment<4>(3) = rot.coeffs();
  for (int i = 0; i < 4; ++i) y[7 + i] = 0.2 * (i % 2 ? -1.0 : 1.0);
  ASSERT_EQ(independentToSpanning(cm, data, y, ydot), Status::Ok) << data.errorMessage();
  VecX q = data.q, v = data.v;
  StepSettings st;
  st.contact.maxIterations = 5000;
  // The penetration feedback (beta > 0) pushes penetrating feet out and so does work: with the
  // default beta = 0.2 this drop gains up to 4e-4 J in a step (2e-5 of its energy). The oracle is
  // the step without it: exact non-penetration targets, inelastic impacts, Coulomb friction.
  st.beta = 0.0;
  double e = totalEnergy(cm, q, v), worstIncrease = 0.0;
  const double e0 = e;
  int contactSteps = 0;
  for (int k = 0; k < 1500; ++k) {
    const Status stepStatus = contactStep(cm, data, problem, cd, q, v, VecX::Zero(cm.ny), st);
    ASSERT_EQ(stepStatus, Status::Ok) << k << ": " << data.errorMessage();
    EXPECT_LT(data.lastResidual, 1e-12) << "loop closure at step " << k;
    if (cd.lambda.cwiseAbs().maxCoeff() > 0.0) ++contactSteps;
    const double e1 = totalEnergy(cm, q, v);
    worstIncrease = std::max(worstIncrease, e1 - e);
    e = e1;
  }
  EXPECT_GT(contactSteps, 500);  // the feet did land
  // Semi-implicit Euler does not conserve energy exactly between impacts: allow 1e-6 of it.
  EXPECT_LT(worstIncrease, 1e-6 * e0);
  EXPECT_LT(e, e0);
  RecordProperty("energy_drop", std::to_string(e0 - e));
  RecordProperty("worst_increase", std::to_string(worstIncrease));
}

TEST(ContactStep, PgsAndAdmmAgreeOnTheStandingRobot) {
  const ClusterModel cm = walkerModel();
  ContactProblem problem(cm);
  addFeet(cm, problem, 0.8);
  ClusterData data(cm);
  ContactData cd(cm, problem);
  VecX y = VecX::Zero(cm.nyq), ydot = VecX::Zero(cm.ny);
  y[2] = 0.27 - 1e-4;  // feet 0.1 mm into the ground
  y[6] = 1.0;
  ASSERT_EQ(independentToSpanning(cm, data, y, ydot), Status::Ok) << data.errorMessage();
  const VecX q = data.q, v = data.v;
  StepSettings st;
  st.contact.maxIterations = 20000;
  ASSERT_EQ(assembleContactProblem(cm, data, problem, cd, q, v, VecX::Zero(cm.ny), st), Status::Ok)
      << data.errorMessage();
  VecX la = VecX::Zero(cd.g.size()), lp = la;
  ContactSolverResult ra, rp;
  ASSERT_EQ(solveContactAdmm(cd.G, cd.g, cd.blocks, st.contact, cd.solver, la, ra), Status::Ok)
      << cd.solver.lastError;
  ASSERT_EQ(solveContactPgs(cd.G, cd.g, cd.blocks, st.contact, cd.solver, lp, rp), Status::Ok)
      << cd.solver.lastError;
  EXPECT_LT(ra.residuals.complementarity, 1e-8);
  EXPECT_LT(rp.residuals.complementarity, 1e-8);
  const VecX va = cd.G * la + cd.g, vp = cd.G * lp + cd.g;
  EXPECT_LT((va - vp).cwiseAbs().maxCoeff(), 1e-8);
  // 12 rows on 10 coordinates: G is singular and the impulses are not unique, the generalized
  // impulses J^T lambda (hence the velocities after the step) are.
  EXPECT_TRUE(test::isClose(cd.Jc.transpose() * la, cd.Jc.transpose() * lp, 1e-7, 1e-3));
  // The normal impulses carry about the weight (the push-out adds beta * penetration / dt).
  double n = 0.0;
  for (int i = 0; i < 4; ++i) n += la[3 * i + 2];
  const double mass = 4.0 + 4 * (0.2 + 0.15 + 0.2);
  EXPECT_GT(n, mass * 9.81 * st.dt);
  RecordProperty("admm_iterations", ra.iterations);
  RecordProperty("pgs_iterations", rp.iterations);
}

TEST(ContactStep, EmbeddedLoopsMatchTheSameLoopsAsBilateralRows) {
  // One step from the same closed state: the embedded model (4 cranks independent) and the model
  // with the four loops cut and handed to the solver as bilateral rows must give the same
  // spanning velocities and the same foot impulses.
  const ClusterModel ce = walkerModel(false), cc = walkerModel(true);
  ASSERT_EQ(cc.cutLoops.size(), 4u);
  const ConstraintSet loops = cutLoopConstraints(cc);
  ContactProblem pe(ce), pc(cc, &loops);
  addFeet(ce, pe, 0.8);
  addFeet(cc, pc, 0.8);
  ClusterData de(ce), dc(cc);
  ContactData cde(ce, pe), cdc(cc, pc);
  VecX y = VecX::Zero(ce.nyq), ydot = VecX::Zero(ce.ny);
  y[2] = 0.27 - 1e-4;
  y.segment<4>(3) = Eigen::Quaterniond(Eigen::AngleAxisd(0.03, Vec3::UnitY())).coeffs();
  for (int i = 0; i < 4; ++i) y[7 + i] = 0.1 * (i + 1), ydot[6 + i] = 0.5 - 0.3 * i;
  ydot.head<6>() << 0.1, -0.2, 0.05, 0.3, 0.0, -0.4;
  ASSERT_EQ(independentToSpanning(ce, de, y, ydot), Status::Ok) << de.errorMessage();
  // The same URDF tree, bodies possibly numbered differently: map the coordinates by name.
  VecX qe = de.q, ve = de.v, qc(cc.treeModel.nq), vc(cc.treeModel.nv);
  for (int i = 0; i < ce.treeModel.nq; ++i)
    qc[cc.treeModel.positionIndex(ce.treeModel.positionNames[i])] = qe[i];
  for (int i = 0; i < ce.treeModel.nv; ++i)
    vc[cc.treeModel.velocityIndex(ce.treeModel.velocityNames[i])] = ve[i];
  StepSettings st;
  st.contact.tolerance = 1e-12;
  st.contact.maxIterations = 50000;
  ASSERT_EQ(contactStep(ce, de, pe, cde, qe, ve, VecX::Zero(ce.ny), st), Status::Ok)
      << de.errorMessage();
  ASSERT_EQ(contactStep(cc, dc, pc, cdc, qc, vc, VecX::Zero(cc.ny), st), Status::Ok)
      << dc.errorMessage();
  VecX vcInE(ce.treeModel.nv);
  for (int i = 0; i < ce.treeModel.nv; ++i)
    vcInE[i] = vc[cc.treeModel.velocityIndex(ce.treeModel.velocityNames[i])];
  EXPECT_TRUE(test::isClose(vcInE, ve, 1e-8));
  EXPECT_TRUE(test::isClose(cdc.lambda.tail(12), cde.lambda, 1e-7, 1e-3));
}

TEST(ContactStep, CallerContactsMatchTheGroundFeet) {
  // The slope block with its feet given as caller contacts (normal, gap and mu set before each
  // step from the body pose, as a collision detector would) steps exactly as the ground feet.
  const double theta = std::atan(0.5), mu = 0.3;
  Slope ground(theta, mu);
  const ClusterModel& cm = ground.model;
  ContactProblem caller(cm);
  const Vec3 n(-std::sin(theta), 0.0, std::cos(theta));
  std::vector<Vec3> feet;
  for (const double x : {0.1, -0.1})
    for (const double y : {0.05, -0.05}) feet.emplace_back(x, y, -0.05);
  for (int i = 0; i < 4; ++i) caller.addPointContact("c" + std::to_string(i), 0, feet[i]);
  EXPECT_THROW(caller.addPointContact("c0", 0, Vec3::Zero()), ModelError);   // duplicate name
  EXPECT_THROW(caller.addPointContact("bad", 7, Vec3::Zero()), ModelError);  // no such body
  ClusterData dg(cm), dc(cm);
  ContactData cg(cm, ground.problem), cc(cm, caller);
  VecX qc = ground.q, vc = ground.v;
  StepSettings st;
  st.contact.maxIterations = 5000;
  Data fk(cm.treeModel);
  for (int k = 0; k < 50; ++k) {
    forwardKinematics(cm.treeModel, fk, qc);
    for (int i = 0; i < 4; ++i) {
      cc.normal[i] = 3.0 * n;  // any length: normalized by the step
      cc.gap[i] = n.dot(fk.oMi[0].R * feet[i] + fk.oMi[0].p);
      cc.mu[i] = mu;
    }
    ASSERT_EQ(contactStep(cm, dg, ground.problem, cg, ground.q, ground.v, VecX::Zero(6), st),
              Status::Ok)
        << dg.errorMessage();
    ASSERT_EQ(contactStep(cm, dc, caller, cc, qc, vc, VecX::Zero(6), st), Status::Ok)
        << dc.errorMessage();
  }
  // To the solver tolerance (1e-10 m/s per step; the frames differ in their last bits).
  EXPECT_TRUE(test::isClose(qc, ground.q, 1e-10));
  EXPECT_TRUE(test::isClose(vc, ground.v, 1e-8));
  // A caller contact with a zero normal or a negative mu is rejected before anything changes.
  cc.mu[2] = -0.1;
  const VecX q0 = qc;
  EXPECT_EQ(contactStep(cm, dc, caller, cc, qc, vc, VecX::Zero(6), st), Status::InvalidArgument);
  EXPECT_NE(std::string(dc.errorMessage()).find("contact 2 ('c2')"), std::string::npos)
      << dc.errorMessage();
  EXPECT_EQ(qc, q0);
}

TEST(ContactStep, AdmmDoesNotStallOnTheIllConditionedStraightLegStance) {
  // The walker landing (tumbled, moving) and coming to stand with straight legs, cranks held at
  // 0 by a spring-damper: G has two zero eigenvalues (12 rows on 10 coordinates) and a third
  // near 3e-9 (straight legs move the feet sideways, not up, to first order). Residual
  // balancing then moves rho down monotonically by many factors; a cap of 10 rho changes froze
  // it at 1e-6 of its start and ADMM stalled at 2e-5 m/s after 20000 iterations (step 521,
  // docs/contact.md). Uncapped, plain ADMM still ended 16 of the 600 steps NotConverged just
  // above the tolerance (3.7e-10: along the 3e-9 eigenvector it contracts by about
  // 1 - 3e-9 / rho per iteration), with 1364 iterations per step on average; the Newton polish
  // on the contact modes of ADMM's iterate solves every step to the tolerance.
  const ClusterModel cm = walkerModel();
  ContactProblem problem(cm);
  addFeet(cm, problem, 0.6);
  VecX y = VecX::Zero(cm.nyq), ydot = VecX::Zero(cm.ny);
  y[2] = 0.27 + 0.03 + 0.02;
  y.segment<4>(3) =
      Eigen::Quaterniond(Eigen::AngleAxisd(0.08, Vec3(1, 1, 0).normalized())).coeffs();
  ydot.head<6>() << 0.3, -0.2, 0.1, 0.4, 0.1, 0.0;
  for (const int polishAfter : {0, 100}) {  // without the polish (the failure it fixes), with
    ClusterData data(cm);
    ContactData cd(cm, problem);
    ASSERT_EQ(independentToSpanning(cm, data, y, ydot), Status::Ok) << data.errorMessage();
    VecX q = data.q, v = data.v, yy(cm.nyq), yd(cm.ny), tau = VecX::Zero(cm.ny);
    StepSettings st;  // tolerance 1e-10
    st.contact.maxIterations = 20000;
    st.contact.polishAfter = polishAfter;
    int maxIterations = 0, notConverged = 0, polished = 0;
    long iterations = 0;
    double worst = 0.0;
    for (int k = 0; k < 600; ++k) {
      ASSERT_EQ(spanningToIndependent(cm, data, q, v, yy, yd), Status::Ok);
      for (int i = 0; i < 4; ++i) tau[6 + i] = -20.0 * yy[7 + i] - 0.5 * yd[6 + i];  // crank PD
      const Status s = contactStep(cm, data, problem, cd, q, v, tau, st);
      ASSERT_TRUE(s == Status::Ok || s == Status::NotConverged) << k << ": " << data.errorMessage();
      const ContactResiduals& r = cd.result.residuals;
      worst = std::max({worst, r.cone, r.velocity, r.complementarity});
      notConverged += s == Status::NotConverged;
      polished += cd.result.polished;
      iterations += cd.result.iterations;
      maxIterations = std::max(maxIterations, cd.result.iterations);
    }
    if (polishAfter == 0) {
      EXPECT_GT(notConverged, 0);  // plain ADMM: the stall this test guards against
      EXPECT_LT(worst, 1e-9);
      continue;
    }
    EXPECT_EQ(notConverged, 0);
    EXPECT_LE(worst, st.contact.tolerance);
    EXPECT_GT(polished, 0);
    EXPECT_LT(iterations, 600 * 200);  // 65 per step on average (1364 without the polish)
    RecordProperty("max_admm_iterations", maxIterations);
    RecordProperty("polished_steps", polished);
  }
}

// Couplings only (the mini cheetah's rotor transmissions): the step integrates the spanning
// coordinates with v+ = G y_dot+, which keeps the linear relations; the closure's Newton runs only
// when their residual exceeds its tolerance (a state closed only to 1e-9 here).
TEST(ContactStep, CouplingsStayClosedThroughTheSpanningIntegration) {
  CLUSTERDYN_SKIP_WITHOUT_SHARED(test::sharedPath("urdfplus/mini_cheetah.urdf"));
  const ClusterModel cm = loadModel(test::sharedPath("urdfplus/mini_cheetah.urdf"));
  ASSERT_FALSE(cm.hasImplicitClusters());
  ContactProblem problem(cm);
  scenes::addCheetahFeet(cm, problem, 0.8);
  ClusterData data(cm), other(cm);
  ContactData cd(cm, problem);
  VecX y = scenes::uprightAt(cm, 0.3);
  for (int i = 7; i < cm.nyq; ++i) y[i] = 0.4 * std::sin(1.3 * i);
  VecX q, v, yk(cm.nyq), ydotk(cm.ny);
  ASSERT_TRUE(test::closedSpanningState(cm, data, y, VecX::LinSpaced(cm.ny, -0.5, 0.5), q, v));
  const VecX tau = VecX::LinSpaced(cm.ny, -2.0, 2.0);
  StepSettings st;
  // The closed spanning state of the step's independent coordinates (the closure's Newton from
  // y alone) equals the step's state; the relations hold to the closure's tolerance.
  const auto expectClosed = [&](int step) {
    ASSERT_EQ(spanningToIndependent(cm, other, q, v, yk, ydotk), Status::Ok);
    ASSERT_EQ(independentToSpanning(cm, other, yk, ydotk), Status::Ok) << other.errorMessage();
    EXPECT_LT((other.q - q).cwiseAbs().maxCoeff(), 1e-12) << "step " << step;
    EXPECT_LT((other.v - v).cwiseAbs().maxCoeff(), 1e-12) << "step " << step;
    EXPECT_LE(data.lastResidual, kClosureSettings.residualTolerance) << "step " << step;
  };
  for (int k = 0; k < 200; ++k) {
    const Status s = contactStep(cm, data, problem, cd, q, v, tau, st);
    ASSERT_TRUE(s == Status::Ok || s == Status::NotConverged) << data.errorMessage();
    EXPECT_EQ(data.lastIterations, 0) << "step " << k;  // no Newton
    if (k % 50 == 0) expectClosed(k);
  }
  expectClosed(200);
  // A state closed only to 1e-9 (a rotor angle off): the step's Newton closes it again.
  const int rotor = cm.treeModel.idx_q[cm.treeModel.velocityOwner[cm.clusters.back().v0 +
                                                                  cm.clusters.back().dependent[0]]];
  q[rotor] += 1e-9;
  ASSERT_EQ(contactStep(cm, data, problem, cd, q, v, tau, st), Status::Ok) << data.errorMessage();
  EXPECT_GE(data.lastIterations, 1);
  expectClosed(201);
}
