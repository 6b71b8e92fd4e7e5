// Public MJCF robots with closed loops (third-party files, never copied into the project): read
// from $CLUSTERDYN_MJCF_ROBOTS_DIR (bash tools/fetch_mjcf_robots.sh DIR), skipped, saying so,
// when it is unset. MuJoCo is their oracle in python/tests/test_mjcf_public_robots.py; here
// CE-ABA runs with every loop embedded (Cassie's achilles rods: the reader makes their ball joints
// independent coordinates, docs/mjcf.md section 3) and agrees with the same robot with every loop
// cut and solved as constraints (proxPv) on closed states, and with its own dense form
// (H_y ydd + C_y = tau, CE-RNEA o CE-ABA = id).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>

#include "clusterdyn/cluster_algorithms.hpp"
#include "clusterdyn/constraints.hpp"
#include "clusterdyn/independent_configuration.hpp"
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

/// The description with every loop embedded except those the builder cannot embed (it names
/// them: a ball joint of the loop moves along a direction the constraints leave free, e.g. a
/// rod's spin, so that, dependent as a whole, it has no coordinate for it), which are cut one
/// by one.
ClusterModel embedWhatCanBe(UrdfDescription urdf, std::vector<std::string>& cut) {
  for (size_t attempt = 0; attempt <= urdf.loops.size(); ++attempt) {
    try {
      return buildClusterModel(urdf);
    } catch (const ModelError& e) {
      std::smatch m;
      const std::string msg = e.what();
      if (!std::regex_search(msg, m,
                             std::regex("cluster '([^']+)': .*joint '[^']+' of type spherical "
                                        "moves along a direction the constraints leave free")))
        throw;
      for (UrdfLoop& l : urdf.loops)
        if (l.name == m[1].str()) l.cut = true;
      cut.push_back(m[1].str());
    }
  }
  throw ModelError("no loop left to cut");
}

TEST(MjcfPublicRobots, CassieCeAbaWithEveryLoopEmbedded) {
  const std::string path = robotFile("cassie-mujoco-sim/model/cassie.xml");
  if (path.empty())
    GTEST_SKIP() << "CLUSTERDYN_MJCF_ROBOTS_DIR unset or without cassie-mujoco-sim "
                    "(bash tools/fetch_mjcf_robots.sh DIR)";
  const MjcfDescription d = parseMjcfFile(path);
  ASSERT_EQ(d.urdf.loops.size(), 4u);
  std::vector<std::string> cut;
  const ClusterModel embedded = embedWhatCanBe(d.urdf, cut);
  EXPECT_TRUE(cut.empty()) << cut.size() << " loops cut, first " << cut[0];
  // plantar four-bars of hinges: 2 dependent hinges each; achilles rods: the ball joint
  // independent (quaternion in y), 3 dependent hinges each
  EXPECT_EQ(embedded.ny, embedded.treeModel.nv - 10);
  for (const char* side : {"left", "right"}) {
    const std::string ball = std::string(side) + "-achilles-rod:wx";
    const auto& n = embedded.independentVelocityNames;
    EXPECT_NE(std::find(n.begin(), n.end(), ball), n.end()) << ball << " not independent";
  }
  ModelOptions allCut;
  allCut.cutLoops = true;
  const ClusterModel tree = buildClusterModel(d.urdf, allCut);
  ASSERT_EQ(tree.ny, tree.treeModel.nv);
  const ConstraintSet setTree = cutLoopConstraints(tree);
  ClusterData de(embedded), dt(tree);
  ConstraintData ct(tree, setTree);
  ProximalSettings s;
  s.tolerance = 1e-12;
  s.maxIterations = 2000;
  std::mt19937_64 rng(3);
  auto treeIndependent = [&](const std::string& name) {
    const auto& n = tree.independentVelocityNames;
    return static_cast<int>(std::find(n.begin(), n.end(), name) - n.begin());
  };
  VecX yRef(embedded.nyq);
  for (int k = 0; k < embedded.nyq; ++k)
    yRef[k] = embedded.qReference[embedded.independentPosition[k]];
  double worst = 0.0;
  for (int trial = 0; trial < 5; ++trial) {
    // trial 0: qpos0 (drawn closed), v = 0; then closed states y = yRef (+) e: the achilles
    // balls turned by up to 3 mrad (their swing out of the leg's plane moves the heel spring
    // 60 times as much), the other coordinates by up to 0.2 rad
    VecX e = VecX::Zero(embedded.ny), ydot = VecX::Zero(embedded.ny);
    if (trial > 0)
      for (int k = 0; k < embedded.ny; ++k) {
        const bool ball =
            embedded.independentVelocityNames[k].find("achilles") != std::string::npos;
        e[k] = randomVector(1, rng, -1, 1)[0] * (ball ? 3e-3 : 0.2);
        ydot[k] = randomVector(1, rng, -1, 1)[0] * (ball ? 1e-2 : 1.0);
      }
    VecX y(embedded.nyq);
    ASSERT_EQ(integrateIndependent(embedded, yRef, e, 1.0, y), Status::Ok);
    de.q = embedded.qReference;
    ASSERT_EQ(independentToSpanning(embedded, de, y, ydot), Status::Ok) << de.errorMessage();
    const VecX q = de.q, v = de.v;
    const VecX tau = randomVector(embedded.ny, rng) * 5;
    // CE-ABA against its dense form and CE-RNEA
    ASSERT_EQ(ceAba(embedded, de, q, v, tau), Status::Ok) << de.errorMessage();
    const VecX ydd = de.ydd, qddEmbedded = de.qdd;
    ASSERT_EQ(clusterMassMatrix(embedded, de, q), Status::Ok);
    ASSERT_EQ(clusterBias(embedded, de, q, v), Status::Ok);
    const MatX H = de.H.selfadjointView<Eigen::Upper>();
    EXPECT_LT((H * ydd + de.C - tau).cwiseAbs().maxCoeff(), 1e-9 * tau.cwiseAbs().maxCoeff());
    ASSERT_EQ(ceRnea(embedded, de, q, v, ydd), Status::Ok);
    EXPECT_LT((de.tauY - tau).cwiseAbs().maxCoeff(), 1e-9 * tau.cwiseAbs().maxCoeff());
    // all four loops cut and solved by proxPv: the same state and torques (on the embedded
    // model's independent joints, by name; zero on the dependent ones, whose G^T image is tau)
    VecX qt(tree.treeModel.nq), vt(tree.treeModel.nv);
    for (int k = 0; k < embedded.treeModel.nq; ++k)
      qt[tree.treeModel.positionIndex(embedded.treeModel.positionNames[k])] = q[k];
    for (int k = 0; k < embedded.treeModel.nv; ++k)
      vt[tree.treeModel.velocityIndex(embedded.treeModel.velocityNames[k])] = v[k];
    VecX tauTree = VecX::Zero(tree.ny);
    for (int k = 0; k < embedded.ny; ++k)
      tauTree[treeIndependent(embedded.independentVelocityNames[k])] = tau[k];
    ASSERT_EQ(proxPv(tree, dt, setTree, ct, qt, vt, tauTree, s), Status::Ok) << dt.errorMessage();
    double err = 0.0, scale = 1.0;
    for (int k = 0; k < embedded.treeModel.nv; ++k) {
      const std::string& n = embedded.treeModel.velocityNames[k];
      const double a = qddEmbedded[k], b = dt.qdd[tree.treeModel.velocityIndex(n)];
      err = std::max(err, std::abs(a - b));
      scale = std::max(scale, std::abs(b));
    }
    EXPECT_LT(err, 1e-8 * scale) << "trial " << trial;
    worst = std::max(worst, err / scale);
  }
  std::printf("  Cassie, every loop embedded vs all cut (proxPv): qdd within %.2e relative\n",
              worst);
}

}  // namespace
}  // namespace clusterdyn::test
