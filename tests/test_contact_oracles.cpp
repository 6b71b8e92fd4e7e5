// Per-solve oracles of the contact step (issue 26): at every step of a drop of the loop robot
// cd_parallel_walker, the residuals the solver reports (ContactSolverResult::residuals) equal
// the dual feasibility (impulse in the cone), primal feasibility (De Saxce velocity in the dual
// cone) and De Saxce complementarity recomputed here from their definitions on the step's
// (G, g, lambda); Ok means they meet the tolerance; the gaps stay non-negative (primal
// feasibility on the geometry, not only on the velocities; bounded penetration with the default
// position feedback); each normal impulse is complementary to the next gap (a foot that pushes
// ends the step in contact); sliding friction lies on the cone's boundary.
#include <gtest/gtest.h>

#include <cmath>

#include "clusterdyn/clusterdyn.hpp"
#include "contact_fixtures.hpp"
#include "test_util.hpp"

using namespace clusterdyn;

namespace {

struct Definitions {
  double cone = 0.0, velocity = 0.0, complementarity = 0.0;
};

/// From the definitions (docs/contact.md): lambda in K = {|l_t| <= mu l_n}; the De Saxce velocity
/// s = c + (0, 0, mu |c_t|) with c = G lambda + g in K* = {mu |s_t| <= s_n}; per block
/// |lambda . s| / |lambda|_inf. Projections on the second-order cones in closed form.
Definitions definitions(const ContactData& cd) {
  Definitions d;
  const VecX c = cd.G * cd.lambda + cd.g;
  for (const ConeBlock& b : cd.blocks) {
    if (b.type == ConeType::Inactive) {  // K = {0}, K* = R^3
      d.cone = std::max(d.cone, cd.lambda.segment<3>(b.row0).norm());
      continue;
    }
    if (b.type != ConeType::Coulomb) {
      ADD_FAILURE() << "no bilateral blocks expected";
      continue;
    }
    const Vec3 l = cd.lambda.segment<3>(b.row0);
    Vec3 s = c.segment<3>(b.row0);
    s[2] += b.mu * s.head<2>().norm();
    // Max-norm distance of x = (x_t, x_n) to the cone {|x_t| <= a x_n} (as the residuals are
    // reported): x - Proj(x), Proj in closed form (x inside; 0 in the polar cone; else onto the
    // boundary ray through x_t: n' = (a |x_t| + x_n) / (1 + a^2), Proj = (a n' x_t / |x_t|, n')).
    auto dist = [](const Vec3& x, double a) {
      const double t = x.head<2>().norm(), n = x[2];
      if (t <= a * n) return 0.0;
      if (a * t <= -n) return x.cwiseAbs().maxCoeff();
      const double np = (a * t + n) / (1.0 + a * a);
      Vec3 p;
      p << a * np * x.head<2>() / t, np;
      return (x - p).cwiseAbs().maxCoeff();
    };
    d.cone = std::max(d.cone, dist(l, b.mu));
    d.velocity = std::max(d.velocity, b.mu > 0.0 ? dist(s, 1.0 / b.mu) : std::max(0.0, -s[2]));
    const double ln = l.cwiseAbs().maxCoeff();
    if (ln > 0.0) d.complementarity = std::max(d.complementarity, std::abs(l.dot(s)) / ln);
  }
  return d;
}

}  // namespace

TEST(ContactOracles, ReportedResidualsAreTheDefinitionsAtEveryStepOfADrop) {
  ModelOptions o;
  o.floatingBase = true;
  const ClusterModel cm = loadModel(test::modelsPath("cd_parallel_walker.urdf"), o);
  ContactProblem problem(cm);
  scenes::addWalkerFeet(cm, problem, 0.6);
  ClusterData data(cm);
  ContactData cd(cm, problem);
  VecX y = scenes::uprightAt(cm, 0.27 + 0.03 + 0.02), ydot = VecX::Zero(cm.ny);
  y.segment<4>(3) =
      Eigen::Quaterniond(Eigen::AngleAxisd(0.08, Vec3(1, 1, 0).normalized())).coeffs();
  ydot.head<6>() << 0.3, -0.2, 0.1, 0.4, 0.1, 0.0;  // tumbling and moving sideways: slip + stick
  VecX q, v;
  ASSERT_TRUE(test::closedSpanningState(cm, data, y, ydot, q, v));
  for (const auto solver : {StepSettings::Solver::Admm, StepSettings::Solver::Pgs}) {
    StepSettings st;  // default position feedback beta = 0.2
    st.solver = solver;
    st.contact.maxIterations = 20000;
    VecX qs = q, vs = v;
    int solves = 0, sliding = 0, sticking = 0;
    double minGap = 1e9, worstGapComplementarity = 0.0;
    VecX prevGap, prevLambda;
    std::vector<ConeBlock> prevBlocks;
    for (int k = 0; k < 600; ++k) {
      ASSERT_EQ(contactStep(cm, data, problem, cd, qs, vs, VecX::Zero(cm.ny), st), Status::Ok)
          << k << ": " << data.errorMessage();
      minGap = std::min(minGap, cd.gap.minCoeff());  // the gaps at this step's start
      // Gap complementarity on the geometry: a foot that pushed in the previous step (lambda_n >
      // 0, so c_n+ met its target -gap / dt, or -beta gap / dt when penetrating) starts this step
      // at gap 0, or (1 - beta) gap, up to the second-order terms of the step.
      for (const ConeBlock& b : prevBlocks) {
        const int contact = b.row0 / 3;  // no bilateral rows: the blocks follow the contacts
        if (b.type != ConeType::Coulomb || prevLambda[b.row0 + 2] <= 1e-9) continue;
        const double expected = (1.0 - st.beta) * std::min(0.0, prevGap[contact]);
        worstGapComplementarity =
            std::max(worstGapComplementarity, std::abs(cd.gap[contact] - expected));
      }
      prevGap = cd.gap;
      prevLambda = cd.lambda;
      prevBlocks = cd.blocks;
      bool active = false;
      for (const ConeBlock& b : cd.blocks) active = active || b.type == ConeType::Coulomb;
      if (!active) continue;
      ++solves;
      const Definitions d = definitions(cd);
      const ContactResiduals& r = cd.result.residuals;
      EXPECT_NEAR(r.cone, d.cone, 1e-13) << "step " << k;
      EXPECT_NEAR(r.velocity, d.velocity, 1e-12) << "step " << k;
      EXPECT_NEAR(r.complementarity, d.complementarity, 1e-12) << "step " << k;
      EXPECT_TRUE(cd.result.converged);
      EXPECT_LE(std::max({d.cone, d.velocity, d.complementarity}), st.contact.tolerance)
          << "step " << k;
      // Classify the active contacts: sliding when the friction is on the cone's boundary and the
      // slip is non-zero, sticking when the slip vanishes.
      const VecX c = cd.G * cd.lambda + cd.g;
      for (const ConeBlock& b : cd.blocks) {
        const double ln = cd.lambda[b.row0 + 2];
        if (b.type != ConeType::Coulomb || ln <= 1e-9) continue;
        const double slip = c.segment<2>(b.row0).norm();
        if (slip > 1e-6) {
          ++sliding;
          EXPECT_NEAR(cd.lambda.segment<2>(b.row0).norm(), b.mu * ln, 1e-9 * (1.0 + ln));
        } else {
          ++sticking;
        }
      }
    }
    EXPECT_GT(solves, 300);
    EXPECT_GT(sliding, 10) << "the drop should slide some feet";
    EXPECT_GT(sticking, 100) << "and stick others";
    // The step is first order in the positions: the feet move on arcs (passive cranks swinging at
    // ~10 rad/s after the impact), a gap error of dt^2 |a| per step, 3.2e-5 m measured here
    // (dt^2 times 32 m/s^2); the feedback keeps the penetration at 1.5e-4 m.
    EXPECT_GT(minGap, -5e-4) << "penetration (m)";
    EXPECT_LT(worstGapComplementarity, 1e-4) << "a pushing foot ends its step in contact (m)";
    RecordProperty(solver == StepSettings::Solver::Admm ? "admm_min_gap" : "pgs_min_gap",
                   std::to_string(minGap));
    RecordProperty(solver == StepSettings::Solver::Admm ? "admm_gap_compl" : "pgs_gap_compl",
                   std::to_string(worstGapComplementarity));
    std::printf(
        "%s: %d solves, %d sliding and %d sticking contact-steps, min gap %.3e m, "
        "|gap| after a push %.3e m\n",
        solver == StepSettings::Solver::Admm ? "ADMM" : "PGS", solves, sliding, sticking, minGap,
        worstGapComplementarity);
  }
}
