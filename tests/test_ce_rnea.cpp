// CE-RNEA, H and C (clusterMassMatrix, clusterBias) on the loop models of loop_model_cases.hpp:
// ceRnea(ceAba(tau)) = tau, H and C against the spanning tree's M and c mapped by G, the entry
// points against each other, and the spanning accelerations G y_ddot + g along a trajectory.
#include <gtest/gtest.h>

#include "loop_model_cases.hpp"

using namespace clusterdyn;
using namespace clusterdyn::test::loops;
using clusterdyn::test::isClose;
using clusterdyn::test::relativeError;

namespace {

// ---------------------------------------------------------------------------------------------
// Forward / inverse dynamics, H, C, entry points.

TEST_P(LoopModels, InverseDynamicsMassMatrixAndBias) {
  for (int trial = 0; trial < 3; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    VecX q, v, y, yd;
    ASSERT_TRUE(f.randomState(q, v, y, yd));
    std::vector<Force> fext;
    if (trial == 1) fext = clusterdyn::test::randomForces(t, f.rng);
    const Force* fp = fext.empty() ? nullptr : fext.data();
    const VecX tauY = clusterdyn::test::randomVector(cm.ny, f.rng, -2, 2);
    const VecX tauS = clusterdyn::test::randomVector(t.nv, f.rng, -2, 2);

    ASSERT_EQ(clusterConstraintMatrices(cm, data, q, v), Status::Ok);
    MatX G;
    VecX g;
    oracle::globalExplicitForm(cm, data, G, g);

    // ceAbaSpanningForces(tau) == ceAba(G^T tau).
    ASSERT_EQ(ceAbaSpanningForces(cm, data, q, v, tauS, fp), Status::Ok) << data.errorMessage();
    const VecX yddS = data.ydd, qddS = data.qdd;
    const VecX tauProjected = G.transpose() * tauS;
    ASSERT_EQ(ceAba(cm, data, q, v, tauProjected, fp), Status::Ok);
    EXPECT_TRUE(isClose(data.ydd, yddS, kExact));
    EXPECT_TRUE(isClose(data.qdd, qddS, kExact));

    // ceRnea(ceAba(tau)) = tau.
    ASSERT_EQ(ceAba(cm, data, q, v, tauY, fp), Status::Ok);
    const VecX ydd = data.ydd, qdd = data.qdd;
    ASSERT_EQ(ceRnea(cm, data, q, v, ydd, fp), Status::Ok) << data.errorMessage();
    EXPECT_TRUE(isClose(data.tauY, tauY, kExact)) << "ceRnea(ceAba(tau)) != tau";
    EXPECT_TRUE(isClose(data.qdd, qdd, kExact));

    // H against G^T M G (tree CRBA) and against CE-RNEA columns.
    ASSERT_EQ(crba(t, *f.td, q), Status::Ok);
    const MatX M = f.td->M;
    ASSERT_EQ(clusterMassMatrix(cm, data, q), Status::Ok) << data.errorMessage();
    const MatX H = data.H;
    EXPECT_TRUE(isClose(H, G.transpose() * M * G, kExact)) << "H != G^T M G";
    EXPECT_TRUE(isClose(H, H.transpose(), 1e-14));
    ASSERT_EQ(clusterBias(cm, data, q, v), Status::Ok) << data.errorMessage();
    const VecX C = data.C;
    ASSERT_EQ(ceRnea(cm, data, q, v, VecX::Zero(cm.ny)), Status::Ok);
    EXPECT_TRUE(isClose(C, data.tauY, 1e-12)) << "clusterBias != ceRnea(ydd = 0)";
    ASSERT_EQ(nonLinearEffects(t, *f.td, q, v), Status::Ok);
    EXPECT_TRUE(isClose(C, G.transpose() * (f.td->nle + M * g), kExact)) << "C != G^T (c + M g)";
    MatX Hcols(cm.ny, cm.ny);
    for (int j = 0; j < cm.ny; ++j) {
      VecX e = VecX::Zero(cm.ny);
      e[j] = 1.0;
      ASSERT_EQ(ceRnea(cm, data, q, v, e), Status::Ok);
      Hcols.col(j) = data.tauY - C;
    }
    EXPECT_TRUE(isClose(H, Hcols, kExact)) << "H e_j != ceRnea(e_j) - C";
    if (!fp) {
      EXPECT_TRUE(isClose(H * ydd + C, tauY, kExact)) << "H ydd + C != tau";
    }

    // ceAbaIndependent == independentToSpanning + ceAba.
    data.q = q;
    ASSERT_EQ(ceAbaIndependent(cm, data, y, yd, tauY, fp), Status::Ok) << data.errorMessage();
    EXPECT_TRUE(isClose(data.ydd, ydd, kExact));
    EXPECT_TRUE(isClose(data.q, q, 1e-10));
    EXPECT_TRUE(isClose(data.v, v, 1e-10));
    // spanningToIndependent is the selection.
    VecX y2(cm.nyq), yd2(cm.ny);
    ASSERT_EQ(spanningToIndependent(cm, data, q, v, y2, yd2), Status::Ok);
    EXPECT_TRUE(isClose(y2, y, 1e-15));
    EXPECT_TRUE(isClose(yd2, yd, 1e-15));
  }
}

// ---------------------------------------------------------------------------------------------
// (c) Along a constrained trajectory the spanning acceleration is G ydd + g.

TEST_P(LoopModels, TrajectoryAccelerationMatchesGAndg) {
  // Coordinates that move: independent 1-dof joints (multi-dof joints stay still, G = I there).
  std::vector<std::pair<int, int>> moving;  // (y velocity index, y position index)
  for (int j = 0; j < cm.ny; ++j) {
    const int body = t.velocityOwner[cm.independentVelocity[j]];
    if (t.nvs[body] != 1) continue;
    const auto it =
        std::find(cm.independentPosition.begin(), cm.independentPosition.end(), t.idx_q[body]);
    ASSERT_NE(it, cm.independentPosition.end());
    moving.emplace_back(j, static_cast<int>(it - cm.independentPosition.begin()));
  }
  for (int trial = 0; trial < 2; ++trial) {
    VecX q0, v0, y0, yd0;
    ASSERT_TRUE(f.randomState(q0, v0, y0, yd0));
    VecX ydot = VecX::Zero(cm.ny), yddot = VecX::Zero(cm.ny);
    for (auto [j, p] : moving) {
      ydot[j] = yd0[j];
      yddot[j] = std::uniform_real_distribution<double>(-2, 2)(f.rng);
    }
    auto state = [&](double s, VecX& q, VecX& v) {
      VecX y = y0, yd = ydot + s * yddot;
      for (auto [j, p] : moving) y[p] += ydot[j] * s + 0.5 * yddot[j] * s * s;
      data.q = q0;
      EXPECT_EQ(independentToSpanning(cm, data, y, yd), Status::Ok) << data.errorMessage();
      q = data.q;
      v = data.v;
    };
    VecX q, v;
    state(0.0, q, v);
    ASSERT_EQ(ceRnea(cm, data, q, v, yddot), Status::Ok) << data.errorMessage();
    const VecX qddExpected = data.qdd;  // G ydd + g
    const double h = 1e-3;
    VecX qp1, vp1, qm1, vm1, qp2, vp2, qm2, vm2;
    state(h, qp1, vp1);
    state(-h, qm1, vm1);
    state(2 * h, qp2, vp2);
    state(-2 * h, qm2, vm2);
    const VecX vdot = (-vp2 + 8 * vp1 - 8 * vm1 + vm2) / (12 * h);
    EXPECT_TRUE(isClose(vdot, qddExpected, kFd)) << "FD spanning acceleration vs G ydd + g";
    // The closed positions move with the spanning velocity (1-dof joints).
    for (int b = 0; b < t.nbodies; ++b) {
      if (t.nvs[b] != 1) continue;
      const int iq = t.idx_q[b], iv = t.idx_v[b];
      const double qdot = (-qp2[iq] + 8 * qp1[iq] - 8 * qm1[iq] + qm2[iq]) / (12 * h);
      EXPECT_NEAR(qdot, v[iv], kFd * std::max(1.0, maxAbs(v))) << t.jointNames[b];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cluster, LoopModels, ::testing::ValuesIn(loopModelCases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
