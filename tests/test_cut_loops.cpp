// The same implicit loops embedded in the cluster tree (CE-ABA) and cut (ModelOptions::cutLoops
// or closure="cut") + solved by proxPv: the same spanning accelerations.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "closed_states.hpp"
#include "test_util.hpp"

using namespace clusterdyn;
using test::byName;
using test::isClose;

namespace {

std::vector<std::string> loopFiles() {
  std::vector<std::string> out = {test::modelsPath("cd_four_bar.urdf"),
                                  test::modelsPath("cd_six_bar.urdf")};
  for (const char* rel : {"urdfplus/four_bar.urdf",
                          "urdfplus/benchmarks/parallel_chains/Implicit/depth5/loop_size5.urdf",
                          "urdfplus/benchmarks/variable_four_bar_urdf/four_bar_branch_2_3.urdf"})
    if (std::filesystem::exists(test::sharedPath(rel))) out.push_back(test::sharedPath(rel));
  return out;
}

}  // namespace

TEST(CutLoops, EmbeddedAndCutGiveTheSameAccelerations) {
  std::mt19937_64 rng(4);
  for (const std::string& path : loopFiles()) {
    const ClusterModel embedded = loadModel(path);
    ModelOptions cutAll;
    cutAll.cutLoops = true;
    const ClusterModel cut = loadModel(path, cutAll);
    ASSERT_FALSE(embedded.loops.empty()) << path;
    EXPECT_TRUE(cut.loops.empty()) << path;
    EXPECT_EQ(cut.cutLoops.size(), embedded.loops.size()) << path;
    EXPECT_EQ(cut.ny, cut.treeModel.nv) << path;  // no loop cluster left
    const ConstraintSet set = cutLoopConstraints(cut);
    ASSERT_EQ(set.size(), static_cast<int>(embedded.loops.size()));
    ClusterData de(embedded), dc(cut);
    ConstraintData cd(cut, set);
    for (int trial = 0; trial < 5; ++trial) {
      // A closed state of the embedded model.
      support::ClosedState closed;
      ASSERT_TRUE(support::randomClosedState(embedded, de, rng, closed, 0.3, 1))
          << de.errorMessage();
      const VecX qe = closed.q, ve = closed.v;
      const VecX tauY = test::randomVector(embedded.ny, rng, -2, 2);
      ASSERT_EQ(ceAba(embedded, de, qe, ve, tauY), Status::Ok) << de.errorMessage();
      // The same state and forces on the open tree.
      const VecX qc = byName(embedded.treeModel.positionNames, qe, cut.treeModel.positionNames);
      const VecX vc = byName(embedded.treeModel.velocityNames, ve, cut.treeModel.velocityNames);
      VecX tauSpan = VecX::Zero(embedded.treeModel.nv);
      for (int k = 0; k < embedded.ny; ++k) tauSpan[embedded.independentVelocity[k]] = tauY[k];
      const VecX tauC =
          byName(embedded.treeModel.velocityNames, tauSpan, cut.treeModel.velocityNames);
      ProximalSettings s;
      s.tolerance = 1e-11;
      s.maxIterations = 200;
      ASSERT_EQ(proxPv(cut, dc, set, cd, qc, vc, tauC, s), Status::Ok)
          << path << ": " << dc.errorMessage();
      const VecX qddE =
          byName(embedded.treeModel.velocityNames, de.qdd, cut.treeModel.velocityNames);
      EXPECT_TRUE(isClose(dc.qdd, qddE, 1e-8)) << path << " trial " << trial;
      EXPECT_LE(std::abs(cd.phi.cwiseAbs().maxCoeff()), 1e-6) << path;  // closed state
      EXPECT_TRUE(cd.lambda.allFinite());
    }
  }
}

TEST(CutLoops, ClosureAttributeCutsOneLoop) {
  const std::string text = test::readTextFile(test::modelsPath("cd_four_bar.urdf"));
  const auto at = text.find("<loop ");
  ASSERT_NE(at, std::string::npos);
  std::string cutText = text;
  cutText.insert(at + 6, "closure=\"cut\" ");
  const ClusterModel cm = buildClusterModel(parseUrdfString(cutText, "cut.urdf"));
  EXPECT_EQ(cm.cutLoops.size(), 1u);
  EXPECT_TRUE(cm.loops.empty());
  std::string bad = text;
  bad.insert(at + 6, "closure=\"maybe\" ");
  try {
    parseUrdfString(bad, "bad.urdf");
    FAIL() << "closure=\"maybe\" accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("closure"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("bad.urdf:"), std::string::npos) << e.what();
  }
}

// A closed chain at a singular configuration: the shared four-bar (a parallelogram) with its
// links aligned, the loop cut. The rows are rank-deficient there; proxPv returns finite
// accelerations and multipliers (Ok, or NotConverged with the last iterate), never NaN.
TEST(CutLoops, SingularClosedChainGivesFiniteResults) {
  const std::string path = test::sharedPath("urdfplus/four_bar.urdf");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared/ not found: " << path;
  ModelOptions o;
  o.cutLoops = true;
  const ClusterModel cm = loadModel(path, o);
  const ConstraintSet set = cutLoopConstraints(cm);
  ConstraintData cd(cm, set);
  ClusterData data(cm);
  const VecX q = VecX::Zero(cm.treeModel.nq);  // aligned links: closed and singular
  std::mt19937_64 rng(6);
  for (int trial = 0; trial < 3; ++trial) {
    const VecX v = VecX::Zero(cm.treeModel.nv), tau = test::randomVector(cm.ny, rng, -2, 2);
    ProximalSettings s;
    s.maxIterations = 100;
    const Status st = proxPv(cm, data, set, cd, q, v, tau, s);
    EXPECT_TRUE(st == Status::Ok || st == Status::NotConverged) << data.errorMessage();
    EXPECT_TRUE(data.ydd.allFinite() && data.qdd.allFinite() && cd.lambda.allFinite());
    EXPECT_LE(cd.phi.cwiseAbs().maxCoeff(), 1e-9);  // q = 0 closes this loop
    const Status dense = constrainedDynamicsDense(cm, data, set, cd, q, v, tau, s);
    EXPECT_TRUE(dense == Status::Ok || dense == Status::NotConverged) << data.errorMessage();
    EXPECT_TRUE(data.ydd.allFinite() && cd.lambda.allFinite());
  }
}
