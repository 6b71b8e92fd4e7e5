// The state-independent shortcuts of the cluster steps (cluster_workspace.hpp: constant rows of
// the cluster motion subspace S, the rotors' constant U, D and Ubar terms) against the generic
// path they replace: the same workspace with the shortcuts switched off (constantS and rotors
// cleared) must give the same CE-ABA results to rounding on random closed states.
#include <gtest/gtest.h>

#include <random>

#include "closed_states.hpp"
#include "cluster/cluster_workspace.hpp"
#include "clusterdyn/cluster_algorithms.hpp"
#include "clusterdyn/constraint_forces.hpp"
#include "test_util.hpp"

using namespace clusterdyn;

namespace {

/// A copy of data whose steps take the generic path everywhere.
ClusterData withoutShortcuts(const ClusterData& data) {
  ClusterData generic = data;
  for (ClusterWorkspace& w : detail::scratch(generic)) {
    std::fill(w.constantS.begin(), w.constantS.end(), 0);
    w.rotors.clear();
  }
  return generic;
}

double maxDiff(const VecX& a, const VecX& b) { return (a - b).cwiseAbs().maxCoeff(); }

void checkModel(const std::string& file, int minRotors) {
  SCOPED_TRACE(file);
  const ClusterModel cm = loadModel(test::modelsPath(file));
  ClusterData fast(cm);
  int rotors = 0, constantRows = 0;
  for (const ClusterWorkspace& w : detail::scratch(fast)) {
    rotors += static_cast<int>(w.rotors.size());
    for (char s : w.constantS) constantRows += s != 0;
  }
  ASSERT_GE(rotors, minRotors);  // the shortcuts are in use: the comparison is not vacuous
  ASSERT_GT(constantRows, rotors);
  ClusterData generic = withoutShortcuts(fast);
  std::mt19937_64 rng(20261123);
  for (int trial = 0; trial < 20; ++trial) {
    support::ClosedState s;
    ASSERT_TRUE(support::randomClosedStateNearReference(cm, fast, rng, s, 0.4, 40));
    const VecX tau = support::uniformVector(cm.ny, rng, -2.0, 2.0);
    const std::vector<Force> fext = test::randomForces(cm.treeModel, rng, 0.5);
    ASSERT_EQ(ceAba(cm, fast, s.q, s.v, tau, fext.data()), Status::Ok) << fast.errorMessage();
    ASSERT_EQ(ceAba(cm, generic, s.q, s.v, tau, fext.data()), Status::Ok) << generic.errorMessage();
    const double scale = 1.0 + generic.ydd.cwiseAbs().maxCoeff();
    EXPECT_LE(maxDiff(fast.ydd, generic.ydd), 1e-12 * scale);
    EXPECT_LE(maxDiff(fast.qdd, generic.qdd), 1e-12 * scale);
    for (int b = 0; b < cm.treeModel.nbodies; ++b) {
      const double iscale = 1.0 + generic.treeData.IA[b].cwiseAbs().maxCoeff();
      EXPECT_LE((fast.treeData.IA[b] - generic.treeData.IA[b]).cwiseAbs().maxCoeff(),
                1e-12 * iscale);
      EXPECT_LE(maxDiff(fast.treeData.pA[b], generic.treeData.pA[b]),
                1e-12 * (1.0 + generic.treeData.pA[b].cwiseAbs().maxCoeff()));
    }
    for (size_t k = 0; k < cm.clusters.size(); ++k) {
      const ClusterWorkspace& wf = detail::scratch(fast)[k];
      const ClusterWorkspace& wg = detail::scratch(generic)[k];
      EXPECT_LE((wf.S - wg.S).cwiseAbs().maxCoeff(), 1e-15);
      EXPECT_LE((wf.U - wg.U).cwiseAbs().maxCoeff(), 1e-12 * (1.0 + wg.U.cwiseAbs().maxCoeff()));
      EXPECT_LE((wf.Ubar - wg.Ubar).cwiseAbs().maxCoeff(),
                1e-12 * (1.0 + wg.Ubar.cwiseAbs().maxCoeff()));
    }
  }
}

}  // namespace

TEST(ClusterConstantRows, GearedRotorPairsMatchTheGenericPath) {
  checkModel("cd_quadruped.urdf", 12);  // 12 link + rotor clusters, one coordinate each
}

TEST(ClusterConstantRows, RotorsOfATwoCoordinateDifferentialMatchTheGenericPath) {
  checkModel("cd_differential.urdf", 2);  // two rotors drive a 2-dof wrist
}

TEST(ClusterConstantRows, BeltClusterWithInternalBodiesMatchesTheGenericPath) {
  checkModel("cd_belt_leg.urdf", 1);  // constant rows next to rows that depend on q
}

namespace {

double maxDiff6(const Vec6& a, const Vec6& b) { return (a - b).cwiseAbs().maxCoeff(); }

/// CE-RNEA with the rotors in their output body's frame (no external forces) against the
/// generic spanning RNEA (the same call with zero external forces takes it): results, every
/// body's entries of treeData after updateRotorBodies, and the constraint forces.
void checkRotorRnea(const std::string& file, int minRotors) {
  SCOPED_TRACE(file);
  const ClusterModel cm = loadModel(test::modelsPath(file));
  ClusterData fast(cm), generic(cm);
  ASSERT_GE(static_cast<int>(detail::fullScratch(fast).rotors.size()), minRotors);
  const std::vector<Force> zero(cm.treeModel.nbodies, Force::Zero());
  JointForces ff(cm), fg(cm);
  std::mt19937_64 rng(20261125);
  for (int trial = 0; trial < 10; ++trial) {
    support::ClosedState s;
    ASSERT_TRUE(support::randomClosedStateNearReference(cm, fast, rng, s, 0.4, 40));
    const VecX ydd = support::uniformVector(cm.ny, rng, -2.0, 2.0);
    ASSERT_EQ(ceRnea(cm, fast, s.q, s.v, ydd), Status::Ok) << fast.errorMessage();
    ASSERT_TRUE(detail::fullScratch(fast).deferredRotors.pending);  // the rotor path ran
    ASSERT_EQ(ceRnea(cm, generic, s.q, s.v, ydd, zero.data()), Status::Ok);
    ASSERT_FALSE(detail::fullScratch(generic).deferredRotors.pending);
    const double scale = 1.0 + generic.tauY.cwiseAbs().maxCoeff();
    EXPECT_LE(maxDiff(fast.tauY, generic.tauY), 1e-12 * scale);
    EXPECT_LE(maxDiff(fast.treeData.tau, generic.treeData.tau), 1e-12 * scale);
    ASSERT_EQ(updateRotorBodies(cm, fast), Status::Ok);
    const Data& a = fast.treeData;
    const Data& b = generic.treeData;
    for (int i = 0; i < cm.treeModel.nbodies; ++i) {
      EXPECT_LE((a.liMi[i].R - b.liMi[i].R).cwiseAbs().maxCoeff(), 1e-14) << i;
      EXPECT_LE((a.oMi[i].p - b.oMi[i].p).cwiseAbs().maxCoeff(), 1e-14) << i;
      EXPECT_LE(maxDiff6(a.v[i], b.v[i]), 1e-12 * (1.0 + b.v[i].cwiseAbs().maxCoeff())) << i;
      EXPECT_LE(maxDiff6(a.a_gf[i], b.a_gf[i]), 1e-12 * (1.0 + b.a_gf[i].cwiseAbs().maxCoeff()));
      // (c: not an RNEA output)
      EXPECT_LE(maxDiff6(a.f[i], b.f[i]), 1e-12 * (1.0 + b.f[i].cwiseAbs().maxCoeff())) << i;
    }
    // The constraint-force query completes the rotors itself (a second call is a no-op).
    ASSERT_EQ(ceRnea(cm, fast, s.q, s.v, ydd), Status::Ok);
    ASSERT_EQ(ceRneaConstraintForces(cm, fast, ff), Status::Ok) << fast.errorMessage();
    ASSERT_EQ(ceRneaConstraintForces(cm, generic, fg), Status::Ok);
    for (int i = 0; i < cm.treeModel.nbodies; ++i)
      EXPECT_LE(maxDiff6(ff.joint[i], fg.joint[i]),
                1e-11 * (1.0 + fg.joint[i].cwiseAbs().maxCoeff()));
    EXPECT_LE(maxDiff(ff.relationMultiplier, fg.relationMultiplier),
              1e-11 * (1.0 + fg.relationMultiplier.cwiseAbs().maxCoeff()));
    // clusterBias takes the same path: C = ceRnea(ydd = 0).
    ASSERT_EQ(clusterBias(cm, fast, s.q, s.v), Status::Ok);
    ASSERT_EQ(ceRnea(cm, generic, s.q, s.v, VecX::Zero(cm.ny), zero.data()), Status::Ok);
    EXPECT_LE(maxDiff(fast.C, generic.tauY), 1e-12 * (1.0 + generic.tauY.cwiseAbs().maxCoeff()));
    // A later algorithm that writes every body leaves nothing to complete.
    ASSERT_EQ(ceAba(cm, fast, s.q, s.v, fast.tauY, zero.data()), Status::Ok);
    EXPECT_FALSE(detail::fullScratch(fast).deferredRotors.pending);
  }
}

}  // namespace

TEST(ClusterRotorRnea, GearedRotorsInTheOutputFrameMatchTheGenericPath) {
  checkRotorRnea("cd_quadruped.urdf", 12);
}

TEST(ClusterRotorRnea, DifferentialRotorsInTheOutputFrameMatchTheGenericPath) {
  checkRotorRnea("cd_differential.urdf", 2);
}

TEST(ClusterRotorRnea, BeltLegRotorsInTheOutputFrameMatchTheGenericPath) {
  checkRotorRnea("cd_belt_leg.urdf", 1);
}

TEST(ClusterRotorRnea, UpdateRotorBodiesRejectsAForeignWorkspace) {
  const ClusterModel cm = loadModel(test::modelsPath("cd_quadruped.urdf"));
  const ClusterModel other = loadModel(test::modelsPath("cd_four_bar.urdf"));
  ClusterData data(other);
  EXPECT_EQ(updateRotorBodies(cm, data), Status::WorkspaceMismatch);
}

namespace {

/// CE-ABA with the rotors of one-coordinate clusters in their output body's frame (no external
/// forces) against the generic steps (the same call with zero external forces takes them).
void checkRotorAba(const std::string& file, int minRotors) {
  SCOPED_TRACE(file);
  const ClusterModel cm = loadModel(test::modelsPath(file));
  ClusterData fast(cm), generic(cm);
  int scalarRotors = 0;
  for (const OutputFrameRotor& r : detail::fullScratch(fast).rotors)
    scalarRotors += r.aba && cm.clusters[cm.bodyCluster[r.body]].ny == 1;
  ASSERT_GE(scalarRotors, minRotors);
  const std::vector<Force> zero(cm.treeModel.nbodies, Force::Zero());
  JointForces ff(cm), fg(cm);
  std::mt19937_64 rng(20261126);
  for (int trial = 0; trial < 10; ++trial) {
    support::ClosedState s;
    ASSERT_TRUE(support::randomClosedStateNearReference(cm, fast, rng, s, 0.4, 40));
    const VecX tau = support::uniformVector(cm.ny, rng, -2.0, 2.0);
    ASSERT_EQ(ceAba(cm, fast, s.q, s.v, tau), Status::Ok) << fast.errorMessage();
    ASSERT_TRUE(detail::fullScratch(fast).deferredRotors.pending);
    ASSERT_EQ(ceAba(cm, generic, s.q, s.v, tau, zero.data()), Status::Ok);
    const double scale = 1.0 + generic.ydd.cwiseAbs().maxCoeff();
    EXPECT_LE(maxDiff(fast.ydd, generic.ydd), 1e-12 * scale);
    EXPECT_LE(maxDiff(fast.qdd, generic.qdd), 1e-12 * scale);
    // The constraint-force query completes the rotors' entries (pA, IA, a_gf) itself.
    ASSERT_EQ(ceAbaConstraintForces(cm, fast, ff, tau), Status::Ok) << fast.errorMessage();
    ASSERT_EQ(ceAbaConstraintForces(cm, generic, fg, tau), Status::Ok);
    for (int i = 0; i < cm.treeModel.nbodies; ++i)
      EXPECT_LE(maxDiff6(ff.joint[i], fg.joint[i]),
                1e-11 * (1.0 + fg.joint[i].cwiseAbs().maxCoeff()));
    const Data& a = fast.treeData;
    const Data& b = generic.treeData;
    for (int i = 0; i < cm.treeModel.nbodies; ++i) {
      EXPECT_LE((a.oMi[i].R - b.oMi[i].R).cwiseAbs().maxCoeff(), 1e-14) << i;
      EXPECT_LE(maxDiff6(a.v[i], b.v[i]), 1e-12 * (1.0 + b.v[i].cwiseAbs().maxCoeff())) << i;
      EXPECT_LE(maxDiff6(a.a_gf[i], b.a_gf[i]), 1e-11 * (1.0 + b.a_gf[i].cwiseAbs().maxCoeff()));
      EXPECT_LE(maxDiff6(a.c[i], b.c[i]), 1e-12 * (1.0 + b.c[i].cwiseAbs().maxCoeff())) << i;
      EXPECT_LE(maxDiff6(a.pA[i], b.pA[i]), 1e-11 * (1.0 + b.pA[i].cwiseAbs().maxCoeff())) << i;
    }
  }
}

}  // namespace

TEST(ClusterRotorAba, GearedRotorsInTheOutputFrameMatchTheGenericSteps) {
  checkRotorAba("cd_quadruped.urdf", 12);
}

TEST(ClusterRotorAba, HipRotorOnTheWorldMatchesTheGenericSteps) {
  checkRotorAba("cd_belt_leg.urdf", 1);  // the hip rotor hangs from the world
}
