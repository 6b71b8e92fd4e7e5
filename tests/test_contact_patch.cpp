// Patch contacts (torsional and rolling friction, src/contact/patch_cone.cpp): the elliptic cone's
// projection against its optimality conditions (Moreau's decomposition, the variational
// inequality, random points of the cone), PGS and ADMM on random patch problems checked by
// residuals recomputed from the definitions, the assembled rows against a dense oracle, a block
// on a torsional patch under a torque about the normal (sticks below mu_tor f_n, spins with the
// analytic acceleration above) and a sphere with rolling friction on a slope (sticks below the
// analytic threshold, rolls and slips with the Newton-Euler + maximal-dissipation accelerations
// above).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "clusterdyn/clusterdyn.hpp"
#include "contact/contact_detail.hpp"
#include "contact/patch_cone.hpp"
#include "test_util.hpp"

using namespace clusterdyn;

namespace {

/// sum (u_i / c_i)^2 <= n^2 with n >= 0 (c_i = 0: u_i = 0), up to tol.
bool inEllipticCone(const double* c, int k, const double* x, double tol) {
  double s2 = 0.0;
  for (int i = 0; i + 1 < k; ++i) {
    if (c[i] == 0.0) {
      if (std::abs(x[i]) > tol) return false;
    } else if (std::isfinite(c[i])) {
      s2 += (x[i] / c[i]) * (x[i] / c[i]);
    }
  }
  return x[k - 1] >= -tol && std::sqrt(s2) <= x[k - 1] + tol;
}

}  // namespace

TEST(PatchCone, ProjectionIsTheNearestPointOfTheCone) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-2.0, 2.0), pos(0.0, 1.0);
  int outside = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const int k = trial % 2 ? 6 : 4;
    double c[5], x[6], p[6], q[6], dual[5];
    for (int i = 0; i + 1 < k; ++i) c[i] = trial % 7 == 0 && i == 0 ? 0.0 : 0.02 + pos(rng);
    for (int i = 0; i < k; ++i) x[i] = u(rng);
    std::copy(x, x + k, p);
    detail::projectEllipticCone(c, k, p);
    outside += inEllipticCone(c, k, x, 0.0) ? 0 : 1;
    ASSERT_TRUE(inEllipticCone(c, k, p, 1e-12)) << trial;
    // Idempotent.
    std::copy(p, p + k, q);
    detail::projectEllipticCone(c, k, q);
    for (int i = 0; i < k; ++i) EXPECT_NEAR(q[i], p[i], 1e-12) << trial;
    // Moreau: x - p lies in the polar cone (-(x - p) in the dual cone {|D s_u| <= s_n}) and is
    // orthogonal to p: p is the projection (Moreau 1962), checked without the projection.
    double r[6], dot = 0.0, s2 = 0.0;
    for (int i = 0; i < k; ++i) r[i] = p[i] - x[i], dot += p[i] * (x[i] - p[i]);
    for (int i = 0; i + 1 < k; ++i) s2 += (c[i] * r[i]) * (c[i] * r[i]);
    // (c_i = 0 rows: the dual leaves them free.)
    EXPECT_LE(std::sqrt(s2), r[k - 1] + 1e-12) << trial;
    EXPECT_NEAR(dot, 0.0, 1e-12) << trial;
    // The dual projection: the elliptic cone with the coefficients 1 / c_i, and x = P_K(x) -
    // P_K*(-x) (Moreau's decomposition with the polar -K*).
    for (int i = 0; i + 1 < k; ++i)
      dual[i] = c[i] > 0.0 ? 1.0 / c[i] : std::numeric_limits<double>::infinity();
    for (int i = 0; i < k; ++i) q[i] = -x[i];
    detail::projectEllipticCone(dual, k, q);
    for (int i = 0; i < k; ++i) EXPECT_NEAR(p[i] - q[i], x[i], 1e-12) << trial;
    // Brute force: no point of K sampled around p (boundary and interior) is nearer to x.
    double best = 0.0;
    for (int i = 0; i < k; ++i) best += (p[i] - x[i]) * (p[i] - x[i]);
    for (int s = 0; s < 200; ++s) {
      double y[6];
      for (int i = 0; i < k; ++i) y[i] = p[i] + 0.05 * u(rng);
      detail::projectEllipticCone(c, k, y);  // a point of K near p (not nec. the nearest)
      double d = 0.0;
      for (int i = 0; i < k; ++i) d += (y[i] - x[i]) * (y[i] - x[i]);
      EXPECT_GE(d, best - 1e-12) << trial;
    }
  }
  EXPECT_GT(outside, 1000);  // most samples exercise the root
}

TEST(PatchCone, IsotropicConeEqualsTheSecondOrderCone) {
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-2.0, 2.0), pos(0.05, 1.5);
  for (int trial = 0; trial < 500; ++trial) {
    const double mu = pos(rng);
    double x[3] = {u(rng), u(rng), u(rng)}, y[3] = {x[0], x[1], x[2]}, c[2] = {mu, mu};
    detail::projectMultipliers(detail::MultiplierSet::Coulomb, mu, 3, x);
    detail::projectEllipticCone(c, 3, y);
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(x[i], y[i], 1e-13) << trial;
  }
}

TEST(PatchCone, EllipsoidProjectionMeetsTheVariationalInequality) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-2.0, 2.0), pos(0.0, 1.0);
  for (int trial = 0; trial < 1000; ++trial) {
    const int k = trial % 2 ? 5 : 3;
    double c[5], x[5], p[5];
    for (int i = 0; i < k; ++i) c[i] = 0.01 + pos(rng);
    for (int i = 0; i < k; ++i) x[i] = u(rng);
    const double r = pos(rng);
    std::copy(x, x + k, p);
    detail::projectEllipsoid(c, k, r, p);
    double s2 = 0.0;
    for (int i = 0; i < k; ++i) s2 += (p[i] / c[i]) * (p[i] / c[i]);
    ASSERT_LE(std::sqrt(s2), r * (1.0 + 1e-12)) << trial;
    // (x - p) . (z - p) <= 0 for every z of the ellipsoid (sampled on its boundary).
    for (int s = 0; s < 100; ++s) {
      double z[5], zn = 0.0, vi = 0.0;
      for (int i = 0; i < k; ++i) z[i] = u(rng), zn += z[i] * z[i];
      for (int i = 0; i < k; ++i) vi += (x[i] - p[i]) * (r * c[i] * z[i] / std::sqrt(zn) - p[i]);
      EXPECT_LE(vi, 1e-12) << trial;
    }
  }
}

namespace {

/// A problem of patch blocks (Torsional, Rolling, an Inactive pair) and Coulomb blocks, G = A A^T
/// of full rank and a drift g = A v + b with gaps b >= 0 on the normal rows.
struct PatchProblem {
  MatX G;
  VecX g;
  std::vector<ConeBlock> blocks;
};

PatchProblem patchProblem(std::mt19937_64& rng) {
  PatchProblem p;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int row = 0;
  const auto add = [&](ConeType t, int rows) {
    ConeBlock b;
    b.type = t;
    b.row0 = row;
    b.rows = rows;
    b.mu = 0.2 + u(rng);
    b.muTorsion = 0.05 * u(rng);
    b.muRolling = 0.05 * u(rng);
    p.blocks.push_back(b);
    row += rows;
  };
  add(ConeType::Rolling, 6);
  add(ConeType::Inactive, 2);
  add(ConeType::Torsional, 4);
  add(ConeType::Coulomb, 3);
  const MatX A = MatX::Random(row, row + 2);
  p.G = A * A.transpose();
  p.g = A * test::randomVector(row + 2, rng);
  for (const ConeBlock& b : p.blocks)
    if (b.type != ConeType::Inactive) p.g[b.row0 + b.rows - 1] += 0.2 * u(rng);
  return p;
}

/// The residuals from the definitions: lambda in K (closed-form membership), the De Saxce
/// velocity in K*, |lambda_b . sigma_b| / |lambda_b|_inf.
double patchOracleResidual(const PatchProblem& p, const VecX& lambda) {
  const VecX v = p.G * lambda + p.g;
  double worst = 0.0;
  for (const ConeBlock& b : p.blocks) {
    const int k = b.rows, r = b.row0;
    if (b.type == ConeType::Inactive) {
      worst = std::max(worst, lambda.segment(r, k).cwiseAbs().maxCoeff());
      continue;
    }
    double c[5];
    if (b.type == ConeType::Coulomb)
      c[0] = c[1] = b.mu;
    else
      detail::patchCoefficients(b, c);
    double lu = 0.0, su = 0.0, dot = 0.0;
    for (int i = 0; i + 1 < k; ++i) {
      lu += (lambda[r + i] / c[i]) * (lambda[r + i] / c[i]);
      su += (c[i] * v[r + i]) * (c[i] * v[r + i]);
      dot += lambda[r + i] * v[r + i];
    }
    const double ln = lambda[r + k - 1], sn = v[r + k - 1] + std::sqrt(su);
    worst = std::max({worst, -ln, std::sqrt(lu) - ln, std::sqrt(su) - sn});
    dot += ln * sn;
    const double linf = lambda.segment(r, k).cwiseAbs().maxCoeff();
    if (linf > 0.0) worst = std::max(worst, std::abs(dot) / linf);
  }
  return worst;
}

}  // namespace

TEST(PatchCone, PgsAndAdmmSolveRandomPatchProblems) {
  std::mt19937_64 rng(23);
  int sliding = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const PatchProblem p = patchProblem(rng);
    const int m = static_cast<int>(p.g.size());
    ContactSolverWorkspace ws(m);
    ContactSolverSettings s;
    s.tolerance = 1e-11;
    s.maxIterations = 200000;
    VecX la = VecX::Zero(m), lp = VecX::Zero(m);
    ContactSolverResult ra, rp;
    ASSERT_EQ(solveContactAdmm(p.G, p.g, p.blocks, s, ws, la, ra), Status::Ok) << ws.lastError;
    EXPECT_LT(patchOracleResidual(p, la), 1e-9) << trial;
    ASSERT_EQ(solveContactPgs(p.G, p.g, p.blocks, s, ws, lp, rp), Status::Ok) << ws.lastError;
    EXPECT_LT(patchOracleResidual(p, lp), 1e-9) << trial;
    // G definite: one solution.
    EXPECT_LT((la - lp).cwiseAbs().maxCoeff(), 1e-7 * (1.0 + la.cwiseAbs().maxCoeff())) << trial;
    // The reported residuals are the definitions'.
    const ContactResiduals r = contactResiduals(p.G, p.g, p.blocks, la, ws);
    EXPECT_LE(std::max({r.cone, r.velocity, r.complementarity}), s.tolerance);
    // Count the blocks on their cone's boundary with a non-zero slip (the root, exercised).
    const VecX v = p.G * la + p.g;
    for (const ConeBlock& b : p.blocks)
      if (detail::isPatchCone(b.type) && la[b.row0 + b.rows - 1] > 1e-6 &&
          v.segment(b.row0, b.rows - 1).norm() > 1e-6)
        ++sliding;
  }
  EXPECT_GT(sliding, 5);
}

TEST(PatchCone, RejectsBadPatchBlocks) {
  ContactSolverWorkspace ws(6);
  ContactSolverSettings s;
  const MatX G = MatX::Identity(6, 6);
  const VecX g = VecX::Zero(6);
  ConeBlock b;
  b.type = ConeType::Rolling;
  b.rows = 6;
  b.muRolling = -1.0;
  EXPECT_EQ(checkContactProblem(G, g, {b}, s, ws), Status::InvalidArgument);
  EXPECT_NE(std::string(ws.lastError).find("muRolling"), std::string::npos) << ws.lastError;
  b.muRolling = 0.0;
  b.type = ConeType::Torsional;
  EXPECT_EQ(checkContactProblem(G, g, {b}, s, ws), Status::InvalidArgument);  // 6 rows
  b.rows = 4;
  ConeBlock rest;
  rest.type = ConeType::Inactive;
  rest.row0 = 4;
  rest.rows = 2;
  EXPECT_EQ(checkContactProblem(G, g, {b, rest}, s, ws), Status::Ok) << ws.lastError;
}

namespace {

const char* kBlock = R"(<robot name="block">
  <link name="box">
    <inertial><mass value="2.0"/>
      <inertia ixx="0.00833" ixy="0" ixz="0" iyy="0.0183" iyz="0" izz="0.0217"/></inertial>
  </link>
</robot>)";

const char* kSphere = R"(<robot name="ball">
  <link name="ball">
    <inertial><mass value="1.0"/>
      <inertia ixx="0.004" ixy="0" ixz="0" iyy="0.004" iyz="0" izz="0.004"/></inertial>
  </link>
</robot>)";

ClusterModel floating(const char* urdf) {
  ModelOptions o;
  o.floatingBase = true;
  return buildClusterModel(parseUrdfString(urdf), o);
}

constexpr double kG = 9.81;

}  // namespace

TEST(PatchContact, AssembledRowsMatchTheDenseOracleAndTheStep) {
  // A tumbling block with a rolling ground foot (radius 0.03), a torsional caller contact and a
  // point foot: the Delassus matrix in contact frames equals Jc H^-1 Jc^T (dense), and the step's
  // constraint velocities J y_dot+ (impulses applied through the rows) equal G lambda + g.
  const ClusterModel cm = floating(kBlock);
  ContactProblem problem(cm);
  problem.addGroundFoot("roll", 0, Vec3(0.1, 0.05, -0.05), 0.03, 0.6, 0.01, 0.02);
  problem.addPointContact("tors", 0, Vec3(-0.1, 0.05, -0.08), ConeType::Torsional);
  problem.addGroundFoot("point", 0, Vec3(-0.1, -0.05, -0.08), 0.0, 0.6);
  ASSERT_EQ(problem.contacts()[0].cone, ConeType::Rolling);
  ClusterData data(cm);
  ContactData cd(cm, problem);
  ASSERT_EQ(cd.blocks.size(), 4u);  // rolling; inactive rolling rows + torsional; point
  EXPECT_EQ(cd.blocks[1].type, ConeType::Inactive);
  EXPECT_EQ(cd.contactBlock, (std::vector<int>{0, 2, 3}));
  VecX q(7), v(6);
  q << 0.01, -0.02, 0.065, 0.05, -0.03, 0.02, 1.0;
  q.segment<4>(3).normalize();
  v << 0.3, -0.2, 0.5, 0.1, 0.05, -0.4;
  cd.normal[1] = Vec3(0.1, -0.2, 1.0);
  cd.gap[1] = -0.001;
  cd.mu[1] = 0.5;
  cd.muTorsion[1] = 0.02;
  StepSettings st;
  st.contact.tolerance = 1e-12;
  st.contact.maxIterations = 20000;
  const VecX tau = VecX::Zero(6);
  ASSERT_EQ(assembleContactProblem(cm, data, problem, cd, q, v, tau, st), Status::Ok)
      << data.errorMessage();
  Data dense0(cm.treeModel);  // floating base only: H of the tree is the model's
  ASSERT_EQ(crba(cm.treeModel, dense0, q), Status::Ok);
  MatX H = dense0.M;
  H.triangularView<Eigen::StrictlyLower>() = H.transpose();
  const MatX dense = cd.Jc * H.ldlt().solve(cd.Jc.transpose());
  EXPECT_LT((dense - cd.G).cwiseAbs().maxCoeff(), 1e-10 * dense.cwiseAbs().maxCoeff());
  // The rolling foot's linear rows are the touching point's velocity (centre - r n, n = z).
  const Mat3 R = Eigen::Quaterniond(q[6], q[3], q[4], q[5]).toRotationMatrix();
  const Vec3 w = R * v.head<3>(), vc = R * v.tail<3>() + w.cross(R * Vec3(0.1, 0.05, -0.05));
  const Vec3 touch = vc + w.cross(Vec3(0, 0, -0.03));
  const VecX rowsV = cd.Jc * v;  // floating base: y_dot = v
  EXPECT_LT((cd.frame[0].transpose() * touch - rowsV.segment<3>(3)).norm(), 1e-12);
  EXPECT_LT((cd.frame[0].transpose() * w - rowsV.segment<3>(0)).norm(), 1e-12);
  for (const auto solver : {StepSettings::Solver::Admm, StepSettings::Solver::Pgs}) {
    st.solver = solver;
    VecX q1 = q, v1 = v;
    cd.lambda.setZero();
    ASSERT_EQ(contactStep(cm, data, problem, cd, q1, v1, tau, st), Status::Ok)
        << data.errorMessage();
    // (g holds the free velocity Jc y_dot_free plus the position feedback.)
    const VecX expected = cd.G * cd.lambda + cd.Jc * cd.ydotFree;
    EXPECT_LT((cd.velocity - expected).cwiseAbs().maxCoeff(), 1e-10);
    EXPECT_GT(cd.lambda[5], 0.0);   // the rolling foot pushes
    EXPECT_GT(cd.lambda[11], 0.0);  // the torsional contact pushes
  }
}

TEST(PatchContact, TorqueAboutTheNormalSticksBelowMuTorsionTimesTheLoadAndSpinsAbove) {
  // The block on one flat patch under its centre (radius 0) on the plane z = 0, a torque tau
  // about z. |tau| < mu_tor m g: it stays; above: omega_z = N dt (tau - mu_tor m g) / Izz.
  const ClusterModel cm = floating(kBlock);
  const double m = 2.0, izz = 0.0217, muTor = 0.02, limit = muTor * m * kG;
  for (const auto solver : {StepSettings::Solver::Admm, StepSettings::Solver::Pgs}) {
    for (const double ratio : {0.9, 1.5}) {
      ContactProblem problem(cm);
      problem.addGroundFoot("patch", 0, Vec3(0, 0, -0.05), 0.0, 0.5, muTor);
      ClusterData data(cm);
      ContactData cd(cm, problem);
      StepSettings st;
      st.solver = solver;
      st.contact.maxIterations = 20000;
      VecX q(7), v = VecX::Zero(6), tau = VecX::Zero(6);
      q << 0, 0, 0.05, 0, 0, 0, 1;
      tau[2] = ratio * limit;
      const int N = 200;
      for (int k = 0; k < N; ++k)
        ASSERT_EQ(contactStep(cm, data, problem, cd, q, v, tau, st), Status::Ok)
            << k << ": " << data.errorMessage();
      // Rows: 2 inactive (rolling), torsion, t1, t2, n.
      EXPECT_NEAR(cd.lambda[5], m * kG * st.dt, 1e-10);
      if (ratio < 1.0) {
        EXPECT_LT(v.cwiseAbs().maxCoeff(), 1e-9);
        EXPECT_NEAR(std::abs(cd.lambda[2]), tau[2] * st.dt, 1e-10);
      } else {
        EXPECT_NEAR(v[2], N * st.dt * (tau[2] - limit) / izz, 1e-8);
        EXPECT_NEAR(std::abs(cd.lambda[2]), limit * st.dt, 1e-10);
        EXPECT_LT(v.tail<3>().norm(), 1e-9);  // spins in place
      }
    }
  }
}

namespace {

/// A solid sphere (m = 1, R = 0.1, I = 0.004) resting on the plane through the origin tilted by
/// theta about y, a rolling ground foot at its centre (radius R): after N steps from rest, its
/// centre's speed down the slope and its angular velocity about the slope's horizontal axis.
struct Rolled {
  double speed, spin, slip;
};

Rolled rollSphere(double theta, double mu, double muRoll, StepSettings::Solver solver, int N) {
  const ClusterModel cm = floating(kSphere);
  const double R = 0.1;
  ContactProblem problem(cm);
  problem.addGroundFoot("ball", 0, Vec3::Zero(), R, mu, 0.0, muRoll);
  const Vec3 n(-std::sin(theta), 0.0, std::cos(theta));
  problem.setGround(n, 0.0);
  ClusterData data(cm);
  ContactData cd(cm, problem);
  StepSettings st;
  st.solver = solver;
  st.contact.maxIterations = 200000;
  st.contact.tolerance = 1e-14;
  VecX q(7), v = VecX::Zero(6);
  q << R * n, 0, 0, 0, 1;
  for (int k = 0; k < N; ++k)
    EXPECT_EQ(contactStep(cm, data, problem, cd, q, v, VecX::Zero(6), st), Status::Ok)
        << k << ": " << data.errorMessage();
  // The last step's rows after the step (J y_dot+ at the step's configuration, in the contact
  // frame): angular velocity, then the touching point's velocity (the slip).
  const Vec3 downhill = -Vec3(std::cos(theta), 0.0, std::sin(theta));
  const Vec3 w = cd.frame[0] * cd.velocity.head<3>(), slip = cd.frame[0] * cd.velocity.tail<3>();
  // Rolling downhill turns the sphere about n x downhill.
  const double spin = w.dot(n.cross(downhill));
  return {slip.dot(downhill) + R * spin, spin, slip.dot(downhill)};
}

}  // namespace

TEST(PatchContact, SphereWithRollingFrictionSticksBelowTheThresholdAndRollsAbove) {
  // At rest the contact holds f = m g sin(theta) and the rolling torque R f within the elliptic
  // cone (tau_r / mu_roll)^2 + (f / mu)^2 <= (m g cos(theta))^2: it sticks while
  // tan(theta) < 1 / sqrt(R^2 / mu_roll^2 + 1 / mu^2).
  const double m = 1.0, R = 0.1, I = 0.004, mu = 0.5, muRoll = 0.01;
  const double tanStar = 1.0 / std::sqrt(R * R / (muRoll * muRoll) + 1.0 / (mu * mu));
  const int N = 300;
  const double dt = 1e-3;
  for (const auto solver : {StepSettings::Solver::Admm, StepSettings::Solver::Pgs}) {
    const Rolled still = rollSphere(std::atan(0.9 * tanStar), mu, muRoll, solver, N);
    EXPECT_LT(std::abs(still.speed), 1e-9);
    EXPECT_LT(std::abs(still.spin), 1e-8);
    // Above: on the cone's boundary with maximal dissipation, (tau_r, f) = lambda (mu_roll^2 w,
    // mu^2 s) for the spin rate w and slip rate s, with Newton-Euler
    //   m (s' + R w') = m g sin - f,  I w' = R f - tau_r,
    // and lambda from |(tau_r / mu_roll, f / mu)| = m g cos: a scalar root (bisection here).
    const double theta = std::atan(2.0 * tanStar), Nn = m * kG * std::cos(theta);
    double sdot = 0.0, wdot = 0.0;
    const auto accelerations = [&](double lam) {
      const double k = R * lam * mu * mu / (I + lam * muRoll * muRoll);  // w' = k s'
      sdot = kG * std::sin(theta) / (1.0 + lam * mu * mu / m + R * k);
      wdot = k * sdot;
      return lam * std::hypot(muRoll * wdot, mu * sdot) - Nn;
    };
    double lo = 0.0, hi = 1.0;
    while (accelerations(hi) < 0.0) hi *= 2.0;
    for (int it = 0; it < 200; ++it) {
      const double mid = 0.5 * (lo + hi);
      (accelerations(mid) < 0.0 ? lo : hi) = mid;
    }
    accelerations(0.5 * (lo + hi));
    ASSERT_GT(sdot, 0.0);
    ASSERT_GT(wdot, 0.0);
    // The first step from rest is exact (no velocity-product terms yet); over N steps the
    // body-frame velocity product omega x v, explicit in the semi-implicit Euler step, makes an
    // O(omega dt) relative error (about 3.7e-5 at N = 300).
    // The De Saxce complementarity bounds the friction's direction on the cone's boundary only to
    // about sqrt(tolerance / |D sigma_u|): PGS stops there (relative error 7e-5 at tolerance
    // 1e-14; it stalls at 5e-18), ADMM lands on the solution (1e-11).
    const double rel = solver == StepSettings::Solver::Admm ? 1e-9 : 1e-4;
    const Rolled one = rollSphere(theta, mu, muRoll, solver, 1);
    EXPECT_NEAR(one.spin, dt * wdot, rel * dt * wdot);
    EXPECT_NEAR(one.slip, dt * sdot, 1e-12 + rel * dt * sdot);
    EXPECT_NEAR(one.speed, dt * (sdot + R * wdot), rel * dt * (sdot + R * wdot));
    const Rolled rolled = rollSphere(theta, mu, muRoll, solver, N);
    EXPECT_NEAR(rolled.spin, N * dt * wdot, 1e-4 * N * dt * wdot);
    EXPECT_NEAR(rolled.slip, N * dt * sdot, 1e-4 * N * dt * sdot);
    EXPECT_NEAR(rolled.speed, N * dt * (sdot + R * wdot), 1e-4 * N * dt * (sdot + R * wdot));
  }
}

TEST(PatchContact, RollingFrictionSlowsARollingSphere) {
  // Without rolling friction (mu_roll -> 0, a Rolling cone of coefficient 1e-9 m) a sphere rolls
  // down a slope with a = (5/7) g sin(theta) without slipping; with mu_roll it accelerates less.
  const double theta = 0.1, dt = 1e-3;
  const int N = 200;
  for (const auto solver : {StepSettings::Solver::Admm, StepSettings::Solver::Pgs}) {
    const double a = 5.0 / 7.0 * kG * std::sin(theta);
    const Rolled first = rollSphere(theta, 0.8, 1e-9, solver, 1);  // exact (see above)
    EXPECT_NEAR(first.speed, dt * a, 1e-6 * dt * a);               // rolling friction 1e-9 m: 1e-7
    EXPECT_LT(std::abs(first.slip), 1e-12);
    const Rolled free = rollSphere(theta, 0.8, 1e-9, solver, N);
    EXPECT_NEAR(free.speed, N * dt * a, 1e-4 * N * dt * a);
    EXPECT_LT(std::abs(free.slip), 1e-9);  // rolls without slipping
    const Rolled slowed = rollSphere(theta, 0.8, 0.002, solver, N);
    EXPECT_LT(slowed.speed, free.speed - 1e-3);
    EXPECT_GT(slowed.speed, 0.0);
  }
}
