// MJCF ball joints inside embedded loops (docs/mjcf.md section 3): the reader's choice of
// independent coordinates makes a ball joint independent as a whole (its quaternion in y) when,
// dependent, it would leave a direction without a coordinate (a rod's spin about its axis) and
// the loop's 1-dof joints complete a regular basis of the constraint rows. cd_rod_hip: a push rod
// on a ball joint, connected to the shank of a leg with a two-axis hip. Oracle: the same loop cut
// and solved as a constraint (proxPv and the dense KKT), CE-RNEA after CE-ABA. cd_rod_leg: the
// same rod on a leg whose loop hinges all turn about y: neither whole choice is regular, and the
// builder replaces the ball by three hinges (swing1, swing2 dependent, spin independent); oracles:
// the cut model with the ball (hinge state composed into the quaternion), energy of a passive
// motion, and the hinges' gimbal lock reported by a status.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "ball_as_hinges.hpp"
#include "clusterdyn/cluster_derivatives.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "clusterdyn/independent_configuration.hpp"
#include "clusterdyn/mjcf.hpp"
#include "energy_drift.hpp"
#include "manifold_fd.hpp"
#include "test_util.hpp"

using namespace clusterdyn;
using test::BallAsHinges;
using test::byName;
using test::closedState;
using test::expectExpandedEqualsCut;
using test::isClose;

namespace {

/// CE-ABA of the embedded model against the cut model solved by proxPv and the dense KKT (same
/// spanning state and forces, by coordinate name), and CE-RNEA o CE-ABA = id, on random closed
/// states.
void expectEmbeddedEqualsCut(const ClusterModel& embedded, const ClusterModel& cut,
                             const char* what) {
  ASSERT_EQ(cut.cutLoops.size(), 1u);
  ASSERT_EQ(cut.ny, cut.treeModel.nv);
  const ConstraintSet set = cutLoopConstraints(cut);
  ClusterData de(embedded), dc(cut);
  ConstraintData cd(cut, set);
  std::mt19937_64 rng(43);
  double worst = 0.0, largest = 0.0;
  for (int trial = 0; trial < 10; ++trial) {
    support::ClosedState st;
    ASSERT_TRUE(closedState(embedded, de, rng, 0.4, st)) << de.errorMessage();
    const VecX tauY = test::randomVector(embedded.ny, rng, -0.5, 0.5);
    ASSERT_EQ(ceAba(embedded, de, st.q, st.v, tauY), Status::Ok) << de.errorMessage();
    const VecX ydd = de.ydd, qddEmbedded = de.qdd;
    // CE-RNEA o CE-ABA = id
    ASSERT_EQ(ceRnea(embedded, de, st.q, st.v, ydd), Status::Ok) << de.errorMessage();
    const VecX tauBack = de.tauY;
    EXPECT_TRUE(isClose(tauBack, tauY, 1e-9)) << (tauBack - tauY).cwiseAbs().maxCoeff();
    // The cut model: the same spanning state and the same spanning forces (tau_y on the
    // independent joints), by coordinate name.
    const Model& en = embedded.treeModel;
    VecX tauSpanning = VecX::Zero(en.nv);
    for (int k = 0; k < embedded.ny; ++k) tauSpanning[embedded.independentVelocity[k]] = tauY[k];
    const VecX qc = byName(en.positionNames, st.q, cut.treeModel.positionNames);
    const VecX vc = byName(en.velocityNames, st.v, cut.treeModel.velocityNames);
    const VecX tc = byName(en.velocityNames, tauSpanning, cut.treeModel.velocityNames);
    const VecX qddE = byName(en.velocityNames, qddEmbedded, cut.treeModel.velocityNames);
    ProximalSettings s;
    s.tolerance = 1e-12;
    s.maxIterations = 2000;
    ASSERT_EQ(test::solveAboveRoundingFloor(cd.result, s,
                                            [&](const ProximalSettings& x) {
                                              return proxPv(cut, dc, set, cd, qc, vc, tc, x);
                                            }),
              Status::Ok)
        << dc.errorMessage();
    EXPECT_TRUE(isClose(dc.qdd, qddE, 1e-8))
        << "trial " << trial << ": max diff " << (dc.qdd - qddE).cwiseAbs().maxCoeff();
    worst = std::max(worst, (dc.qdd - qddE).cwiseAbs().maxCoeff());
    largest = std::max(largest, qddE.cwiseAbs().maxCoeff());
    ASSERT_EQ(test::solveAboveRoundingFloor(cd.result, s,
                                            [&](const ProximalSettings& x) {
                                              return constrainedDynamicsDense(cut, dc, set, cd, qc,
                                                                              vc, tc, x);
                                            }),
              Status::Ok)
        << dc.errorMessage();
    EXPECT_TRUE(isClose(dc.qdd, qddE, 1e-8))
        << "trial " << trial << " (dense): max diff " << (dc.qdd - qddE).cwiseAbs().maxCoeff();
    EXPECT_LE(cd.phi.cwiseAbs().maxCoeff(), 1e-9);  // the state is closed
  }
  std::printf("  %s embedded vs cut (proxPv, dense KKT): max |qdd| %.3g, max diff %.2e\n", what,
              largest, worst);
}

}  // namespace

TEST(MjcfBallLoops, TheRodsBallJointIsChosenIndependent) {
  const MjcfDescription desc = parseMjcfFile(test::modelsPath("cd_rod_hip.xml"));
  for (const UrdfJoint& j : desc.urdf.joints) {
    if (j.name == "rod_ball" || j.name == "knee_motor") {
      EXPECT_FALSE(j.independentGiven && !j.independent) << j.name;
    } else if (j.name == "hip_roll" || j.name == "hip_pitch" || j.name == "knee") {
      EXPECT_TRUE(j.independentGiven && !j.independent) << j.name << " should be dependent";
    }
  }
  const ClusterModel m = loadModel(test::modelsPath("cd_rod_hip.xml"));
  ASSERT_EQ(m.loops.size(), 1u);
  EXPECT_EQ(m.ny, 4);   // knee_motor + the ball's 3 angular velocities
  EXPECT_EQ(m.nyq, 5);  // knee_motor + the quaternion
  int ball = 0;
  for (const std::string& n : m.independentPositionNames) ball += n.rfind("rod_ball:", 0) == 0;
  EXPECT_EQ(ball, 4);
}

TEST(MjcfBallLoops, EmbeddedAndCutGiveTheSameAccelerations) {
  const std::string path = test::modelsPath("cd_rod_hip.xml");
  ModelOptions cutAll;
  cutAll.cutLoops = true;
  expectEmbeddedEqualsCut(loadModel(path), loadModel(path, cutAll), "cd_rod_hip.xml");
}

namespace {

/// cd_rod_hip.xml with hip_roll's axis replaced by `axis`.
std::string rodHipWithHipRollAxis(const std::string& axis) {
  std::ifstream in(test::modelsPath("cd_rod_hip.xml"));
  std::stringstream text;
  text << in.rdbuf();
  std::string xml = text.str();
  const std::string from = "<joint name=\"hip_roll\" axis=\"1 0 0\"";
  const size_t at = xml.find(from);
  if (at == std::string::npos) throw std::runtime_error("cd_rod_hip.xml: no hip_roll axis");
  return xml.replace(at, from.size(), "<joint name=\"hip_roll\" axis=\"" + axis + "\"");
}

/// The error of building `desc` embedded names the ball joint, the ratio and the threshold.
void expectTooStiffError(const UrdfDescription& desc, const std::string& ratio) {
  try {
    buildClusterModel(desc);
    ADD_FAILURE() << "an ill-conditioned choice was accepted";
  } catch (const ModelError& e) {
    const std::string msg = e.what();
    for (const std::string& part :
         {std::string("joint 'rod_ball' of type spherical moves along a direction"),
          std::string("cut the loop instead"),
          std::string("with joint 'rod_ball' independent (quaternion in y)"),
          "sigma_min/sigma_max = " + ratio + ", below the threshold 0.05"})
      EXPECT_NE(msg.find(part), std::string::npos) << "missing \"" << part << "\" in: " << msg;
  }
}

}  // namespace

TEST(MjcfBallLoops, AnIllConditionedChoiceIsRejectedSayingWhy) {
  // cd_rod_hip with the hip roll axis 2.9 degrees from the pitch axis: the ball independent is
  // still a basis, but only the roll, nearly parallel to the pitch, can follow the rod's swing
  // out of the leg's plane: sigma_min/sigma_max = 0.025 (cd_rod_hip: 0.17), below the reader's
  // threshold 0.05 (condition number 20; Cassie's achilles rods, 0.016, are the public example).
  // Dependent, the ball's spin has no coordinate. With armature on the ball (which three hinges
  // cannot carry) the builder does not replace it by hinges either: the load fails, saying why.
  const std::string xml = rodHipWithHipRollAxis("0.05 1 0");
  const MjcfDescription desc = parseMjcfString(xml, "cd_rod_hip_tilted.xml");
  for (const UrdfJoint& j : desc.urdf.joints)
    if (j.name == "rod_ball") EXPECT_FALSE(j.independentGiven) << "rod_ball chosen independent";
  UrdfDescription withArmature = desc.urdf;
  for (UrdfJoint& j : withArmature.joints)
    if (j.name == "rod_ball") j.armature = 0.001;
  expectTooStiffError(withArmature, "0.025");
  try {
    buildClusterModel(withArmature);
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("did not replace joint 'rod_ball' by three revolute "
                                         "joints (its spin free): three hinges cannot carry its "
                                         "armature"),
              std::string::npos)
        << e.what();
  }
  // The file's ball (damping 0.01) becomes three hinges, which carry its damper: the swings
  // dependent, the spin independent (the ball's 3 + 4 hinges - 3 rows = 4 coordinates); without
  // joint dynamics, the same hinges.
  const ClusterModel hinges = buildClusterModel(desc.urdf);
  EXPECT_EQ(hinges.ny, 4);
  EXPECT_EQ(hinges.nyq, 4);
  EXPECT_GE(hinges.treeModel.jointId("rod_ball:spin"), 0);
  EXPECT_NE(std::find(hinges.independentVelocityNames.begin(),
                      hinges.independentVelocityNames.end(), "rod_ball:spin"),
            hinges.independentVelocityNames.end());
  ASSERT_EQ(hinges.treeModel.ballHinges.size(), 1u);
  EXPECT_EQ(hinges.treeModel.ballHinges[0].damping, 0.01);
  ModelOptions rigid;
  rigid.jointDynamics = false;
  EXPECT_EQ(buildClusterModel(desc.urdf, rigid).treeModel.positionNames,
            hinges.treeModel.positionNames);
  ModelOptions cutAll;
  cutAll.cutLoops = true;
  const ClusterModel cut = buildClusterModel(desc.urdf, cutAll);
  EXPECT_EQ(cut.cutLoops.size(), 1u);
  EXPECT_EQ(cut.ny, 7);  // 4 hinges + the ball
  // Turned less (11 degrees from the pitch axis: ratio 0.098 > 0.05), the ball is independent.
  const ClusterModel m =
      buildClusterModel(parseMjcfString(rodHipWithHipRollAxis("0.2 1 0"), "tilted.xml").urdf);
  EXPECT_EQ(m.ny, 4);
  EXPECT_EQ(m.nyq, 5);
}

TEST(MjcfBallLoops, ARodWhoseLoopHingesArePlanarEmbedsItsBallAsThreeHinges) {
  // cd_rod_leg: every hinge of the loop turns about y, so the shank's lever point moves in the
  // x-z plane only and the hinges cannot carry the rod's out-of-plane swing: neither the ball
  // dependent (its spin has no coordinate) nor independent (the swing has none) is regular. The
  // builder replaces it by three hinges: swings dependent, the spin (about the rod) independent.
  const ClusterModel m = loadModel(test::modelsPath("cd_rod_leg.xml"));
  ASSERT_EQ(m.loops.size(), 1u);
  EXPECT_EQ(m.ny, 3);
  EXPECT_EQ(m.nyq, 3);
  EXPECT_EQ(m.independentVelocityNames,
            (std::vector<std::string>{"hip_pitch", "knee_motor", "rod_ball:spin"}));
  const Model& t = m.treeModel;
  EXPECT_LT(t.jointId("rod_ball"), 0);
  const BallAsHinges h(t, "rod_ball");
  // b1, b2, a orthonormal, b1 x b2 = a, a along the rod (the ball to the connect's anchor).
  EXPECT_TRUE(isClose(h.b1.cross(h.b2), h.a, 1e-12));
  EXPECT_NEAR(h.b1.dot(h.a), 0.0, 1e-12);
  EXPECT_NEAR(std::abs(h.a.dot(Vec3(-0.01, -0.06, -0.32).normalized())), 1.0, 1e-9);
  // The hinges' child frames coincide with the ball's at 0, the swing links are massless.
  for (const char* link : {"rod_ball:swing1_link", "rod_ball:swing2_link"})
    EXPECT_EQ(t.inertias[t.frames[t.frameId(link)].body].mass, 0.0) << link;
  // Cut, the ball stays.
  ModelOptions cutAll;
  cutAll.cutLoops = true;
  const ClusterModel cut = loadModel(test::modelsPath("cd_rod_leg.xml"), cutAll);
  EXPECT_GE(cut.treeModel.jointId("rod_ball"), 0);
  EXPECT_EQ(cut.ny, 6);
}

TEST(MjcfBallLoops, TheBallAsThreeHingesGivesTheCutModelsAccelerations) {
  const std::string path = test::modelsPath("cd_rod_leg.xml");
  ModelOptions cutAll;
  cutAll.cutLoops = true;
  expectExpandedEqualsCut(loadModel(path), loadModel(path, cutAll), "rod_ball");
}

TEST(MjcfBallLoops, TheBallAsThreeHingesConservesEnergy) {
  // RK4 on (y, y_dot) with CE-ABA (no torque; joint dynamics off: hip_pitch's damping) for
  // 0.2 s: the drift of the spanning tree's energy falls with the step as h^4.
  ModelOptions rigid;
  rigid.jointDynamics = false;
  const ClusterModel m = loadModel(test::modelsPath("cd_rod_leg.xml"), rigid);
  ClusterData d(m);
  Data tree(m.treeModel);
  std::mt19937_64 rng(31);
  support::ClosedState st;
  ASSERT_TRUE(closedState(m, d, rng, 0.3, st)) << d.errorMessage();
  const VecX yd0 = st.ydot;
  const double e0 = test::spanningEnergy(m, d, tree, st.y, yd0);
  const double drift[2] = {test::passiveEnergyDrift(m, d, st.y, yd0, 1e-3, 200),
                           test::passiveEnergyDrift(m, d, st.y, yd0, 5e-4, 400)};
  if (HasFatalFailure()) return;
  const double scale = 1.0 + std::abs(e0);
  EXPECT_LE(drift[0], 1e-6 * scale);
  EXPECT_LE(drift[1], 1e-7 * scale);
  EXPECT_TRUE(drift[1] <= drift[0] / 10.0 || drift[0] <= 1e-10 * scale)
      << "drift " << drift[0] << " (h = 1e-3), " << drift[1] << " (h = 5e-4)";
  std::printf(
      "  cd_rod_leg (ball as hinges): energy %.6g, drift %.3g (h = 1e-3), %.3g "
      "(h = 5e-4)\n",
      e0, drift[0], drift[1]);
}

TEST(MjcfBallLoops, TheHingesGimbalLockIsReportedNotSolvedWrong) {
  // At rod_ball:swing2 = +-pi/2 the swing1 axis turns onto the spin axis, the rod: swing1's
  // column of K is zero and K_d (swing1, swing2, knee) singular. The constraint matrices and
  // CE-ABA there report a status; close to it they are Ok only with K G = 0 to tolerance; the
  // closure warm-started there is Ok only with a closed, regular configuration.
  const ClusterModel m = loadModel(test::modelsPath("cd_rod_leg.xml"));
  ClusterData d(m);
  const Model& t = m.treeModel;
  const int s2 = t.idx_q[t.jointId("rod_ball:swing2")];
  const VecX v = VecX::Zero(t.nv);
  VecX yRef(m.nyq), ydRef(m.ny);
  ASSERT_EQ(spanningToIndependent(m, d, m.qReference, v, yRef, ydRef), Status::Ok);
  for (double lock : {M_PI / 2, -M_PI / 2}) {
    for (double off : {0.0, 1e-12, 1e-8, 1e-4}) {
      VecX q = m.qReference;
      q[s2] = lock - (lock > 0 ? off : -off);
      const Status sG = clusterConstraintMatrices(m, d, q, v);
      const Status sA = ceAba(m, d, q, v, VecX::Zero(m.ny));
      if (lock > 0)
        std::printf("  swing2 = pi/2 - %.0e: constraint matrices %s, CE-ABA %s\n", off,
                    statusName(sG), statusName(sA));
      // The closure warm-started there: Ok only with a closed, regular result.
      ClusterData dc(m);
      ASSERT_EQ(setClosureWarmStart(m, dc, q), Status::Ok);
      if (independentToSpanning(m, dc, yRef, VecX::Zero(m.ny)) == Status::Ok) {
        EXPECT_LE(dc.lastResidual, 1e-9) << "closure Ok from swing2 = " << q[s2];
        EXPECT_EQ(clusterConstraintMatrices(m, dc, dc.q, v), Status::Ok);
      }
      if (off == 0.0) {
        EXPECT_NE(sG, Status::Ok) << "constraint matrices Ok at the gimbal lock";
        EXPECT_NE(sA, Status::Ok) << "CE-ABA Ok at the gimbal lock";
        continue;
      }
      if (sG != Status::Ok) continue;
      ASSERT_EQ(clusterConstraintMatrices(m, d, q, v), Status::Ok);
      for (int k = 0; k < static_cast<int>(m.clusters.size()); ++k) {
        const MatX& K = d.constraintJacobian(k);
        const MatX& G = d.explicitMatrix(k);
        if (K.rows() == 0) continue;
        const double residual = (K * G).cwiseAbs().maxCoeff();
        EXPECT_LE(residual, 1e-9 * std::max(1.0, K.cwiseAbs().maxCoeff() * G.cwiseAbs().maxCoeff()))
            << "swing2 = " << q[s2] << ": Ok with K G = " << residual;
      }
    }
  }
}

namespace {

/// cd_rod_hip as URDF+: a spherical <joint> rod_ball in the tree and a spherical <loop> at the
/// rod's lower end; `marks` is inserted into rod_ball's <joint> element.
std::string rodHipUrdf(const std::string& marks, const std::string& hipRollAxis = "1 0 0") {
  auto link = [](const std::string& name, double m, const std::string& com) {
    return "<link name=\"" + name + "\"><inertial><origin xyz=\"" + com + "\"/><mass value=\"" +
           std::to_string(m) +
           "\"/><inertia ixx=\"0.004\" ixy=\"0\" ixz=\"0\" iyy=\"0.004\" iyz=\"0\" "
           "izz=\"0.0005\"/></inertial></link>\n";
  };
  auto joint = [](const std::string& name, const std::string& type, const std::string& parent,
                  const std::string& child, const std::string& xyz, const std::string& axis,
                  const std::string& extra = "") {
    return "<joint name=\"" + name + "\" type=\"" + type + "\" " + extra + "><parent link=\"" +
           parent + "\"/><child link=\"" + child + "\"/><origin xyz=\"" + xyz + "\"/>" +
           (axis.empty() ? "" : "<axis xyz=\"" + axis + "\"/>") + "</joint>\n";
  };
  return "<robot name=\"rod_hip\">\n<link name=\"base\"/>\n" + link("roll", 0.01, "0 0 0") +
         link("thigh", 1.0, "0 0 -0.17") + link("shank", 0.6, "0 0 -0.15") +
         link("crank", 0.1, "0.03 0 0") + link("rod", 0.06, "-0.005 -0.03 -0.16") +
         joint("knee_motor", "continuous", "base", "crank", "0 0.06 0", "0 1 0") +
         joint("hip_roll", "continuous", "base", "roll", "0 0 0", hipRollAxis) +
         joint("hip_pitch", "continuous", "roll", "thigh", "0 0 0", "0 1 0") +
         joint("knee", "continuous", "thigh", "shank", "0 0 -0.35", "0 1 0") +
         joint("rod_ball", "spherical", "crank", "rod", "0.06 0 0", "", marks) +
         "<loop name=\"push_rod\" type=\"spherical\">\n"
         "  <predecessor link=\"rod\"><origin xyz=\"-0.01 -0.06 -0.32\"/></predecessor>\n"
         "  <successor link=\"shank\"><origin xyz=\"0.05 0 0.03\"/></successor>\n"
         "</loop>\n</robot>\n";
}

}  // namespace

TEST(MjcfBallLoops, UrdfPlusUnmarkedBallJointIsChosenLikeMjcf) {
  // Unmarked, the ball joint would be dependent and its spin without a coordinate: the builder
  // chooses the unmarked joints as the MJCF reader does.
  const UrdfDescription desc = parseUrdfString(rodHipUrdf(""), "rod_hip.urdf");
  const ClusterModel m = buildClusterModel(desc);
  EXPECT_EQ(m.ny, 4);
  EXPECT_EQ(m.nyq, 5);
  ASSERT_EQ(m.independentVelocityNames.size(), 4u);
  EXPECT_EQ(m.independentVelocityNames[0], "knee_motor");
  for (int k = 1; k < 4; ++k)
    EXPECT_EQ(m.independentVelocityNames[k].rfind("rod_ball:", 0), 0u)
        << m.independentVelocityNames[k];
  ModelOptions cutAll;
  cutAll.cutLoops = true;
  expectEmbeddedEqualsCut(m, buildClusterModel(desc, cutAll), "rod_hip.urdf (unmarked)");
}

TEST(MjcfBallLoops, UrdfPlusUnmarkedBallWithAFreeSpinInAPlanarLoopBecomesThreeHinges) {
  // rod_hip.urdf with the hip "roll" turned about y: every hinge of the loop turns about y (as
  // in cd_rod_leg), so neither whole choice of the unmarked ball is regular: the builder
  // replaces it by three hinges, the spin independent (4 hinges + 3 - 3 rows = 4).
  const UrdfDescription desc = parseUrdfString(rodHipUrdf("", "0 1 0"), "rod_planar.urdf");
  const ClusterModel m = buildClusterModel(desc);
  EXPECT_EQ(m.ny, 4);
  EXPECT_EQ(m.nyq, 4);
  EXPECT_NE(std::find(m.independentVelocityNames.begin(), m.independentVelocityNames.end(),
                      "rod_ball:spin"),
            m.independentVelocityNames.end());
  ModelOptions cutAll;
  cutAll.cutLoops = true;
  expectExpandedEqualsCut(m, buildClusterModel(desc, cutAll), "rod_ball", "rod_planar.urdf");
  // Marked dependent, the ball is the file's choice: not replaced, the builder's error.
  EXPECT_THROW(buildClusterModel(parseUrdfString(rodHipUrdf("independent=\"false\"", "0 1 0"),
                                                 "rod_planar.urdf")),
               ModelError);
}

TEST(MjcfBallLoops, UrdfPlusMarksStayAuthoritative) {
  // Marked dependent, the ball joint stays dependent: the builder's error, naming its spin.
  try {
    buildClusterModel(parseUrdfString(rodHipUrdf("independent=\"false\""), "rod_hip.urdf"));
    ADD_FAILURE() << "a ball joint marked dependent was made independent";
  } catch (const ModelError& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("joint 'rod_ball' of type spherical moves along a direction"),
              std::string::npos)
        << msg;
  }
  // Marked independent: the file's choice; the builder completes nothing (the hinges stay
  // independent, one more than the freedom).
  try {
    buildClusterModel(parseUrdfString(rodHipUrdf("independent=\"true\""), "rod_hip.urdf"));
    ADD_FAILURE() << "the marks were overridden";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("more independent coordinates than the cluster's freedom"),
              std::string::npos)
        << e.what();
  }
}

TEST(MjcfBallLoops, CeAbaDerivativesMatchFiniteDifferencesOnTheManifold) {
  // cd_rod_hip (rigid; with its dampers: test_cluster_derivatives.cpp): column e of d ydd / d y is
  // the derivative along y (+) e (the ball turned by exp(e) in its body frame), the hip and knee
  // re-closed on the same branch; central differences with two Richardson steps.
  ModelOptions rigid;
  rigid.jointDynamics = false;
  const ClusterModel m = loadModel(test::modelsPath("cd_rod_hip.xml"), rigid);
  ASSERT_EQ(m.nyq, 5);
  ClusterData d(m);
  ClusterDerivativeData dd(m);
  std::mt19937_64 rng(45);
  const int ny = m.ny;
  for (int trial = 0; trial < 3; ++trial) {
    support::ClosedState st;
    ASSERT_TRUE(closedState(m, d, rng, 0.3, st)) << d.errorMessage();
    const VecX tau = test::randomVector(ny, rng, -0.01, 0.01);
    auto aba = [&](const VecX& y, const VecX& yd) {
      EXPECT_EQ(setClosureWarmStart(m, d, st.q), Status::Ok);
      EXPECT_EQ(ceAbaIndependent(m, d, y, yd, tau), Status::Ok) << d.errorMessage();
      return VecX(d.ydd);
    };
    MatX dy, dyd;
    test::manifoldJacobians(m, st.y, st.ydot, aba, dy, dyd);
    ASSERT_EQ(computeCeAbaDerivatives(m, d, dd, st.q, st.v, tau), Status::Ok) << d.errorMessage();
    const auto rel = test::oracleError;
    EXPECT_LT(rel(dd.dydd_dy, dy), 1e-7) << dd.dydd_dy << "\n" << dy;
    EXPECT_LT(rel(dd.dydd_dydot, dyd), 1e-7) << dd.dydd_dydot << "\n" << dyd;
    if (trial == 0)
      std::printf("  cd_rod_hip d ydd / d y: max %.3g, error %.2e; d ydd / d ydot error %.2e\n",
                  dy.cwiseAbs().maxCoeff(), rel(dd.dydd_dy, dy), rel(dd.dydd_dydot, dyd));
  }
}
