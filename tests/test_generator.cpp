// tools/generate_benchmark_models.py (the Chignoli et al. 2023, benchmark families, Fig. 9 and Fig.
// 11): every generated file loads, has the structure its family defines, agrees with the files
// generalized_rbda's authors published (../shared/urdfplus/benchmarks) where those exist, and
// its cluster algorithms agree with the dense spanning-tree oracle.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <random>
#include <regex>

#include "clusterdyn/clusterdyn.hpp"
#include "dense_oracles.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;
using namespace clusterdyn;

namespace {

/// Removes the generated folder when the test process ends.
struct TempDir {
  fs::path path;
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

fs::path generateAll() {
  static const TempDir dir{[] {
    const fs::path out =
        fs::temp_directory_path() / ("clusterdyn_gen_" + std::to_string(::getpid()));
    fs::remove_all(out);
    const std::string cmd = "python3 " + std::string(CLUSTERDYN_SOURCE_DIR) +
                            "/tools/generate_benchmark_models.py --all " + out.string() +
                            " > /dev/null";
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return out;
  }()};
  return dir.path;
}

std::vector<fs::path> generatedFiles() {
  std::vector<fs::path> files;
  for (const auto& e : fs::recursive_directory_iterator(generateAll()))
    if (e.path().extension() == ".urdf") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

TEST(Generator, FamiliesHaveTheirStructure) {
  setLogLevel(LogLevel::Error);
  const auto files = generatedFiles();
  ASSERT_GT(files.size(), 300u);
  const std::regex branch(
      R"((revolute_rotor|revolute_rotor_pair|four_bar)_branch_(\d+)_(\d+)\.urdf)");
  const std::regex chains(R"(loop_size(\d+)\.urdf)");
  int checked = 0;
  for (const auto& f : files) {
    const std::string name = f.filename().string();
    if (name.rfind("approx_", 0) == 0) {  // tree approximations: no chord, one body per cluster
      const ClusterModel cm = loadModel(f.string());
      EXPECT_EQ(cm.loops.size() + cm.relations.size(), 0u) << f;
      EXPECT_EQ(cm.ny, cm.treeModel.nv) << f;
      continue;
    }
    SCOPED_TRACE(f.string());
    const ClusterModel cm = loadModel(f.string());
    std::smatch m;
    if (std::regex_match(name, m, branch)) {
      const int B = std::stoi(m[2]), D = std::stoi(m[3]);
      const std::string fam = m[1];
      const int perSub = fam == "revolute_rotor_pair" ? 2 : 1;  // dofs per sub-mechanism
      EXPECT_EQ(cm.ny, 6 + B * D * perSub);
      EXPECT_EQ(static_cast<int>(cm.clusters.size()), 1 + B * D);
      EXPECT_EQ(static_cast<int>(cm.loops.size()), fam == "four_bar" ? B * D : 0);
      ++checked;
    } else if (std::regex_match(name, m, chains)) {
      const int depth = std::stoi(f.parent_path().filename().string().substr(5));
      EXPECT_EQ(cm.ny, 2 * depth - 1);  // two chains of `depth` joints, one loop dof removed
      EXPECT_EQ(cm.loops.size() + cm.relations.size(), 1u);
      ++checked;
    } else {
      ADD_FAILURE() << "unexpected file name " << name;
    }
  }
  EXPECT_GT(checked, 150);
}

TEST(Generator, MatchesThePublishedBenchmarkModels) {
  setLogLevel(LogLevel::Error);
  const fs::path shared = clusterdyn::test::sharedPath("urdfplus/benchmarks");
  if (!fs::exists(shared)) GTEST_SKIP() << "no " << shared;
  int compared = 0;
  for (const auto& f : generatedFiles()) {
    const fs::path other = shared / fs::relative(f, generateAll());
    if (!fs::exists(other)) continue;
    SCOPED_TRACE(f.string());
    const ClusterModel a = loadModel(f.string()), b = loadModel(other.string());
    EXPECT_EQ(a.treeModel.nbodies, b.treeModel.nbodies);
    EXPECT_EQ(a.treeModel.nv, b.treeModel.nv);
    EXPECT_EQ(a.ny, b.ny);
    EXPECT_EQ(a.clusters.size(), b.clusters.size());
    EXPECT_EQ(a.loops.size(), b.loops.size());
    EXPECT_EQ(a.relations.size(), b.relations.size());
    for (size_t k = 0; k < std::min(a.clusters.size(), b.clusters.size()); ++k) {
      EXPECT_EQ(a.clusters[k].nbodies, b.clusters[k].nbodies) << "cluster " << k;
      EXPECT_EQ(a.clusters[k].ny, b.clusters[k].ny) << "cluster " << k;
    }
    ++compared;
  }
  EXPECT_GT(compared, 200);
}

TEST(Generator, ClusterDynamicsMatchTheDenseOracle) {
  // A few generated files per family: CE-ABA against G^T M G y_ddot = G^T (tau - c - M g).
  setLogLevel(LogLevel::Error);
  const std::vector<std::string> picks = {
      "variable_revolute_urdf/revolute_rotor_branch_2_3.urdf",
      "variable_revolute_pair_urdf/revolute_rotor_pair_branch_2_2.urdf",
      "variable_four_bar_urdf/four_bar_branch_2_3.urdf",
      "parallel_chains/Explicit/depth5/loop_size6.urdf",
      "parallel_chains/Implicit/depth5/loop_size7.urdf"};
  std::mt19937 rng(11);
  std::uniform_real_distribution<double> uni(-0.4, 0.4);
  for (const auto& rel : picks) {
    SCOPED_TRACE(rel);
    const fs::path f = generateAll() / rel;
    ASSERT_TRUE(fs::exists(f));
    const ClusterModel cm = loadModel(f.string());
    ClusterData data(cm);
    VecX y = VecX::Zero(cm.nyq), yd(cm.ny), tau(cm.ny);
    const VecX q0 = neutralConfiguration(cm.treeModel);
    for (int i = 0; i < cm.nyq; ++i) y[i] = q0[cm.independentPosition[i]];
    for (const Cluster& c : cm.clusters)  // random joint angles, the floating base stays put
      if (cm.treeModel.joints[c.firstBody].type != JointType::Floating)
        for (int i = c.yq0; i < c.yq0 + c.nyq; ++i) y[i] += uni(rng);
    for (int i = 0; i < cm.ny; ++i) yd[i] = uni(rng), tau[i] = uni(rng);
    ASSERT_EQ(independentToSpanning(cm, data, y, yd), Status::Ok) << data.errorMessage();
    const VecX q = data.q, v = data.v;
    ASSERT_EQ(ceAba(cm, data, q, v, tau), Status::Ok) << data.errorMessage();
    const VecX ydd = data.ydd;
    bool ok = false;
    const VecX expected = oracle::denseClusterYdd(cm, data, q, v, tau, &ok);
    ASSERT_TRUE(ok);
    EXPECT_LE((ydd - expected).norm(), 1e-9 * (1.0 + expected.norm()));
  }
}
