// CE-ABA (Chignoli et al. 2023, Alg. 1) on the loop models of loop_model_cases.hpp: against the
// dense KKT system with the oracle's K and k (finite differences), and the energy balance along
// integrated trajectories (ceAbaIndependent, ceAbaSpanningForces).
#include <gtest/gtest.h>

#include "loop_model_cases.hpp"

using namespace clusterdyn;
using namespace clusterdyn::test::loops;
using clusterdyn::test::isClose;
using clusterdyn::test::relativeError;

namespace {

// ---------------------------------------------------------------------------------------------
// Constraint Jacobian, G and the dense KKT system.

TEST_P(LoopModels, ConstraintMatricesAndKkt) {
  for (int trial = 0; trial < 3; ++trial) {
    SCOPED_TRACE("trial " + std::to_string(trial));
    VecX q, v, y, yd;
    ASSERT_TRUE(f.randomState(q, v, y, yd)) << "no well-conditioned closed state found";
    const VecX tauS = clusterdyn::test::randomVector(t.nv, f.rng, -2, 2);
    std::vector<Force> fext;
    if (trial == 2) fext = clusterdyn::test::randomForces(t, f.rng);
    const Force* fp = fext.empty() ? nullptr : fext.data();

    ASSERT_EQ(ceAbaSpanningForces(cm, data, q, v, tauS, fp), Status::Ok) << data.errorMessage();
    const VecX ydd = data.ydd, qdd = data.qdd;
    ASSERT_EQ(clusterConstraintMatrices(cm, data, q, v), Status::Ok) << data.errorMessage();
    MatX G;
    VecX g;
    oracle::globalExplicitForm(cm, data, G, g);

    // (b) the independent rows of G are the identity.
    for (int j = 0; j < cm.ny; ++j) {
      VecX e = VecX::Zero(cm.ny);
      e[j] = 1.0;
      EXPECT_TRUE(isClose(G.row(cm.independentVelocity[j]).transpose(), e, 1e-14))
          << "row of " << cm.independentVelocityNames[j];
    }
    // g vanishes on independent coordinates.
    for (int j = 0; j < cm.ny; ++j) EXPECT_EQ(g[cm.independentVelocity[j]], 0.0);
    // Spanning accelerations are G ydd + g.
    EXPECT_TRUE(isClose(qdd, G * ydd + g, 1e-12));
    // The library's own rows, cluster by cluster through the public accessors: K G = 0 and
    // K qdd = k (explicit clusters: the constant relations and k = 0).
    for (int kc = 0; kc < static_cast<int>(cm.clusters.size()); ++kc) {
      const Cluster& c = cm.clusters[kc];
      const MatX& Kc = data.constraintJacobian(kc);
      ASSERT_EQ(Kc.rows(), c.constraintRows) << c.name;
      ASSERT_EQ(Kc.cols(), c.nv) << c.name;
      ASSERT_EQ(data.constraintBias(kc).size(), c.constraintRows) << c.name;
      if (!c.implicit()) EXPECT_TRUE(isClose(Kc, c.Kexplicit, 0.0)) << c.name;
      if (Kc.rows() == 0) continue;
      const MatX& Gc = data.explicitMatrix(kc);
      const double scale = std::max(1.0, maxAbs(Kc) * std::max(maxAbs(Gc), maxAbs(qdd)));
      EXPECT_LE(maxAbs(Kc * Gc), kExact * scale) << c.name << ": K G != 0";
      EXPECT_LE(maxAbs(Kc * qdd.segment(c.v0, c.nv) - data.constraintBias(kc)), kExact * scale)
          << c.name << ": K qdd != k";
    }

    // (a) K G = 0 with K by finite differences of the oracle's residual; rank K = nv - ny.
    const MatX K = f.oracle->jacobian(q);
    const VecX k = f.oracle->bias(q, v);
    EXPECT_LE(maxAbs(f.oracle->residual(q)), 1e-9) << "state not closed";
    if (K.rows() > 0) {
      const double KG = maxAbs((K * G));
      const double scale = std::max(1.0, maxAbs(K) * maxAbs(G));
      EXPECT_LE(KG / scale, 1e-8) << "K G != 0 (FD)";
      EXPECT_LE(maxAbs((K * v)), 1e-8 * scale * (1 + maxAbs(v)));
    }
    int rank = 0;
    MatX Ur(K.rows(), 0);
    if (K.rows() > 0) {
      Eigen::JacobiSVD<MatX> svd(K, Eigen::ComputeFullU);
      const VecX sv = svd.singularValues();
      for (int i = 0; i < sv.size(); ++i)
        if (sv[i] > 1e-7 * std::max(1.0, sv[0])) ++rank;
      Ur = svd.matrixU().leftCols(rank);
    }
    EXPECT_EQ(rank, t.nv - cm.ny) << "constraint rank does not match the independent count";

    // Dense KKT on the spanning tree: M qdd = tau - c + Kr^T lambda, Kr qdd = kr.
    ASSERT_EQ(crba(t, *f.td, q), Status::Ok);
    const MatX M = f.td->M;
    ASSERT_EQ(rnea(t, *f.td, q, v, VecX::Zero(t.nv), fp), Status::Ok);
    const VecX c = f.td->tau;  // C v + g - J^T fext
    const MatX Kr = Ur.transpose() * K;
    const VecX kr = Ur.transpose() * k;
    const oracle::KktSolution kkt = oracle::solveKktLu(M, Kr, tauS - c, kr);
    ASSERT_TRUE(kkt.ok) << "singular KKT matrix";
    EXPECT_TRUE(isClose(qdd, kkt.acceleration, kFd)) << "CE-ABA vs dense KKT (K, k by FD)";
    // The acceleration constraint K qdd = k (k by FD).
    // (The FD K errs by ~1e-10 |K|: with the large accelerations of light bodies, e.g. a delta
    // rod's spin, axial inertia 9e-8 kg m^2, that error times |qdd| enters the bound.)
    if (K.rows() > 0) {
      EXPECT_LE(maxAbs((K * qdd - k)),
                kFd * std::max({1.0, maxAbs((K * qdd)), 1e-3 * maxAbs(K) * maxAbs(qdd)}));
    }

    // (d) G^T M G ydd = G^T (tau - c - M g): exact given the library's G, g.
    EXPECT_TRUE(isClose(G.transpose() * M * G * ydd, G.transpose() * (tauS - c - M * g), kExact));
    // (e) KKT residual M qdd + c - tau lies in the row space of K: lambda by least squares.
    const VecX r = M * qdd + c - tauS;
    if (rank > 0) {
      const VecX lambda = Kr.transpose().colPivHouseholderQr().solve(r);
      EXPECT_TRUE(
          isClose(Kr.transpose() * lambda, r, kFd, std::max({1.0, maxAbs(tauS), maxAbs(c)})))
          << "KKT residual not in the range of K^T";
    } else {
      EXPECT_TRUE(isClose(r, VecX::Zero(t.nv), kExact));
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Energy balance along integrated trajectories.

/// d/dt of the independent positions: 1-dof coordinates move with y_dot, floating bases with
/// p_dot = R v, quat_dot = quat (x) (omega, 0) / 2, spherical joints with the same quaternion
/// rate, planar joints with the in-plane rotation of (vx, vy) (child axes).
bool positionRate(const ClusterModel& cm, const VecX& y, const VecX& yd, VecX& dy) {
  const Model& t = cm.treeModel;
  dy.setZero(cm.nyq);
  for (const Cluster& cl : cm.clusters) {
    if (cl.constrained() && cl.nyq == cl.ny) {  // 1-dof independent joints
      dy.segment(cl.yq0, cl.nyq) = yd.segment(cl.y0, cl.ny);
      continue;
    }
    // One joint: an unconstrained cluster's, or a loop cluster's independent multi-dof joint.
    struct {
      int yq0, y0;
    } c{cl.yq0, cl.y0};
    const int b = cl.constrained() ? t.velocityOwner[cl.v0 + cl.independent[0]] : cl.firstBody;
    if (cl.constrained() && t.nvs[b] != cl.ny) return false;
    switch (t.joints[b].type) {
      case JointType::Revolute:
      case JointType::Prismatic:
        dy[c.yq0] = yd[c.y0];
        break;
      case JointType::Floating: {
        const Eigen::Quaterniond qu(y[c.yq0 + 6], y[c.yq0 + 3], y[c.yq0 + 4], y[c.yq0 + 5]);
        const Vec3 w = yd.segment<3>(c.y0), vl = yd.segment<3>(c.y0 + 3);
        dy.segment<3>(c.yq0) = qu.normalized().toRotationMatrix() * vl;
        const Eigen::Quaterniond wq(0.0, w.x(), w.y(), w.z());
        dy.segment<4>(c.yq0 + 3) = 0.5 * (qu * wq).coeffs();
        break;
      }
      case JointType::Spherical: {
        const Eigen::Quaterniond qu(y[c.yq0 + 3], y[c.yq0], y[c.yq0 + 1], y[c.yq0 + 2]);
        const Vec3 w = yd.segment<3>(c.y0);
        dy.segment<4>(c.yq0) = 0.5 * (qu * Eigen::Quaterniond(0.0, w.x(), w.y(), w.z())).coeffs();
        break;
      }
      case JointType::Planar: {  // (x, y, theta); (vx, vy) in child axes, omega
        const double th = y[c.yq0 + 2], vx = yd[c.y0], vy = yd[c.y0 + 1];
        dy[c.yq0] = std::cos(th) * vx - std::sin(th) * vy;
        dy[c.yq0 + 1] = std::sin(th) * vx + std::cos(th) * vy;
        dy[c.yq0 + 2] = yd[c.y0 + 2];
        break;
      }
      default:
        return false;
    }
  }
  return true;
}

TEST_P(LoopModels, EnergyBalance) {
  VecX q0, v0, y0, yd0;
  ASSERT_TRUE(f.randomState(q0, v0, y0, yd0));
  VecX dummy;
  ASSERT_TRUE(positionRate(cm, y0, yd0, dummy));
  auto normalized = [&](VecX y) {
    for (const Cluster& c : cm.clusters) {
      if (c.constrained()) continue;
      if (t.joints[c.firstBody].type == JointType::Floating) y.segment<4>(c.yq0 + 3).normalize();
      if (t.joints[c.firstBody].type == JointType::Spherical) y.segment<4>(c.yq0).normalize();
    }
    for (const Cluster& c : cm.clusters)  // an independent ball joint of a loop cluster
      for (int k = c.yq0; c.constrained() && k < c.yq0 + c.nyq; ++k)
        if (cm.independentPositionNames[k].size() > 3 &&
            cm.independentPositionNames[k].compare(cm.independentPositionNames[k].size() - 3, 3,
                                                   ":qx") == 0)
          y.segment<4>(k).normalize();
    return y;
  };
  // Constant efforts on every 1-dof coordinate, none on the floating base.
  VecX tauY = VecX::Zero(cm.ny), tauS = VecX::Zero(t.nv);
  for (int j = 0; j < cm.ny; ++j)
    if (t.nvs[t.velocityOwner[cm.independentVelocity[j]]] == 1)
      tauY[j] = std::uniform_real_distribution<double>(-1, 1)(f.rng);
  for (int b = 0; b < t.nbodies; ++b)
    if (t.nvs[b] == 1) tauS[t.idx_v[b]] = std::uniform_real_distribution<double>(-1, 1)(f.rng);

  for (int variant = 0; variant < 2; ++variant) {  // 0: tauY (ceAbaIndependent), 1: spanning
    SCOPED_TRACE(variant == 0 ? "independent efforts" : "spanning efforts");
    auto accel = [&](const VecX& y, const VecX& yd, VecX& ydd) {
      if (variant == 0) {
        EXPECT_EQ(ceAbaIndependent(cm, data, normalized(y), yd, tauY), Status::Ok)
            << data.errorMessage();
      } else {
        EXPECT_EQ(independentToSpanning(cm, data, normalized(y), yd), Status::Ok);
        const VecX q = data.q, v = data.v;
        EXPECT_EQ(ceAbaSpanningForces(cm, data, q, v, tauS), Status::Ok) << data.errorMessage();
      }
      ydd = data.ydd;
    };
    struct Sample {
      double E, PE, P;
      VecX q;
    };
    auto sample = [&](const VecX& y, const VecX& yd) {
      EXPECT_EQ(independentToSpanning(cm, data, normalized(y), yd), Status::Ok);
      Sample s;
      s.q = data.q;
      const double KE = kineticEnergy(t, *f.td, data.q, data.v);
      s.PE = potentialEnergy(t, *f.td, data.q);
      s.E = KE + s.PE;
      s.P = variant == 0 ? yd.dot(tauY) : data.v.dot(tauS);
      return s;
    };
    // Scale the efforts so that they cause accelerations of at most 5 (light rotors would
    // otherwise spin up to thousands of rad/s and a fixed step would not resolve the motion).
    {
      VecX a1, a0;
      const VecX tY = tauY, tS = tauS;
      data.q = q0;
      accel(y0, yd0, a1);
      tauY.setZero();
      tauS.setZero();
      data.q = q0;
      accel(y0, yd0, a0);
      const double lin = maxAbs(a1 - a0);
      tauY = tY * std::min(1.0, 5.0 / std::max(lin, 1e-300));
      tauS = tS * std::min(1.0, 5.0 / std::max(lin, 1e-300));
    }
    const double dt = 1.25e-4;  // RK4 over T = 0.04 s
    const int N = 320;
    VecX y = y0, yd = yd0;
    data.q = q0;
    std::vector<Sample> samples = {sample(y, yd)};
    for (int n = 0; n < N; ++n) {  // classical RK4 on (y, y_dot)
      VecX k1y, k2y, k3y, k4y, k1v, k2v, k3v, k4v;
      ASSERT_TRUE(positionRate(cm, y, yd, k1y));
      accel(y, yd, k1v);
      VecX ya = y + 0.5 * dt * k1y, va = yd + 0.5 * dt * k1v;
      positionRate(cm, ya, va, k2y);
      accel(ya, va, k2v);
      VecX yb = y + 0.5 * dt * k2y, vb = yd + 0.5 * dt * k2v;
      positionRate(cm, yb, vb, k3y);
      accel(yb, vb, k3v);
      VecX yc = y + dt * k3y, vc = yd + dt * k3v;
      positionRate(cm, yc, vc, k4y);
      accel(yc, vc, k4v);
      y += dt / 6 * (k1y + 2 * k2y + 2 * k3y + k4y);
      yd += dt / 6 * (k1v + 2 * k2v + 2 * k3v + k4v);
      y = normalized(y);
      samples.push_back(sample(y, yd));
      if (HasFatalFailure()) return;
    }
    // Work of constant efforts: tau_j * (change of the 1-dof coordinate j).
    double W = 0.0;
    if (variant == 0) {
      for (int j = 0; j < cm.ny; ++j) {
        if (tauY[j] == 0.0) continue;
        const int body = t.velocityOwner[cm.independentVelocity[j]];
        W += tauY[j] * (samples.back().q[t.idx_q[body]] - samples.front().q[t.idx_q[body]]);
      }
    } else {
      for (int b = 0; b < t.nbodies; ++b)
        if (t.nvs[b] == 1)
          W += tauS[t.idx_v[b]] * (samples.back().q[t.idx_q[b]] - samples.front().q[t.idx_q[b]]);
    }
    const double dE = samples.back().E - samples.front().E;
    const double scale = 1.0 + std::abs(W) + std::abs(samples.back().PE - samples.front().PE);
    EXPECT_LE(std::abs(dE - W), 1e-7 * scale) << "energy change " << dE << " vs work " << W;
    // Instantaneous balance dE/dt = power, by finite differences along the trajectory.
    for (int i : {2, N / 2, N - 2}) {
      auto d = [&](auto get) {
        return (-get(samples[i + 2]) + 8 * get(samples[i + 1]) - 8 * get(samples[i - 1]) +
                get(samples[i - 2])) /
               (12 * dt);
      };
      const double dEdt = d([](const Sample& s) { return s.E; });
      const double dPEdt = d([](const Sample& s) { return s.PE; });
      EXPECT_LE(std::abs(dEdt - samples[i].P),
                kFd * (1.0 + std::abs(samples[i].P) + std::abs(dPEdt)))
          << "step " << i << ": dE/dt " << dEdt << " vs power " << samples[i].P;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Cluster, LoopModels, ::testing::ValuesIn(loopModelCases()),
                         [](const auto& info) { return info.param.name; });

}  // namespace
