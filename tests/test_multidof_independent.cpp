// A spherical joint as an INDEPENDENT coordinate inside a loop cluster (cd_ups_wrist: a 3-UPS/S
// wrist driven through its central ball joint): its quaternion in y (nyq > ny), its 3 angular
// velocities in y_dot, the legs closed by the loop closure. Every cluster algorithm against an
// independent oracle: the same loops cut and solved by proxPv / the dense KKT, the dense spanning
// tree (G^T M G), CE-RNEA after CE-ABA, finite differences of the derivatives on the manifold
// (tangent of y), the dense KKT multipliers of the constraint forces and the energy of a passive
// motion.
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "clusterdyn/cluster_derivatives.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "clusterdyn/independent_configuration.hpp"
#include "dense_oracles.hpp"
#include "manifold_fd.hpp"
#include "test_util.hpp"

using namespace clusterdyn;
using test::byName;
using test::closedState;
using test::isClose;

namespace {

const char* kWrist = "cd_ups_wrist.urdf";

VecX spanningForces(const ClusterModel& m, const VecX& tauY) {
  VecX t = VecX::Zero(m.treeModel.nv);
  for (int k = 0; k < m.ny; ++k) t[m.independentVelocity[k]] = tauY[k];
  return t;
}

}  // namespace

TEST(MultiDofIndependent, TheBallJointIsTheIndependentCoordinate) {
  const ClusterModel m = loadModel(test::modelsPath(kWrist));
  ASSERT_EQ(m.loops.size(), 3u);
  EXPECT_EQ(m.ny, 3);
  EXPECT_EQ(m.nyq, 4);  // the quaternion
  for (int k = 0; k < 4; ++k)
    EXPECT_EQ(m.independentPositionNames[k].rfind("wrist_ball:", 0), 0u)
        << m.independentPositionNames[k];
  for (int k = 0; k < 3; ++k)
    EXPECT_EQ(m.independentVelocityNames[k].rfind("wrist_ball:", 0), 0u)
        << m.independentVelocityNames[k];
  // G has the identity on the ball's three velocity rows.
  ClusterData d(m);
  ASSERT_EQ(clusterConstraintMatrices(m, d, m.qReference, VecX::Zero(m.treeModel.nv)), Status::Ok)
      << d.errorMessage();
  MatX G;
  VecX g;
  oracle::globalExplicitForm(m, d, G, g);
  MatX rows(3, 3);
  for (int k = 0; k < 3; ++k) rows.row(k) = G.row(m.independentVelocity[k]);
  EXPECT_TRUE(isClose(rows, MatX::Identity(3, 3), 0.0));
  // y of the closed solution is the y asked for; y (+) (y1 (-) y) = y1.
  std::mt19937_64 rng(40);
  for (int trial = 0; trial < 5; ++trial) {
    support::ClosedState st;
    ASSERT_TRUE(closedState(m, d, rng, 0.5, st)) << d.errorMessage();
    VecX y(m.nyq), yd(m.ny);
    ASSERT_EQ(spanningToIndependent(m, d, st.q, st.v, y, yd), Status::Ok);
    EXPECT_TRUE(isClose(y, st.y, 0.0));
    EXPECT_TRUE(isClose(yd, st.ydot, 0.0));
    VecX yRef, ydRef, e(m.ny), back(m.nyq);
    ASSERT_EQ(support::referenceIndependentState(m, d, yRef, ydRef), Status::Ok);
    ASSERT_EQ(differenceIndependent(m, yRef, st.y, e), Status::Ok);
    ASSERT_EQ(integrateIndependent(m, yRef, e, 1.0, back), Status::Ok);
    EXPECT_TRUE(isClose(back, st.y, 1e-14));
  }
  VecX bad(m.nyq + 1), out(m.nyq);
  EXPECT_EQ(integrateIndependent(m, bad, VecX::Zero(m.ny), 1.0, out), Status::InvalidSize);
}

TEST(MultiDofIndependent, EmbeddedAndCutGiveTheSameAccelerations) {
  const std::string path = test::modelsPath(kWrist);
  const ClusterModel embedded = loadModel(path);
  ModelOptions cutAll;
  cutAll.cutLoops = true;
  const ClusterModel cut = loadModel(path, cutAll);
  ASSERT_EQ(cut.cutLoops.size(), 3u);
  const ConstraintSet set = cutLoopConstraints(cut);
  ClusterData de(embedded), dc(cut);
  ConstraintData cd(cut, set);
  std::mt19937_64 rng(41);
  for (int trial = 0; trial < 6; ++trial) {
    support::ClosedState st;
    ASSERT_TRUE(closedState(embedded, de, rng, 0.6, st)) << de.errorMessage();
    const VecX tauY = test::randomVector(embedded.ny, rng, -0.5, 0.5);
    ASSERT_EQ(ceAba(embedded, de, st.q, st.v, tauY), Status::Ok) << de.errorMessage();
    const auto& en = embedded.treeModel;
    const VecX qc = byName(en.positionNames, st.q, cut.treeModel.positionNames);
    const VecX vc = byName(en.velocityNames, st.v, cut.treeModel.velocityNames);
    const VecX tc =
        byName(en.velocityNames, spanningForces(embedded, tauY), cut.treeModel.velocityNames);
    const VecX qddE = byName(en.velocityNames, de.qdd, cut.treeModel.velocityNames);
    ProximalSettings s;
    s.tolerance = 1e-11;
    s.maxIterations = 2000;
    ASSERT_EQ(proxPv(cut, dc, set, cd, qc, vc, tc, s), Status::Ok) << dc.errorMessage();
    EXPECT_TRUE(isClose(dc.qdd, qddE, 1e-8))
        << "trial " << trial << ": max diff " << (dc.qdd - qddE).cwiseAbs().maxCoeff();
    ASSERT_EQ(constrainedDynamicsDense(cut, dc, set, cd, qc, vc, tc, s), Status::Ok)
        << dc.errorMessage();
    EXPECT_TRUE(isClose(dc.qdd, qddE, 1e-8))
        << "trial " << trial << " (dense): max diff " << (dc.qdd - qddE).cwiseAbs().maxCoeff();
    EXPECT_LE(cd.phi.cwiseAbs().maxCoeff(), 1e-9);  // the state is closed
    if (trial == 0)
      std::printf("embedded vs cut: max |qdd| %.3g, max diff %.3g\n", qddE.cwiseAbs().maxCoeff(),
                  (dc.qdd - qddE).cwiseAbs().maxCoeff());
  }
}

TEST(MultiDofIndependent, MassMatrixRneaAndAbaMatchTheDenseSpanningTree) {
  const ClusterModel m = loadModel(test::modelsPath(kWrist));
  ClusterData d(m);
  Data tree(m.treeModel);
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 5; ++trial) {
    support::ClosedState st;
    ASSERT_TRUE(closedState(m, d, rng, 0.6, st)) << d.errorMessage();
    ASSERT_EQ(clusterConstraintMatrices(m, d, st.q, st.v), Status::Ok) << d.errorMessage();
    MatX G;
    VecX g;
    oracle::globalExplicitForm(m, d, G, g);
    for (int k = 0; k < static_cast<int>(m.clusters.size()); ++k) {
      if (!m.clusters[k].implicit()) continue;
      EXPECT_LE((d.constraintJacobian(k) * d.explicitMatrix(k)).cwiseAbs().maxCoeff(), 1e-10);
      EXPECT_LE(
          (d.constraintJacobian(k) * d.explicitBias(k) - d.constraintBias(k)).cwiseAbs().maxCoeff(),
          1e-9);
    }
    // H = G^T M G (Chignoli et al. 2023, eq. 8), symmetric positive definite.
    ASSERT_EQ(crba(m.treeModel, tree, st.q), Status::Ok);
    const MatX M = tree.M.selfadjointView<Eigen::Upper>();
    ASSERT_EQ(clusterMassMatrix(m, d, st.q), Status::Ok) << d.errorMessage();
    const MatX H = d.H.selfadjointView<Eigen::Upper>();
    EXPECT_TRUE(isClose(H, MatX(G.transpose() * M * G), 1e-9))
        << "max diff " << (H - G.transpose() * M * G).cwiseAbs().maxCoeff();
    EXPECT_EQ(Eigen::LLT<MatX>(H).info(), Eigen::Success);
    // CE-ABA against the dense reduced system; CE-RNEA inverts it; H ydd + C = tau.
    const VecX tau = test::randomVector(m.ny, rng, -0.5, 0.5);
    bool ok = false;
    const VecX yddDense = oracle::denseClusterYdd(m, d, st.q, st.v, tau, &ok);
    ASSERT_TRUE(ok);
    ASSERT_EQ(ceAba(m, d, st.q, st.v, tau), Status::Ok) << d.errorMessage();
    EXPECT_TRUE(isClose(d.ydd, yddDense, 1e-9));
    const VecX ydd = d.ydd;
    ASSERT_EQ(ceRnea(m, d, st.q, st.v, ydd), Status::Ok) << d.errorMessage();
    EXPECT_TRUE(isClose(d.tauY, tau, 1e-9));
    ASSERT_EQ(clusterBias(m, d, st.q, st.v), Status::Ok);
    EXPECT_TRUE(isClose(VecX(H * ydd + d.C), tau, 1e-9));
    // From (y, y_dot): the same accelerations.
    ASSERT_EQ(ceAbaIndependent(m, d, st.y, st.ydot, tau), Status::Ok) << d.errorMessage();
    EXPECT_TRUE(isClose(d.ydd, ydd, 1e-9));
  }
}

TEST(MultiDofIndependent, ContactAndConstraintForcesMatchTheDenseKkt) {
  const ClusterModel m = loadModel(test::modelsPath(kWrist));
  std::mt19937_64 rng(43);
  // A point contact on the platform (Delassus / proximal solvers) against the dense KKT.
  ConstraintSet set(m);
  set.addContact("platform", ConstraintType::Point);
  ClusterData d(m);
  ConstraintData cd(m, set);
  JointForces F(m);
  Data td(m.treeModel);
  for (int trial = 0; trial < 3; ++trial) {
    support::ClosedState st;
    ASSERT_TRUE(closedState(m, d, rng, 0.5, st)) << d.errorMessage();
    const VecX tau = test::randomVector(m.ny, rng, -0.5, 0.5);
    const oracle::ClusterKkt kkt = oracle::denseClusterKkt(m, d, set, cd, st.q, st.v, tau);
    ASSERT_TRUE(kkt.ok);
    ProximalSettings s;
    s.tolerance = 1e-12;
    s.maxIterations = 400;
    ASSERT_EQ(test::solveAboveRoundingFloor(cd.result, s,
                                            [&](const ProximalSettings& x) {
                                              return proxPv(m, d, set, cd, st.q, st.v, tau, x);
                                            }),
              Status::Ok)
        << d.errorMessage();
    EXPECT_TRUE(isClose(d.ydd, kkt.ydd, 1e-8));
    ASSERT_EQ(test::solveAboveRoundingFloor(cd.result, s,
                                            [&](const ProximalSettings& x) {
                                              return constrainedDynamicsDense(m, d, set, cd, st.q,
                                                                              st.v, tau, x);
                                            }),
              Status::Ok)
        << d.errorMessage();
    EXPECT_TRUE(isClose(d.ydd, kkt.ydd, 1e-8));
    // Loop multipliers of CE-ABA: M qdd - K^T lambda = tau - c, K qdd = k (selected rows).
    const VecX tauS = test::randomVector(m.treeModel.nv, rng);
    ASSERT_EQ(ceAbaSpanningForces(m, d, st.q, st.v, tauS), Status::Ok) << d.errorMessage();
    ASSERT_EQ(ceAbaConstraintForces(m, d, F, tauS, GeneralizedForceLayout::Spanning), Status::Ok)
        << d.errorMessage();
    ASSERT_EQ(crba(m.treeModel, td, st.q), Status::Ok);
    ASSERT_EQ(nonLinearEffects(m.treeModel, td, st.q, st.v), Status::Ok);
    int rows = 0;
    for (const Cluster& c : m.clusters) rows += static_cast<int>(c.selectedRows.size());
    MatX K = MatX::Zero(rows, m.treeModel.nv);
    VecX k = VecX::Zero(rows), lambda = VecX::Zero(rows);
    int r = 0;
    for (int c = 0; c < static_cast<int>(m.clusters.size()); ++c) {
      const Cluster& cl = m.clusters[c];
      for (int sel : cl.selectedRows) {  // loop rows only in this model
        K.block(r, cl.v0, 1, cl.nv) = d.constraintJacobian(c).row(sel);
        k[r] = d.constraintBias(c)[sel];
        int l = 0, base = 0;
        for (int li : cl.loops) {  // row sel of the cluster: loop li's row sel - base
          if (sel < base + m.loops[li].rows()) {
            l = li;
            break;
          }
          base += m.loops[li].rows();
        }
        lambda[r++] = F.loopRowForce[F.loopRowStart[l] + sel - base];
      }
    }
    const oracle::KktSolution sol = oracle::solveKktLu(td.M, K, tauS - td.nle, k);
    ASSERT_TRUE(sol.ok);
    EXPECT_TRUE(isClose(d.qdd, sol.acceleration, 1e-8));
    EXPECT_TRUE(isClose(lambda, sol.lambda, 1e-8, 1.0 + sol.lambda.cwiseAbs().maxCoeff()))
        << "ours " << lambda.transpose() << "\nKKT " << sol.lambda.transpose();
  }
}

TEST(MultiDofIndependent, DerivativesMatchFiniteDifferencesOnTheManifold) {
  // Column e of d f / d y: f at y (+) e (the ball turned by exp(e) in its body frame), the legs
  // re-closed on the same branch; central differences with two Richardson steps.
  const ClusterModel m = loadModel(test::modelsPath(kWrist));
  ClusterData d(m);
  ClusterDerivativeData dd(m);
  std::mt19937_64 rng(44);
  const int ny = m.ny;
  for (int trial = 0; trial < 3; ++trial) {
    support::ClosedState st;
    ASSERT_TRUE(closedState(m, d, rng, 0.5, st)) << d.errorMessage();
    const VecX tau = test::randomVector(ny, rng, -0.5, 0.5);
    const VecX ydd = test::randomVector(ny, rng, -0.5, 0.5);
    auto aba = [&](const VecX& y, const VecX& yd) {
      EXPECT_EQ(setClosureWarmStart(m, d, st.q), Status::Ok);
      EXPECT_EQ(ceAbaIndependent(m, d, y, yd, tau), Status::Ok) << d.errorMessage();
      return VecX(d.ydd);
    };
    auto rnea = [&](const VecX& y, const VecX& yd) {
      EXPECT_EQ(setClosureWarmStart(m, d, st.q), Status::Ok);
      EXPECT_EQ(independentToSpanning(m, d, y, yd), Status::Ok) << d.errorMessage();
      const VecX q = d.q, v = d.v;
      EXPECT_EQ(ceRnea(m, d, q, v, ydd), Status::Ok) << d.errorMessage();
      return VecX(d.tauY);
    };
    MatX dyA, dydA, dyR, dydR;
    test::manifoldJacobians(m, st.y, st.ydot, aba, dyA, dydA);
    test::manifoldJacobians(m, st.y, st.ydot, rnea, dyR, dydR);
    ASSERT_EQ(computeCeAbaDerivatives(m, d, dd, st.q, st.v, tau), Status::Ok) << d.errorMessage();
    const auto rel = test::oracleError;
    EXPECT_LT(rel(dd.dydd_dy, dyA), 1e-7) << dd.dydd_dy << "\n" << dyA;
    std::printf("d ydd / d y: max %.3g, error %.3g; d tau / d y: max %.3g\n",
                dyA.cwiseAbs().maxCoeff(), rel(dd.dydd_dy, dyA), dyR.cwiseAbs().maxCoeff());
    EXPECT_LT(rel(dd.dydd_dydot, dydA), 1e-7);
    ASSERT_EQ(computeCeRneaDerivatives(m, d, dd, st.q, st.v, ydd), Status::Ok) << d.errorMessage();
    EXPECT_LT(rel(dd.dtau_dy, dyR), 1e-7) << dd.dtau_dy << "\n" << dyR;
    EXPECT_LT(rel(dd.dtau_dydot, dydR), 1e-7);
    ASSERT_EQ(clusterMassMatrix(m, d, st.q), Status::Ok);
    EXPECT_TRUE(isClose(dd.H, MatX(d.H.selfadjointView<Eigen::Upper>()), 1e-10));
  }
}

TEST(MultiDofIndependent, PassiveMotionConservesEnergy) {
  // RK4 on (y, y_dot) with CE-ABA, the quaternion of y integrated as an ODE in R^4
  // (q' = q (x) (w, 0) / 2, the accelerations taken at the normalized quaternion): fourth order,
  // so the energy drift falls ~16x when the step halves.
  const ClusterModel m = loadModel(test::modelsPath(kWrist));
  ASSERT_EQ(m.nyq, 4);
  ClusterData d(m);
  Data tree(m.treeModel);
  std::mt19937_64 rng(45);
  support::ClosedState st;
  ASSERT_TRUE(closedState(m, d, rng, 0.3, st)) << d.errorMessage();
  const VecX zero = VecX::Zero(m.ny);
  auto unit = [](const VecX& y) { return VecX(y.normalized()); };
  auto accel = [&](const VecX& y, const VecX& yd) {
    EXPECT_EQ(independentToSpanning(m, d, unit(y), yd), Status::Ok) << d.errorMessage();
    const VecX q = d.q, v = d.v;
    EXPECT_EQ(ceAba(m, d, q, v, zero), Status::Ok) << d.errorMessage();
    return VecX(d.ydd);
  };
  auto qdot = [](const VecX& y, const VecX& w) {  // (x, y, z, w) order
    const Eigen::Quaterniond q(y[3], y[0], y[1], y[2]);
    const Eigen::Quaterniond r = q * Eigen::Quaterniond(0.0, w[0], w[1], w[2]);
    VecX out(4);
    out << 0.5 * r.x(), 0.5 * r.y(), 0.5 * r.z(), 0.5 * r.w();
    return out;
  };
  auto energy = [&](const VecX& y, const VecX& yd) {
    EXPECT_EQ(independentToSpanning(m, d, unit(y), yd), Status::Ok) << d.errorMessage();
    return kineticEnergy(m.treeModel, tree, d.q, d.v) + potentialEnergy(m.treeModel, tree, d.q);
  };
  const double e0 = energy(st.y, st.ydot);
  double drift[2] = {0.0, 0.0};
  for (int run = 0; run < 2; ++run) {
    const double h = run == 0 ? 2e-3 : 1e-3;
    VecX y = st.y, w = st.ydot;
    for (int step = 0; step < (run == 0 ? 100 : 200); ++step) {
      const VecX k1y = qdot(y, w), k1w = accel(y, w);
      const VecX y2 = y + 0.5 * h * k1y, w2 = w + 0.5 * h * k1w;
      const VecX k2y = qdot(y2, w2), k2w = accel(y2, w2);
      const VecX y3 = y + 0.5 * h * k2y, w3 = w + 0.5 * h * k2w;
      const VecX k3y = qdot(y3, w3), k3w = accel(y3, w3);
      const VecX y4 = y + h * k3y, w4 = w + h * k3w;
      const VecX k4y = qdot(y4, w4), k4w = accel(y4, w4);
      y += h / 6.0 * (k1y + 2 * k2y + 2 * k3y + k4y);
      w += h / 6.0 * (k1w + 2 * k2w + 2 * k3w + k4w);
      if (HasFailure()) return;
    }
    drift[run] = std::abs(energy(y, w) - e0);
  }
  const double scale = 1.0 + std::abs(e0);
  EXPECT_LE(drift[0], 1e-6 * scale);
  EXPECT_TRUE(drift[1] <= drift[0] / 10.0 || drift[0] <= 1e-10 * scale)
      << "drift " << drift[0] << " (h = 2e-3), " << drift[1] << " (h = 1e-3)";
  std::printf("cd_ups_wrist: energy %.6g, drift %.3g (h = 2e-3), %.3g (h = 1e-3)\n", e0, drift[0],
              drift[1]);
}

namespace {

const char* kArmInertia =
    R"(<inertial><origin xyz="0.05 0.02 0.01"/><mass value="0.5"/><inertia ixx="0.01" ixy="0" ixz="0" iyy="0.012" iyz="0" izz="0.014"/></inertial>)";

/// A plate on an independent `type` joint (planar: normal z; floating) held by two arms whose
/// joints are dependent: planar, two RR arms closing onto the plate by revolute loops about z
/// (in-plane rows, 2 each: freedom 3 = the planar joint); floating, two RRR arms (yaw, pitch,
/// elbow) closing by spherical loops (3 rows each: freedom 6 = the floating joint).
std::string armsHoldingAPlate(const std::string& type) {
  const bool planar = type == "planar";
  const std::string in = kArmInertia;
  std::string s = "<robot name=\"arms_" + type +
                  "\">\n  <link name=\"base\"/>\n  <link name=\"plate\">" + in + "</link>\n";
  s += "  <joint name=\"plate_joint\" type=\"" + type +
       "\" independent=\"true\"><parent link=\"base\"/><child link=\"plate\"/><origin xyz=\"0 0 " +
       (planar ? "0" : "0.3") + "\"/><axis xyz=\"0 0 1\"/></joint>\n";
  for (int side = 0; side < 2; ++side) {
    const std::string n = std::to_string(side + 1), sx = side == 0 ? "-0.5" : "0.5",
                      fx = side == 0 ? "0.3" : "-0.3", px = side == 0 ? "-0.2" : "0.2";
    const std::string dep = "\" independent=\"false\">";
    if (planar) {
      s += "  <link name=\"upper_" + n + "\">" + in + "</link>\n  <link name=\"fore_" + n + "\">" +
           in + "</link>\n";
      s += "  <joint name=\"shoulder_" + n + "\" type=\"continuous" + dep +
           "<parent link=\"base\"/><child link=\"upper_" + n + "\"/><origin xyz=\"" + sx +
           " -0.3 0\"/><axis xyz=\"0 0 1\"/></joint>\n";
      s += "  <joint name=\"elbow_" + n + "\" type=\"continuous" + dep + "<parent link=\"upper_" +
           n + "\"/><child link=\"fore_" + n +
           "\"/><origin xyz=\"0 0.3 0\"/><axis xyz=\"0 0 1\"/></joint>\n";
      s += "  <loop name=\"close_" + n + "\" type=\"revolute\"><predecessor link=\"fore_" + n +
           "\"><origin xyz=\"" + fx +
           " 0 0\"/></predecessor><successor link=\"plate\"><origin xyz=\"" + px +
           " 0 0\"/></successor><axis xyz=\"0 0 1\"/></loop>\n";
    } else {
      s += "  <link name=\"yaw_" + n + "\">" + in + "</link>\n  <link name=\"upper_" + n + "\">" +
           in + "</link>\n  <link name=\"fore_" + n + "\">" + in + "</link>\n";
      s += "  <joint name=\"yaw_" + n + "\" type=\"continuous" + dep +
           "<parent link=\"base\"/><child link=\"yaw_" + n + "\"/><origin xyz=\"" + sx +
           " 0 0\"/><axis xyz=\"0 0 1\"/></joint>\n";
      s += "  <joint name=\"pitch_" + n + "\" type=\"continuous" + dep + "<parent link=\"yaw_" + n +
           "\"/><child link=\"upper_" + n + "\"/><axis xyz=\"0 1 0\"/></joint>\n";
      s += "  <joint name=\"elbow_" + n + "\" type=\"continuous" + dep + "<parent link=\"upper_" +
           n + "\"/><child link=\"fore_" + n +
           "\"/><origin xyz=\"0 0 0.3\"/><axis xyz=\"0 1 0\"/></joint>\n";
      s += "  <loop name=\"close_" + n + "\" type=\"spherical\"><predecessor link=\"fore_" + n +
           "\"><origin xyz=\"" + fx +
           " 0 0\"/></predecessor><successor link=\"plate\"><origin xyz=\"" + px +
           " 0 0\"/></successor></loop>\n";
    }
  }
  return s + "</robot>\n";
}

}  // namespace

TEST(MultiDofIndependent, IndependentPlanarAndFloatingJoints) {
  // The same machinery on SE(2) and SE(3): embedded against cut (dense KKT of the cut loops),
  // H = G^T M G, CE-RNEA after CE-ABA, y (+) e round trips.
  std::mt19937_64 rng(46);
  for (const std::string type : {"planar", "floating"}) {
    SCOPED_TRACE(type);
    const UrdfDescription desc = parseUrdfString(armsHoldingAPlate(type));
    const ClusterModel m = buildClusterModel(desc);
    ModelOptions cutAll;
    cutAll.cutLoops = true;
    const ClusterModel cut = buildClusterModel(desc, cutAll);
    const bool planar = type == "planar";
    ASSERT_EQ(m.ny, planar ? 3 : 6);
    ASSERT_EQ(m.nyq, planar ? 3 : 7);
    const ConstraintSet set = cutLoopConstraints(cut);
    ClusterData d(m), dc(cut);
    ConstraintData cd(cut, set);
    Data tree(m.treeModel);
    for (int trial = 0; trial < 4; ++trial) {
      support::ClosedState st;
      ASSERT_TRUE(closedState(m, d, rng, 0.15, st)) << d.errorMessage();
      const VecX tau = test::randomVector(m.ny, rng, -1, 1);
      ASSERT_EQ(ceAba(m, d, st.q, st.v, tau), Status::Ok) << d.errorMessage();
      const VecX ydd = d.ydd, qdd = d.qdd;
      ASSERT_EQ(ceRnea(m, d, st.q, st.v, ydd), Status::Ok) << d.errorMessage();
      EXPECT_TRUE(isClose(d.tauY, tau, 1e-9));
      ASSERT_EQ(clusterConstraintMatrices(m, d, st.q, st.v), Status::Ok);
      MatX G;
      VecX g;
      oracle::globalExplicitForm(m, d, G, g);
      ASSERT_EQ(crba(m.treeModel, tree, st.q), Status::Ok);
      const MatX M = tree.M.selfadjointView<Eigen::Upper>();
      ASSERT_EQ(clusterMassMatrix(m, d, st.q), Status::Ok) << d.errorMessage();
      EXPECT_TRUE(isClose(MatX(d.H.selfadjointView<Eigen::Upper>()), G.transpose() * M * G, 1e-9));
      const VecX qc = byName(m.treeModel.positionNames, st.q, cut.treeModel.positionNames);
      const VecX vc = byName(m.treeModel.velocityNames, st.v, cut.treeModel.velocityNames);
      const VecX tc =
          byName(m.treeModel.velocityNames, spanningForces(m, tau), cut.treeModel.velocityNames);
      ProximalSettings s;
      s.tolerance = 1e-11;
      s.maxIterations = 1000;
      ASSERT_EQ(constrainedDynamicsDense(cut, dc, set, cd, qc, vc, tc, s), Status::Ok)
          << dc.errorMessage();
      const VecX qddE = byName(m.treeModel.velocityNames, qdd, cut.treeModel.velocityNames);
      EXPECT_TRUE(isClose(dc.qdd, qddE, 1e-8))
          << "max diff " << (dc.qdd - qddE).cwiseAbs().maxCoeff();
      VecX yRef, ydRef, e(m.ny), back(m.nyq);
      ASSERT_EQ(support::referenceIndependentState(m, d, yRef, ydRef), Status::Ok);
      ASSERT_EQ(differenceIndependent(m, yRef, st.y, e), Status::Ok);
      ASSERT_EQ(integrateIndependent(m, yRef, e, 1.0, back), Status::Ok);
      EXPECT_TRUE(isClose(back, st.y, 1e-13));
    }
  }
}
