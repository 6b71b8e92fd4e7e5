// Analytical derivatives of CE-RNEA and CE-ABA (cluster_derivatives.hpp) against independent
// oracles: central finite differences on the closed manifold (independent joints moved by
// integrate, dependent ones re-closed on the same branch by the loop-closure solve, y_dot held
// fixed) with two Richardson steps; tau_y and H against ceRnea and clusterMassMatrix; H^-1 H = I;
// on models whose clusters are all trivial (G = I), the tree derivatives.
#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <filesystem>
#include <fstream>
#include <functional>

#include "closed_states.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "loop_model_generator.hpp"
#include "test_util.hpp"

namespace clusterdyn::test {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::string name;
  ClusterModel cm;
};

std::vector<Case> fileCases() {
  std::vector<std::string> files;
  for (const std::string& dir : {std::string(CLUSTERDYN_MODELS_DIR), sharedPath("urdfplus")})
    if (fs::exists(dir))
      for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".urdf" || e.path().extension() == ".xml")
          files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<Case> out;
  ModelOptions rigid;  // the rigid-body system (joint dynamics: FiniteDifferencesWithJointDynamics)
  rigid.jointDynamics = false;
  for (const std::string& f : files) {
    const UrdfDescription desc = parseModelFile(f);
    try {
      ClusterModel cm = buildClusterModel(desc, rigid);
      out.push_back({fs::path(f).filename().string(), std::move(cm)});
    } catch (const ModelError&) {  // a loop that cannot be embedded (a ball joint's free spin)
      ModelOptions cut = rigid;
      cut.cutLoops = true;
      out.push_back(
          {fs::path(f).filename().string() + " (loops cut)", buildClusterModel(desc, cut)});
    }
  }
  return out;
}

std::vector<Case> generatedCases() {
  std::vector<Case> out;
  int seed = 0;
  for (auto kind : testgen::allMechanismKinds()) {
    std::mt19937_64 rng(7300 + seed++);
    testgen::GeneratorOptions o;
    o.floatingBase = seed % 2;
    o.treeLinks = 2;
    o.mechanisms = 2;
    o.kinds = {kind, testgen::MechanismKind::CrankRocker};
    const auto r = testgen::generateLoopModel(rng, o);
    out.push_back({std::string("generated_") + testgen::mechanismName(kind),
                   buildClusterModel(parseUrdfString(r.urdf, "generated.urdf"))});
  }
  return out;
}

/// f at the closed state whose independent joints are integrate(q, dy) and with velocity y_dot:
/// the dependent joints re-closed from q (same branch), v = G y_dot.
constexpr double kFdTol = 1e-7;
constexpr double kFdStep = 2e-3;       // configuration (tangent of y)
constexpr double kVelocityStep = 0.1;  // y_dot

using Fn = std::function<VecX(const VecX& q, const VecX& v)>;
VecX atPerturbed(const ClusterModel& cm, ClusterData& data, const VecX& q, const VecX& dy,
                 const VecX& ydot, const Fn& f) {
  VecX dq = VecX::Zero(cm.treeModel.nv);
  for (int k = 0; k < cm.ny; ++k) dq[cm.independentVelocity[k]] = dy[k];
  const VecX qs = integrate(cm.treeModel, q, dq, 1.0);
  VecX y(cm.nyq);
  for (int k = 0; k < cm.nyq; ++k) y[k] = qs[cm.independentPosition[k]];
  EXPECT_EQ(setClosureWarmStart(cm, data, q), Status::Ok);
  EXPECT_EQ(independentToSpanning(cm, data, y, ydot), Status::Ok) << data.errorMessage();
  const VecX qc = data.q, vc = data.v;
  return f(qc, vc);
}

/// d f / d y (tangent) and d f / d y_dot by central differences: for y steps h, h / 2 and h / 4
/// with two Richardson steps (truncation O(h^6): the Stewart platform's closure is strongly
/// nonlinear, while the delta's light gimbal links leave rounding noise of about 1e-11 in
/// CE-ABA's y_ddot, which shorter steps would amplify); for y_dot kVelocityStep and its half.
void finiteDifferences(const ClusterModel& cm, ClusterData& data, const Fn& f, const VecX& q,
                       const VecX& ydot, MatX& dy, MatX& dyd, double h) {
  const int ny = cm.ny;
  dy.resize(ny, ny);
  dyd.resize(ny, ny);
  const VecX zero = VecX::Zero(ny);
  auto central = [&](int k, double step, bool config) {
    VecX e = VecX::Zero(ny);
    e[k] = step;
    if (config)
      return VecX((atPerturbed(cm, data, q, e, ydot, f) - atPerturbed(cm, data, q, -e, ydot, f)) /
                  (2.0 * step));
    // y_dot: the functions are quadratic in y_dot (exact central differences at any step), so a
    // long step keeps the rounding error of f small.
    e *= kVelocityStep / h;
    return VecX((atPerturbed(cm, data, q, zero, ydot + e, f) -
                 atPerturbed(cm, data, q, zero, ydot - e, f)) /
                (2.0 * e[k]));
  };
  for (int k = 0; k < ny; ++k) {
    const VecX d1 = central(k, h, true), d2 = central(k, h / 2, true), d4 = central(k, h / 4, true);
    dy.col(k) = (16.0 * (4.0 * d4 - d2) - (4.0 * d2 - d1)) / 45.0;  // Richardson, twice
    dyd.col(k) = (4.0 * central(k, h / 2, false) - central(k, h, false)) / 3.0;
  }
}

double relErr(const MatX& a, const MatX& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

void checkModel(const Case& mc, int states, double* worst) {
  SCOPED_TRACE(mc.name);
  const ClusterModel& cm = mc.cm;
  ClusterData data(cm);
  ClusterDerivativeData dd(cm);
  std::mt19937_64 rng(17);
  int done = 0;
  double modelWorst = 0.0;
  for (int s = 0; s < states; ++s) {
    support::ClosedState st;
    if (!support::randomClosedStateNearReference(cm, data, rng, st, 0.2, 4)) continue;
    ++done;
    const VecX ydd = randomVector(cm.ny, rng);
    VecX tauY = randomVector(cm.ny, rng);
    const std::vector<Force> fx = randomForces(cm.treeModel, rng);
    const Force* fext = s % 2 ? fx.data() : nullptr;
    // CE-RNEA derivatives.
    ASSERT_EQ(computeCeRneaDerivatives(cm, data, dd, st.q, st.v, ydd, fext), Status::Ok)
        << data.errorMessage();
    const MatX dtau_dy = dd.dtau_dy, dtau_dydot = dd.dtau_dydot, H = dd.H;
    const VecX tauDd = dd.tauY;
    ASSERT_EQ(ceRnea(cm, data, st.q, st.v, ydd, fext), Status::Ok);
    EXPECT_LT(relErr(tauDd, data.tauY), 1e-11);
    ASSERT_EQ(clusterMassMatrix(cm, data, st.q), Status::Ok);
    EXPECT_LT(relErr(H, data.H), 1e-11);
    // H^-1 by the cluster-tree recursion against the inverse of the cluster CRBA's H.
    const MatX Hcrba = data.H;
    ASSERT_EQ(computeClusterMinverse(cm, data, dd, st.q), Status::Ok) << data.errorMessage();
    const MatX HinvRecursive = dd.Hinv;
    EXPECT_LT(relErr(HinvRecursive, MatX(Hcrba.inverse())), 1e-10) << "recursive H^-1";
    EXPECT_LT(relErr(HinvRecursive * Hcrba, MatX::Identity(cm.ny, cm.ny)), 1e-10);
    EXPECT_EQ(HinvRecursive, MatX(HinvRecursive.transpose()));
    MatX fdy, fdyd;
    const Fn rnea = [&](const VecX& q, const VecX& v) {
      EXPECT_EQ(ceRnea(cm, data, q, v, ydd, fext), Status::Ok) << data.errorMessage();
      return VecX(data.tauY);
    };
    finiteDifferences(cm, data, rnea, st.q, st.ydot, fdy, fdyd, kFdStep);
    const double e1 = relErr(dtau_dy, fdy), e2 = relErr(dtau_dydot, fdyd);
    EXPECT_LT(e1, kFdTol) << "dtau_dy state " << s << "\nanalytic\n" << dtau_dy << "\nfd\n" << fdy;
    EXPECT_LT(e2, kFdTol) << "dtau_dydot state " << s;
    // CE-ABA derivatives, at tau_y = CE-RNEA(random y_ddot): y_ddot of order 1 even where H is
    // ill-conditioned (light rods), so that the finite differences keep their digits.
    ASSERT_EQ(ceRnea(cm, data, st.q, st.v, tauY, fext), Status::Ok);
    tauY = data.tauY;
    ASSERT_EQ(computeCeAbaDerivatives(cm, data, dd, st.q, st.v, tauY, fext), Status::Ok)
        << data.errorMessage();
    const MatX dydd_dy = dd.dydd_dy, dydd_dydot = dd.dydd_dydot, Hinv = dd.Hinv;
    EXPECT_LT(relErr(Hinv * H, MatX::Identity(cm.ny, cm.ny)), 1e-9);
    // H^-1 of the branch-sparse factor (eq. C14-C16) against the cluster-tree recursion's.
    EXPECT_LT(relErr(Hinv, HinvRecursive), 1e-10) << "branch-sparse H^-1";
    EXPECT_EQ(Hinv, MatX(Hinv.transpose()));
    ASSERT_EQ(ceAba(cm, data, st.q, st.v, tauY, fext), Status::Ok);
    EXPECT_LT(relErr(dd.ydd, data.ydd), 1e-12);
    const Fn aba = [&](const VecX& q, const VecX& v) {
      EXPECT_EQ(ceAba(cm, data, q, v, tauY, fext), Status::Ok) << data.errorMessage();
      return VecX(data.ydd);
    };
    finiteDifferences(cm, data, aba, st.q, st.ydot, fdy, fdyd, kFdStep);
    const double e3 = relErr(dydd_dy, fdy), e4 = relErr(dydd_dydot, fdyd);
    EXPECT_LT(e3, kFdTol) << "dydd_dy state " << s;
    EXPECT_LT(e4, kFdTol) << "dydd_dydot state " << s;
    // RNEA at the CE-ABA result gives tau back, and its derivatives are those left by ABA.
    ASSERT_EQ(computeCeRneaDerivatives(cm, data, dd, st.q, st.v, VecX(dd.ydd), fext), Status::Ok);
    EXPECT_LT(relErr(dd.tauY, tauY), 1e-10);
    EXPECT_LT(relErr(-Hinv * dd.dtau_dy, dydd_dy), 1e-10);
    for (double e : {e1, e2, e3, e4}) {
      *worst = std::max(*worst, e);
      modelWorst = std::max(modelWorst, e);
    }
  }
  EXPECT_GT(done, 0) << "no closed state";
  std::printf("  %-40s ny %3d  largest relative error %.2e\n", mc.name.c_str(), cm.ny, modelWorst);
}

TEST(ClusterDerivatives, FiniteDifferencesOnModelFiles) {
  const std::vector<Case> cases = fileCases();
  ASSERT_FALSE(cases.empty());
  if (!fs::exists(sharedPath("urdfplus"))) std::printf("shared urdfplus folder absent: skipped\n");
  double worst = 0.0;
  for (const Case& c : cases) checkModel(c, 4, &worst);
  std::printf("largest relative error against finite differences: %.2e\n", worst);
}

TEST(ClusterDerivatives, FiniteDifferencesOnGeneratedMechanisms) {
  double worst = 0.0;
  for (const Case& c : generatedCases()) checkModel(c, 4, &worst);
  std::printf("largest relative error against finite differences: %.2e\n", worst);
}

/// A planar or floating joint inside a loop cluster (dependent as a whole): a crank and a rocker
/// (independent revolutes), a coupler on the crank by a planar joint (plane normal z) or on the
/// base by a floating joint, welded to the rocker by a fixed <loop> (the rocker's axis tilted
/// for the floating one, so that the coupler moves in 3D).
ClusterModel weldedCoupler(const std::string& type) {
  const std::string in =
      R"(<inertial><origin xyz="0.1 0.05 0"/><mass value="1"/><inertia ixx="0.02" ixy="0" )"
      R"(ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial>)";
  const bool floating = type == "floating";
  const std::string urdf =
      "<robot name=\"welded_" + type + "\"><link name=\"base\"/><link name=\"crank\">" + in +
      "</link><link name=\"coupler\">" + in + "</link><link name=\"rocker\">" + in +
      "</link><joint name=\"crank_joint\" type=\"continuous\"><parent link=\"base\"/>"
      "<child link=\"crank\"/><axis xyz=\"0 0 1\"/></joint><joint name=\"coupler_joint\" "
      "type=\"" +
      type + "\"><parent link=\"" + (floating ? "base" : "crank") +
      "\"/><child link=\"coupler\"/><origin xyz=\"0.2 0 0\"/><axis xyz=\"0 0 1\"/></joint>"
      "<joint name=\"rocker_joint\" type=\"continuous\"><parent link=\"base\"/><child "
      "link=\"rocker\"/><origin xyz=\"0.5 0.1 0\"/><axis xyz=\"" +
      (floating ? "0 0.6 0.8" : "0 0 1") +
      "\"/></joint><loop name=\"weld\" type=\"fixed\"><predecessor link=\"coupler\"><origin "
      "xyz=\"0.3 0.1 0\"/></predecessor><successor link=\"rocker\"/></loop></robot>";
  ModelOptions rigid;
  rigid.jointDynamics = false;
  return buildClusterModel(parseUrdfString(urdf, "welded.urdf"), rigid);
}

TEST(ClusterDerivatives, FiniteDifferencesOnPlanarAndFloatingJointsInLoops) {
  double worst = 0.0;
  for (const std::string type : {"planar", "floating"}) {
    Case c{"welded_" + type, weldedCoupler(type)};
    bool multiDof = false;
    for (const Cluster& k : c.cm.clusters) multiDof |= k.implicit() && k.nv > k.nbodies;
    ASSERT_TRUE(multiDof) << type;
    checkModel(c, 4, &worst);
  }
  std::printf("largest relative error against finite differences: %.2e\n", worst);
}

/// Models without chords (G = I, g = 0): the cluster derivatives are the tree derivatives.
TEST(ClusterDerivatives, TrivialClustersGiveTreeDerivatives) {
  int checked = 0;
  for (const Case& mc : fileCases()) {
    const ClusterModel& cm = mc.cm;
    if (cm.hasLoops()) continue;
    SCOPED_TRACE(mc.name);
    ++checked;
    ClusterData data(cm);
    ClusterDerivativeData dd(cm);
    Data td(cm.treeModel);
    DerivativeData tdd(cm.treeModel);
    std::mt19937_64 rng(5);
    const VecX q = randomConfiguration(cm.treeModel, rng, 1.0);
    const VecX v = randomVector(cm.ny, rng), tau = randomVector(cm.ny, rng);
    const std::vector<Force> fx = randomForces(cm.treeModel, rng);
    ASSERT_EQ(computeCeAbaDerivatives(cm, data, dd, q, v, tau, fx.data()), Status::Ok);
    ASSERT_EQ(computeABADerivatives(cm.treeModel, td, tdd, q, v, tau, fx.data()), Status::Ok);
    EXPECT_LT(relErr(dd.dtau_dy, tdd.dtau_dq), 1e-12);
    EXPECT_LT(relErr(dd.dtau_dydot, tdd.dtau_dv), 1e-12);
    EXPECT_LT(relErr(dd.dydd_dy, tdd.ddq_dq), 1e-9);
    EXPECT_LT(relErr(dd.dydd_dydot, tdd.ddq_dv), 1e-9);
    EXPECT_LT(relErr(dd.Hinv, tdd.Minv), 1e-9);
  }
  EXPECT_GT(checked, 0);
}

/// Models with couplings, mimics or rotors but no loop joint (G constant): the backward pass that
/// folds each cluster's rows with G (docs/derivatives.md, eq. F1-F3) against G^T (d tau / dq,
/// d tau / dv, M) G of the spanning tree's own RNEA derivatives at a = G ydd, with and without
/// external forces (rotors in their output body's frame, or bodies of their own); a workspace
/// reused over the states gives what a fresh one gives (each call zeroes the blocks it writes).
TEST(ClusterDerivatives, FoldedRowsEqualSpanningTreeProducts) {
  int checked = 0;
  for (const Case& mc : fileCases()) {
    const ClusterModel& cm = mc.cm;
    if (!cm.hasLoops() || cm.hasImplicitClusters()) continue;
    SCOPED_TRACE(mc.name);
    ++checked;
    MatX G = MatX::Zero(cm.treeModel.nv, cm.ny);
    for (const Cluster& c : cm.clusters) G.block(c.v0, c.y0, c.nv, c.ny) = c.G;
    ClusterData data(cm);
    ClusterDerivativeData dd(cm);
    Data td(cm.treeModel);
    DerivativeData tdd(cm.treeModel);
    std::mt19937_64 rng(23);
    for (int s = 0; s < 4; ++s) {
      support::ClosedState st;
      ASSERT_TRUE(support::randomClosedStateNearReference(cm, data, rng, st, 0.3, 4));
      const VecX ydd = randomVector(cm.ny, rng);
      const std::vector<Force> fx = randomForces(cm.treeModel, rng);
      const Force* fext = s % 2 ? fx.data() : nullptr;
      ASSERT_EQ(computeCeRneaDerivatives(cm, data, dd, st.q, st.v, ydd, fext), Status::Ok);
      ASSERT_EQ(computeRNEADerivatives(cm.treeModel, td, tdd, st.q, st.v, G * ydd, fext),
                Status::Ok);
      EXPECT_LT(relErr(dd.dtau_dy, G.transpose() * tdd.dtau_dq * G), 1e-12) << "state " << s;
      EXPECT_LT(relErr(dd.dtau_dydot, G.transpose() * tdd.dtau_dv * G), 1e-12) << "state " << s;
      EXPECT_LT(relErr(dd.H, G.transpose() * tdd.dtau_da * G), 1e-12) << "state " << s;
      EXPECT_LT(relErr(dd.tauY, G.transpose() * tdd.tau), 1e-12) << "state " << s;
      EXPECT_EQ(dd.H, MatX(dd.H.transpose()));
      ClusterData freshData(cm);
      ClusterDerivativeData fresh(cm);
      ASSERT_EQ(computeCeRneaDerivatives(cm, freshData, fresh, st.q, st.v, ydd, fext), Status::Ok);
      EXPECT_EQ(dd.dtau_dy, fresh.dtau_dy);
      EXPECT_EQ(dd.dtau_dydot, fresh.dtau_dydot);
      EXPECT_EQ(dd.H, fresh.H);
    }
  }
  EXPECT_GE(checked, 5);
}

TEST(ClusterDerivatives, RejectsBadArguments) {
  const std::vector<Case> cases = generatedCases();
  const auto loop = std::find_if(cases.begin(), cases.end(),
                                 [](const Case& c) { return c.cm.hasImplicitClusters(); });
  ASSERT_NE(loop, cases.end());
  const ClusterModel& cm = loop->cm;
  const ClusterModel& other = cases.front().cm;
  ClusterData data(cm);
  ClusterDerivativeData dd(cm), ddOther(other);
  std::mt19937_64 rng(3);
  support::ClosedState st;
  ASSERT_TRUE(support::randomClosedStateNearReference(cm, data, rng, st, 0.2, 4));
  const VecX y = VecX::Zero(cm.ny);
  EXPECT_EQ(computeCeRneaDerivatives(cm, data, dd, st.q, st.v, VecX::Zero(cm.ny + 1)),
            Status::InvalidSize);
  EXPECT_NE(std::string(data.errorMessage()).find("ydd"), std::string::npos);
  EXPECT_EQ(computeCeAbaDerivatives(cm, data, ddOther, st.q, st.v, y), Status::WorkspaceMismatch);
  VecX bad = st.q;
  for (const Cluster& c : cm.clusters)
    if (c.implicit())
      bad[cm.treeModel.idx_q[cm.treeModel.velocityOwner[c.v0 + c.dependent[0]]]] += 0.1;
  ASSERT_NE(bad, st.q);
  EXPECT_EQ(computeCeRneaDerivatives(cm, data, dd, bad, st.v, y), Status::ConstraintFailure);
}

// Models without loop joints take the relation check of the CE-RNEA derivatives (no cluster
// velocity pass): a violated coupling, in position or in velocity, is ConstraintFailure.
TEST(ClusterDerivatives, ConstantGRejectsOpenStates) {
  const ClusterModel cm = buildClusterModel(
      parseUrdfFile(std::string(CLUSTERDYN_MODELS_DIR) + "/cd_geared_chain.urdf"));
  ASSERT_FALSE(cm.hasImplicitClusters());
  ASSERT_TRUE(cm.hasLoops());  // couplings
  ClusterData data(cm);
  ClusterDerivativeData dd(cm);
  std::mt19937_64 rng(5);
  support::ClosedState st;
  ASSERT_TRUE(support::randomClosedState(cm, data, rng, st));
  const VecX y = VecX::Zero(cm.ny);
  ASSERT_EQ(computeCeRneaDerivatives(cm, data, dd, st.q, st.v, y), Status::Ok);
  const auto dependent = std::find_if(cm.clusters.begin(), cm.clusters.end(),
                                      [](const Cluster& c) { return !c.dependent.empty(); });
  ASSERT_NE(dependent, cm.clusters.end());
  const int dv = dependent->v0 + dependent->dependent[0];
  VecX q = st.q, v = st.v;
  q[cm.treeModel.idx_q[cm.treeModel.velocityOwner[dv]]] += 0.1;
  EXPECT_EQ(computeCeRneaDerivatives(cm, data, dd, q, st.v, y), Status::ConstraintFailure);
  v[dv] += 0.1;
  EXPECT_EQ(computeCeRneaDerivatives(cm, data, dd, st.q, v, y), Status::ConstraintFailure);
  EXPECT_EQ(computeCeRneaDerivatives(cm, data, dd, st.q, st.v, y), Status::Ok);
}

TEST(ClusterDerivatives, MinverseRejectsBadArguments) {
  const ClusterModel cm =
      buildClusterModel(parseUrdfFile(std::string(CLUSTERDYN_MODELS_DIR) + "/cd_four_bar.urdf"));
  ClusterData data(cm);
  ClusterDerivativeData dd(cm);
  EXPECT_EQ(computeClusterMinverse(cm, data, dd, cm.qReference), Status::Ok) << data.errorMessage();
  EXPECT_EQ(computeClusterMinverse(cm, data, dd, VecX::Zero(cm.treeModel.nq + 1)),
            Status::InvalidSize);
  VecX open = cm.qReference;
  open.array() += 0.3;  // every joint of the four-bar turned by 0.3 rad: the loop is open
  EXPECT_EQ(computeClusterMinverse(cm, data, dd, open), Status::ConstraintFailure);
  const ClusterModel other = cm;
  ClusterData otherData(other);
  EXPECT_EQ(computeClusterMinverse(other, otherData, dd, other.qReference),
            Status::WorkspaceMismatch);
}

/// Joint dynamics (MJCF armature, springs about springref, dampers) on every joint type of a
/// cluster tree, inside and outside a loop: a slide base carrying a four-bar (crank, coupler and
/// rocker with all three; the <connect> makes coupler and rocker dependent), a ball pendulum
/// (spring and damper per axis) on the rocker, outside the loop, and a geared pair (a joint
/// equality: a cluster whose G is constant but not the identity). `floating`: the base on a
/// free joint with armature and damping (MuJoCo rejects nothing here; the reader rejects springs
/// on free joints) instead of the slide.
std::string jointDynamicsMjcf(bool floating) {
  const std::string base =
      floating ? R"(<joint name="root" type="free" armature="0.02" damping="0.3"/>)"
               : R"(<joint name="lift" type="slide" axis="0 0 1" armature="0.05" damping="0.4"
                       stiffness="6" springref="0.03"/>)";
  return R"(<mujoco model="jd_loops">
  <compiler angle="radian"/>
  <option gravity="0 0 -9.81"/>
  <worldbody>
    <body name="base" pos="0 0 1">
      )" +
         base + R"(
      <inertial pos="0 0 0" mass="1.5" diaginertia="0.02 0.03 0.025"/>
      <body name="crank" euler="0 -1.5707963267949 0">
        <joint name="crank_joint" axis="0 1 0" armature="0.002" damping="0.05" stiffness="0.7"
               springref="0.2"/>
        <inertial pos="0.05 0 0" mass="0.12" diaginertia="1.025e-05 0.00010625 0.000104"/>
        <body name="coupler" pos="0.1 0 0" euler="0 1.14609113818024 0">
          <joint name="coupler_joint" axis="0 1 0" armature="0.001" damping="0.03"
                 stiffness="0.4" springref="-0.3"/>
          <inertial pos="0.14 0 0" mass="0.3" diaginertia="2.5625e-05 0.001975625 0.00197"/>
        </body>
      </body>
      <body name="rocker" pos="0.3 0 0" euler="0 -1.77621583219816 0">
        <joint name="rocker_joint" axis="0 1 0" armature="0.003" damping="0.04" stiffness="0.5"
               springref="-0.1"/>
        <inertial pos="0.11 0 0" mass="0.25"
                  diaginertia="2.13541667e-05 0.00102135417 0.00101666667"/>
        <body name="pendulum" pos="0.22 0 0">
          <joint name="swing" type="ball" armature="0.001" damping="0.02" stiffness="0.3"/>
          <inertial pos="0.02 0.01 -0.1" mass="0.2" diaginertia="0.0008 0.0007 0.0002"/>
        </body>
      </body>
      <body name="leader" pos="0 0.1 0">
        <joint name="leader_joint" axis="1 0 0" armature="0.004" damping="0.02" stiffness="0.8"
               springref="0.1"/>
        <inertial pos="0 0 -0.1" mass="0.3" diaginertia="0.001 0.0012 0.0004"/>
      </body>
      <body name="gear" pos="0 -0.1 0">
        <joint name="gear_joint" axis="0 0 1" armature="0.0005" damping="0.001" stiffness="0.05"
               springref="0.4"/>
        <inertial pos="0 0 0" mass="0.1" diaginertia="0.0001 0.0001 0.00015"/>
      </body>
    </body>
  </worldbody>
  <equality>
    <connect name="coupler_to_rocker" body1="coupler" body2="rocker" anchor="0.28 0 0"/>
    <joint name="gearing" joint1="gear_joint" joint2="leader_joint" polycoef="0 -3 0 0 0"/>
  </equality>
  <actuator>
    <motor joint="crank_joint"/>
    <motor joint="leader_joint"/>
  </actuator>
</mujoco>)";
}

/// The bundled MJCF files that carry joint dynamics, loaded with them, and jointDynamicsMjcf.
std::vector<Case> jointDynamicsCases() {
  std::vector<Case> out;
  for (const char* f : {"cd_geared_leg.xml", "cd_rod_hip.xml", "cd_rod_leg.xml"}) {
    ClusterModel cm =
        buildClusterModel(parseModelFile(std::string(CLUSTERDYN_MODELS_DIR) + "/" + f));
    EXPECT_TRUE(cm.treeModel.hasJointDynamics()) << f;
    out.push_back({f, std::move(cm)});
  }
  {  // The rod's ball as three hinges with a damper and a spring strong enough that dropping
     // their partials (J^T (-d J t_dot - k r), Model::ballHinges) fails the check.
    std::ifstream in(std::string(CLUSTERDYN_MODELS_DIR) + "/cd_rod_leg.xml");
    std::string xml((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string ball = "type=\"ball\" damping=\"0.01\"";
    const size_t at = xml.find(ball);
    EXPECT_NE(at, std::string::npos);
    if (at != std::string::npos) {
      xml.replace(at, ball.size(), "type=\"ball\" damping=\"0.8\" stiffness=\"1.5\"");
      ClusterModel cm = buildClusterModel(parseModelString(xml, "cd_rod_leg_sprung.xml"));
      EXPECT_EQ(cm.treeModel.ballHinges.size(), 1u);
      out.push_back({"cd_rod_leg.xml (ball d 0.8, k 1.5)", std::move(cm)});
    }
  }
  for (bool floating : {false, true}) {
    ClusterModel cm = buildClusterModel(parseModelString(jointDynamicsMjcf(floating)));
    EXPECT_TRUE(cm.treeModel.hasArmature() && cm.treeModel.hasPassiveForces());
    EXPECT_TRUE(cm.hasImplicitClusters());
    out.push_back({floating ? "jd_loops (free base)" : "jd_loops (slide base)", std::move(cm)});
  }
  return out;
}

TEST(ClusterDerivatives, FiniteDifferencesWithJointDynamics) {
  double worst = 0.0;
  for (const Case& c : jointDynamicsCases()) checkModel(c, 4, &worst);
  std::printf("largest relative error against finite differences: %.2e\n", worst);
}

/// The joint dynamics change the derivatives (well above the finite-difference tolerance, so
/// that FiniteDifferencesWithJointDynamics tests them) and on a model without loop joints, where
/// G is constant, exactly by G^T A G (H), G^T D G (d tau_y / d y_dot) against the model loaded
/// without them: the geared leg's rotors (armature on a joint whose G entry is the gear ratio).
TEST(ClusterDerivatives, JointDynamicsTermsOnConstantG) {
  const std::string path = std::string(CLUSTERDYN_MODELS_DIR) + "/cd_geared_leg.xml";
  const UrdfDescription desc = parseModelFile(path);
  ModelOptions rigidOptions;
  rigidOptions.jointDynamics = false;
  const ClusterModel cm = buildClusterModel(desc), rigid = buildClusterModel(desc, rigidOptions);
  ASSERT_TRUE(cm.treeModel.hasArmature() && cm.treeModel.hasPassiveForces());
  ASSERT_FALSE(cm.hasImplicitClusters());
  ClusterData data(cm), rigidData(rigid);
  ClusterDerivativeData dd(cm), rd(rigid);
  std::mt19937_64 rng(5);
  support::ClosedState st;
  ASSERT_TRUE(support::randomClosedStateNearReference(cm, data, rng, st, 0.2, 4));
  const VecX ydd = randomVector(cm.ny, rng);
  ASSERT_EQ(computeCeRneaDerivatives(cm, data, dd, st.q, st.v, ydd), Status::Ok)
      << data.errorMessage();
  ASSERT_EQ(computeCeRneaDerivatives(rigid, rigidData, rd, st.q, st.v, ydd), Status::Ok);
  // G (nv x ny) from G^T A G with unit armature on one spanning velocity at a time is not at
  // hand; H's difference is checked against clusterMassMatrix's, which adds G^T A G itself.
  ASSERT_EQ(clusterMassMatrix(cm, data, st.q), Status::Ok);
  const MatX Hjd = data.H;
  ASSERT_EQ(clusterMassMatrix(rigid, rigidData, st.q), Status::Ok);
  EXPECT_LT(relErr(MatX(dd.H - rd.H), MatX(Hjd - rigidData.H)), 1e-12);
  EXPECT_GT((dd.H - rd.H).cwiseAbs().maxCoeff(), 1e-4);             // the rotors' armature
  EXPECT_GT((dd.dtau_dy - rd.dtau_dy).cwiseAbs().maxCoeff(), 0.5);  // the springs
  // Damping: d tau_y / d y_dot gains G^T D G, symmetric and positive semidefinite.
  const MatX dD = dd.dtau_dydot - rd.dtau_dydot;
  EXPECT_GT(dD.cwiseAbs().maxCoeff(), 1e-3);
  EXPECT_LT((dD - dD.transpose()).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_GT(Eigen::SelfAdjointEigenSolver<MatX>(dD).eigenvalues().minCoeff(), -1e-12);
  // Minverse with armature against the inverse of the CRBA's H.
  ASSERT_EQ(computeClusterMinverse(cm, data, dd, st.q), Status::Ok) << data.errorMessage();
  EXPECT_LT(relErr(MatX(dd.Hinv * Hjd), MatX::Identity(cm.ny, cm.ny)), 1e-10);
}

}  // namespace
}  // namespace clusterdyn::test
