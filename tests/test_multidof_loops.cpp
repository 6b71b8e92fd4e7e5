// Loops whose spanning tree carries multi-dof joints (spherical tree joints, spherical loop
// joints, a delta robot, a Stewart platform): the cluster algorithms on the embedded loops
// against independent oracles: the same loops cut and solved by proxPv, the dense spanning tree
// (G^T M G, dense KKT), CE-RNEA after CE-ABA, and the energy of a passive motion.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "closed_states.hpp"
#include "dense_oracles.hpp"
#include "energy_drift.hpp"
#include "test_util.hpp"

using namespace clusterdyn;
using test::byName;
using test::isClose;

namespace {

struct MultiDofModel {
  const char* file;
  int ny;  ///< documented freedom (models/README.md)
};

const MultiDofModel kModels[] = {
    {"cd_rsu_ankle.urdf", 2}, {"cd_rsu_leg.urdf", 6}, {"cd_delta.urdf", 9}, {"cd_stewart.urdf", 6}};

bool hasMultiDofJointInLoopCluster(const ClusterModel& m) {
  for (const Cluster& c : m.clusters)
    if (c.implicit() && c.nv != c.nbodies) return true;
  return false;
}

}  // namespace

TEST(MultiDofLoops, ModelsEmbedWithTheirDocumentedFreedom) {
  for (const auto& md : kModels) {
    const ClusterModel m = loadModel(test::modelsPath(md.file));
    EXPECT_FALSE(m.loops.empty()) << md.file;
    EXPECT_TRUE(m.cutLoops.empty()) << md.file;
    EXPECT_EQ(m.ny, md.ny) << md.file;
    EXPECT_EQ(m.nyq, md.ny) << md.file;  // the independent joints are 1-dof
    EXPECT_TRUE(hasMultiDofJointInLoopCluster(m)) << md.file;
    // The reference configuration is closed and its quaternions are unit.
    ClusterData d(m);
    EXPECT_EQ(clusterConstraintMatrices(m, d, m.qReference, VecX::Zero(m.treeModel.nv)), Status::Ok)
        << md.file << ": " << d.errorMessage();
  }
}

TEST(MultiDofLoops, EmbeddedAndCutGiveTheSameAccelerations) {
  std::mt19937_64 rng(25);
  for (const auto& md : kModels) {
    const std::string path = test::modelsPath(md.file);
    const ClusterModel embedded = loadModel(path);
    ModelOptions cutAll;
    cutAll.cutLoops = true;
    const ClusterModel cut = loadModel(path, cutAll);
    ASSERT_EQ(cut.cutLoops.size(), embedded.loops.size()) << md.file;
    const ConstraintSet set = cutLoopConstraints(cut);
    ClusterData de(embedded), dc(cut);
    ConstraintData cd(cut, set);
    for (int trial = 0; trial < 5; ++trial) {
      support::ClosedState closed;
      ASSERT_TRUE(support::randomClosedState(embedded, de, rng, closed, 0.3, 4))
          << md.file << ": " << de.errorMessage();
      const VecX tauY = test::randomVector(embedded.ny, rng, -0.5, 0.5);
      ASSERT_EQ(ceAba(embedded, de, closed.q, closed.v, tauY), Status::Ok)
          << md.file << ": " << de.errorMessage();
      const VecX qc =
          byName(embedded.treeModel.positionNames, closed.q, cut.treeModel.positionNames);
      const VecX vc =
          byName(embedded.treeModel.velocityNames, closed.v, cut.treeModel.velocityNames);
      VecX tauSpan = VecX::Zero(embedded.treeModel.nv);
      for (int k = 0; k < embedded.ny; ++k) tauSpan[embedded.independentVelocity[k]] = tauY[k];
      const VecX tauC =
          byName(embedded.treeModel.velocityNames, tauSpan, cut.treeModel.velocityNames);
      ProximalSettings s;
      s.tolerance = 1e-10;  // (the delta's light gimbal links stall proxPv near 2e-11)
      s.maxIterations = 2000;
      const VecX qddE =
          byName(embedded.treeModel.velocityNames, de.qdd, cut.treeModel.velocityNames);
      ASSERT_EQ(proxPv(cut, dc, set, cd, qc, vc, tauC, s), Status::Ok)
          << md.file << ": " << dc.errorMessage();
      EXPECT_TRUE(isClose(dc.qdd, qddE, 1e-8)) << md.file << " trial " << trial << ": max diff "
                                               << (dc.qdd - qddE).cwiseAbs().maxCoeff();
      // The dense J y_ddot of the delta cancels terms near 3e5: a tolerance below its rounding
      // floor is NotConverged (docs/constraints.md, "What Status::Ok means"); ask for twice it.
      Status dense = constrainedDynamicsDense(cut, dc, set, cd, qc, vc, tauC, s);
      if (dense == Status::NotConverged && cd.result.residual <= s.tolerance) {
        ProximalSettings sd = s;
        sd.tolerance = 2.0 * cd.result.roundingFloor;
        dense = constrainedDynamicsDense(cut, dc, set, cd, qc, vc, tauC, sd);
      }
      ASSERT_EQ(dense, Status::Ok) << md.file << ": " << dc.errorMessage();
      EXPECT_TRUE(isClose(dc.qdd, qddE, 1e-8))
          << md.file << " trial " << trial << " (dense): max diff "
          << (dc.qdd - qddE).cwiseAbs().maxCoeff();
      EXPECT_LE(cd.phi.cwiseAbs().maxCoeff(), 1e-8) << md.file;  // the state is closed
    }
  }
}

TEST(MultiDofLoops, MassMatrixAndCeAbaMatchTheDenseSpanningTree) {
  std::mt19937_64 rng(26);
  for (const auto& md : kModels) {
    const ClusterModel m = loadModel(test::modelsPath(md.file));
    ClusterData d(m);
    Data tree(m.treeModel);
    for (int trial = 0; trial < 3; ++trial) {
      support::ClosedState st;
      ASSERT_TRUE(support::randomClosedState(m, d, rng, st, 0.3, 4)) << d.errorMessage();
      // H = G^T M G (Chignoli et al. 2023, eq. 8) with M of the spanning tree.
      ASSERT_EQ(clusterConstraintMatrices(m, d, st.q, st.v), Status::Ok) << d.errorMessage();
      MatX G;
      VecX g;
      oracle::globalExplicitForm(m, d, G, g);
      ASSERT_EQ(crba(m.treeModel, tree, st.q), Status::Ok);
      const MatX M = tree.M.selfadjointView<Eigen::Upper>();
      ASSERT_EQ(clusterMassMatrix(m, d, st.q), Status::Ok) << d.errorMessage();
      const MatX Hd = G.transpose() * M * G;
      EXPECT_TRUE(isClose(MatX(d.H.selfadjointView<Eigen::Upper>()), Hd, 1e-9))
          << md.file << ": max diff "
          << (MatX(d.H.selfadjointView<Eigen::Upper>()) - Hd).cwiseAbs().maxCoeff();
      // CE-ABA against the dense reduced system, and the constraint K G = 0, K g = k.
      const VecX tau = test::randomVector(m.ny, rng, -0.5, 0.5);
      bool ok = false;
      const VecX yddDense = oracle::denseClusterYdd(m, d, st.q, st.v, tau, &ok);
      ASSERT_TRUE(ok) << md.file;
      ASSERT_EQ(ceAba(m, d, st.q, st.v, tau), Status::Ok) << d.errorMessage();
      EXPECT_TRUE(isClose(d.ydd, yddDense, 1e-8)) << md.file;
      ASSERT_EQ(clusterConstraintMatrices(m, d, st.q, st.v), Status::Ok);
      for (int k = 0; k < static_cast<int>(m.clusters.size()); ++k) {
        if (!m.clusters[k].implicit()) continue;
        const MatX& K = d.constraintJacobian(k);
        EXPECT_LE((K * d.explicitMatrix(k)).cwiseAbs().maxCoeff(), 1e-10) << md.file;
        EXPECT_LE((K * d.explicitBias(k) - d.constraintBias(k)).cwiseAbs().maxCoeff(), 1e-9)
            << md.file;
      }
    }
  }
}

TEST(MultiDofLoops, CeRneaInvertsCeAba) {
  std::mt19937_64 rng(27);
  for (const auto& md : kModels) {
    const ClusterModel m = loadModel(test::modelsPath(md.file));
    ClusterData d(m);
    for (int trial = 0; trial < 3; ++trial) {
      support::ClosedState st;
      ASSERT_TRUE(support::randomClosedState(m, d, rng, st, 0.3, 4)) << d.errorMessage();
      const VecX tau = test::randomVector(m.ny, rng, -0.5, 0.5);
      ASSERT_EQ(ceAba(m, d, st.q, st.v, tau), Status::Ok) << d.errorMessage();
      const VecX ydd = d.ydd;
      ASSERT_EQ(ceRnea(m, d, st.q, st.v, ydd), Status::Ok) << d.errorMessage();
      EXPECT_TRUE(isClose(d.tauY, tau, 1e-9)) << md.file;
      // H ydd + C = tau with the bias of clusterBias.
      ASSERT_EQ(clusterMassMatrix(m, d, st.q), Status::Ok);
      ASSERT_EQ(clusterBias(m, d, st.q, st.v), Status::Ok);
      const VecX Hy = d.H.selfadjointView<Eigen::Upper>() * ydd;
      EXPECT_TRUE(isClose(VecX(Hy + d.C), tau, 1e-9)) << md.file;
    }
  }
}

TEST(MultiDofLoops, ContactOnTheEmbeddedLoopsMatchesTheDenseKkt) {
  // A point contact on the output link of each mechanism (the foot, the platform), solved by
  // proxPv and the dense baseline on the embedded model, against the dense KKT of H, C, J.
  const std::pair<const char*, const char*> contacts[] = {{"cd_rsu_ankle.urdf", "foot"},
                                                          {"cd_rsu_leg.urdf", "foot"},
                                                          {"cd_delta.urdf", "platform"},
                                                          {"cd_stewart.urdf", "platform"}};
  std::mt19937_64 rng(28);
  for (const auto& [file, frame] : contacts) {
    const ClusterModel m = loadModel(test::modelsPath(file));
    ConstraintSet set(m);
    set.addContact(frame, ConstraintType::Point);
    ClusterData d(m);
    ConstraintData cd(m, set);
    for (int trial = 0; trial < 2; ++trial) {
      support::ClosedState st;
      ASSERT_TRUE(support::randomClosedState(m, d, rng, st, 0.2, 4)) << d.errorMessage();
      const VecX tau = test::randomVector(m.ny, rng, -0.5, 0.5);
      const oracle::ClusterKkt kkt = oracle::denseClusterKkt(m, d, set, cd, st.q, st.v, tau);
      ASSERT_TRUE(kkt.ok) << file;
      ProximalSettings s;
      s.tolerance = 1e-12;
      s.maxIterations = 400;
      ASSERT_EQ(test::solveAboveRoundingFloor(cd.result, s,
                                              [&](const ProximalSettings& x) {
                                                return proxPv(m, d, set, cd, st.q, st.v, tau, x);
                                              }),
                Status::Ok)
          << d.errorMessage();
      EXPECT_TRUE(isClose(d.ydd, kkt.ydd, 1e-8)) << file;
      ASSERT_EQ(test::solveAboveRoundingFloor(cd.result, s,
                                              [&](const ProximalSettings& x) {
                                                return constrainedDynamicsDense(m, d, set, cd, st.q,
                                                                                st.v, tau, x);
                                              }),
                Status::Ok)
          << d.errorMessage();
      EXPECT_TRUE(isClose(d.ydd, kkt.ydd, 1e-8)) << file;
    }
  }
}

TEST(MultiDofLoops, PassiveMotionConservesEnergy) {
  // RK4 on (y, y_dot) with CE-ABA (no torque, no damping) for 0.2 s, the spanning state from the
  // closure. The mechanical energy of the spanning tree (kinetic + gravity) changes by the
  // integrator's error only: small, and falling with the step as h^4 (a wrong acceleration would
  // leave a drift that does not converge away).
  for (const auto& md : kModels) {
    const ClusterModel m = loadModel(test::modelsPath(md.file));
    ClusterData d(m);
    Data tree(m.treeModel);
    std::mt19937_64 rng(29);
    support::ClosedState st;
    ASSERT_TRUE(support::randomClosedState(m, d, rng, st, 0.2, 4)) << d.errorMessage();
    const VecX yd0 = 0.5 * st.ydot;
    const double e0 = test::spanningEnergy(m, d, tree, st.y, yd0);
    const double drift[2] = {test::passiveEnergyDrift(m, d, st.y, yd0, 1e-3, 200),
                             test::passiveEnergyDrift(m, d, st.y, yd0, 5e-4, 400)};
    if (HasFatalFailure()) return;
    const double scale = 1.0 + std::abs(e0);
    EXPECT_LE(drift[0], 1e-5 * scale) << md.file;
    EXPECT_LE(drift[1], 1e-6 * scale) << md.file;
    // Fourth order: halving h divides the drift by ~16 (unless both are at rounding level).
    EXPECT_TRUE(drift[1] <= drift[0] / 10.0 || drift[0] <= 1e-10 * scale)
        << md.file << ": drift " << drift[0] << " (h = 1e-3), " << drift[1] << " (h = 5e-4)";
    std::printf("%s: energy %.6g, drift %.3g (h = 1e-3), %.3g (h = 5e-4)\n", md.file, e0, drift[0],
                drift[1]);
  }
}

TEST(MultiDofLoops, RejectsAnIndependentBallJointAndNamesAFreeBallDirection) {
  // A four-bar whose coupler hangs by a ball joint marked independent: the crank and the ball's
  // three velocities are four independent coordinates for a freedom of two: rejected, naming it.
  const std::string fourBar = R"(<robot name="ball_four_bar">
  <link name="ground"/>
  <link name="crank"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="coupler"><inertial><origin xyz="0.5 0 0"/><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="rocker"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="crank_joint" type="continuous"><parent link="ground"/><child link="crank"/><axis xyz="0 0 1"/></joint>
  <joint name="coupler_ball" type="spherical" independent="true"><parent link="crank"/><child link="coupler"/><origin xyz="0 1 0"/></joint>
  <joint name="rocker_joint" type="continuous" independent="false"><parent link="ground"/><child link="rocker"/><origin xyz="1 0 0"/><axis xyz="0 0 1"/></joint>
  <loop name="close" type="spherical"><predecessor link="coupler"><origin xyz="1 0 0"/></predecessor><successor link="rocker"><origin xyz="0 1 0"/></successor></loop>
</robot>)";
  try {
    buildClusterModel(parseUrdfString(fourBar));
    FAIL() << "an independent ball joint inside a loop cluster was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("coupler_ball"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("has 4 independent coordinates"), std::string::npos)
        << e.what();
  }
  // The same ball joint dependent: the coupler spins freely about the line through its two ball
  // centres, a direction without a coordinate: rejected, naming the joint and the remedies.
  std::string dependentBall = fourBar;
  dependentBall.replace(dependentBall.find("independent=\"true\""), 18, "independent=\"false\"");
  try {
    buildClusterModel(parseUrdfString(dependentBall));
    FAIL() << "a ball joint with a free direction was embedded";
  } catch (const ModelError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'coupler_ball'"), std::string::npos) << what;
    EXPECT_NE(what.find("leave free"), std::string::npos) << what;
    EXPECT_NE(what.find("cut the loop instead"), std::string::npos) << what;
  }
}

TEST(MultiDofLoops, RejectsABallJointInsideAMimicCluster) {
  // j1 mimics j2; the cluster of the relation reaches up to the base through the ball joint
  // (B hangs from A, A from the base by the ball): linear relations act on 1-dof joints only.
  const std::string text = R"(<robot name="mimic_through_ball">
  <link name="base"/>
  <link name="A"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="B"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="C"><inertial><mass value="1"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <joint name="ball" type="spherical"><parent link="base"/><child link="A"/></joint>
  <joint name="j1" type="continuous"><parent link="A"/><child link="B"/><origin xyz="0 0 -1"/><axis xyz="0 1 0"/><mimic joint="j2" multiplier="2"/></joint>
  <joint name="j2" type="continuous"><parent link="base"/><child link="C"/><origin xyz="1 0 0"/><axis xyz="0 1 0"/></joint>
</robot>)";
  try {
    buildClusterModel(parseUrdfString(text));
    FAIL() << "a ball joint inside a mimic cluster was accepted";
  } catch (const ModelError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("'ball'"), std::string::npos) << what;
    EXPECT_NE(what.find("1-dof joints only"), std::string::npos) << what;
  }
}

namespace {

const char* kInertia =
    R"(<inertial><origin xyz="0.1 0.05 0"/><mass value="1"/><inertia ixx="0.02" ixy="0" ixz="0" iyy="0.03" iyz="0" izz="0.04"/></inertial>)";

/// Crank and rocker (revolutes about z, independent) and a coupler on the crank by a `type`
/// joint (planar: plane normal z; floating: on the base, where URDF+ allows it), welded to the
/// rocker by a fixed <loop>: the coupler's joint is dependent (3 or 6 coordinates, the weld's
/// in-plane or all rows).
std::string weldedCoupler(const std::string& type) {
  const std::string in = kInertia;
  return "<robot name=\"welded_" + type +
         "\">\n  <link name=\"base\"/>\n"
         "  <link name=\"crank\">" +
         in + "</link>\n  <link name=\"coupler\">" + in + "</link>\n  <link name=\"rocker\">" + in +
         "</link>\n"
         "  <joint name=\"crank_joint\" type=\"continuous\"><parent link=\"base\"/><child "
         "link=\"crank\"/><axis xyz=\"0 0 1\"/></joint>\n"
         "  <joint name=\"coupler_joint\" type=\"" +
         type + "\"><parent link=\"" + (type == "floating" ? "base" : "crank") +
         "\"/><child link=\"coupler\"/><origin xyz=\"0.2 0 0\"/><axis "
         "xyz=\"0 0 1\"/></joint>\n"
         "  <joint name=\"rocker_joint\" type=\"continuous\"><parent link=\"base\"/><child "
         "link=\"rocker\"/><origin xyz=\"0.5 0.1 0\"/><axis xyz=\"0 0 1\"/></joint>\n"
         "  <loop name=\"weld\" type=\"fixed\"><predecessor link=\"coupler\"><origin xyz=\"0.3 0.1 "
         "0\"/></predecessor><successor link=\"rocker\"/></loop>\n</robot>\n";
}

}  // namespace

TEST(MultiDofLoops, PlanarAndFloatingJointsInsideALoop) {
  // The closure steps on SE(2) / SE(3) (retractJoint), G and K over every axis: embedded
  // against cut (dense KKT of the cut loop), CE-RNEA after CE-ABA and H = G^T M G.
  std::mt19937_64 rng(30);
  for (const std::string type : {"planar", "floating"}) {
    const UrdfDescription desc = parseUrdfString(weldedCoupler(type));
    const ClusterModel m = buildClusterModel(desc);
    ModelOptions cutAll;
    cutAll.cutLoops = true;
    const ClusterModel cut = buildClusterModel(desc, cutAll);
    ASSERT_EQ(m.ny, 2) << type;
    ASSERT_TRUE(hasMultiDofJointInLoopCluster(m)) << type;
    const ConstraintSet set = cutLoopConstraints(cut);
    ClusterData d(m), dc(cut);
    ConstraintData cd(cut, set);
    Data tree(m.treeModel);
    for (int trial = 0; trial < 4; ++trial) {
      support::ClosedState st;
      ASSERT_TRUE(support::randomClosedState(m, d, rng, st, 0.6, 4)) << d.errorMessage();
      const VecX tau = test::randomVector(m.ny, rng, -1, 1);
      ASSERT_EQ(ceAba(m, d, st.q, st.v, tau), Status::Ok) << d.errorMessage();
      const VecX ydd = d.ydd, qdd = d.qdd;
      ASSERT_EQ(ceRnea(m, d, st.q, st.v, ydd), Status::Ok) << d.errorMessage();
      EXPECT_TRUE(isClose(d.tauY, tau, 1e-9)) << type;
      ASSERT_EQ(clusterConstraintMatrices(m, d, st.q, st.v), Status::Ok);
      MatX G;
      VecX g;
      oracle::globalExplicitForm(m, d, G, g);
      ASSERT_EQ(crba(m.treeModel, tree, st.q), Status::Ok);
      const MatX M = tree.M.selfadjointView<Eigen::Upper>();
      ASSERT_EQ(clusterMassMatrix(m, d, st.q), Status::Ok) << d.errorMessage();
      EXPECT_TRUE(isClose(MatX(d.H.selfadjointView<Eigen::Upper>()), G.transpose() * M * G, 1e-9))
          << type;
      VecX tauSpan = VecX::Zero(m.treeModel.nv);
      for (int k = 0; k < m.ny; ++k) tauSpan[m.independentVelocity[k]] = tau[k];
      const VecX qc = byName(m.treeModel.positionNames, st.q, cut.treeModel.positionNames);
      const VecX vc = byName(m.treeModel.velocityNames, st.v, cut.treeModel.velocityNames);
      const VecX tc = byName(m.treeModel.velocityNames, tauSpan, cut.treeModel.velocityNames);
      ProximalSettings s;
      s.tolerance = 1e-11;
      s.maxIterations = 1000;
      ASSERT_EQ(test::solveAboveRoundingFloor(cd.result, s,
                                              [&](const ProximalSettings& x) {
                                                return constrainedDynamicsDense(cut, dc, set, cd,
                                                                                qc, vc, tc, x);
                                              }),
                Status::Ok)
          << type << ": " << dc.errorMessage();
      const VecX qddE = byName(m.treeModel.velocityNames, qdd, cut.treeModel.velocityNames);
      EXPECT_TRUE(isClose(dc.qdd, qddE, 1e-8))
          << type << ": max diff " << (dc.qdd - qddE).cwiseAbs().maxCoeff();
    }
  }
}
