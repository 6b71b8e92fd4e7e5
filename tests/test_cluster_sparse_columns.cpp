// The column pattern of the cluster motion subspace S (cluster_workspace.hpp: sColStart, sCols)
// and the steps that use it (articulatedSparse, accelerationsSparse: large clusters, d > 3)
// against the dense path they replace: the same workspace with the pattern cleared must give the
// same results to rounding on random closed states, for CE-ABA and for the constrained
// algorithms that read S, U, D^-1 and Ubar between the passes; CE-ABA also against the dense
// oracle G^T M G y_ddot = G^T (tau - c - M g). Rounding: 1e-12 relative, times kappa(D) / 1e4
// when the cluster's D = S^T IA S is worse conditioned than that (kappa ~ 3e4 for the chains of
// loop size 16: the dense path itself then differs from the oracle by as much as from the
// sparse path); the proximal solvers stop at a residual tolerance of 1e-10, 1e-8 relative.
#include <gtest/gtest.h>

#include <Eigen/SVD>
#include <algorithm>
#include <filesystem>
#include <random>

#include "closed_states.hpp"
#include "cluster/cluster_workspace.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "clusterdyn/constraints.hpp"
#include "dense_oracles.hpp"
#include "test_util.hpp"

using namespace clusterdyn;

namespace {

/// A copy of data whose steps take the dense path everywhere.
ClusterData withoutPattern(const ClusterData& data) {
  ClusterData dense = data;
  for (ClusterWorkspace& w : detail::scratch(dense)) {
    w.sColStart.clear();
    w.sCols.clear();
  }
  return dense;
}

double maxDiff(const MatX& a, const MatX& b) { return (a - b).cwiseAbs().maxCoeff(); }
double scaleOf(const MatX& a) { return 1.0 + a.cwiseAbs().maxCoeff(); }

/// Largest condition number of the D matrices of the clusters with more than three coordinates.
double conditionOfD(const ClusterModel& cm, const ClusterData& data) {
  double kappa = 1.0;
  for (size_t k = 0; k < cm.clusters.size(); ++k) {
    if (cm.clusters[k].ny <= 3) continue;
    const Eigen::JacobiSVD<MatX> svd(detail::scratch(data)[k].D);
    const VecX& sv = svd.singularValues();
    kappa = std::max(kappa, sv[0] / sv[sv.size() - 1]);
  }
  return kappa;
}

/// ydd of CE-ABA from the dense spanning-tree quantities (support library oracle).
VecX oracleYdd(const ClusterModel& cm, ClusterData& data, const VecX& q, const VecX& v,
               const VecX& tau) {
  bool ok = false;
  const VecX ydd = oracle::denseClusterYdd(cm, data, q, v, tau, &ok);
  EXPECT_TRUE(ok);
  return ydd;
}

void checkFile(const std::string& file, const std::string& contactLink, bool requireZeroColumns,
               double spread = 0.4) {
  SCOPED_TRACE(file);
  if (!std::filesystem::exists(file)) GTEST_SKIP() << "no " << file;
  setLogLevel(LogLevel::Error);
  const ClusterModel cm = loadModel(file);
  ClusterData fast(cm);
  int sparseClusters = 0, patternClusters = 0;
  for (size_t k = 0; k < cm.clusters.size(); ++k) {
    const ClusterWorkspace& w = detail::scratch(fast)[k];
    const Cluster& c = cm.clusters[k];
    if (c.ny > 3 && !w.sColStart.empty()) ++patternClusters;
    if (c.ny > 3 && !w.sColStart.empty() &&
        static_cast<int>(w.sCols.size()) < c.nbodies * c.ny)  // a pattern with zero columns
      ++sparseClusters;
  }
  ASSERT_GE(patternClusters, 1);  // the sparse path is in use: the comparison is not vacuous
  if (requireZeroColumns) ASSERT_GE(sparseClusters, 1);
  ClusterData dense = withoutPattern(fast);
  ConstraintSet set(cm);
  set.addContact(contactLink, ConstraintType::Point);
  ConstraintData cdFast(cm, set), cdDense(cm, set);
  std::mt19937_64 rng(20261124);
  for (int trial = 0; trial < 10; ++trial) {
    support::ClosedState s;
    ASSERT_TRUE(support::randomClosedStateNearReference(cm, fast, rng, s, spread, 40));
    const VecX tau = support::uniformVector(cm.ny, rng, -2.0, 2.0);
    const VecX tauSpanning = support::uniformVector(cm.treeModel.nv, rng, -2.0, 2.0);
    const std::vector<Force> fext = test::randomForces(cm.treeModel, rng, 0.5);
    ASSERT_EQ(ceAba(cm, fast, s.q, s.v, tau, fext.data()), Status::Ok) << fast.errorMessage();
    ASSERT_EQ(ceAba(cm, dense, s.q, s.v, tau, fext.data()), Status::Ok) << dense.errorMessage();
    const double growth = std::max(1.0, conditionOfD(cm, dense) * 1e-4);
    const double tol = 1e-12 * growth, tolIterative = 1e-8 * growth;
    EXPECT_LE(maxDiff(fast.ydd, dense.ydd), tol * scaleOf(dense.ydd));
    EXPECT_LE(maxDiff(fast.qdd, dense.qdd), tol * scaleOf(dense.ydd));
    for (int b = 0; b < cm.treeModel.nbodies; ++b) {
      const Data& tf = fast.treeData;
      const Data& td = dense.treeData;
      EXPECT_LE(maxDiff(tf.IA[b], td.IA[b]), tol * scaleOf(td.IA[b]));
      EXPECT_LE(maxDiff(tf.pA[b], td.pA[b]), tol * scaleOf(td.pA[b]));
      // a_b = Xh a_out + c + S y_ddot: the rounding of y_ddot times the lever arms in S
      EXPECT_LE(maxDiff(tf.a_gf[b], td.a_gf[b]),
                tol * std::max(scaleOf(td.a_gf[b]), scaleOf(dense.ydd)));
    }
    for (size_t k = 0; k < cm.clusters.size(); ++k) {
      const ClusterWorkspace& wf = detail::scratch(fast)[k];
      const ClusterWorkspace& wd = detail::scratch(dense)[k];
      EXPECT_EQ(maxDiff(wf.S, wd.S), 0.0);  // the same operations on the pattern, zeros outside
      if (!wf.composite.active)  // the composite form (multi-dof joint) leaves U unwritten
        EXPECT_LE(maxDiff(wf.U, wd.U), tol * scaleOf(wd.U));
      EXPECT_LE(maxDiff(wf.Ubar, wd.Ubar), tol * scaleOf(wd.Ubar));
      EXPECT_LE(maxDiff(wf.D, wd.D), tol * scaleOf(wd.D));
      EXPECT_LE(maxDiff(wf.Dinv, wd.Dinv), tol * scaleOf(wd.Dinv));
      EXPECT_LE(maxDiff(wf.u, wd.u), tol * scaleOf(wd.u));
    }
    const VecX expected = oracleYdd(cm, dense, s.q, s.v, VecX(tau));
    ASSERT_EQ(ceAba(cm, fast, s.q, s.v, tau), Status::Ok) << fast.errorMessage();
    EXPECT_LE((fast.ydd - expected).norm(), 1e-9 * (1.0 + expected.norm()));

    ASSERT_EQ(ceAbaSpanningForces(cm, fast, s.q, s.v, tauSpanning), Status::Ok);
    ASSERT_EQ(ceAbaSpanningForces(cm, dense, s.q, s.v, tauSpanning), Status::Ok);
    EXPECT_LE(maxDiff(fast.ydd, dense.ydd), tol * scaleOf(dense.ydd));

    ASSERT_EQ(delassusMatrix(cm, fast, set, cdFast, s.q), Status::Ok) << fast.errorMessage();
    ASSERT_EQ(delassusMatrix(cm, dense, set, cdDense, s.q), Status::Ok) << dense.errorMessage();
    EXPECT_LE(maxDiff(cdFast.delassus, cdDense.delassus), tol * scaleOf(cdDense.delassus));

    const Status pf = proxPv(cm, fast, set, cdFast, s.q, s.v, tau);
    const Status pd = proxPv(cm, dense, set, cdDense, s.q, s.v, tau);
    if (pf == Status::Ok && pd == Status::Ok) {
      EXPECT_LE(maxDiff(fast.ydd, dense.ydd), tolIterative * scaleOf(dense.ydd));
      EXPECT_LE(maxDiff(cdFast.lambda, cdDense.lambda), tolIterative * scaleOf(cdDense.lambda));
    }

    // (iterations may stop one apart at the tolerance: compare converged results only)
    const Status cf = constrainedAba(cm, fast, set, cdFast, s.q, s.v, tau);
    const Status cd = constrainedAba(cm, dense, set, cdDense, s.q, s.v, tau);
    if (cf == Status::Ok && cd == Status::Ok)
      EXPECT_LE(maxDiff(fast.ydd, dense.ydd), tolIterative * scaleOf(dense.ydd));
  }
}

void checkModel(const std::string& relative, const std::string& contactLink) {
  checkFile(test::sharedPath(relative), contactLink, true);
}

}  // namespace

TEST(ClusterSparseColumns, ExplicitParallelChainsLoopSize16MatchTheDensePath) {
  checkModel("urdfplus/benchmarks/parallel_chains/Explicit/depth10/loop_size16.urdf", "link_1_10");
}

TEST(ClusterSparseColumns, ExplicitParallelChainsLoopSize8MatchTheDensePath) {
  checkModel("urdfplus/benchmarks/parallel_chains/Explicit/depth5/loop_size8.urdf", "link_2_5");
}

TEST(ClusterSparseColumns, ImplicitParallelChainsLoopSize17MatchTheDensePath) {
  checkModel("urdfplus/benchmarks/parallel_chains/Implicit/depth10/loop_size17.urdf", "link_1_10");
}

TEST(ClusterSparseColumns, ImplicitParallelChainsLoopSize9MatchTheDensePath) {
  checkModel("urdfplus/benchmarks/parallel_chains/Implicit/depth5/loop_size9.urdf", "link_2_5");
}

// Loop clusters with a multi-dof joint (issue #25: the platform's ball joint): the pattern spans
// all of the joint's velocity rows. The delta's pattern has zero columns (its idle rod spins and
// motors); the Stewart platform's is full (every leg moves the platform), the sparse steps then
// still replace the dense ones.
TEST(ClusterSparseColumns, DeltaRobotWithABallJointMatchesTheDensePath) {
  checkFile(std::string(CLUSTERDYN_MODELS_DIR) + "/cd_delta.urdf", "platform", true);
}

TEST(ClusterSparseColumns, StewartPlatformWithABallJointMatchesTheDensePath) {
  // spread 0.05: the coordinates are leg lengths (m); 0.4 m reaches past the 0.3 m strokes, to
  // near-singular platforms where K_d^-1 amplifies the rounding beyond the kappa(D) bound
  checkFile(std::string(CLUSTERDYN_MODELS_DIR) + "/cd_stewart.urdf", "platform", false, 0.05);
}

// The composite-inertia form of pass 2 (cluster_aba_composite.cpp): taken by the Stewart
// platform's cluster (a ball joint, d = 6, no idle column), not by the delta's (idle columns);
// against the same workspace with the form switched off (the per-column steps on the pattern):
// CE-ABA without and with external forces, the Delassus matrix (the reduced forward step reads
// Ubar^T instead of U^T Xh) and constrainedABA, to 1e-12 relative.
TEST(ClusterSparseColumns, StewartPlatformTakesTheCompositeFormWithTheSameResults) {
  const std::string file = std::string(CLUSTERDYN_MODELS_DIR) + "/cd_stewart.urdf";
  setLogLevel(LogLevel::Error);
  const ClusterModel delta = loadModel(std::string(CLUSTERDYN_MODELS_DIR) + "/cd_delta.urdf");
  const ClusterData deltaData(delta);
  for (const ClusterWorkspace& w : detail::scratch(deltaData)) EXPECT_FALSE(w.composite.active);
  const ClusterModel cm = loadModel(file);
  ClusterData fast(cm);
  int active = 0;
  for (const ClusterWorkspace& w : detail::scratch(fast)) active += w.composite.active;
  ASSERT_EQ(active, 1);
  ClusterData plain = fast;
  for (ClusterWorkspace& w : detail::scratch(plain)) w.composite.active = false;
  ConstraintSet set(cm);
  set.addContact("platform", ConstraintType::Point);
  ConstraintData cdFast(cm, set), cdPlain(cm, set);
  std::mt19937_64 rng(20261126);
  for (int trial = 0; trial < 8; ++trial) {
    support::ClosedState s;
    ASSERT_TRUE(support::randomClosedStateNearReference(cm, fast, rng, s, 0.05, 40));
    const VecX tau = support::uniformVector(cm.ny, rng, -2.0, 2.0);
    const std::vector<Force> fext = test::randomForces(cm.treeModel, rng, 0.5);
    for (const Force* f : {static_cast<const Force*>(nullptr), fext.data()}) {
      ASSERT_EQ(ceAba(cm, fast, s.q, s.v, tau, f), Status::Ok) << fast.errorMessage();
      ASSERT_EQ(ceAba(cm, plain, s.q, s.v, tau, f), Status::Ok) << plain.errorMessage();
      EXPECT_LE(maxDiff(fast.ydd, plain.ydd), 1e-12 * scaleOf(plain.ydd));
      EXPECT_LE(maxDiff(fast.qdd, plain.qdd), 1e-12 * scaleOf(plain.qdd));
      for (size_t k = 0; k < cm.clusters.size(); ++k) {
        const ClusterWorkspace& wf = detail::scratch(fast)[k];
        const ClusterWorkspace& wp = detail::scratch(plain)[k];
        EXPECT_LE(maxDiff(wf.D, wp.D), 1e-12 * scaleOf(wp.D));
        EXPECT_LE(maxDiff(wf.Ubar, wp.Ubar), 1e-12 * scaleOf(wp.Ubar));
        EXPECT_LE(maxDiff(wf.u, wp.u), 1e-12 * scaleOf(wp.u));
        EXPECT_LE(maxDiff(wf.Utc, wp.Utc), 1e-12 * scaleOf(wp.Utc));
      }
    }
    ASSERT_EQ(delassusMatrix(cm, fast, set, cdFast, s.q), Status::Ok) << fast.errorMessage();
    ASSERT_EQ(delassusMatrix(cm, plain, set, cdPlain, s.q), Status::Ok) << plain.errorMessage();
    EXPECT_LE(maxDiff(cdFast.delassus, cdPlain.delassus), 1e-12 * scaleOf(cdPlain.delassus));
    ProximalSettings settings;
    ASSERT_EQ(constrainedAba(cm, fast, set, cdFast, s.q, s.v, tau, settings), Status::Ok);
    ASSERT_EQ(constrainedAba(cm, plain, set, cdPlain, s.q, s.v, tau, settings), Status::Ok);
    EXPECT_LE(maxDiff(fast.qdd, plain.qdd), 1e-10 * scaleOf(plain.qdd));
  }
}

// Idle columns (ClusterWorkspace::idleColumn): the delta's five rods that do not carry the
// platform spin about their own axis through their loop point, so their K columns vanish at every
// configuration; rod_1a's spin (the platform hangs from it) is not idle. CE-ABA with the idle
// columns zeroed matches the workspace without them (K_i's round-off kept, dense steps).
TEST(ClusterSparseColumns, DeltaRodSpinsAreIdleColumnsAndChangeNothing) {
  setLogLevel(LogLevel::Error);
  const ClusterModel cm = loadModel(std::string(CLUSTERDYN_MODELS_DIR) + "/cd_delta.urdf");
  ClusterData fast(cm);
  ASSERT_EQ(cm.clusters.size(), 1u);
  const Cluster& c = cm.clusters[0];
  const ClusterWorkspace& w = detail::scratch(fast)[0];
  ASSERT_EQ(static_cast<int>(w.idleColumn.size()), c.ny);
  std::vector<std::string> idle;
  for (int j = 0; j < c.ny; ++j)
    if (w.idleColumn[j]) idle.push_back(cm.independentVelocityNames[c.y0 + j]);
  std::sort(idle.begin(), idle.end());
  EXPECT_EQ(idle, (std::vector<std::string>{"rod_1b_spin", "rod_2a_spin", "rod_2b_spin",
                                            "rod_3a_spin", "rod_3b_spin"}));
  ClusterData plain = fast;
  for (ClusterWorkspace& pw : detail::scratch(plain)) {
    pw.idleColumn.clear();
    pw.sColStart.clear();
    pw.sCols.clear();
  }
  std::mt19937_64 rng(2511);
  for (int trial = 0; trial < 10; ++trial) {
    support::ClosedState s;
    ASSERT_TRUE(support::randomClosedStateNearReference(cm, fast, rng, s, 0.3, 40));
    const VecX tau = support::uniformVector(cm.ny, rng, -1.0, 1.0);
    ASSERT_EQ(ceAba(cm, fast, s.q, s.v, tau), Status::Ok) << fast.errorMessage();
    ASSERT_EQ(ceAba(cm, plain, s.q, s.v, tau), Status::Ok) << plain.errorMessage();
    const ClusterWorkspace& wf = detail::scratch(fast)[0];
    const ClusterWorkspace& wp = detail::scratch(plain)[0];
    double roundOff = 0.0;
    for (int j = 0; j < c.ny; ++j) {
      if (!w.idleColumn[j]) continue;
      for (const int r : c.dependent) {
        EXPECT_EQ(wf.G(r, j), 0.0);
        roundOff = std::max(roundOff, std::abs(wp.G(r, j)));
      }
    }
    EXPECT_LE(roundOff, 1e-12);  // what the plain workspace carries there
    // y_ddot reaches 1e7 (the rods' axial inertia is 9e-8 kg m^2): relative to its largest entry
    EXPECT_LE(maxDiff(fast.ydd, plain.ydd), 1e-11 * scaleOf(plain.ydd));
    EXPECT_LE(maxDiff(fast.qdd, plain.qdd), 1e-11 * scaleOf(plain.ydd));
  }
}
