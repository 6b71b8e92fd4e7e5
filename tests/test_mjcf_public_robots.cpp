// Public MJCF robots with closed loops (third-party files, never copied into the project): read
// from $CLUSTERDYN_MJCF_ROBOTS_DIR (bash tools/fetch_mjcf_robots.sh DIR), skipped, saying so,
// when it is unset. MuJoCo is their oracle in python/tests/test_mjcf_public_robots.py; here
// CE-ABA runs with every loop embedded that can be and agrees with the same robot with every
// loop cut and solved as constraints (proxPv), and with its own dense form (H_y ydd + C_y = tau,
// CE-RNEA o CE-ABA = id). Cassie's achilles rods hang on ball joints whose spin no 1-dof
// coordinate carries; the ball independent instead would be too ill-conditioned a choice
// (docs/mjcf.md section 3): the builder replaces each ball by three hinges, which carry its
// damper (Model::ballHinges), and every loop embeds.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "ball_as_hinges.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "clusterdyn/constraints.hpp"
#include "clusterdyn/mjcf.hpp"
#include "clusterdyn/model_builder.hpp"
#include "test_util.hpp"

namespace clusterdyn::test {
namespace {

std::string robotFile(const std::string& rel) {
  const char* dir = std::getenv("CLUSTERDYN_MJCF_ROBOTS_DIR");
  if (!dir || !*dir) return "";
  const std::string p = std::string(dir) + "/" + rel;
  return std::filesystem::is_regular_file(p) ? p : "";
}

TEST(MjcfPublicRobots, CassieAchillesBallsBecomeHingesWithTheirDampers) {
  // Each achilles rod hangs on a ball joint (damping 0.01) at the hip and is connected at the
  // heel spring. Dependent, the ball's spin has no coordinate; independent, only the heel spring
  // (tilted 2 degrees from the leg's plane) can follow the rod's swing out of that plane, and the
  // dependent columns have sigma_min/sigma_max 0.016, below the reader's threshold 0.05. So the
  // builder replaces each ball by three hinges, which carry its damper, and every loop embeds.
  // With armature on the balls (which hinges cannot carry) the load fails: the error names the
  // loop, the ball joint, the ratio and the threshold, the armature, and suggests the cut.
  const std::string path = robotFile("cassie-mujoco-sim/model/cassie.xml");
  if (path.empty())
    GTEST_SKIP() << "CLUSTERDYN_MJCF_ROBOTS_DIR unset or without cassie-mujoco-sim "
                    "(bash tools/fetch_mjcf_robots.sh DIR)";
  const ClusterModel embedded = loadModel(path);
  EXPECT_EQ(embedded.cutLoops.size(), 0u);
  EXPECT_EQ(embedded.ny, 22);
  EXPECT_EQ(embedded.nyq, 23);
  ASSERT_EQ(embedded.treeModel.ballHinges.size(), 2u);
  for (const BallHingeGroup& g : embedded.treeModel.ballHinges) {
    EXPECT_NE(g.ball.find("achilles-rod"), std::string::npos) << g.ball;
    EXPECT_EQ(g.damping, 0.01);
  }
  UrdfDescription withArmature = parseMjcfFile(path).urdf;
  for (UrdfJoint& j : withArmature.joints)
    if (j.type == JointType::Spherical && j.name.find("achilles") != std::string::npos)
      j.armature = 0.001;
  try {
    buildClusterModel(withArmature);
    ADD_FAILURE() << "Cassie's achilles loops embedded with armature on the balls";
  } catch (const ModelError& e) {
    const std::string msg = e.what();
    for (const char* part :
         {"cluster 'left-achilles-rod-eq'",
          "joint 'left-achilles-rod' of type spherical moves along a direction the constraints "
          "leave free",
          "cut the loop instead",
          "with joints 'left-achilles-rod', 'right-achilles-rod' independent (quaternion in y)",
          "sigma_min/sigma_max = 0.016, below the threshold 0.05 (condition number 63 > 20)",
          "three hinges cannot carry its armature"})
      EXPECT_NE(msg.find(part), std::string::npos) << "missing \"" << part << "\" in: " << msg;
  }
  // The two achilles loops cut by name: the plantar four-bars embed (2 dependent hinges each).
  UrdfDescription urdf = parseMjcfFile(path).urdf;
  for (UrdfLoop& l : urdf.loops) l.cut = l.name.find("achilles") != std::string::npos;
  const ClusterModel m = buildClusterModel(urdf);
  EXPECT_EQ(m.cutLoops.size(), 2u);
  EXPECT_EQ(m.ny, m.treeModel.nv - 4);
  // Every loop cut (ModelOptions::cutLoops, the load option)
  ModelOptions allCut;
  allCut.cutLoops = true;
  const ClusterModel tree = loadModel(path, allCut);
  EXPECT_EQ(tree.cutLoops.size(), 4u);
  EXPECT_EQ(tree.ny, tree.treeModel.nv);
  // Every loop embedded (the balls as hinges) = every loop cut (the balls with their dampers),
  // solved by proxPv and the dense KKT, on closed states y_ref (+) e, |e| <= 0.1.
  const double rel =
      expectExpandedEqualsCut(embedded, tree, {"left-achilles-rod", "right-achilles-rod"},
                              "Cassie (joint dynamics)", 0.1, 10, 5);
  EXPECT_LT(rel, 1e-10);
}

TEST(MjcfPublicRobots, CassieCeAbaWithThePlantarLoopsEmbedded) {
  const std::string path = robotFile("cassie-mujoco-sim/model/cassie.xml");
  if (path.empty())
    GTEST_SKIP() << "CLUSTERDYN_MJCF_ROBOTS_DIR unset or without cassie-mujoco-sim "
                    "(bash tools/fetch_mjcf_robots.sh DIR)";
  MjcfDescription d = parseMjcfFile(path);
  ASSERT_EQ(d.urdf.loops.size(), 4u);
  for (UrdfLoop& l : d.urdf.loops) l.cut = l.name.find("achilles") != std::string::npos;
  const ClusterModel mixed = buildClusterModel(d.urdf);  // the achilles loops cut by name
  ASSERT_EQ(mixed.cutLoops.size(), 2u);
  EXPECT_EQ(mixed.ny, mixed.treeModel.nv - 4);  // two planar four-bars of hinges: 2 dependent each
  ModelOptions allCut;
  allCut.cutLoops = true;
  const ClusterModel tree = buildClusterModel(d.urdf, allCut);
  ASSERT_EQ(tree.ny, tree.treeModel.nv);

  const ConstraintSet setMixed = cutLoopConstraints(mixed), setTree = cutLoopConstraints(tree);
  ClusterData dm(mixed), dt(tree);
  ConstraintData cm(mixed, setMixed), ct(tree, setTree);
  ProximalSettings s;
  s.tolerance = 1e-10;  // above the rows' rounding floor (~1e-11 at their scale, 2.7e3)
  std::mt19937_64 rng(3);
  // qpos0 closes all four loops (drawn closed); v = 0: gravity, springs and tau drive it
  const VecX q = mixed.qReference, v = VecX::Zero(mixed.treeModel.nv);
  // the same configuration in the all-cut model's numbering (coordinates by name)
  VecX qt(tree.treeModel.nq);
  for (int k = 0; k < mixed.treeModel.nq; ++k)
    qt[tree.treeModel.positionIndex(mixed.treeModel.positionNames[k])] = q[k];
  auto treeIndependent = [&](const std::string& name) {
    const auto& n = tree.independentVelocityNames;
    return static_cast<int>(std::find(n.begin(), n.end(), name) - n.begin());
  };
  for (int trial = 0; trial < 3; ++trial) {
    const VecX tau = randomVector(mixed.ny, rng) * 5;
    // CE-ABA (plantar loops embedded, achilles rows free) against its dense form and CE-RNEA
    ASSERT_EQ(ceAba(mixed, dm, q, v, tau), Status::Ok) << dm.errorMessage();
    const VecX ydd = dm.ydd;
    ASSERT_EQ(clusterMassMatrix(mixed, dm, q), Status::Ok);
    ASSERT_EQ(clusterBias(mixed, dm, q, v), Status::Ok);
    const MatX H = dm.H.selfadjointView<Eigen::Upper>();
    EXPECT_LT((H * ydd + dm.C - tau).cwiseAbs().maxCoeff(), 1e-9 * tau.cwiseAbs().maxCoeff());
    ASSERT_EQ(ceRnea(mixed, dm, q, v, ydd), Status::Ok);
    EXPECT_LT((dm.tauY - tau).cwiseAbs().maxCoeff(), 1e-9 * tau.cwiseAbs().maxCoeff());
    // all four loops: embedded plantar + cut achilles (proxPv) = all cut
    ASSERT_EQ(proxPv(mixed, dm, setMixed, cm, q, v, tau, s), Status::Ok) << dm.errorMessage();
    const VecX qddMixed = dm.qdd;
    // the same torques: on the mixed model's independent joints (by name), zero on the
    // dependent ones (the spanning torque whose G^T image is tau)
    VecX tauTree = VecX::Zero(tree.ny);
    for (int k = 0; k < mixed.ny; ++k)
      tauTree[treeIndependent(mixed.independentVelocityNames[k])] = tau[k];
    ASSERT_EQ(proxPv(tree, dt, setTree, ct, qt, VecX::Zero(tree.treeModel.nv), tauTree, s),
              Status::Ok)
        << dt.errorMessage();
    // compare spanning accelerations by coordinate name
    double err = 0.0, scale = 1.0;
    for (int k = 0; k < mixed.treeModel.nv; ++k) {
      const std::string& n = mixed.treeModel.velocityNames[k];
      const double a = qddMixed[k], b = dt.qdd[tree.treeModel.velocityIndex(n)];
      err = std::max(err, std::abs(a - b));
      scale = std::max(scale, std::abs(b));
    }
    EXPECT_LT(err, 1e-9 * scale) << "trial " << trial;  // seen: 1.2e-12 relative
  }
}

}  // namespace
}  // namespace clusterdyn::test
