// The constraint-space contact solvers (src/contact/): cone projections checked by Moreau's
// decomposition, PGS and ADMM on random problems checked by residuals recomputed here from the
// definitions (not through contactResiduals), and the two solvers against each other.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "clusterdyn/contact.hpp"
#include "contact/contact_detail.hpp"
#include "test_util.hpp"

using namespace clusterdyn;

namespace {

struct RandomProblem {
  MatX G;
  VecX g;
  std::vector<ConeBlock> blocks;
};

/// nContacts Coulomb blocks (mu in [0, 1]) and optionally one bilateral block of 2 rows; G = A A^T
/// with A m x rank (rank < m: redundant rows as four feet under one rigid body), and a physical
/// drift g = A v + b (a free velocity seen through the rows, plus gaps b_n >= 0 on the normal
/// rows), for which a solution exists even when G is singular.
RandomProblem randomProblem(std::mt19937_64& rng, int nContacts, bool bilateral, int rank) {
  RandomProblem p;
  int row = 0;
  if (bilateral) p.blocks.push_back({ConeType::Bilateral, row, 2, 0.0}), row += 2;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (int i = 0; i < nContacts; ++i)
    p.blocks.push_back({ConeType::Coulomb, row, 3, u(rng)}), row += 3;
  const MatX A = MatX::Random(row, rank);
  p.G = A * A.transpose();
  p.g = A * test::randomVector(rank, rng);
  for (const ConeBlock& b : p.blocks)
    if (b.type == ConeType::Coulomb) p.g[b.row0 + 2] += 0.2 * u(rng);
  return p;
}

/// Residuals from the definitions: lambda_n >= 0, |lambda_t| <= mu lambda_n; sigma = G lambda + g
/// with the De Saxce shift: mu |sigma_t| <= sigma_n (Coulomb), sigma = 0 (bilateral);
/// |lambda . sigma| / |lambda|_inf per block.
double oracleResidual(const RandomProblem& p, const VecX& lambda) {
  const VecX v = p.G * lambda + p.g;
  double worst = 0.0;
  for (const ConeBlock& b : p.blocks) {
    if (b.type == ConeType::Bilateral) {
      worst = std::max(worst, v.segment(b.row0, b.rows).cwiseAbs().maxCoeff());
      continue;
    }
    const Vec3 l = lambda.segment<3>(b.row0), s = v.segment<3>(b.row0);
    const double st = s.head<2>().norm(), sn = s[2] + b.mu * st;
    worst = std::max({worst, -l[2], l.head<2>().norm() - b.mu * l[2], b.mu * st - sn});
    const double ln = l.cwiseAbs().maxCoeff();
    if (ln > 0.0) worst = std::max(worst, std::abs(l.head<2>().dot(s.head<2>()) + l[2] * sn) / ln);
  }
  return worst;
}

}  // namespace

TEST(ContactCones, MoreauDecompositionAndIdempotence) {
  // x = Proj_K(x) - Proj_K*(-x) with the two parts orthogonal (K* the dual cone: -K* the polar).
  std::mt19937_64 rng(7);
  for (const double mu : {0.0, 0.3, 1.0, 4.0}) {
    for (int k = 0; k < 200; ++k) {
      const ConeBlock b{ConeType::Coulomb, 0, 3, mu};
      const Vec3 x = 2.0 * test::randomVector(3, rng);
      Vec3 p = x, d = -x;
      detail::projectCone(b, p.data());
      detail::projectDualCone(b, d.data());
      EXPECT_LT((x - (p - d)).cwiseAbs().maxCoeff(), 1e-14) << "mu " << mu;
      EXPECT_LT(std::abs(p.dot(d)), 1e-14) << "mu " << mu;
      EXPECT_GE(p[2], 0.0);
      EXPECT_LE(p.head<2>().norm(), mu * p[2] + 1e-15);
      Vec3 pp = p;
      detail::projectCone(b, pp.data());
      EXPECT_LT((pp - p).cwiseAbs().maxCoeff(), 1e-15);
    }
  }
  // Bilateral: K = R^k, K* = {0}; Inactive: K = {0}, K* = R^3.
  Vec3 x(1.0, -2.0, 3.0), y = x;
  detail::projectCone({ConeType::Bilateral, 0, 3, 0.0}, y.data());
  EXPECT_EQ(y, x);
  detail::projectDualCone({ConeType::Bilateral, 0, 3, 0.0}, y.data());
  EXPECT_EQ(y, Vec3::Zero());
  y = x;
  detail::projectCone({ConeType::Inactive, 0, 3, 0.0}, y.data());
  EXPECT_EQ(y, Vec3::Zero());
}

TEST(ContactSolvers, PgsAndAdmmConvergeAndAgree) {
  std::mt19937_64 rng(11);
  ContactSolverSettings s;
  s.tolerance = 1e-10;
  s.maxIterations = 20000;
  int admmIterations = 0, pgsIterations = 0;
  for (int trial = 0; trial < 40; ++trial) {
    const int nc = 1 + trial % 5;
    const bool bilateral = trial % 3 == 0;
    const int m = 3 * nc + (bilateral ? 2 : 0);
    const bool full = trial % 2 == 0;  // full rank: a unique solution, compared directly
    const RandomProblem p = randomProblem(rng, nc, bilateral, full ? m : std::max(2, m / 2));
    ContactSolverWorkspace ws(m);
    VecX la = VecX::Zero(m), lp = VecX::Zero(m);
    ContactSolverResult ra, rp;
    const Status sa = solveContactAdmm(p.G, p.g, p.blocks, s, ws, la, ra);
    EXPECT_EQ(sa, Status::Ok) << "trial " << trial << ": " << ws.lastError;
    const Status sp = solveContactPgs(p.G, p.g, p.blocks, s, ws, lp, rp);
    EXPECT_EQ(sp, Status::Ok) << "trial " << trial << ": " << ws.lastError;
    admmIterations += ra.iterations;
    pgsIterations += rp.iterations;
    EXPECT_LT(oracleResidual(p, la), 1e-8) << "ADMM trial " << trial;
    EXPECT_LT(oracleResidual(p, lp), 1e-8) << "PGS trial " << trial;
    // Same constraint velocities (unique for the velocity even when lambda is not) ...
    const VecX va = p.G * la + p.g, vp = p.G * lp + p.g;
    EXPECT_LT((va - vp).cwiseAbs().maxCoeff(), 1e-6) << "trial " << trial;
    // ... and the same impulses when G is definite.
    if (full) EXPECT_LT((la - lp).cwiseAbs().maxCoeff(), 1e-6) << "trial " << trial;
  }
  RecordProperty("admm_iterations", admmIterations);
  RecordProperty("pgs_iterations", pgsIterations);
}

TEST(ContactSolvers, WarmStartAtTheSolutionStopsAtOnce) {
  std::mt19937_64 rng(5);
  const RandomProblem p = randomProblem(rng, 4, true, 14);
  ContactSolverWorkspace ws(14);
  ContactSolverSettings s;
  s.maxIterations = 20000;
  VecX l = VecX::Zero(14);
  ContactSolverResult r;
  ASSERT_EQ(solveContactAdmm(p.G, p.g, p.blocks, s, ws, l, r), Status::Ok) << ws.lastError;
  ASSERT_EQ(solveContactPgs(p.G, p.g, p.blocks, s, ws, l, r), Status::Ok) << ws.lastError;
  EXPECT_EQ(r.iterations, 0);
  ASSERT_EQ(solveContactAdmm(p.G, p.g, p.blocks, s, ws, l, r), Status::Ok) << ws.lastError;
  EXPECT_EQ(r.iterations, 0);
}

TEST(ContactSolvers, RejectsBadInputsAndNeverReturnsNaN) {
  std::mt19937_64 rng(3);
  RandomProblem p = randomProblem(rng, 2, false, 6);
  ContactSolverWorkspace ws(6);
  ContactSolverSettings s;
  VecX l = VecX::Zero(6);
  ContactSolverResult r;
  RandomProblem bad = p;
  bad.blocks[1].row0 = 2;  // overlaps
  EXPECT_EQ(solveContactAdmm(bad.G, bad.g, bad.blocks, s, ws, l, r), Status::InvalidArgument);
  EXPECT_NE(std::string(ws.lastError).find("blocks[1].row0"), std::string::npos) << ws.lastError;
  bad = p;
  bad.blocks[0].mu = -1.0;
  EXPECT_EQ(solveContactPgs(bad.G, bad.g, bad.blocks, s, ws, l, r), Status::InvalidArgument);
  bad = p;
  bad.g[4] = std::nan("");
  EXPECT_EQ(solveContactPgs(bad.G, bad.g, bad.blocks, s, ws, l, r), Status::NonFinite);
  EXPECT_EQ(solveContactAdmm(bad.G, bad.g, bad.blocks, s, ws, l, r), Status::NonFinite);
  EXPECT_TRUE(l.allFinite());
  ContactSolverWorkspace small(3);
  EXPECT_EQ(solveContactAdmm(p.G, p.g, p.blocks, s, small, l, r), Status::InvalidSize);
  // A NaN warm start is a cold start; too few iterations: NotConverged with a finite iterate.
  l[0] = std::nan("");
  s.maxIterations = 1;
  const Status st = solveContactAdmm(p.G, p.g, p.blocks, s, ws, l, r);
  EXPECT_TRUE(st == Status::NotConverged || st == Status::Ok);
  EXPECT_TRUE(l.allFinite());
  // Not positive semi-definite G: ADMM reports it instead of iterating on garbage.
  RandomProblem neg = p;
  neg.G = -1e3 * MatX::Identity(6, 6);
  s.maxIterations = 100;
  EXPECT_EQ(solveContactAdmm(neg.G, neg.g, neg.blocks, s, ws, l, r), Status::NotPositiveDefinite);
}

TEST(ContactSolvers, PgsIgnoresRowsWhoseDelassusDiagonalIsRoundoff) {
  // A cut planar loop has rows whose Jacobian is zero up to roundoff (out of the plane): their
  // Delassus diagonal is ~1e-30 of the others, and a Gauss-Seidel step lambda_i -= sigma_i / G_ii
  // there threw the impulse to ~1e16 N s while the residuals (in G lambda) still said Ok
  // (cd_parallel_walker cut into bilateral rows, tools/contact/contact_dump).
  std::mt19937_64 rng(5);
  RandomProblem p = randomProblem(rng, 2, true, 8);  // rows: bilateral 0-1, contacts 2-7
  MatX A = MatX::Random(8, 8);
  A.row(1) *= 1e-15;  // the roundoff row
  p.G = A * A.transpose();
  p.g = A * test::randomVector(8, rng);
  for (const int n : {4, 7}) p.g[n] += 0.1;
  ContactSolverSettings s;
  s.maxIterations = 20000;
  ContactSolverWorkspace ws(8);
  VecX la = VecX::Zero(8), lp = VecX::Zero(8);
  ContactSolverResult ra, rp;
  ASSERT_EQ(solveContactAdmm(p.G, p.g, p.blocks, s, ws, la, ra), Status::Ok) << ws.lastError;
  ASSERT_EQ(solveContactPgs(p.G, p.g, p.blocks, s, ws, lp, rp), Status::Ok) << ws.lastError;
  EXPECT_LT(oracleResidual(p, lp), 1e-8);
  EXPECT_LT(std::abs(lp[1]), 1.0) << "impulse on the roundoff row";
  EXPECT_LT(lp.cwiseAbs().maxCoeff(), 10.0 * la.cwiseAbs().maxCoeff());
}

TEST(ContactSolvers, AdmmNewtonPolishIsExactOrNotTaken) {
  // ADMM stopped early (maxIterations 15, no polish) leaves an inexact iterate; the same solve
  // with the Newton polish at its last iteration identifies the contact modes (separated,
  // sticking, sliding, frictionless with mu = 0, the bilateral rows) and solves them exactly.
  // Whenever it reports Ok, the residuals recomputed from the definitions meet the tolerance and
  // the velocities equal those of a fully converged ADMM; when the polish fails the result is
  // NotConverged with ADMM's own iterate (never a polished lambda with larger residuals).
  std::mt19937_64 rng(29);
  int polished = 0, notConverged = 0;
  for (int trial = 0; trial < 60; ++trial) {
    const int nc = 1 + trial % 5;
    const bool bilateral = trial % 3 == 0;
    const int m = 3 * nc + (bilateral ? 2 : 0);
    const bool full = trial % 2 == 0;
    RandomProblem p = randomProblem(rng, nc, bilateral, full ? m : std::max(2, m / 2));
    if (trial % 4 == 1) p.blocks.back().mu = 0.0;  // a frictionless contact
    ContactSolverWorkspace ws(m);
    ContactSolverSettings s;
    s.maxIterations = 15;
    s.polishAfter = 0;
    VecX plain = VecX::Zero(m), lp = VecX::Zero(m), ref = VecX::Zero(m);
    ContactSolverResult r0, r1, rr;
    const Status s0 = solveContactAdmm(p.G, p.g, p.blocks, s, ws, plain, r0);
    s.polishAfter = 15;
    const Status s1 = solveContactAdmm(p.G, p.g, p.blocks, s, ws, lp, r1);
    ContactSolverSettings exact;
    exact.maxIterations = 20000;
    exact.polishAfter = 0;
    ASSERT_EQ(solveContactAdmm(p.G, p.g, p.blocks, exact, ws, ref, rr), Status::Ok) << trial;
    if (s0 == Status::Ok) {  // converged without the polish: the polish is never called
      EXPECT_EQ(s1, Status::Ok);
      EXPECT_FALSE(r1.polished);
      EXPECT_EQ(lp, plain);
      continue;
    }
    if (s1 == Status::Ok) {
      ++polished;
      EXPECT_TRUE(r1.polished);
      EXPECT_GT(r1.polishSteps, 0);
      EXPECT_LT(oracleResidual(p, lp), 1e-9) << "trial " << trial;
      const VecX vp = p.G * lp + p.g, vr = p.G * ref + p.g;
      EXPECT_LT((vp - vr).cwiseAbs().maxCoeff(), 1e-8) << "trial " << trial;
      if (full) EXPECT_LT((lp - ref).cwiseAbs().maxCoeff(), 1e-7) << "trial " << trial;
    } else {
      ++notConverged;
      EXPECT_EQ(s1, Status::NotConverged);
      EXPECT_FALSE(r1.polished);
      EXPECT_EQ(lp, plain);  // ADMM's iterate, unchanged
    }
  }
  EXPECT_GT(polished, 20);
  RecordProperty("polished", polished);
  RecordProperty("not_polished", notConverged);
  // polishAfter < 0 is rejected.
  std::mt19937_64 rng2(3);
  const RandomProblem p = randomProblem(rng2, 2, false, 6);
  ContactSolverWorkspace ws(6);
  ContactSolverSettings s;
  s.polishAfter = -1;
  VecX l = VecX::Zero(6);
  ContactSolverResult r;
  EXPECT_EQ(solveContactAdmm(p.G, p.g, p.blocks, s, ws, l, r), Status::InvalidArgument);
  EXPECT_NE(std::string(ws.lastError).find("polishAfter"), std::string::npos) << ws.lastError;
}

namespace {

/// A problem with a known exact solution lambda*: G = A A^T (m = 3 nc, full rank), per block a
/// mode: sticking (lambda* inside the cone, c* = 0), sliding (lambda*_t = mu lambda*_n u on the
/// boundary, c*_t = -kappa u, c*_n = 0), separated (lambda* = 0, c*_n > 0); g = c* - G lambda*.
/// Its three residuals are zero, and G definite makes lambda* the unique solution.
struct KnownSolution {
  RandomProblem p;
  VecX lambda;
};

KnownSolution knownSolution(std::mt19937_64& rng, const std::vector<char>& modes) {
  KnownSolution k;
  const int m = 3 * static_cast<int>(modes.size());
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const MatX A = MatX::Random(m, m) + 2.0 * MatX::Identity(m, m);
  k.p.G = A * A.transpose();
  k.lambda = VecX::Zero(m);
  VecX c = VecX::Zero(m);
  for (int b = 0; b < static_cast<int>(modes.size()); ++b) {
    const double mu = 0.3 + 0.5 * u(rng), ln = 0.5 + u(rng), th = 6.0 * u(rng);
    k.p.blocks.push_back({ConeType::Coulomb, 3 * b, 3, mu});
    if (modes[b] == 'k') {  // sticking: |lambda_t| = 0.5 mu lambda_n
      k.lambda.segment<3>(3 * b) << 0.5 * mu * ln * std::cos(th), 0.5 * mu * ln * std::sin(th), ln;
    } else if (modes[b] == 's') {  // sliding
      const double kappa = 0.1 + u(rng);
      k.lambda.segment<3>(3 * b) << mu * ln * std::cos(th), mu * ln * std::sin(th), ln;
      c.segment<3>(3 * b) << -kappa * std::cos(th), -kappa * std::sin(th), 0.0;
    } else {  // separated
      c.segment<3>(3 * b) << u(rng) - 0.5, u(rng) - 0.5, 0.1 + u(rng);
    }
  }
  k.p.g = c - k.p.G * k.lambda;
  return k;
}

}  // namespace

TEST(ContactSolvers, AdmmActiveSetSolveFromTheWarmStartIsExact) {
  // The warm start has the solution's contact modes (sticking, sliding, separated) but not its
  // values: the active-set solve takes Newton steps on those modes, no ADMM iteration, and its
  // impulse equals the known exact solution (the oracle) to rounding.
  std::mt19937_64 rng(41);
  const std::vector<std::vector<char>> cases = {
      {'k', 'k', 'k', 'k'}, {'k', 's', 'k', 'o'}, {'s', 's', 'o'}, {'k', 'o', 'o', 'k', 's', 'k'}};
  for (std::size_t c = 0; c < cases.size(); ++c) {
    const KnownSolution k = knownSolution(rng, cases[c]);
    const int m = static_cast<int>(k.lambda.size());
    ContactSolverWorkspace ws(m);
    ContactSolverSettings s;
    s.activeSetSteps = 6;
    // Warm start: the solution moved within its modes (normal and tangential impulses scaled,
    // sliding friction turned by 0.1 rad).
    VecX l = k.lambda;
    for (const ConeBlock& b : k.p.blocks) {
      Eigen::Ref<VecX> lb = l.segment(b.row0, 3);
      const double ln = lb[2], lt = lb.head<2>().norm();
      if (ln == 0.0) continue;
      const bool sliding = lt > 0.99 * b.mu * ln;
      const double th = std::atan2(lb[1], lb[0]) + (sliding ? 0.1 : 0.0);
      const double t = sliding ? 1.2 * b.mu * ln : 0.8 * lt;
      lb << t * std::cos(th), t * std::sin(th), 1.2 * ln;
    }
    ContactSolverResult r;
    ASSERT_EQ(solveContactAdmm(k.p.G, k.p.g, k.p.blocks, s, ws, l, r), Status::Ok) << ws.lastError;
    EXPECT_TRUE(r.activeSet) << "case " << c;
    EXPECT_EQ(r.iterations, 0) << "case " << c;
    EXPECT_GE(r.activeSetSteps, 1) << "case " << c;
    EXPECT_FALSE(r.polished);
    EXPECT_LT((l - k.lambda).cwiseAbs().maxCoeff(), 1e-12 * k.lambda.cwiseAbs().maxCoeff())
        << "case " << c;
    EXPECT_LT(oracleResidual(k.p, l), s.tolerance) << "case " << c;
    // The linear case (no sliding block) takes one Newton step.
    if (c == 0) EXPECT_EQ(r.activeSetSteps, 1);
  }
}

TEST(ContactSolvers, AdmmActiveSetSolveRejectsWrongModesAndFallsBackToAdmm) {
  // The warm start says "all four stick" where one contact slides and one separates: the Newton
  // step on those modes (one allowed) ends outside the cones, its residuals exceed the
  // tolerance, and ADMM solves from the warm start; the result is the exact solution to the
  // tolerance, not the rejected candidate. With activeSetSteps = 0 the same solve is plain
  // ADMM, bit for bit.
  std::mt19937_64 rng(43);
  const KnownSolution k = knownSolution(rng, {'k', 's', 'k', 'o'});
  const int m = 12;
  ContactSolverWorkspace ws(m);
  ContactSolverSettings s;
  s.activeSetSteps = 1;
  s.maxIterations = 20000;
  VecX start = k.lambda;
  start.segment<2>(3) *= 0.5;            // the sliding contact: inside its cone (sticking)
  start.segment<3>(9) << 0.0, 0.0, 0.3;  // the separated one: pressing
  VecX l = start;
  ContactSolverResult r;
  ASSERT_EQ(solveContactAdmm(k.p.G, k.p.g, k.p.blocks, s, ws, l, r), Status::Ok) << ws.lastError;
  EXPECT_FALSE(r.activeSet);
  EXPECT_EQ(r.activeSetSteps, 1);
  EXPECT_GT(r.iterations, 0);
  EXPECT_LT(oracleResidual(k.p, l), 1e-9);
  EXPECT_LT((l - k.lambda).cwiseAbs().maxCoeff(), 1e-7);
  // The candidate it rejected: the sticking solution on all 12 rows, G lambda = -g.
  const VecX sticking = k.p.G.fullPivLu().solve(-k.p.g);
  EXPECT_GT(oracleResidual(k.p, sticking), 1e-3);
  EXPECT_GT((l - sticking).cwiseAbs().maxCoeff(), 1e-3);
  // activeSetSteps = 0: plain ADMM, identical to the fallback above.
  ContactSolverSettings plain = s;
  plain.activeSetSteps = 0;
  VecX lp = start;
  ContactSolverResult rp;
  ASSERT_EQ(solveContactAdmm(k.p.G, k.p.g, k.p.blocks, plain, ws, lp, rp), Status::Ok);
  EXPECT_EQ(lp, l);
  EXPECT_EQ(rp.iterations, r.iterations);
  EXPECT_EQ(rp.activeSetSteps, 0);
  // activeSetSteps < 0 is rejected.
  plain.activeSetSteps = -1;
  EXPECT_EQ(solveContactAdmm(k.p.G, k.p.g, k.p.blocks, plain, ws, lp, rp), Status::InvalidArgument);
  EXPECT_NE(std::string(ws.lastError).find("activeSetSteps"), std::string::npos) << ws.lastError;
}
