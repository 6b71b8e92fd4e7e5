// Cluster-tree algorithms on the loop models of loop_model_cases.hpp and hand-written ones: loop
// closure and projection, hand-derived explicit constraints (differential, mimic), the ClusterData
// handle, and models without constraints against the tree algorithms. CE-ABA: test_ce_aba.cpp;
// CE-RNEA, H, C: test_ce_rnea.cpp.
#include <gtest/gtest.h>

#include "loop_model_cases.hpp"

using namespace clusterdyn;
using namespace clusterdyn::test::loops;
using clusterdyn::test::isClose;
using clusterdyn::test::relativeError;

namespace {

// ---------------------------------------------------------------------------------------------
// Position level: loop closure and projection.

TEST_P(LoopModels, LoopClosureAndProjection) {
  const bool implicit = !cm.loops.empty();
  for (int trial = 0; trial < 3; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    VecX q, v, y, yd;
    ASSERT_TRUE(f.randomState(q, v, y, yd));
    // Cold-ish start: from the reference configuration.
    data.q = cm.qReference;
    ASSERT_EQ(solveLoopClosure(cm, data, y), Status::Ok) << data.errorMessage();
    EXPECT_LE(data.lastResidual, 1e-12);
    const int cold = data.lastIterations;
    EXPECT_LE(maxAbs(f.oracle->residual(data.q)), 1e-10);
    const VecX qs = data.q;
    VecX yBack(cm.nyq), ydBack(cm.ny);
    ASSERT_EQ(spanningToIndependent(cm, data, qs, v, yBack, ydBack), Status::Ok);
    EXPECT_TRUE(isClose(yBack, y, 0.0)) << "independent positions not kept";
    // Warm start at the solution: at most one polishing iteration.
    ASSERT_EQ(solveLoopClosure(cm, data, y), Status::Ok);
    EXPECT_LE(data.lastIterations, 1);
    EXPECT_LE(data.lastIterations, cold);
    EXPECT_LE(data.lastResidual, 1e-12);
    EXPECT_TRUE(isClose(data.q, qs, 1e-12));
    // A small step from a warm start converges quadratically (few iterations).
    VecX y2 = y;
    for (const Cluster& c : cm.clusters)
      if (c.constrained()) y2.segment(c.yq0, c.nyq).array() += 1e-4;
    for (int k = 0; k < cm.nyq; ++k)  // an independent ball joint of a loop: a unit quaternion
      if (cm.independentPositionNames[k].size() > 3 &&
          cm.independentPositionNames[k].compare(cm.independentPositionNames[k].size() - 3, 3,
                                                 ":qx") == 0)
        y2.segment<4>(k).normalize();
    ASSERT_EQ(solveLoopClosure(cm, data, y2), Status::Ok);
    EXPECT_LE(data.lastIterations, 4);
    EXPECT_LE(data.lastResidual, 1e-12);
    EXPECT_LE(maxAbs(f.oracle->residual(data.q)), 1e-10);
    if (implicit && trial == 0) {
      // The closure moved the dependent coordinates: by Newton, or by the branch predictor
      // alone (exact, cold == 0, where the branch is linear in the joint angles: parallelograms).
      double moved = 0.0;
      for (const Cluster& c : cm.clusters)
        if (c.implicit())
          for (int i : c.dependent) {
            const int iq = t.idx_q[t.velocityOwner[c.v0 + i]];
            moved = std::max(moved, std::abs(qs[iq] - cm.qReference[iq]));
          }
      EXPECT_GT(moved, 0.0) << "closure left the dependent coordinates at the reference?";
    }

    // Projection of a perturbed state: constraints hold, independent coordinates are kept,
    // the velocity is G y_dot with y_dot the independent part, and projecting again is a no-op.
    const VecX qBad = integrate(t, q, clusterdyn::test::randomVector(t.nv, f.rng, -1, 1), 1e-2);
    const VecX vBad = v + clusterdyn::test::randomVector(t.nv, f.rng, -0.5, 0.5);
    ASSERT_EQ(projectToConstraints(cm, data, qBad, vBad), Status::Ok) << data.errorMessage();
    const VecX qp = data.q, vp = data.v;
    EXPECT_LE(maxAbs(f.oracle->residual(qp)), 1e-10);
    const MatX K = f.oracle->jacobian(qp);
    if (K.rows() > 0) {
      EXPECT_LE(maxAbs((K * vp)), kFd * std::max(1.0, maxAbs(K) * maxAbs(vp)));
    }
    VecX yIn(cm.nyq), ydIn(cm.ny), yOut(cm.nyq), ydOut(cm.ny);
    ASSERT_EQ(spanningToIndependent(cm, data, qBad, vBad, yIn, ydIn), Status::Ok);
    ASSERT_EQ(spanningToIndependent(cm, data, qp, vp, yOut, ydOut), Status::Ok);
    EXPECT_TRUE(isClose(yOut, yIn, 0.0));
    EXPECT_TRUE(isClose(ydOut, ydIn, 0.0));
    ASSERT_EQ(clusterConstraintMatrices(cm, data, qp, vp), Status::Ok);
    MatX G;
    VecX g;
    oracle::globalExplicitForm(cm, data, G, g);
    EXPECT_TRUE(isClose(vp, G * ydIn, 1e-12));
    ASSERT_EQ(projectToConstraints(cm, data, qp, vp), Status::Ok);
    EXPECT_TRUE(isClose(data.q, qp, 1e-12)) << "projection not idempotent (q)";
    EXPECT_TRUE(isClose(data.v, vp, 1e-12)) << "projection not idempotent (v)";
  }
}

INSTANTIATE_TEST_SUITE_P(Cluster, LoopModels, ::testing::ValuesIn(loopModelCases()),
                         [](const auto& info) { return info.param.name; });

// ---------------------------------------------------------------------------------------------
// Hand-derived explicit constraints.

int yIndex(const ClusterModel& cm, const std::string& name) {
  const auto& n = cm.independentVelocityNames;
  const auto it = std::find(n.begin(), n.end(), name);
  return it == n.end() ? -1 : static_cast<int>(it - n.begin());
}

TEST(ClusterDifferential, GMatchesHandDerivation) {
  for (bool rotorsIndependent : {false, true}) {
    SCOPED_TRACE(rotorsIndependent ? "rotors independent" : "outputs independent");
    const ClusterModel cm =
        buildClusterModel(parseUrdfString(differentialUrdf(rotorsIndependent), "diff.urdf"));
    const Model& t = cm.treeModel;
    ASSERT_EQ(cm.ny, 3);
    ASSERT_EQ(t.nv, 5);
    const int k = cm.bodyCluster[t.bodyId("pitch_link")];
    const Cluster& c = cm.clusters[k];
    EXPECT_EQ(c.nbodies, 4);
    EXPECT_EQ(c.outputBody, t.bodyId("forearm"));
    EXPECT_FALSE(c.implicit());
    // Rows: spanning joints; columns: y.
    const std::vector<std::string> rows = {"wrist_pitch", "wrist_roll", "rotor_a_joint",
                                           "rotor_b_joint"};
    Eigen::Matrix<double, 4, 2> expected;
    std::vector<std::string> cols;
    if (!rotorsIndependent) {
      cols = {"wrist_pitch", "wrist_roll"};
      // q_a + q_b = 16 p, q_a - q_b = 20 (p + r)  =>  q_a = 18 p + 10 r, q_b = -2 p - 10 r.
      expected << 1, 0, 0, 1, 18, 10, -2, -10;
    } else {
      cols = {"rotor_a_joint", "rotor_b_joint"};
      // p = (a + b) / 16, r = (a - b) / 20 - p = -a / 80 - 9 b / 80.
      expected << 1.0 / 16, 1.0 / 16, -1.0 / 80, -9.0 / 80, 1, 0, 0, 1;
    }
    ClusterData data(cm);
    VecX q = cm.qReference, v = VecX::Zero(t.nv);
    ASSERT_EQ(clusterConstraintMatrices(cm, data, q, v), Status::Ok);
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 2; ++j) {
        const int vi = t.velocityIndex(rows[i]) - c.v0, yj = yIndex(cm, cols[j]) - c.y0;
        ASSERT_GE(yj, 0);
        EXPECT_NEAR(c.G(vi, yj), expected(i, j), 1e-14) << rows[i] << " / " << cols[j];
        EXPECT_NEAR(data.explicitMatrix(k)(vi, yj), expected(i, j), 1e-14);
      }
    EXPECT_TRUE(isClose(data.explicitBias(k), VecX::Zero(4), 0.0));
    // Position level: the same linear map (couplings hold for positions with zero offset).
    VecX y(cm.nyq);
    y << 0.3, -0.4, 0.7;  // elbow, then the cluster's two coordinates
    ASSERT_EQ(cm.independentPositionNames[0], "elbow");
    ASSERT_EQ(solveLoopClosure(cm, data, y), Status::Ok) << data.errorMessage();
    Eigen::Vector2d yc(y[1], y[2]);
    if (yIndex(cm, cols[0]) > yIndex(cm, cols[1])) std::swap(yc[0], yc[1]);
    for (int i = 0; i < 4; ++i)
      EXPECT_NEAR(data.q[t.positionIndex(rows[i])], expected.row(i).dot(yc), 1e-14) << rows[i];
  }
}

TEST(ClusterMimic, PositionAndVelocityRelations) {
  const ClusterModel cm = buildClusterModel(parseUrdfString(mimicUrdf(), "mimic.urdf"));
  const Model& t = cm.treeModel;
  ASSERT_EQ(cm.ny, 1);
  ASSERT_EQ(cm.clusters.size(), 1u);
  EXPECT_EQ(cm.independentVelocityNames[0], "leader");
  ClusterData data(cm);
  for (double ql : {0.4, -1.3, 0.0}) {
    VecX y(1);
    y << ql;
    ASSERT_EQ(solveLoopClosure(cm, data, y), Status::Ok);
    const double qf = -0.7 * ql + 0.25, qf2 = 2.0 * qf - 0.1;
    EXPECT_NEAR(data.q[t.positionIndex("leader")], ql, 1e-15);
    EXPECT_NEAR(data.q[t.positionIndex("follower")], qf, 1e-14);
    EXPECT_NEAR(data.q[t.positionIndex("follower2")], qf2, 1e-14);
    VecX yd(1);
    yd << 0.9;
    ASSERT_EQ(independentToSpanning(cm, data, y, yd), Status::Ok);
    EXPECT_NEAR(data.v[t.velocityIndex("follower")], -0.7 * 0.9, 1e-14);
    EXPECT_NEAR(data.v[t.velocityIndex("follower2")], -1.4 * 0.9, 1e-14);
    const Cluster& c = cm.clusters[0];
    EXPECT_NEAR(c.G(t.velocityIndex("follower") - c.v0, 0), -0.7, 1e-15);
    EXPECT_NEAR(c.G(t.velocityIndex("follower2") - c.v0, 0), -1.4, 1e-15);
  }
  // A state with the wrong offset violates the mimic.
  VecX q = data.q;
  q[t.positionIndex("follower")] += 1e-3;
  EXPECT_EQ(ceAba(cm, data, q, VecX::Zero(t.nv), VecX::Zero(1)), Status::ConstraintFailure);
}

// ---------------------------------------------------------------------------------------------
// Models without chords: the cluster algorithms reduce to the tree algorithms.

// A ClusterData holds its per-cluster scratch behind a handle: a copy must be an independent
// workspace (deep copy) that computes the same results, and a move must keep the buffers.
TEST(ClusterDataHandle, CopiesAreDeepAndMovesKeepTheBuffers) {
  const ClusterModel cm = loadModel(clusterdyn::test::modelsPath("cd_four_bar.urdf"));
  ASSERT_TRUE(cm.hasImplicitClusters());
  std::mt19937_64 rng(7);
  ClusterData data(cm);
  support::ClosedState s1, s2;
  ASSERT_TRUE(support::randomClosedStateNearReference(cm, data, rng, s1, 0.3, 40));
  ASSERT_TRUE(support::randomClosedStateNearReference(cm, data, rng, s2, 0.3, 40));
  const VecX tau = clusterdyn::test::randomVector(cm.ny, rng, -1, 1);
  int loop = -1;
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k)
    if (cm.clusters[k].implicit()) loop = k;

  ASSERT_EQ(ceAba(cm, data, s1.q, s1.v, tau), Status::Ok) << data.errorMessage();
  const VecX ydd1 = data.ydd;
  const MatX G1 = data.explicitMatrix(loop);
  ClusterData copy(data);
  EXPECT_EQ(copy.model, &cm);
  EXPECT_NE(&copy.explicitMatrix(loop), &data.explicitMatrix(loop));
  EXPECT_NE(copy.explicitMatrix(loop).data(), data.explicitMatrix(loop).data());
  EXPECT_TRUE(isClose(copy.explicitMatrix(loop), G1, 0.0));
  // The copy computes at another state; the original keeps its results and its scratch.
  ASSERT_EQ(ceAba(cm, copy, s2.q, s2.v, tau), Status::Ok) << copy.errorMessage();
  EXPECT_FALSE(isClose(copy.explicitMatrix(loop), G1, 1e-6));
  EXPECT_TRUE(isClose(data.explicitMatrix(loop), G1, 0.0));
  EXPECT_TRUE(isClose(data.ydd, ydd1, 0.0));
  // Same results as the original at the same state.
  ASSERT_EQ(ceAba(cm, data, s2.q, s2.v, tau), Status::Ok);
  EXPECT_TRUE(isClose(copy.ydd, data.ydd, kExact));
  // Copy assignment into a workspace of the same model reuses its buffers.
  ClusterData assigned(cm);
  const double* before = assigned.explicitMatrix(loop).data();
  assigned = data;
  EXPECT_EQ(assigned.explicitMatrix(loop).data(), before);
  EXPECT_TRUE(isClose(assigned.explicitMatrix(loop), data.explicitMatrix(loop), 0.0));
  // A move keeps the buffers.
  const double* storage = copy.explicitMatrix(loop).data();
  ClusterData moved(std::move(copy));
  EXPECT_EQ(moved.explicitMatrix(loop).data(), storage);
  ASSERT_EQ(ceAba(cm, moved, s1.q, s1.v, tau), Status::Ok) << moved.errorMessage();
  EXPECT_TRUE(isClose(moved.ydd, ydd1, kExact));
  ClusterData target(cm);
  target = std::move(moved);
  EXPECT_EQ(target.explicitMatrix(loop).data(), storage);
}

TEST(ClusterTreeOnly, ReducesToTreeAlgorithms) {
  std::vector<std::pair<std::string, std::string>> cases;  // (name, path or "" + text)
  std::vector<std::string> texts;
  for (const auto& p : clusterdyn::test::sharedTreeModelFiles()) cases.push_back({p, ""});
  for (const auto& p : clusterdyn::test::bundledTreeModelFiles()) cases.push_back({p, ""});
  for (int s = 0; s < 8; ++s) {
    std::mt19937_64 rng(500 + s);
    testgen::GeneratorOptions o;
    o.floatingBase = s % 2;
    o.treeLinks = 7;
    o.mechanisms = 0;
    o.robotName = "tree_" + std::to_string(s);
    cases.push_back({o.robotName, testgen::generateLoopModel(rng, o).urdf});
  }
  std::mt19937_64 rng(99);
  for (const auto& [name, text] : cases) {
    SCOPED_TRACE(name);
    const ClusterModel cm =
        text.empty() ? loadModel(name) : buildClusterModel(parseUrdfString(text, name));
    const Model& t = cm.treeModel;
    ASSERT_FALSE(cm.hasLoops());
    ASSERT_EQ(cm.ny, t.nv);
    ASSERT_EQ(cm.nyq, t.nq);
    EXPECT_EQ(static_cast<int>(cm.clusters.size()), t.nbodies);
    ClusterData data(cm);
    Data td(t);
    for (int trial = 0; trial < 3; ++trial) {
      const auto st = clusterdyn::test::randomState(t, rng);
      std::vector<Force> fext = clusterdyn::test::randomForces(t, rng);
      const Force* fp = trial == 1 ? fext.data() : nullptr;
      ASSERT_EQ(ceAba(cm, data, st.q, st.v, st.tau, fp), Status::Ok) << data.errorMessage();
      ASSERT_EQ(aba(t, td, st.q, st.v, st.tau, fp), Status::Ok);
      EXPECT_TRUE(isClose(data.ydd, td.ddq, kExact)) << "ceAba != aba";
      EXPECT_TRUE(isClose(data.qdd, td.ddq, kExact));
      ASSERT_EQ(ceRnea(cm, data, st.q, st.v, st.a, fp), Status::Ok);
      ASSERT_EQ(rnea(t, td, st.q, st.v, st.a, fp), Status::Ok);
      EXPECT_TRUE(isClose(data.tauY, td.tau, kExact)) << "ceRnea != rnea";
      ASSERT_EQ(clusterMassMatrix(cm, data, st.q), Status::Ok);
      ASSERT_EQ(crba(t, td, st.q), Status::Ok);
      EXPECT_TRUE(isClose(data.H, td.M, kExact)) << "H != M";
      ASSERT_EQ(clusterBias(cm, data, st.q, st.v), Status::Ok);
      ASSERT_EQ(nonLinearEffects(t, td, st.q, st.v), Status::Ok);
      EXPECT_TRUE(isClose(data.C, td.nle, kExact)) << "C != nle";
      ASSERT_EQ(ceAbaSpanningForces(cm, data, st.q, st.v, st.tau), Status::Ok);
      ASSERT_EQ(aba(t, td, st.q, st.v, st.tau), Status::Ok);
      EXPECT_TRUE(isClose(data.ydd, td.ddq, kExact));
      // Loop closure is the identity map.
      ASSERT_EQ(solveLoopClosure(cm, data, st.q), Status::Ok);
      EXPECT_TRUE(isClose(data.q, st.q, 0.0));
    }
  }
}

}  // namespace
