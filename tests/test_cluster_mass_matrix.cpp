// clusterMassMatrix by subtree blocks (src/cluster/cluster_mass_matrix.cpp: a floating root
// cluster, clusters numbered depth first, each cluster carrying the forces of its whole subtree
// joint by joint, constrained clusters by the spanning tree inside them) against the
// column-by-column path it replaces (the same workspace with ClusterScratch::subtreeYEnd cleared)
// and against the dense oracle H = G^T M G (G from oracle::globalExplicitForm, M from the tree
// CRBA), on random closed states of many model shapes: couplings, belts, differentials, mimics,
// implicit four-bars (child clusters on bodies inside a loop cluster), multi-dof tree joints.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "closed_states.hpp"
#include "cluster/cluster_workspace.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "dense_oracles.hpp"
#include "loop_model_generator.hpp"
#include "test_util.hpp"

using namespace clusterdyn;

namespace {

struct Case {
  std::string name;
  ClusterModel cm;
};

/// Floating-base models: generated mechanisms of every kind, the bundled models and the shared
/// robots with a floating base added by the builder when they have none.
std::vector<Case> floatingModels() {
  std::vector<Case> cases;
  ModelOptions floating;
  floating.floatingBase = true;
  for (int s = 0; s < 24; ++s) {
    std::mt19937_64 rng(4100 + s);
    testgen::GeneratorOptions o;
    o.floatingBase = s % 3 != 0;  // else the builder adds it (the root link moves)
    o.treeLinks = 1 + s % 4;
    o.mechanisms = 2 + s % 3;
    o.multiDofTreeJoints = s % 2 == 0;
    o.robotName = "generated_" + std::to_string(s);
    const testgen::GeneratedRobot r = testgen::generateLoopModel(rng, o);
    ModelOptions options;
    options.floatingBase = !o.floatingBase;
    cases.push_back(
        {o.robotName, buildClusterModel(parseUrdfString(r.urdf, o.robotName), options)});
  }
  for (const char* file : {"cd_quadruped.urdf", "cd_belt_leg.urdf", "cd_differential.urdf",
                           "cd_four_bar.urdf", "cd_mimic_gripper.urdf", "cd_six_bar.urdf"}) {
    const bool hasBase = std::string(file) == "cd_quadruped.urdf";
    cases.push_back({file, loadModel(test::modelsPath(file), hasBase ? ModelOptions{} : floating)});
  }
  for (const char* file : {"mini_cheetah.urdf", "mit_humanoid.urdf", "mit_humanoid_leg.urdf"}) {
    const std::string path = test::sharedPath(std::string("urdfplus/") + file);
    if (!std::filesystem::exists(path)) continue;
    const bool hasBase = std::string(file) != "mit_humanoid_leg.urdf";
    cases.push_back({file, loadModel(path, hasBase ? ModelOptions{} : floating)});
  }
  return cases;
}

/// A copy of data whose clusterMassMatrix takes the column-by-column path.
ClusterData columnByColumn(const ClusterData& data) {
  ClusterData generic = data;
  detail::fullScratch(generic).subtreeYEnd.clear();
  return generic;
}

double maxAbs(const MatX& a) { return a.size() ? a.cwiseAbs().maxCoeff() : 0.0; }

}  // namespace

TEST(ClusterMassBlocks, MatchColumnByColumnPathAndDenseOracle) {
  int blockModels = 0, innerJoints = 0, loops = 0;
  for (const Case& c : floatingModels()) {
    SCOPED_TRACE(c.name);
    const ClusterModel& cm = c.cm;
    ClusterData fast(cm);
    const std::vector<int>& yEnd = detail::fullScratch(fast).subtreeYEnd;
    ASSERT_FALSE(yEnd.empty()) << "a floating-base model built by the builder takes the blocks";
    ASSERT_EQ(yEnd[0], cm.ny);
    ++blockModels;
    for (const Cluster& k : cm.clusters) {
      loops += k.implicit();
      for (int b = k.firstBody; b < k.firstBody + k.nbodies; ++b)
        innerJoints += k.constrained() && cm.treeModel.parent[b] >= k.firstBody;
    }
    ClusterData generic = columnByColumn(fast);
    ASSERT_TRUE(detail::fullScratch(generic).subtreeYEnd.empty());
    ClusterData oracleData(cm);
    Data td(cm.treeModel);
    std::mt19937_64 rng(20261125);
    for (int trial = 0; trial < 4; ++trial) {
      support::ClosedState s;
      ASSERT_TRUE(support::randomClosedStateNearReference(cm, oracleData, rng, s, 0.4, 40));
      ASSERT_EQ(clusterMassMatrix(cm, fast, s.q), Status::Ok) << fast.errorMessage();
      ASSERT_EQ(clusterMassMatrix(cm, generic, s.q), Status::Ok) << generic.errorMessage();
      const double scale = 1.0 + maxAbs(generic.H);
      EXPECT_LE(maxAbs(fast.H - generic.H), 1e-12 * scale);
      for (int r = 0; r < cm.ny; ++r)
        for (int col = 0; col < r; ++col) ASSERT_EQ(fast.H(r, col), fast.H(col, r));
      // Dense oracle: G^T M G with G of the whole model at q and M from the tree CRBA.
      ASSERT_EQ(clusterConstraintMatrices(cm, oracleData, s.q, s.v), Status::Ok);
      MatX G;
      VecX g;
      oracle::globalExplicitForm(cm, oracleData, G, g);
      ASSERT_EQ(crba(cm.treeModel, td, s.q), Status::Ok);
      const MatX H = G.transpose() * td.M * G;
      EXPECT_LE(maxAbs(fast.H - H), 1e-12 * (1.0 + maxAbs(H)));
    }
  }
  EXPECT_GE(blockModels, 30);
  EXPECT_GT(innerJoints, 0) << "no cluster with joints inside it: the chain carry is untested";
  EXPECT_GT(loops, 0);
}

TEST(ClusterMassBlocks, FixedBaseModelsKeepTheColumnPath) {
  std::mt19937_64 rng(77);
  testgen::GeneratorOptions o;
  o.floatingBase = false;
  o.mechanisms = 3;
  const ClusterModel cm =
      buildClusterModel(parseUrdfString(testgen::generateLoopModel(rng, o).urdf));
  ClusterData data(cm);
  EXPECT_TRUE(detail::fullScratch(data).subtreeYEnd.empty());  // no floating root cluster
}
