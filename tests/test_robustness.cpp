// Robustness: singular configurations, closure jumps, overflowing inputs and numerical edges
// give Ok with finite outputs or a named status, never NaN/Inf with Ok or a confident wrong
// answer; a failed call leaves the workspace usable.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <string>

#include "closed_states.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "clusterdyn/constrained_derivatives.hpp"
#include "clusterdyn/logging.hpp"
#include "test_models.hpp"
#include "test_util.hpp"

namespace clusterdyn {
namespace {

using test::modelsPath;
using test::sharedPath;

VecX vec(std::initializer_list<double> x) {
  VecX v(static_cast<Eigen::Index>(x.size()));
  Eigen::Index i = 0;
  for (double xi : x) v[i++] = xi;
  return v;
}

/// max |phi| of every cluster at q and max |K v| (via clusterConstraintMatrices and a fresh
/// workspace): the spanning state is closed.
::testing::AssertionResult isClosed(const ClusterModel& m, const VecX& q, const VecX& v,
                                    double tol) {
  ClusterData d(m);
  VecX y(m.nyq), ydot(m.ny);
  if (spanningToIndependent(m, d, q, v, y, ydot) != Status::Ok)
    return ::testing::AssertionFailure() << d.errorMessage();
  if (independentToSpanning(m, d, y, ydot) != Status::Ok)
    return ::testing::AssertionFailure() << d.errorMessage();
  // Same closed state from a fresh solve on the same branch (warm start = q).
  d.q = q;
  if (independentToSpanning(m, d, y, ydot) != Status::Ok)
    return ::testing::AssertionFailure() << d.errorMessage();
  if ((d.q - q).cwiseAbs().maxCoeff() > tol || (d.v - v).cwiseAbs().maxCoeff() > tol)
    return ::testing::AssertionFailure()
           << "not closed: q " << q.transpose() << " vs " << d.q.transpose() << ", v "
           << v.transpose() << " vs " << d.v.transpose();
  return ::testing::AssertionSuccess();
}

/// Status Ok with finite outputs, or a failure with a message.
template <typename... Out>
::testing::AssertionResult okFiniteOrNamed(Status s, const char* message, const Out&... out) {
  if (s != Status::Ok) {
    if (message && message[0]) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "status " << statusName(s) << " without a message";
  }
  const bool finite = (out.allFinite() && ...);
  if (!finite) return ::testing::AssertionFailure() << "Ok with non-finite output";
  return ::testing::AssertionSuccess();
}

// ---- defects ---------------------------------------------------------------------------------

// The parallelogram four-bar (shared/urdfplus/four_bar.urdf) with all bars aligned (y = 0) is a
// branch point of the parallelogram and the crossed branch: Kd loses rank. The closure used to
// return Ok with v = (1, -2, -1) (neither branch) and CE-ABA ydd = -1.3e5 (true ~ 0).
TEST(Robustness, ParallelogramBranchPointIsReported) {
  CLUSTERDYN_SKIP_WITHOUT_SHARED(sharedPath("urdfplus/four_bar.urdf"));
  const ClusterModel m = loadModel(sharedPath("urdfplus/four_bar.urdf"));
  ClusterData d(m);
  for (double y0 : {0.0, 1e-9, 1e-6}) {
    SCOPED_TRACE(y0);
    const VecX y = vec({y0}), ydot = vec({1.0}), tau = vec({0.0});
    EXPECT_EQ(independentToSpanning(m, d, y, ydot), Status::ConstraintFailure);
    const std::string msg = d.errorMessage();
    EXPECT_NE(msg.find("cluster 'loop1'"), std::string::npos) << msg;
    EXPECT_NE(msg.find("smallest singular value"), std::string::npos) << msg;
    EXPECT_EQ(ceAbaIndependent(m, d, y, ydot, tau), Status::ConstraintFailure);
    EXPECT_NE(std::string(d.errorMessage()).find("singular"), std::string::npos);
  }
  // CE-ABA at the exactly aligned spanning state (closed, K v = 0 for v on either branch).
  const VecX q = VecX::Zero(3), v = vec({1.0, -1.0, 1.0}), tau = vec({0.0});
  EXPECT_EQ(ceAba(m, d, q, v, tau), Status::ConstraintFailure);
  EXPECT_NE(std::string(d.errorMessage()).find("smallest singular value"), std::string::npos);
  EXPECT_EQ(clusterMassMatrix(m, d, q), Status::ConstraintFailure);
  // The workspace is still usable, and away from the branch point the parallelogram branch
  // (q2 = -q1, q3 = q1: the branch of qReference) is followed.
  for (double y0 : {0.3, 0.05, 0.6}) {
    ASSERT_EQ(independentToSpanning(m, d, vec({y0}), vec({1.0})), Status::Ok) << d.errorMessage();
    EXPECT_TRUE(test::isClose(d.q, vec({y0, -y0, y0}), 1e-9));
    EXPECT_TRUE(test::isClose(d.v, vec({1.0, -1.0, 1.0}), 1e-9));
    ASSERT_EQ(ceAbaIndependent(m, d, vec({y0}), vec({1.0}), vec({0.0})), Status::Ok);
    EXPECT_TRUE(std::isfinite(d.ydd[0]));
  }
}

// Solved at y = pi/2, then y = 0.5 on the same workspace: the undamped Newton used to stall
// (residual 0.89 after 50 iterations) where a fresh workspace converges.
TEST(Robustness, ClosureSurvivesLargeJumps) {
  CLUSTERDYN_SKIP_WITHOUT_SHARED(sharedPath("urdfplus/four_bar.urdf"));
  const ClusterModel m = loadModel(sharedPath("urdfplus/four_bar.urdf"));
  ClusterData fresh(m), warm(m);
  ASSERT_EQ(solveLoopClosure(m, fresh, vec({0.5})), Status::Ok) << fresh.errorMessage();
  ASSERT_EQ(solveLoopClosure(m, warm, vec({1.5708})), Status::Ok) << warm.errorMessage();
  ASSERT_EQ(solveLoopClosure(m, warm, vec({0.5})), Status::Ok) << warm.errorMessage();
  EXPECT_LE(warm.lastResidual, 1e-12);
  EXPECT_TRUE(test::isClose(warm.q, fresh.q, 1e-9));
}

// Many random jumps on the bundled four-bar and six-bar: every solve closes the loops.
TEST(Robustness, ClosureSurvivesRandomJumpsOnBundledModels) {
  std::mt19937_64 rng(11);
  for (const char* file : {"cd_four_bar.urdf", "cd_six_bar.urdf"}) {
    const ClusterModel mm = loadModel(modelsPath(file));
    ClusterData dd(mm);
    for (int i = 0; i < 200; ++i) {
      const VecX y = test::randomVector(mm.nyq, rng, -M_PI, M_PI);
      const Status s = solveLoopClosure(mm, dd, y);
      ASSERT_TRUE(s == Status::Ok || s == Status::ConstraintFailure) << statusName(s);
      if (s != Status::Ok) continue;
      EXPECT_LE(dd.lastResidual, 1e-12) << file;
      EXPECT_TRUE(isClosed(mm, dd.q, VecX::Zero(mm.treeModel.nv), 1e-9)) << file;
    }
  }
}

// Finite but huge inputs: the outputs used to be NaN with Ok.
TEST(Robustness, OverflowingInputsAreNamed) {
  const ClusterModel m = loadModel(modelsPath("cd_four_bar.urdf"));
  {
    const Model& t = m.treeModel;
    Data d(t);
    const VecX q = VecX::Zero(t.nq), tau = VecX::Zero(t.nv);
    const VecX v = VecX::Constant(t.nv, 1e200);
    EXPECT_EQ(aba(t, d, q, v, tau), Status::NonFinite);
    EXPECT_NE(std::string(d.errorMessage()).find("input v is out of range"), std::string::npos)
        << d.errorMessage();
    EXPECT_EQ(aba(t, d, q, VecX::Ones(t.nv), tau), Status::Ok);
    EXPECT_TRUE(d.ddq.allFinite());
  }
  ClusterData d(m);
  const VecX y = vec({0.5}), tau = vec({0.0});
  for (double big : {1e160, 1e300}) {
    EXPECT_EQ(ceAbaIndependent(m, d, y, vec({big}), tau), Status::NonFinite);
    EXPECT_NE(std::string(d.errorMessage()).find("input ydot is out of range"), std::string::npos)
        << d.errorMessage();
  }
  EXPECT_EQ(ceAbaIndependent(m, d, y, vec({1.0}), vec({1e305})), Status::Ok);  // linear: fine
  EXPECT_TRUE(d.ydd.allFinite());
  ASSERT_EQ(ceAbaIndependent(m, d, y, vec({2.0}), tau), Status::Ok) << d.errorMessage();
  const VecX q = d.q, v = d.v;
  EXPECT_EQ(ceAba(m, d, q, VecX(v * 1e170), tau), Status::NonFinite);
  EXPECT_NE(std::string(d.errorMessage()).find("input v is out of range"), std::string::npos)
      << d.errorMessage();
  EXPECT_EQ(ceRnea(m, d, q, VecX(v * 1e170), vec({0.0})), Status::NonFinite);
  EXPECT_EQ(clusterBias(m, d, q, VecX(v * 1e170)), Status::NonFinite);
  EXPECT_EQ(ceRnea(m, d, q, v, vec({0.0})), Status::Ok);
  EXPECT_TRUE(d.tauY.allFinite());
}

// The turntable-slider of support/test_models.hpp: huge but finite slider positions make the mass
// matrix (m (0.6 q)^2), the potential energy (m g 0.8 q) and the tool placement overflow.
using support::kSliderUrdf;

::testing::AssertionResult namesInput(Status s, const char* message, const char* input) {
  if (s != Status::NonFinite)
    return ::testing::AssertionFailure() << "status " << statusName(s) << ": " << message;
  const std::string want = std::string("input ") + input + " is out of range";
  if (std::string(message).find(want) == std::string::npos)
    return ::testing::AssertionFailure() << "message does not name " << input << ": " << message;
  return ::testing::AssertionSuccess();
}

// Finite but huge inputs to every tree and cluster compute function: a named NonFinite status,
// never Ok with Inf/NaN; moderate inputs afterwards give Ok with an empty message.
TEST(Robustness, HugeInputsToEveryTreeFunction) {
  const ClusterModel cm = buildClusterModel(parseUrdfString(kSliderUrdf));
  const Model& m = cm.treeModel;
  ASSERT_EQ(m.nv, 2);
  Data d(m);
  const VecX zero = VecX::Zero(2), one = VecX::Ones(2);
  const VecX qFar = vec({0.0, 1e300}), qFarRnea = vec({0.0, 1e200});
  EXPECT_TRUE(namesInput(crba(m, d, qFar), d.errorMessage(), "q"));
  EXPECT_TRUE(
      namesInput(rnea(m, d, vec({0.0, 0.5}), vec({1e200, 0.0}), zero), d.errorMessage(), "v"));
  EXPECT_TRUE(namesInput(rnea(m, d, zero, zero, vec({0.0, 1e308})), d.errorMessage(), "a"));
  EXPECT_TRUE(namesInput(rnea(m, d, qFarRnea, zero, vec({1.0, 0.0})), d.errorMessage(), "q"));
  EXPECT_TRUE(
      namesInput(nonLinearEffects(m, d, qFarRnea, vec({1e200, 0.0})), d.errorMessage(), "v"));
  EXPECT_TRUE(namesInput(forwardKinematics(m, d, vec({0.0, 1e100}), vec({1e250, 0.0})),
                         d.errorMessage(), "v"));
  EXPECT_TRUE(
      namesInput(computeKineticEnergy(m, d, zero, vec({0.0, 1e160})), d.errorMessage(), "v"));
  EXPECT_TRUE(namesInput(computePotentialEnergy(m, d, vec({0.0, 1.7e308})), d.errorMessage(), "q"));
  // The tool frame lies 1e308 m beyond the block: its placement (and Jacobian) overflow at
  // q_slide = 1.5e308 (the block at x = 0.9e308) although every body placement is finite.
  Mat6X J(6, 2);
  const int tool = m.frameId("tool");
  ASSERT_GE(tool, 0);
  EXPECT_EQ(
      computeFrameJacobian(m, d, vec({0.0, 1.5e308}), tool, ReferenceFrame::LocalWorldAligned, J),
      Status::NonFinite);
  EXPECT_NE(std::string(d.errorMessage()).find("out of range"), std::string::npos)
      << d.errorMessage();
  // Moderate inputs: Ok, finite, no stale message.
  ASSERT_EQ(crba(m, d, vec({0.3, 0.5})), Status::Ok);
  EXPECT_NEAR(d.M(0, 0), 0.1 + 0.1 + 2.0 * 0.3 * 0.3, 1e-9);  // izz + izz + m (0.6 q)^2
  EXPECT_STREQ(d.errorMessage(), "");
  ASSERT_EQ(rnea(m, d, vec({0.3, 0.5}), one, one), Status::Ok);
  EXPECT_TRUE(d.tau.allFinite());
  ASSERT_EQ(computeFrameJacobian(m, d, vec({0.0, 1.0}), tool, ReferenceFrame::LocalWorldAligned, J),
            Status::Ok);
  EXPECT_TRUE(J.allFinite());
  EXPECT_NEAR(J(4, 0), 1e308, 1e293);  // d(tool y)/d(turn) = x of the tool
  // The cluster mass matrix.
  ClusterData cd(cm);
  EXPECT_TRUE(namesInput(clusterMassMatrix(cm, cd, qFar), cd.errorMessage(), "q"));
  ASSERT_EQ(clusterMassMatrix(cm, cd, vec({0.3, 0.5})), Status::Ok);
  EXPECT_NEAR(cd.H(0, 0), 0.38, 1e-9);
  // A massive link fused 1e308 m away: its inertia about the body overflows, a load error.
  std::string massiveTool = kSliderUrdf;
  const std::string emptyTool = "<link name=\"tool\"/>";
  massiveTool.replace(massiveTool.find(emptyTool), emptyTool.size(),
                      "<link name=\"tool\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" "
                      "iyy=\"1\" izz=\"1\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>");
  try {
    buildClusterModel(parseUrdfString(massiveTool));
    ADD_FAILURE() << "no ModelError";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("<link name=\"tool\">: its inertia"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("not finite"), std::string::npos) << e.what();
  }
}

// Found by fuzz_capi: the dense constrained dynamics with an empty constraint set (m = 0) took
// the max of an empty residual vector (undefined behaviour). Every solver must give the
// unconstrained accelerations with residual 0.
TEST(Robustness, EmptyConstraintSet) {
  const ClusterModel m = loadModel(modelsPath("cd_four_bar.urdf"));
  const ConstraintSet set(m);
  ClusterData d(m), ref(m);
  ConstraintData cd(m, set);
  ASSERT_EQ(independentToSpanning(m, ref, vec({0.5}), vec({1.0})), Status::Ok);
  const VecX q = ref.q, v = ref.v, tau = vec({0.3});
  ASSERT_EQ(ceAba(m, ref, q, v, tau), Status::Ok);
  ASSERT_EQ(constrainedDynamicsDense(m, d, set, cd, q, v, tau), Status::Ok) << d.errorMessage();
  EXPECT_EQ(cd.result.residual, 0.0);
  EXPECT_TRUE(cd.result.converged);
  EXPECT_NEAR(d.ydd[0], ref.ydd[0], 1e-9);
  ASSERT_EQ(proxPv(m, d, set, cd, q, v, tau), Status::Ok) << d.errorMessage();
  EXPECT_EQ(cd.result.residual, 0.0);
  EXPECT_NEAR(d.ydd[0], ref.ydd[0], 1e-9);
}

// Found by fuzz_capi: proxPv on the four-bar with its loop cut, v_2 = 9.3e194, returned
// NotConverged with ydd = NaN (the documented last iterate must be finite). Every proximal
// solver now reports NonFinite naming v.
TEST(Robustness, ProximalSolversOverflowNamed) {
  ModelOptions o;
  o.cutLoops = true;
  const ClusterModel m = loadModel(modelsPath("cd_four_bar.urdf"), o);
  const ConstraintSet set = cutLoopConstraints(m);
  ASSERT_EQ(set.rows(), 5);
  ClusterData d(m);
  ConstraintData cd(m, set);
  const VecX q = VecX::Zero(m.treeModel.nq), tau = VecX::Zero(m.ny);
  VecX v = VecX::Zero(m.treeModel.nv);
  v[2] = 9.2851e194;
  EXPECT_TRUE(namesInput(proxPv(m, d, set, cd, q, v, tau), d.errorMessage(), "v"));
  // The failed solve leaves no NaN multipliers behind for the wrenches (fuzz_capi:
  // cdyn_constraint_wrenches returned Ok with NaN after such a solve).
  EXPECT_TRUE(cd.lambda.allFinite());
  EXPECT_TRUE(constraintWrench(set, cd, 0).allFinite());
  EXPECT_TRUE(
      namesInput(constrainedDynamicsDense(m, d, set, cd, q, v, tau), d.errorMessage(), "v"));
  // A damping so small that 1/rho^2 overflows (found by fuzz_capi with rho = 1.3e-163 on a
  // contact of the four-bar's coupler: Ok with Inf/NaN entries).
  const ClusterModel fourBar = loadModel(modelsPath("cd_four_bar.urdf"));
  ConstraintSet contact(fourBar);
  contact.addContact("coupler", ConstraintType::Point, ReferenceFrame::Local);
  ClusterData fd(fourBar);
  ConstraintData fcd(fourBar, contact);
  EXPECT_TRUE(
      namesInput(dampedDelassusInverse(fourBar, fd, contact, fcd, fourBar.qReference, 1.3e-163),
                 fd.errorMessage(), "rho"));
  ASSERT_EQ(dampedDelassusInverse(fourBar, fd, contact, fcd, fourBar.qReference, 1e-3), Status::Ok)
      << fd.errorMessage();
  EXPECT_TRUE(fcd.dampedInverse.allFinite());
  // gamma holds velocity products: v_0 = 4.9e204 on the cut four-bar (found by fuzz_capi: Ok
  // with gamma = NaN).
  ConstraintSet coupler(m);
  coupler.addContact("coupler", ConstraintType::Point, ReferenceFrame::Local);
  ConstraintData ccd(m, coupler);
  const VecX vFast = vec({4.9267e204, 0.145313, 0.145313});
  EXPECT_TRUE(namesInput(constraintJacobian(m, d, coupler, ccd, q, vFast), d.errorMessage(), "v"));
  // Efforts of 1e305 with a diverging proximal iteration (found by fuzz_capi on the quadruped's
  // body-body set: NotConverged with qdd = Inf): NonFinite naming tau.
  {
    const ClusterModel quad = loadModel(modelsPath("cd_quadruped.urdf"));
    ConstraintSet weld(quad);
    weld.addContact("lf_foot", ConstraintType::Weld, ReferenceFrame::Local);
    ClusterData qd(quad);
    ConstraintData qcd(quad, weld);
    VecX tauHuge = VecX::Zero(quad.ny);
    tauHuge[quad.ny - 1] = -2e305;
    tauHuge[quad.ny - 2] = 7.6e74;
    ProximalSettings ps;
    ps.mu = 1e-11;
    ps.tolerance = 0.145;
    const VecX vq = VecX::Zero(quad.treeModel.nv);
    const Status sd =
        constrainedDynamicsDense(quad, qd, weld, qcd, quad.qReference, vq, tauHuge, ps);
    if (sd == Status::Ok || sd == Status::NotConverged) {
      EXPECT_TRUE(qd.ydd.allFinite() && qd.qdd.allFinite() && qcd.lambda.allFinite());
    } else {
      EXPECT_TRUE(namesInput(sd, qd.errorMessage(), "tau"));
    }
  }
  // A constraint frame 1e200 m from its body (found by fuzz_capi on a fuzzed set): the Delassus
  // matrix holds its square; it used to be Ok with Inf.
  {
    ConstraintSet far(fourBar);
    RigidConstraint r;
    r.name = "far";
    r.type = ConstraintType::Weld;
    r.body1 = 1;
    r.placement1.p = Vec3(1e200, 0.0, 0.0);
    far.add(r);
    ConstraintData farData(fourBar, far);
    EXPECT_EQ(delassusMatrix(fourBar, fd, far, farData, fourBar.qReference), Status::NonFinite);
    EXPECT_NE(std::string(fd.errorMessage()).find("constraint placements"), std::string::npos)
        << fd.errorMessage();
  }
  v[2] = 1.0;
  const Status s = proxPv(m, d, set, cd, q, v, tau);
  ASSERT_TRUE(s == Status::Ok || s == Status::NotConverged) << d.errorMessage();
  EXPECT_TRUE(d.ydd.allFinite());
}

// Size: a 60 000-link revolute chain loads in about a second (the URDF reader's joint lookup was
// quadratic: 91 s for 100 000 links; the spanning-tree traversal no longer recurses once per
// link), and the model builder's workspace leaves out the nv x nv / ny x ny matrices (loading a
// 5000-link chain used to peak at 435 MB for them).
TEST(Robustness, LongChainLoadsInLinearMemory) {
  const int n = 60000;
  std::string xml = "<robot name=\"chain\"><link name=\"base\"/>";
  for (int i = 0; i < n; ++i)
    xml += "<link name=\"l" + std::to_string(i) +
           "\"><inertial><mass value=\"1\"/><inertia ixx=\"0.01\" iyy=\"0.01\" izz=\"0.01\" "
           "ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>";
  for (int i = 0; i < n; ++i)
    xml += "<joint name=\"j" + std::to_string(i) + "\" type=\"continuous\"><parent link=\"" +
           (i ? "l" + std::to_string(i - 1) : std::string("base")) + "\"/><child link=\"l" +
           std::to_string(i) + "\"/><origin xyz=\"0 0 0.1\"/><axis xyz=\"0 1 0\"/></joint>";
  xml += "</robot>";
  const ClusterModel m = buildClusterModel(parseUrdfString(xml));
  ASSERT_EQ(m.treeModel.nv, n);
  EXPECT_EQ(m.treeModel.parent[n - 1], n - 2);
  EXPECT_EQ(m.treeModel.bodyNames[n - 1], "l" + std::to_string(n - 1));
  // A workspace without dense matrices: linear size, and the mass-matrix calls say why they fail.
  ClusterData d(m, false);
  EXPECT_EQ(d.H.size(), 0);
  EXPECT_EQ(d.treeData.M.size(), 0);
  const VecX q = VecX::Zero(n);
  EXPECT_EQ(crba(m.treeModel, d.treeData, q), Status::InvalidArgument);
  EXPECT_NE(std::string(d.errorMessage()).find("without dense matrices"), std::string::npos);
  EXPECT_EQ(clusterMassMatrix(m, d, q), Status::InvalidArgument);
  ASSERT_EQ(ceAba(m, d, q, VecX::Ones(n), VecX::Zero(n)), Status::Ok) << d.errorMessage();
  EXPECT_TRUE(d.ydd.allFinite());
}

// ---- numerical edges -------------------------------------------------------------------------

// 1e6 rad/s on every independent velocity of the quadruped: Ok and finite, and CE-RNEA inverts
// CE-ABA to the (large) scale of the velocity products.
TEST(Robustness, VeryFastVelocities) {
  const ClusterModel m = loadModel(modelsPath("cd_quadruped.urdf"));
  ClusterData d(m);
  std::mt19937_64 rng(5);
  VecX y = VecX::Zero(m.nyq);
  y[6] = 1.0;
  const VecX ydot = test::randomVector(m.ny, rng, -1e6, 1e6);
  const VecX tau = test::randomVector(m.ny, rng);
  ASSERT_EQ(ceAbaIndependent(m, d, y, ydot, tau), Status::Ok) << d.errorMessage();
  ASSERT_TRUE(d.ydd.allFinite());
  const VecX q = d.q, v = d.v, ydd = d.ydd;
  ASSERT_EQ(ceRnea(m, d, q, v, ydd), Status::Ok) << d.errorMessage();
  EXPECT_TRUE(test::isClose(d.tauY, tau, 1e-9, ydd.cwiseAbs().maxCoeff()));
}

/// cd_geared_chain with a link's mass and inertia replaced.
std::string gearedChainWith(const std::string& link, const std::string& inertial) {
  std::string xml = test::readTextFile(modelsPath("cd_geared_chain.urdf"));
  const size_t l = xml.find("<link name=\"" + link + "\">");
  const size_t a = xml.find("<mass", l), b = xml.find("</inertial>", l);
  xml.replace(a, b - a, inertial);
  return xml;
}

TEST(Robustness, MasslessAndAxisFreeRotors) {
  struct Case {
    const char* what;
    std::string xml;
  };
  const Case cases[] = {
      {"massless rotor",
       gearedChainWith("elbow_rotor",
                       "<mass value=\"0\"/><inertia ixx=\"0\" ixy=\"0\" ixz=\"0\" "
                       "iyy=\"0\" iyz=\"0\" izz=\"0\"/>")},
      {"rotor without inertia about its axis",
       gearedChainWith("shoulder_rotor",
                       "<mass value=\"0.12\"/><inertia ixx=\"7e-05\" ixy=\"0\" "
                       "ixz=\"0\" iyy=\"0\" iyz=\"0\" izz=\"7e-05\"/>")},
      {"massless leaf link (tool)",
       gearedChainWith("tool",
                       "<mass value=\"0\"/><inertia ixx=\"0\" ixy=\"0\" ixz=\"0\" "
                       "iyy=\"0\" iyz=\"0\" izz=\"0\"/>")},
  };
  std::mt19937_64 rng(3);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    ClusterModel m;
    try {
      m = buildClusterModel(parseUrdfString(c.xml));
    } catch (const ModelError& e) {
      ADD_FAILURE() << e.what();
      continue;
    }
    ClusterData d(m);
    for (int i = 0; i < 20; ++i) {
      const VecX y = test::randomVector(m.nyq, rng, -2, 2);
      const VecX ydot = test::randomVector(m.ny, rng, -10, 10);
      const VecX tau = test::randomVector(m.ny, rng);
      const Status s = ceAbaIndependent(m, d, y, ydot, tau);
      ASSERT_EQ(s, Status::Ok) << d.errorMessage();  // the driven link carries the rotor
      ASSERT_TRUE(d.ydd.allFinite());
      const VecX q = d.q, v = d.v, ydd = d.ydd;
      ASSERT_EQ(ceRnea(m, d, q, v, ydd), Status::Ok);
      EXPECT_TRUE(test::isClose(d.tauY, tau, 1e-9));
      ASSERT_EQ(clusterMassMatrix(m, d, q), Status::Ok);
      EXPECT_TRUE(d.H.allFinite());
    }
  }
}

// A tree whose leaf is massless: its joint has no inertia to accelerate. ABA reports it
// (NotPositiveDefinite naming the body), never NaN with Ok.
TEST(Robustness, MasslessLeafOnItsOwnJoint) {
  const std::string xml = R"(<robot name="r">
  <link name="base"/>
  <link name="arm"><inertial><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="tip"><inertial><mass value="0"/>
    <inertia ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="base"/><child link="arm"/>
    <axis xyz="0 0 1"/></joint>
  <joint name="j2" type="continuous"><parent link="arm"/><child link="tip"/>
    <origin xyz="0.3 0 0"/><axis xyz="0 0 1"/></joint>
</robot>)";
  const ClusterModel m = buildClusterModel(parseUrdfString(xml));
  ClusterData d(m);
  const VecX q = vec({0.1, 0.2}), v = vec({1.0, 2.0}), tau = vec({0.5, 0.0});
  const Status s = ceAba(m, d, q, v, tau);
  EXPECT_TRUE(okFiniteOrNamed(s, d.errorMessage(), d.ydd, d.qdd));
  EXPECT_EQ(s, Status::NotPositiveDefinite);
  Data td(m.treeModel);
  const Status st = aba(m.treeModel, td, q, v, tau);
  EXPECT_TRUE(okFiniteOrNamed(st, td.errorMessage(), td.ddq));
  EXPECT_EQ(st, Status::NotPositiveDefinite);
  EXPECT_EQ(ceAba(m, d, q, v, tau), s);  // the workspace stays usable
  EXPECT_EQ(rnea(m.treeModel, td, q, v, vec({1.0, 1.0})), Status::Ok);
  EXPECT_TRUE(td.tau.allFinite());
}

/// The model loaded with warnings captured (stderr, where the "clusterdyn" logger writes).
template <typename Load>
auto loadCapturingWarnings(Load load, std::string& warnings) {
  const LogLevel level = logLevel();
  setLogLevel(LogLevel::Warn);
  ::testing::internal::CaptureStderr();
  auto m = load();
  warnings = ::testing::internal::GetCapturedStderr();
  setLogLevel(level);
  return m;
}

// A massless root body on a floating joint (cd_rsu_leg's pelvis has no <inertial>; loaded with
// ModelOptions::floatingBase): spinning the pelvis about the hip-yaw axis while hip_yaw turns
// back moves no mass, so the spanning tree's M is singular at every state, and the root's 6 x 6
// articulated inertia D has a Cholesky pivot at rounding level (of either sign). Without the
// working-precision pivot test of the dynamics (core/small_spd.hpp) most states returned Ok with
// an "inverse" off by a factor of 4 (computeClusterMinverse) or garbage accelerations. Every
// bundled model whose root link is massless, loaded with a floating base: the tree's aba and
// computeMinverse report NotPositiveDefinite naming the root body and the pivot ratio, with a
// load warning naming the link. The cluster model's H is singular too unless a gear ties the
// base to a massive body (a rotor on the base turns at N times the joint: cd_belt_leg,
// cd_geared_chain, revolute_rotor_chain, mit_humanoid_leg): then CE-ABA, its derivatives and
// computeClusterMinverse are Ok (H^-1 H = I), without a warning; else they report it, with the
// warning. The same files on their fixed root link are regular, without a warning.
TEST(Robustness, MasslessFloatingRootIsSingular) {
  struct Case {
    std::string file;
    bool singularH;
  };
  const std::vector<Case> cases = {{modelsPath("cd_rsu_leg.urdf"), true},
                                   {modelsPath("cd_differential.urdf"), true},
                                   {modelsPath("cd_mimic_gripper.urdf"), true},
                                   {sharedPath("urdfplus/double_pendulum.urdf"), true},
                                   {modelsPath("cd_belt_leg.urdf"), false},
                                   {modelsPath("cd_geared_chain.urdf"), false},
                                   {sharedPath("urdfplus/revolute_rotor_chain.urdf"), false},
                                   {sharedPath("urdfplus/mit_humanoid_leg.urdf"), false}};
  ModelOptions o;
  o.floatingBase = true;
  const std::string ratio = " x the largest diagonal entry";
  for (const Case& c : cases) {
    if (!std::ifstream(c.file)) continue;  // a shared model without the shared folder
    SCOPED_TRACE(c.file);
    std::string warnings, treeWarnings;
    const ClusterModel m = loadCapturingWarnings([&] { return loadModel(c.file, o); }, warnings);
    const Model tm = loadCapturingWarnings([&] { return loadTreeModel(c.file, o); }, treeWarnings);
    const std::string root = m.treeModel.bodyNames[0];
    const std::string warned = "link '" + root + "' is a floating base without mass or inertia";
    EXPECT_NE(treeWarnings.find(warned), std::string::npos) << treeWarnings;
    EXPECT_NE(treeWarnings.find("(articulated inertia of body '" + root + "' is singular"),
              std::string::npos)
        << treeWarnings;
    EXPECT_EQ(warnings.find(warned) != std::string::npos, c.singularH) << warnings;
    ClusterData d(m);
    ClusterDerivativeData dd(m);
    Data td(tm);
    DerivativeData tdd(tm);
    std::mt19937_64 rng(17);
    const std::string body = "articulated inertia of body '" + root + "' is singular";
    for (int s = 0; s < 6; ++s) {
      support::ClosedState st;
      ASSERT_TRUE(support::randomClosedStateNearReference(m, d, rng, st, 0.2, 20));
      SCOPED_TRACE("state " + std::to_string(s));
      const VecX tau = VecX::Ones(m.ny), tauq = VecX::Ones(tm.nv);
      EXPECT_EQ(aba(tm, td, st.q, st.v, tauq), Status::NotPositiveDefinite);
      EXPECT_NE(std::string(td.errorMessage()).find(body), std::string::npos) << td.errorMessage();
      EXPECT_EQ(computeMinverse(tm, td, tdd, st.q), Status::NotPositiveDefinite);
      EXPECT_NE(std::string(td.errorMessage()).find(ratio), std::string::npos) << td.errorMessage();
      EXPECT_EQ(td.pivotFloor, 1e-11);  // the workspace's floor, unchanged
      if (!c.singularH) {
        ASSERT_EQ(ceAba(m, d, st.q, st.v, tau), Status::Ok) << d.errorMessage();
        ASSERT_EQ(computeCeAbaDerivatives(m, d, dd, st.q, st.v, tau), Status::Ok)
            << d.errorMessage();
        ASSERT_EQ(computeClusterMinverse(m, d, dd, st.q), Status::Ok) << d.errorMessage();
        ASSERT_EQ(clusterMassMatrix(m, d, st.q), Status::Ok) << d.errorMessage();
        EXPECT_LE((dd.Hinv * d.H - MatX::Identity(m.ny, m.ny)).cwiseAbs().maxCoeff(), 1e-9);
        continue;
      }
      EXPECT_EQ(ceAba(m, d, st.q, st.v, tau), Status::NotPositiveDefinite);
      EXPECT_NE(std::string(d.errorMessage()).find(body), std::string::npos) << d.errorMessage();
      EXPECT_NE(std::string(d.errorMessage()).find(ratio), std::string::npos) << d.errorMessage();
      EXPECT_EQ(computeCeAbaDerivatives(m, d, dd, st.q, st.v, tau), Status::NotPositiveDefinite);
      EXPECT_EQ(computeClusterMinverse(m, d, dd, st.q), Status::NotPositiveDefinite);
      EXPECT_NE(std::string(d.errorMessage()).find("of cluster '" + root + "' is singular"),
                std::string::npos)
          << d.errorMessage();
      EXPECT_NE(std::string(d.errorMessage()).find(ratio), std::string::npos) << d.errorMessage();
      // The dense baselines factor H itself: the same floor, relative to H's diagonal.
      ConstraintSet set(m);
      set.addContact(m.treeModel.bodyNames.back(), ConstraintType::Point,
                     ReferenceFrame::LocalWorldAligned);
      ConstraintData cd(m, set);
      ConstrainedDerivativeData cdd(m, set);
      EXPECT_EQ(constrainedDynamicsDense(m, d, set, cd, st.q, st.v, tau, ProximalSettings()),
                Status::NotPositiveDefinite);
      EXPECT_NE(std::string(d.errorMessage()).find("not positive definite"), std::string::npos)
          << d.errorMessage();
      EXPECT_EQ(computeConstrainedDynamicsDerivatives(m, d, set, cdd, st.q, st.v, tau),
                Status::NotPositiveDefinite);
      EXPECT_NE(std::string(d.errorMessage()).find("not positive definite"), std::string::npos)
          << d.errorMessage();
      // The Delassus passes and proxPv on the plain articulated inertias take the same floor:
      // J H^-1 J^T, its damped inverse and proxPv's free motion do not exist. Without it,
      // delassusMatrix returned Ok on 9 of 32 such states (5 off by 0.3 % - 6 % from J H^+ J^T,
      // whose rows miss H's null space), dampedDelassusInverse on 28 of 64 (18 off by 0.07 % -
      // 3000 %), proxPv on 4 of 32.
      for (ConstraintType type : {ConstraintType::Point, ConstraintType::Weld}) {
        ConstraintSet contact(m);
        contact.addContact(m.treeModel.bodyNames.back(), type, ReferenceFrame::LocalWorldAligned);
        ConstraintData ccd(m, contact);
        EXPECT_EQ(delassusMatrix(m, d, contact, ccd, st.q), Status::NotPositiveDefinite);
        EXPECT_NE(std::string(d.errorMessage()).find(ratio), std::string::npos) << d.errorMessage();
        for (double rho : {1e-2, 1e-8}) {
          EXPECT_EQ(dampedDelassusInverse(m, d, contact, ccd, st.q, rho),
                    Status::NotPositiveDefinite);
          EXPECT_NE(std::string(d.errorMessage()).find(ratio), std::string::npos)
              << d.errorMessage();
        }
        EXPECT_EQ(proxPv(m, d, contact, ccd, st.q, st.v, tau), Status::NotPositiveDefinite);
        EXPECT_NE(std::string(d.errorMessage()).find(ratio), std::string::npos) << d.errorMessage();
        EXPECT_EQ(d.treeData.pivotFloor, 1e-11);
      }
    }
    // The same file on its fixed root link is regular, without the warning.
    std::string fixedWarnings;
    const ClusterModel fixed =
        loadCapturingWarnings([&] { return loadModel(c.file); }, fixedWarnings);
    EXPECT_EQ(fixedWarnings.find("floating base"), std::string::npos) << fixedWarnings;
    ClusterData fd(fixed);
    ClusterDerivativeData fdd(fixed);
    support::ClosedState st;
    ASSERT_TRUE(support::randomClosedStateNearReference(fixed, fd, rng, st, 0.2, 20));
    EXPECT_EQ(ceAba(fixed, fd, st.q, st.v, VecX::Ones(fixed.ny)), Status::Ok) << fd.errorMessage();
    EXPECT_EQ(computeClusterMinverse(fixed, fd, fdd, st.q), Status::Ok) << fd.errorMessage();
  }
}

// The constrained and Delassus passes factor inertias augmented by mu C^T C with the plain test
// (pivots > 0; a floor relative to the augmented diagonal rejected rho = 1e-10 on the MIT
// humanoid, SolverAccuracy.DampedDelassusInverseWithinItsBound) and restore the workspace's floor
// for the dynamics that follow.
TEST(Robustness, ConstrainedPassesRestoreThePivotFloor) {
  const ClusterModel cm = loadModel(modelsPath("cd_belt_leg.urdf"));
  ClusterData data(cm);
  ConstraintSet set(cm);
  set.addContact("foot", ConstraintType::Point);
  ConstraintData cd(cm, set);
  std::mt19937_64 rng(5);
  support::ClosedState st;
  ASSERT_TRUE(support::randomClosedStateNearReference(cm, data, rng, st, 0.2, 20));
  const VecX tau = VecX::Ones(cm.ny);
  for (double rho : {1e-2, 1e-10}) {
    EXPECT_EQ(dampedDelassusInverse(cm, data, set, cd, st.q, rho), Status::Ok)
        << data.errorMessage();
    EXPECT_EQ(data.treeData.pivotFloor, 1e-11);
  }
  EXPECT_EQ(delassusMatrix(cm, data, set, cd, st.q), Status::Ok) << data.errorMessage();
  EXPECT_EQ(data.treeData.pivotFloor, 1e-11);
  ProximalSettings ps;
  EXPECT_EQ(constrainedAba(cm, data, set, cd, st.q, st.v, tau, ps), Status::Ok)
      << data.errorMessage();
  EXPECT_EQ(data.treeData.pivotFloor, 1e-11);
  EXPECT_EQ(proxPv(cm, data, set, cd, st.q, st.v, tau, ps), Status::Ok) << data.errorMessage();
  EXPECT_EQ(data.treeData.pivotFloor, 1e-11);
}

// A floating base whose root link has an inertia: no warning, and the dynamics are regular; the
// same robot with a massless base link: the warning names the link and the singular pivot.
TEST(Robustness, MassiveFloatingRootLoadsWithoutWarning) {
  const auto robot = [](const std::string& baseMass, const std::string& baseInertia) {
    return R"(<robot name="r">
  <link name="base"><inertial><mass value=")" +
           baseMass + R"("/><inertia )" + baseInertia + R"(/></inertial></link>
  <link name="arm"><inertial><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="base"/><child link="arm"/>
    <origin xyz="0.2 0 0"/><axis xyz="0 0 1"/></joint>
</robot>)";
  };
  ModelOptions o;
  o.floatingBase = true;
  std::string warnings;
  const ClusterModel m = loadCapturingWarnings(
      [&] {
        return buildClusterModel(
            parseUrdfString(
                robot("2", R"(ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04")")),
            o);
      },
      warnings);
  EXPECT_EQ(warnings.find("floating base"), std::string::npos) << warnings;
  ClusterData d(m);
  const VecX q = neutralConfiguration(m.treeModel);
  EXPECT_EQ(ceAba(m, d, q, VecX::Zero(m.ny), VecX::Ones(m.ny)), Status::Ok) << d.errorMessage();
  const ClusterModel mm = loadCapturingWarnings(
      [&] {
        return buildClusterModel(
            parseUrdfString(robot("0", R"(ixx="0" ixy="0" ixz="0" iyy="0" iyz="0" izz="0")")), o);
      },
      warnings);
  EXPECT_NE(warnings.find("<string>:2: link 'base' is a floating base without mass or inertia"),
            std::string::npos)
      << warnings;
  EXPECT_NE(warnings.find("the mass matrix is singular (articulated inertia of body 'base' is "
                          "singular along its joint 'root_joint' ("),
            std::string::npos)
      << warnings;
  ClusterData md(mm);
  EXPECT_EQ(ceAba(mm, md, q, VecX::Zero(mm.ny), VecX::Ones(mm.ny)), Status::NotPositiveDefinite);
  EXPECT_NE(std::string(md.errorMessage()).find("body 'base'"), std::string::npos)
      << md.errorMessage();
}

// Newton started far from a solution (random spanning q, projection) on every bundled loop
// model: a closed state or ConstraintFailure, never Ok with an open loop.
TEST(Robustness, NewtonFromFarAway) {
  std::mt19937_64 rng(17);
  for (const char* file : {"cd_four_bar.urdf", "cd_six_bar.urdf", "cd_quadruped.urdf",
                           "cd_belt_leg.urdf", "cd_differential.urdf"}) {
    SCOPED_TRACE(file);
    const ClusterModel m = loadModel(modelsPath(file));
    ClusterData d(m);
    int ok = 0;
    for (int i = 0; i < 50; ++i) {
      VecX q = m.qReference + test::randomVector(m.treeModel.nq, rng, -3, 3);
      normalizeConfiguration(m.treeModel, q);
      const VecX v = test::randomVector(m.treeModel.nv, rng, -5, 5);
      const Status s = projectToConstraints(m, d, q, v);
      ASSERT_TRUE(s == Status::Ok || s == Status::ConstraintFailure) << statusName(s);
      if (s != Status::Ok) {
        EXPECT_NE(std::string(d.errorMessage()).find("cluster '"), std::string::npos);
        continue;
      }
      ++ok;
      const VecX qc = d.q, vc = d.v;
      EXPECT_TRUE(isClosed(m, qc, vc, 1e-8));
      ASSERT_EQ(ceAba(m, d, qc, vc, VecX::Zero(m.ny)), Status::Ok) << d.errorMessage();
      EXPECT_TRUE(d.qdd.allFinite());
    }
    EXPECT_GT(ok, 25);  // most random starts close
  }
}

// The six-bar swept through full crank turns, both directions, by warm-started closure:
// every call is Ok and finite or a named ConstraintFailure; near a dead point of the plate-
// driven second loop Kd is reported, not inverted.
TEST(Robustness, SixBarSweep) {
  const ClusterModel m = loadModel(modelsPath("cd_six_bar.urdf"));
  ClusterData d(m);
  int ok = 0, failed = 0;
  for (int i = -720; i <= 720; ++i) {
    const double y0 = i * M_PI / 360.0;
    const Status s = ceAbaIndependent(m, d, vec({y0}), vec({3.0}), vec({0.01}));
    EXPECT_TRUE(okFiniteOrNamed(s, d.errorMessage(), d.ydd, d.qdd, d.q, d.v));
    if (s == Status::Ok) {
      ++ok;
      EXPECT_LE(d.lastResidual, 1e-12);
    } else {
      ++failed;
      EXPECT_EQ(s, Status::ConstraintFailure);
    }
  }
  EXPECT_GT(ok, 1000);
  RecordProperty("six_bar_failures", failed);
}

// At a dead point constructed on the crossed four-bar branch: ceAba and the closure report the
// conditioning instead of dividing by ~0.
TEST(Robustness, ConditioningInMessage) {
  CLUSTERDYN_SKIP_WITHOUT_SHARED(sharedPath("urdfplus/four_bar.urdf"));
  const ClusterModel m = loadModel(sharedPath("urdfplus/four_bar.urdf"));
  ClusterData d(m);
  ASSERT_EQ(solveLoopClosure(m, d, vec({1e-7})), Status::ConstraintFailure);
  const std::string msg = d.errorMessage();
  // "smallest singular value 7.5e-06": parse the number and compare with the geometry: at the
  // aligned configuration Kd = [[~0, ~0], [1, 0.5]] (selected rows x, y of the loop point).
  const size_t at = msg.find("smallest singular value ");
  ASSERT_NE(at, std::string::npos) << msg;
  const double sigma = std::stod(msg.substr(at + 24));
  EXPECT_GT(sigma, 0.0);
  EXPECT_LT(sigma, kClosureSettings.singularTolerance * 1.2);
}

}  // namespace
}  // namespace clusterdyn
