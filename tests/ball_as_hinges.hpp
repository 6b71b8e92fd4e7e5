// A ball joint replaced by three hinges (docs/mjcf.md section 3) against the same ball kept in
// the cut-loop model: the map between the two models' states and forces, and the embedded vs
// cut oracle of tests/test_mjcf_ball_loops.cpp and test_mjcf_ball_hinge_passive.cpp.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "clusterdyn/clusterdyn.hpp"
#include "manifold_fd.hpp"
#include "test_util.hpp"

namespace clusterdyn::test {

/// The ball joint J of `cut` as the three hinges of `embedded` (J:swing1, J:swing2, J:spin about
/// b1, b2, a in the ball's frame): q_ball = exp(b1 t1) exp(b2 t2) exp(a t3) and the ball's
/// angular velocity (child frame) w = J(t) t_dot, J = [R3^T R2^T b1, R3^T b2, a].
struct BallAsHinges {
  Vec3 b1, b2, a;
  int t1 = -1, t2 = -1, t3 = -1;  // velocity indices of the hinges in `embedded`
  int p1 = -1, p2 = -1, p3 = -1;  // position indices
  BallAsHinges(const Model& embedded, const std::string& ball) {
    auto hinge = [&](const std::string& n, int& idx, int& iq) {
      const int b = embedded.jointId(ball + n);
      EXPECT_GE(b, 0) << ball + n;
      idx = embedded.idx_v[b];
      iq = embedded.idx_q[b];
      return Vec3(embedded.joints[b].S.topRows<3>().col(0));
    };
    b1 = hinge(":swing1", t1, p1);
    b2 = hinge(":swing2", t2, p2);
    a = hinge(":spin", t3, p3);
  }
  Mat3 rotation(int i, double t) const {
    return Eigen::AngleAxisd(t, i == 0 ? b1 : i == 1 ? b2 : a).toRotationMatrix();
  }
  Mat3 jacobian(const VecX& q) const {
    const Mat3 R2 = rotation(1, q[p2]), R3 = rotation(2, q[p3]);
    Mat3 J;
    J << R3.transpose() * R2.transpose() * b1, R3.transpose() * b2, a;
    return J;
  }
  Eigen::Quaterniond quaternion(const VecX& q) const {
    return Eigen::Quaterniond(rotation(0, q[p1]) * rotation(1, q[p2]) * rotation(2, q[p3]));
  }
  /// w_dot = J t_ddot + J_dot t_dot.
  Vec3 angularAcceleration(const VecX& q, const VecX& v, const VecX& vd) const {
    const Mat3 J = jacobian(q);
    const Vec3 u1 = J.col(0), u2 = J.col(1);
    const Vec3 u1dot = -v[t3] * a.cross(u1) - v[t2] * rotation(2, q[p3]).transpose() *
                                                  b2.cross(rotation(1, q[p2]).transpose() * b1);
    const Vec3 u2dot = -v[t3] * a.cross(u2);
    return J * Vec3(vd[t1], vd[t2], vd[t3]) + u1dot * v[t1] + u2dot * v[t2];
  }
};

/// A model whose balls are embedded as three hinges each against the cut model (the balls,
/// every loop cut) solved by proxPv and the dense KKT on random closed states y_ref (+) e, |e| <=
/// range per direction (draws the closure cannot reach are skipped; at least minClosed of
/// trials must close): each ball's state composed from its hinges (quaternion, w = J t_dot), the
/// hinges' forces mapped to the ball's torque J^-T tau_h, the ball's w_dot compared with J t_ddot
/// + J_dot t_dot, every other coordinate by name; CE-RNEA o CE-ABA = id. Both models apply their
/// own joint dynamics. Returns the largest difference relative to max(1, max |q_ddot|).
inline double expectExpandedEqualsCut(const ClusterModel& embedded, const ClusterModel& cut,
                                      const std::vector<std::string>& balls, const char* what,
                                      double range = 0.4, int trials = 12, int minClosed = 8) {
  EXPECT_GE(cut.cutLoops.size(), 1u);
  const Model& en = embedded.treeModel;
  const Model& cn = cut.treeModel;
  std::vector<BallAsHinges> hinges;
  std::vector<std::pair<int, int>> ballCoordinates;  // (idx_q, idx_v) in the cut model
  for (const std::string& ball : balls) {
    hinges.emplace_back(en, ball);
    const int cb = cn.jointId(ball);
    EXPECT_GE(cb, 0) << ball;
    if (cb < 0) return NAN;
    ballCoordinates.emplace_back(cn.idx_q[cb], cn.idx_v[cb]);
  }
  // Every other coordinate by name.
  std::vector<std::pair<int, int>> sameQ, sameV;
  for (int i = 0; i < en.nq; ++i)
    for (int j = 0; j < cn.nq; ++j)
      if (en.positionNames[i] == cn.positionNames[j]) sameQ.emplace_back(i, j);
  for (int i = 0; i < en.nv; ++i)
    for (int j = 0; j < cn.nv; ++j)
      if (en.velocityNames[i] == cn.velocityNames[j]) sameV.emplace_back(i, j);
  const int nb = static_cast<int>(balls.size());
  EXPECT_EQ(sameQ.size(), static_cast<size_t>(cn.nq - 4 * nb));
  EXPECT_EQ(sameV.size(), static_cast<size_t>(cn.nv - 3 * nb));
  const ConstraintSet set = cutLoopConstraints(cut);
  ClusterData de(embedded), dc(cut);
  ConstraintData cd(cut, set);
  std::mt19937_64 rng(47);
  double worst = 0.0, largest = 0.0;
  int closed = 0;
  for (int trial = 0; trial < trials; ++trial) {
    // (Some draws, e.g. cd_rod_leg's crank and hip 0.4 rad from qpos0, leave the rod unable to
    // reach the lever: the closure fails there, and the draw is skipped.)
    support::ClosedState st;
    if (!closedState(embedded, de, rng, range, st)) continue;
    ++closed;
    const VecX tauY = test::randomVector(embedded.ny, rng, -0.5, 0.5);
    EXPECT_EQ(ceAba(embedded, de, st.q, st.v, tauY), Status::Ok) << de.errorMessage();
    const VecX qddE = de.qdd;
    EXPECT_EQ(ceRnea(embedded, de, st.q, st.v, VecX(de.ydd)), Status::Ok) << de.errorMessage();
    EXPECT_TRUE(isClose(de.tauY, tauY, 1e-9)) << (de.tauY - tauY).cwiseAbs().maxCoeff();
    VecX tauSpanning = VecX::Zero(en.nv);
    for (int k = 0; k < embedded.ny; ++k) tauSpanning[embedded.independentVelocity[k]] = tauY[k];
    VecX qc(cn.nq), vc(cn.nv), tc(cn.nv), qddC(cn.nv);
    for (auto [i, j] : sameQ) qc[j] = st.q[i];
    for (auto [i, j] : sameV) {
      vc[j] = st.v[i];
      tc[j] = tauSpanning[i];
      qddC[j] = qddE[i];
    }
    for (int b = 0; b < nb; ++b) {
      const BallAsHinges& h = hinges[b];
      const auto [cq, cv] = ballCoordinates[b];
      const Eigen::Quaterniond quat = h.quaternion(st.q);
      qc.segment<4>(cq) << quat.x(), quat.y(), quat.z(), quat.w();
      const Mat3 J = h.jacobian(st.q);
      vc.segment<3>(cv) = J * Vec3(st.v[h.t1], st.v[h.t2], st.v[h.t3]);
      tc.segment<3>(cv) =
          J.transpose().lu().solve(Vec3(tauSpanning[h.t1], tauSpanning[h.t2], tauSpanning[h.t3]));
      qddC.segment<3>(cv) = h.angularAcceleration(st.q, st.v, qddE);
    }
    ProximalSettings s;
    s.tolerance = 1e-11;  // (the solvers' residual floor at |qdd| ~ 1e5 to 3e5: up to 6e-12)
    s.maxIterations = 2000;
    EXPECT_EQ(test::solveAboveRoundingFloor(cd.result, s,
                                            [&](const ProximalSettings& x) {
                                              return proxPv(cut, dc, set, cd, qc, vc, tc, x);
                                            }),
              Status::Ok)
        << dc.errorMessage();
    EXPECT_LE(cd.phi.cwiseAbs().maxCoeff(), 1e-9);  // the mapped state is closed
    EXPECT_TRUE(isClose(dc.qdd, qddC, 1e-8))
        << "trial " << trial << ": max diff " << (dc.qdd - qddC).cwiseAbs().maxCoeff();
    worst = std::max(worst, (dc.qdd - qddC).cwiseAbs().maxCoeff());
    largest = std::max(largest, qddC.cwiseAbs().maxCoeff());
    EXPECT_EQ(test::solveAboveRoundingFloor(cd.result, s,
                                            [&](const ProximalSettings& x) {
                                              return constrainedDynamicsDense(cut, dc, set, cd, qc,
                                                                              vc, tc, x);
                                            }),
              Status::Ok)
        << dc.errorMessage();
    EXPECT_TRUE(isClose(dc.qdd, qddC, 1e-8))
        << "trial " << trial << " (dense): max diff " << (dc.qdd - qddC).cwiseAbs().maxCoeff();
    worst = std::max(worst, (dc.qdd - qddC).cwiseAbs().maxCoeff());
  }
  EXPECT_GE(closed, minClosed);
  std::printf(
      "  %s (balls as hinges) vs cut (proxPv, dense KKT), %d closed states: max |qdd| "
      "%.3g, max diff %.2e\n",
      what, closed, largest, worst);
  return worst / std::max(1.0, largest);
}

inline double expectExpandedEqualsCut(const ClusterModel& embedded, const ClusterModel& cut,
                                      const std::string& ball, const char* what = "cd_rod_leg") {
  return expectExpandedEqualsCut(embedded, cut, std::vector<std::string>{ball}, what);
}

}  // namespace clusterdyn::test
