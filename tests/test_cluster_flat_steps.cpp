// CE-ABA's fused steps of flat scalar clusters (cluster_aba_flat.cpp: explicit, one independent
// coordinate, every body on the output body) and the rotors of two- and three-coordinate clusters
// in their output body's frame (articulatedFixed, accelerationsOf), both taken without external
// forces, against the generic steps they replace (cluster_aba_step.cpp: taken by the same call
// with zero external forces) and against the dense spanning-tree oracle
// G^T M G y_ddot = G^T (tau - c - M g).
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <sstream>

#include "closed_states.hpp"
#include "cluster/cluster_workspace.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "clusterdyn/constraint_forces.hpp"
#include "dense_oracles.hpp"
#include "test_util.hpp"

using namespace clusterdyn;

namespace {

std::string inertial(double m, const char* com, double ixx, double iyy, double izz) {
  std::ostringstream os;
  os << "<inertial><origin xyz=\"" << com << "\"/><mass value=\"" << m << "\"/><inertia ixx=\""
     << ixx << "\" iyy=\"" << iyy << "\" izz=\"" << izz
     << "\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>";
  return os.str();
}

std::string joint(const char* name, const char* type, const char* parent, const char* child,
                  const char* xyz, const char* rpy, const char* axis, const char* extra = "") {
  std::ostringstream os;
  os << "  <joint name=\"" << name << "\" type=\"" << type << "\"" << extra << "><parent link=\""
     << parent << "\"/><child link=\"" << child << "\"/><origin xyz=\"" << xyz << "\" rpy=\"" << rpy
     << "\"/><axis xyz=\"" << axis << "\"/>"
     << (std::string(type) == "continuous"
             ? ""
             : "<limit lower=\"-3\" upper=\"3\" effort=\"10\" velocity=\"10\"/>")
     << "</joint>\n";
  return os.str();
}

// Flat clusters of every shape the fused steps accept:
// - on the world: a turret driven by a rotor that is the independent coordinate (G_link = 1/9);
// - a shoulder whose cluster also holds a cam (a non-axisymmetric body coupled to the same rotor:
//   a second link) and whose link carries a tree joint below it (its IA is not rigid);
// - a mimic pair of fingers on the forearm (no rotor at all);
// - a non-flat cluster (a rotor driving a joint below another joint) as a control.
std::string flatShapesUrdf() {
  std::ostringstream os;
  os << "<robot name=\"flat_shapes\">\n"
     << "  <link name=\"base\"/>\n"
     << "  <link name=\"turret\">" << inertial(1.1, "0.02 0 0.05", 0.004, 0.005, 0.003)
     << "</link>\n"
     << "  <link name=\"turret_rotor\">" << inertial(0.2, "0 0 0.01", 8e-5, 8e-5, 1.2e-4)
     << "</link>\n"
     << "  <link name=\"arm\">" << inertial(0.9, "0.15 0.01 0", 0.002, 0.012, 0.011) << "</link>\n"
     << "  <link name=\"arm_rotor\">" << inertial(0.15, "0 0 0", 6e-5, 6e-5, 9e-5) << "</link>\n"
     << "  <link name=\"cam\">" << inertial(0.05, "0.01 0.02 0", 1e-5, 2e-5, 3e-5) << "</link>\n"
     << "  <link name=\"forearm\">" << inertial(0.6, "0.12 0 0.01", 0.001, 0.006, 0.006)
     << "</link>\n"
     << "  <link name=\"finger_l\">" << inertial(0.04, "0 0.01 0.02", 1e-5, 1e-5, 1e-5)
     << "</link>\n"
     << "  <link name=\"finger_r\">" << inertial(0.04, "0 -0.01 0.02", 1e-5, 1e-5, 1e-5)
     << "</link>\n"
     << "  <link name=\"wrist\">" << inertial(0.2, "0 0 -0.03", 2e-4, 3e-4, 1e-4) << "</link>\n"
     << "  <link name=\"hand\">" << inertial(0.3, "0.02 0 -0.05", 4e-4, 5e-4, 2e-4) << "</link>\n"
     << "  <link name=\"hand_rotor\">" << inertial(0.05, "0 0 0", 2e-5, 2e-5, 3e-5) << "</link>\n"
     << joint("turret_joint", "revolute", "base", "turret", "0 0 0.1", "0 0 0", "0 0 1",
              " independent=\"false\"")
     << joint("turret_rotor_joint", "continuous", "base", "turret_rotor", "0.05 0 0.02", "0 0 0",
              "0 0 1", " independent=\"true\"")
     << joint("shoulder", "revolute", "turret", "arm", "0 0.03 0.2", "0.2 0 0", "0 1 0",
              " independent=\"false\"")
     << joint("shoulder_rotor_joint", "continuous", "turret", "arm_rotor", "0 -0.04 0.15",
              "1.5707963 0 0", "0 0 1", " independent=\"true\"")
     << joint("cam_joint", "continuous", "turret", "cam", "0.03 0 0.1", "0 0.3 0", "1 0 0",
              " independent=\"false\"")
     << joint("elbow", "revolute", "arm", "forearm", "0.3 0 0", "0 0 0.1", "0 1 0")
     << joint("finger_l_joint", "prismatic", "forearm", "finger_l", "0.25 0 0", "0 0 0", "0 1 0")
     << joint("finger_r_joint", "prismatic", "forearm", "finger_r", "0.25 0 0", "0 0 0", "0 -1 0")
     << joint("wrist_joint", "revolute", "forearm", "wrist", "0.28 0 0", "0 0 0", "1 0 0",
              " independent=\"false\"")
     << joint("hand_joint", "revolute", "wrist", "hand", "0.04 0 0", "0 0 0", "0 1 0",
              " independent=\"false\"")
     << joint("hand_rotor_joint", "continuous", "forearm", "hand_rotor", "0.1 0 0", "0 0 0",
              "1 0 0", " independent=\"true\"")
     << "  <coupling name=\"turret_gear\"><predecessor link=\"turret_rotor\" ratio=\"0.1111\"/>"
        "<successor link=\"turret\"/></coupling>\n"
     << "  <coupling name=\"shoulder_gear\"><predecessor link=\"arm_rotor\" ratio=\"0.125\"/>"
        "<successor link=\"arm\"/></coupling>\n"
     << "  <coupling name=\"cam_gear\"><predecessor link=\"arm_rotor\" ratio=\"-0.5\"/>"
        "<successor link=\"cam\"/></coupling>\n"
     << "  <coupling name=\"hand_belt\"><predecessor link=\"hand_rotor\" ratio=\"0.2\"/>"
        "<successor link=\"hand\"/></coupling>\n"
     << "  <coupling name=\"wrist_mix\"><predecessor link=\"hand_rotor\" ratio=\"0.1\"/>"
        "<successor link=\"wrist\"/></coupling>\n"
     << "</robot>\n";
  // (finger_r mimics finger_l: added below as a standard <mimic>.)
  std::string s = os.str();
  const std::string mimic = "<axis xyz=\"0 -1 0\"/>";
  s.replace(s.find(mimic), mimic.size(),
            mimic + "<mimic joint=\"finger_l_joint\" multiplier=\"1\" offset=\"0\"/>");
  return s;
}

double maxDiff(const VecX& a, const VecX& b) { return (a - b).cwiseAbs().maxCoeff(); }
double maxDiff6(const Vec6& a, const Vec6& b) { return (a - b).cwiseAbs().maxCoeff(); }
double rel(const Vec6& a, const Vec6& b) {
  return maxDiff6(a, b) / (1.0 + b.cwiseAbs().maxCoeff());
}

int outputFrameRotors(const ClusterData& data, int minCoordinates) {
  int n = 0;
  const ClusterScratch& s = detail::fullScratch(data);
  for (const OutputFrameRotor& r : s.rotors) {
    const ClusterModel& cm = *data.model;
    n += r.aba && cm.clusters[cm.bodyCluster[r.body]].ny >= minCoordinates;
  }
  return n;
}

int flatClusters(const ClusterData& data) {
  int n = 0;
  for (const ClusterWorkspace& w : detail::scratch(data)) n += w.flatScalar;
  return n;
}

/// ceAba (fused flat steps) against ceAba with zero external forces (generic steps) and the dense
/// oracle, on random closed states; then ceAbaSpanningForces and the constraint forces.
void checkFlatSteps(const ClusterModel& cm, int minFlat) {
  ClusterData fast(cm), generic(cm), dense(cm);
  ASSERT_GE(flatClusters(fast), minFlat);
  const int n = cm.treeModel.nbodies;
  const std::vector<Force> zero(n, Force::Zero());
  JointForces ff(cm), fg(cm);
  std::mt19937_64 rng(20261125);
  for (int trial = 0; trial < 12; ++trial) {
    support::ClosedState s;
    ASSERT_TRUE(support::randomClosedStateNearReference(cm, fast, rng, s, 0.5, 40));
    const VecX v = s.v * (trial % 3 == 0 ? 0.0 : 3.0);  // also at rest
    const VecX tau = support::uniformVector(cm.ny, rng, -2.0, 2.0);
    ASSERT_EQ(ceAba(cm, fast, s.q, v, tau), Status::Ok) << fast.errorMessage();
    ASSERT_EQ(ceAba(cm, generic, s.q, v, tau, zero.data()), Status::Ok) << generic.errorMessage();
    const double scale = 1.0 + generic.ydd.cwiseAbs().maxCoeff();
    EXPECT_LE(maxDiff(fast.ydd, generic.ydd), 1e-12 * scale);
    EXPECT_LE(maxDiff(fast.qdd, generic.qdd), 1e-12 * scale);
    bool ok = false;
    const VecX ydd = oracle::denseClusterYdd(cm, dense, s.q, v, tau, &ok);
    ASSERT_TRUE(ok);
    EXPECT_LE(maxDiff(fast.ydd, ydd), 1e-9 * scale);
    // Every body's entries (the rotors' through updateRotorBodies).
    ASSERT_EQ(updateRotorBodies(cm, fast), Status::Ok);
    const Data& a = fast.treeData;
    const Data& b = generic.treeData;
    for (int i = 0; i < n; ++i) {
      SCOPED_TRACE(cm.treeModel.bodyNames[i]);
      EXPECT_LE((a.oMi[i].R - b.oMi[i].R).cwiseAbs().maxCoeff(), 1e-14);
      EXPECT_LE((a.oMi[i].p - b.oMi[i].p).cwiseAbs().maxCoeff(), 1e-14);
      EXPECT_LE(rel(a.v[i], b.v[i]), 1e-12);
      EXPECT_LE(rel(a.c[i], b.c[i]), 1e-12);
      EXPECT_LE(rel(a.a_gf[i], b.a_gf[i]), 1e-11);
      EXPECT_LE(rel(a.pA[i], b.pA[i]), 1e-11);
      EXPECT_LE((a.IA[i] - b.IA[i]).cwiseAbs().maxCoeff(),
                1e-12 * (1.0 + b.IA[i].cwiseAbs().maxCoeff()));
    }
    ASSERT_EQ(ceAbaConstraintForces(cm, fast, ff, tau), Status::Ok) << fast.errorMessage();
    ASSERT_EQ(ceAbaConstraintForces(cm, generic, fg, tau), Status::Ok);
    for (int i = 0; i < n; ++i) EXPECT_LE(rel(ff.joint[i], fg.joint[i]), 1e-11) << i;
    // Spanning generalized forces (mapped by G^T inside the steps).
    const VecX tauS = support::uniformVector(cm.treeModel.nv, rng, -2.0, 2.0);
    ASSERT_EQ(ceAbaSpanningForces(cm, fast, s.q, v, tauS), Status::Ok) << fast.errorMessage();
    ASSERT_EQ(ceAbaSpanningForces(cm, generic, s.q, v, tauS, zero.data()), Status::Ok);
    const double scaleS = 1.0 + generic.ydd.cwiseAbs().maxCoeff();
    EXPECT_LE(maxDiff(fast.ydd, generic.ydd), 1e-12 * scaleS);
    EXPECT_LE(maxDiff(fast.qdd, generic.qdd), 1e-12 * scaleS);
  }
}

}  // namespace

TEST(ClusterFlatSteps, EveryFlatShapeMatchesTheGenericStepsAndTheDenseOracle) {
  const ClusterModel cm = buildClusterModel(parseUrdfString(flatShapesUrdf()));
  // turret (on the world, rotor independent), shoulder + cam, the mimic fingers; the hand belt
  // (a joint inside the cluster) is not flat.
  ClusterData data(cm);
  int nonFlatConstrained = 0;
  for (size_t k = 0; k < cm.clusters.size(); ++k)
    nonFlatConstrained += cm.clusters[k].constrained() && !detail::scratch(data)[k].flatScalar;
  EXPECT_EQ(nonFlatConstrained, 1);
  checkFlatSteps(cm, 3);
}

TEST(ClusterFlatSteps, FloatingFlatShapesMatchTheGenericSteps) {
  ModelOptions options;
  options.floatingBase = true;
  checkFlatSteps(buildClusterModel(parseUrdfString(flatShapesUrdf()), options), 3);
}

TEST(ClusterFlatSteps, BundledRobotsMatchTheGenericSteps) {
  checkFlatSteps(loadModel(test::modelsPath("cd_quadruped.urdf")), 12);
  checkFlatSteps(loadModel(test::modelsPath("cd_geared_chain.urdf")), 3);
  checkFlatSteps(loadModel(test::modelsPath("cd_mimic_gripper.urdf")), 1);
  checkFlatSteps(loadModel(test::modelsPath("cd_belt_leg.urdf")), 1);
}

TEST(ClusterFlatSteps, ExternalForcesTakeTheGenericSteps) {
  // With external forces the fused steps are off: the result must still match the oracle
  // (tau + J^T f, checked through the zero-force identity and a nonzero force's linearity).
  const ClusterModel cm = buildClusterModel(parseUrdfString(flatShapesUrdf()));
  ClusterData data(cm);
  std::mt19937_64 rng(7);
  support::ClosedState s;
  ASSERT_TRUE(support::randomClosedStateNearReference(cm, data, rng, s, 0.5, 40));
  const VecX tau = support::uniformVector(cm.ny, rng, -2.0, 2.0);
  std::vector<Force> f(cm.treeModel.nbodies, Force::Zero());
  ASSERT_EQ(ceAba(cm, data, s.q, s.v, tau), Status::Ok);
  ASSERT_TRUE(detail::fullScratch(data).deferredRotors.pending);  // rotors in the output frame
  const VecX y0 = data.ydd;
  f[2] = Force::Constant(0.3);
  ASSERT_EQ(ceAba(cm, data, s.q, s.v, tau, f.data()), Status::Ok);
  const VecX y1 = data.ydd;
  f[2] *= 2.0;
  ASSERT_EQ(ceAba(cm, data, s.q, s.v, tau, f.data()), Status::Ok);
  const VecX y2 = data.ydd;
  EXPECT_GT(maxDiff(y1, y0), 1e-6);                                                // the force acts
  EXPECT_LE(maxDiff(y2 - y1, y1 - y0), 1e-10 * (1.0 + y2.cwiseAbs().maxCoeff()));  // linear in f
  EXPECT_FALSE(detail::fullScratch(data).deferredRotors.pending);  // every rotor written
}

TEST(ClusterFlatSteps, TwoCoordinateRotorsInTheOutputFrameMatchTheGenericSteps) {
  const ClusterModel cm = loadModel(test::modelsPath("cd_differential.urdf"));
  ASSERT_GE(outputFrameRotors(ClusterData(cm), 2), 2);
  checkFlatSteps(cm, 0);
}

TEST(ClusterFlatSteps, MitHumanoidKneeAnkleRotorsMatchTheGenericSteps) {
  const std::string file = test::sharedPath("urdfplus/mit_humanoid.urdf");
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "no " << file;
  const ClusterModel cm = loadModel(file);
  ASSERT_EQ(outputFrameRotors(ClusterData(cm), 2), 4);  // knee and ankle rotors of both legs
  checkFlatSteps(cm, 14);
}
