// The contact C API (cdyn_contact_*, cdyn_*_contact_rollout) against the C++ contact layer:
// steps and solves bit for bit equal to contactStep / the solvers, bilateral rows from a
// constraint set (added after the feet: the rebuilt problem), rollouts on threads and on a pool
// bit-identical to single steps, per-state failures with their index, argument errors naming
// the argument with the workspace left usable, and no heap allocation in any compute call.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "clusterdyn.h"
#include "clusterdyn/clusterdyn.hpp"
#include "test_util.hpp"

namespace cd = clusterdyn;

namespace {

const char* const kLegs[] = {"lf", "rf", "lh", "rh"};

/// cd_parallel_walker (floating trunk, four parallelogram legs: four implicit loops, sphere
/// feet), in C and in C++ from the same file and options.
struct Walker {
  explicit Walker(bool cutLoops = false) {
    const std::string path = cd::test::modelsPath("cd_parallel_walker.urdf");
    const unsigned flags = CDYN_LOAD_FLOATING_BASE | (cutLoops ? CDYN_LOAD_CUT_LOOPS : 0u);
    char err[256];
    EXPECT_EQ(
        cdyn_model_load(CDYN_ABI_VERSION, path.c_str(), flags, nullptr, &model, err, sizeof err),
        CDYN_OK)
        << err;
    cd::ModelOptions o;
    o.floatingBase = true;
    o.cutLoops = cutLoops;
    cm = cd::loadModel(path, o);
    nq = cm.treeModel.nq;
    nv = cm.treeModel.nv;
    ny = cm.ny;
  }
  ~Walker() { cdyn_model_free(model); }
  /// A closed state: trunk `height` above the ground plane, slightly rolled, cranks spread.
  void state(double height, double roll, cd::VecX& q, cd::VecX& v) const {
    cd::ClusterData data(cm);
    cd::VecX y = cd::VecX::Zero(cm.nyq), ydot = cd::VecX::Zero(cm.ny);
    y[2] = height;
    const Eigen::Quaterniond rot(Eigen::AngleAxisd(roll, cd::Vec3::UnitX()));
    y.segment<4>(3) = rot.coeffs();
    for (int i = 0; i < 4; ++i) y[7 + i] = 0.2 * (i % 2 ? -1.0 : 1.0);
    ydot[2] = 0.3;  // a yaw rate (v: angular, then linear): friction has work to do
    EXPECT_EQ(cd::independentToSpanning(cm, data, y, ydot), cd::Status::Ok);
    q = data.q;
    v = data.v;
  }
  int body(const char* leg) const { return cm.treeModel.bodyId(std::string(leg) + "_coupler"); }
  cdyn_model* model = nullptr;
  cd::ClusterModel cm;
  int nq = 0, nv = 0, ny = 0;
};

const double kCentre[3] = {0.03, 0.0, -0.05};

void addFeetC(const Walker& w, cdyn_contact_problem* p, double mu) {
  for (const char* leg : kLegs) {
    const std::string name = std::string(leg) + "_foot";
    int index = -1;
    ASSERT_EQ(
        cdyn_contact_problem_add_foot(p, name.c_str(), w.body(leg), kCentre, 3, 0.02, mu, &index),
        CDYN_OK)
        << cdyn_contact_problem_last_error(p);
  }
}

void addFeetCxx(const Walker& w, cd::ContactProblem& p, double mu) {
  for (const char* leg : kLegs)
    p.addGroundFoot(std::string(leg) + "_foot", w.body(leg), cd::Vec3(0.03, 0.0, -0.05), 0.02, mu);
}

bool same(const double* a, const double* b, std::size_t n) {
  return std::memcmp(a, b, n * sizeof(double)) == 0;
}

/// A C problem with the four feet and `nws` workspaces.
struct CProblem {
  CProblem(const Walker& w, int nws, double mu = 0.8) {
    EXPECT_EQ(cdyn_contact_problem_create(w.model, &problem), CDYN_OK);
    addFeetC(w, problem, mu);
    ws.assign(nws, nullptr);
    for (auto& k : ws) EXPECT_EQ(cdyn_contact_workspace_create(problem, &k), CDYN_OK);
    cdyn_contact_problem_sizes(problem, &nc, nullptr, &m);
  }
  ~CProblem() {
    for (auto* k : ws) cdyn_contact_workspace_free(k);
    cdyn_contact_problem_free(problem);
  }
  cdyn_contact_problem* problem = nullptr;
  std::vector<cdyn_contact_workspace*> ws;
  int nc = 0, m = 0;
};

cdyn_contact_settings settingsOf(double beta, int solver) {
  cdyn_contact_settings s;
  cdyn_contact_settings_default(&s);
  s.beta = beta;
  s.solver = solver;
  s.max_iterations = 5000;
  return s;
}

}  // namespace

TEST(CapiContact, StepEqualsContactStepBitForBit) {
  Walker w;
  for (const int solver : {CDYN_CONTACT_ADMM, CDYN_CONTACT_PGS}) {
    CProblem c(w, 1);
    ASSERT_EQ(c.m, 12);
    cd::ContactProblem problem(w.cm);
    addFeetCxx(w, problem, 0.8);
    cd::ClusterData data(w.cm);
    cd::ContactData cdata(w.cm, problem);
    cd::StepSettings st;
    st.contact.maxIterations = 5000;
    st.solver =
        solver == CDYN_CONTACT_PGS ? cd::StepSettings::Solver::Pgs : cd::StepSettings::Solver::Admm;
    const cdyn_contact_settings cs = settingsOf(st.beta, solver);
    cd::VecX q, v;
    w.state(0.27 + 0.01 + 0.02, 0.05, q, v);
    cd::VecX qc = q, vc = v, tau = cd::VecX::Constant(w.ny, 0.1), lambda(c.m);
    int contactSteps = 0;
    for (int k = 0; k < 300; ++k) {
      cdyn_contact_report rep;
      const cdyn_status s =
          cdyn_contact_step(c.problem, c.ws[0], qc.data(), w.nq, vc.data(), w.nv, tau.data(), w.ny,
                            &cs, qc.data(), w.nq, vc.data(), w.nv, lambda.data(), c.m, &rep);
      const cd::Status sx = cd::contactStep(w.cm, data, problem, cdata, q, v, tau, st);
      ASSERT_EQ(s, static_cast<cdyn_status>(sx))
          << k << ": " << cdyn_contact_workspace_last_error(c.ws[0]);
      ASSERT_EQ(s, CDYN_OK);
      ASSERT_TRUE(same(qc.data(), q.data(), w.nq)) << "step " << k;
      ASSERT_TRUE(same(vc.data(), v.data(), w.nv)) << "step " << k;
      ASSERT_TRUE(same(lambda.data(), cdata.lambda.data(), c.m)) << "step " << k;
      EXPECT_EQ(rep.status, CDYN_OK);
      EXPECT_EQ(rep.iterations, cdata.result.iterations);
      EXPECT_EQ(rep.converged, 1);
      EXPECT_EQ(rep.primal_residual, cdata.result.residuals.velocity);
      EXPECT_EQ(rep.dual_residual, cdata.result.residuals.cone);
      EXPECT_EQ(rep.complementarity, cdata.result.residuals.complementarity);
      EXPECT_LE(std::max({rep.primal_residual, rep.dual_residual, rep.complementarity}),
                cs.tolerance);
      if (lambda.cwiseAbs().maxCoeff() > 0.0) ++contactSteps;
    }
    EXPECT_GT(contactSteps, 100);  // the feet did land
    // Frames and gaps of the last step: [t1 t2 n] orthonormal with n = +z, gaps as C++.
    std::vector<double> R(9 * c.nc), gap(c.nc), vel(c.m);
    ASSERT_EQ(cdyn_contact_frames(c.problem, c.ws[0], R.data(), 9 * c.nc, gap.data(), c.nc,
                                  vel.data(), c.m),
              CDYN_OK);
    for (int i = 0; i < c.nc; ++i) {
      EXPECT_TRUE(same(R.data() + 9 * i, cdata.frame[i].data(), 9));
      EXPECT_EQ(gap[i], cdata.gap[i]);
      EXPECT_EQ(R[9 * i + 8], 1.0);  // n = world z
    }
    EXPECT_TRUE(same(vel.data(), cdata.velocity.data(), c.m));
  }
}

TEST(CapiContact, SolveEqualsTheSolverOnTheAssembledProblem) {
  Walker w;
  CProblem c(w, 1);
  cd::ContactProblem problem(w.cm);
  addFeetCxx(w, problem, 0.8);
  cd::ClusterData data(w.cm);
  cd::ContactData cdata(w.cm, problem);
  cd::VecX q, v;
  w.state(0.25, 0.0, q, v);  // the feet in the ground
  const cd::VecX tau = cd::VecX::Zero(w.ny);
  cd::StepSettings st;
  st.warmStart = false;
  cdyn_contact_settings cs = settingsOf(st.beta, CDYN_CONTACT_ADMM);
  cs.max_iterations = st.contact.maxIterations;
  cs.warm_start = 0;
  ASSERT_EQ(cd::assembleContactProblem(w.cm, data, problem, cdata, q, v, tau, st), cd::Status::Ok);
  cdata.lambda.setZero();
  ASSERT_EQ(cd::solveContactAdmm(cdata.G, cdata.g, cdata.blocks, st.contact, cdata.solver,
                                 cdata.lambda, cdata.result),
            cd::Status::Ok);
  cd::VecX lambda(c.m);
  cdyn_contact_report rep;
  ASSERT_EQ(cdyn_contact_solve(c.problem, c.ws[0], q.data(), w.nq, v.data(), w.nv, tau.data(), w.ny,
                               &cs, lambda.data(), c.m, &rep),
            CDYN_OK)
      << cdyn_contact_workspace_last_error(c.ws[0]);
  EXPECT_TRUE(same(lambda.data(), cdata.lambda.data(), c.m));
  EXPECT_EQ(rep.active_contacts, 4);
  std::vector<double> gap(c.nc);
  ASSERT_EQ(cdyn_contact_frames(c.problem, c.ws[0], nullptr, 0, gap.data(), c.nc, nullptr, 0),
            CDYN_OK);
  for (int i = 0; i < c.nc; ++i) EXPECT_LT(gap[i], 0.0) << "foot " << i;
  // The velocities after the solve (J y_dot_free + G lambda) are those of the step with the
  // same impulses (J y_dot+ from a second CE-ABA pass).
  std::vector<double> velSolve(c.m), velStep(c.m);
  ASSERT_EQ(cdyn_contact_frames(c.problem, c.ws[0], nullptr, 0, nullptr, 0, velSolve.data(), c.m),
            CDYN_OK);
  cd::VecX qn(w.nq), vn(w.nv), lambdaStep(c.m);
  ASSERT_EQ(
      cdyn_contact_step(c.problem, c.ws[0], q.data(), w.nq, v.data(), w.nv, tau.data(), w.ny, &cs,
                        qn.data(), w.nq, vn.data(), w.nv, lambdaStep.data(), c.m, nullptr),
      CDYN_OK);
  EXPECT_TRUE(same(lambdaStep.data(), lambda.data(), c.m));
  ASSERT_EQ(cdyn_contact_frames(c.problem, c.ws[0], nullptr, 0, nullptr, 0, velStep.data(), c.m),
            CDYN_OK);
  for (int r = 0; r < c.m; ++r) EXPECT_NEAR(velSolve[r], velStep[r], 1e-10) << "row " << r;
  for (int i = 0; i < c.nc; ++i) EXPECT_GE(velStep[3 * i + 2], 0.0);  // pushed out
  // polish_after and active_set_steps reach the solver: defaults as StepSettings', and a solve
  // with other values (plain ADMM, a polish every 3 iterations) equals solveContactAdmm with
  // the same ContactSolverSettings, bit for bit.
  cdyn_contact_settings defaults;
  ASSERT_EQ(cdyn_contact_settings_default(&defaults), CDYN_OK);
  EXPECT_EQ(defaults.polish_after, st.contact.polishAfter);
  EXPECT_EQ(defaults.active_set_steps, st.contact.activeSetSteps);
  for (const int activeSetSteps : {0, 3}) {
    cs.polish_after = st.contact.polishAfter = 3;
    cs.active_set_steps = st.contact.activeSetSteps = activeSetSteps;
    ASSERT_EQ(cd::assembleContactProblem(w.cm, data, problem, cdata, q, v, tau, st),
              cd::Status::Ok);
    cdata.lambda.setZero();
    ASSERT_EQ(cd::solveContactAdmm(cdata.G, cdata.g, cdata.blocks, st.contact, cdata.solver,
                                   cdata.lambda, cdata.result),
              cd::Status::Ok);
    ASSERT_EQ(cdyn_contact_solve(c.problem, c.ws[0], q.data(), w.nq, v.data(), w.nv, tau.data(),
                                 w.ny, &cs, lambda.data(), c.m, &rep),
              CDYN_OK)
        << cdyn_contact_workspace_last_error(c.ws[0]);
    EXPECT_TRUE(same(lambda.data(), cdata.lambda.data(), c.m)) << activeSetSteps;
    EXPECT_EQ(rep.iterations, cdata.result.iterations) << activeSetSteps;
    if (activeSetSteps == 0) EXPECT_GT(rep.iterations, 0);  // plain ADMM from a cold start
  }
  double normal = 0.0;  // the feet carry at least the weight over the step (plus the push-out)
  for (int i = 0; i < 4; ++i) normal += lambda[3 * i + 2];
  double mass = 0.0;
  cdyn_model_total_mass(w.model, &mass);
  EXPECT_GT(normal, 0.9 * mass * 9.81 * st.dt);
}

TEST(CapiContact, CallerContactsEqualTheCxxProblem) {
  Walker w;
  cdyn_contact_problem* p = nullptr;
  ASSERT_EQ(cdyn_contact_problem_create(w.model, &p), CDYN_OK);
  cd::ContactProblem problem(w.cm);
  for (const char* leg : kLegs) {
    const std::string name = std::string(leg) + "_point";
    ASSERT_EQ(cdyn_contact_problem_add_point(p, name.c_str(), w.body(leg), kCentre, 3, nullptr),
              CDYN_OK);
    problem.addPointContact(name, w.body(leg), cd::Vec3(kCentre[0], kCentre[1], kCentre[2]));
  }
  cdyn_contact_workspace* ws = nullptr;
  ASSERT_EQ(cdyn_contact_workspace_create(p, &ws), CDYN_OK);
  cd::ClusterData data(w.cm);
  cd::ContactData cdata(w.cm, problem);
  // A tilted obstacle normal (not of unit length: normalized by the library), gaps and mu per
  // contact, the same in C and C++.
  std::vector<double> normal, gap, mu;
  for (int i = 0; i < 4; ++i) {
    normal.insert(normal.end(), {0.1, -0.05 * i, 2.0});
    gap.push_back(-0.002 * i);
    mu.push_back(0.3 + 0.1 * i);
    cdata.normal[i] = cd::Vec3(0.1, -0.05 * i, 2.0);
    cdata.gap[i] = gap[i];
    cdata.mu[i] = mu[i];
  }
  ASSERT_EQ(cdyn_contact_set_caller(p, ws, normal.data(), 12, gap.data(), 4, mu.data(), 4),
            CDYN_OK);
  cd::VecX q, v;
  w.state(0.3, 0.05, q, v);
  cd::StepSettings st;
  const cdyn_contact_settings cs = settingsOf(st.beta, CDYN_CONTACT_ADMM);
  st.contact.maxIterations = cs.max_iterations;
  cd::VecX qc = q, vc = v, lambda(12), tau = cd::VecX::Zero(w.ny);
  for (int k = 0; k < 10; ++k) {
    ASSERT_EQ(cdyn_contact_step(p, ws, qc.data(), w.nq, vc.data(), w.nv, tau.data(), w.ny, &cs,
                                qc.data(), w.nq, vc.data(), w.nv, lambda.data(), 12, nullptr),
              CDYN_OK)
        << cdyn_contact_workspace_last_error(ws);
    ASSERT_EQ(cd::contactStep(w.cm, data, problem, cdata, q, v, tau, st), cd::Status::Ok);
    ASSERT_TRUE(same(qc.data(), q.data(), w.nq)) << k;
    ASSERT_TRUE(same(lambda.data(), cdata.lambda.data(), 12)) << k;
  }
  EXPECT_GT(lambda[2 + 3 * 3], 0.0);  // the most penetrating contact pushes
  // Its frame: n along the given normal.
  std::vector<double> R(36);
  ASSERT_EQ(cdyn_contact_frames(p, ws, R.data(), 36, nullptr, 0, nullptr, 0), CDYN_OK);
  const cd::Vec3 n = cd::Vec3(0.1, -0.15, 2.0).normalized();
  EXPECT_NEAR((cd::Vec3(R[27 + 6], R[27 + 7], R[27 + 8]) - n).norm(), 0.0, 1e-15);
  // Invalid caller data is refused before any is stored.
  mu[1] = -1.0;
  EXPECT_EQ(cdyn_contact_set_caller(p, ws, normal.data(), 12, gap.data(), 4, mu.data(), 4),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(cdyn_contact_workspace_last_error(ws), "mu"), nullptr);
  cdyn_contact_workspace_free(ws);
  cdyn_contact_problem_free(p);
}

TEST(CapiContact, PatchContactsEqualTheCxxProblem) {
  // Patch feet (rolling on lf, torsional on rf, point on lh), a rolling caller contact on rh
  // with its coefficients, and bilateral rows added afterwards (the rebuilt problem keeps the
  // cones): steps equal contactStep bit for bit; bad coefficients and cones are refused.
  Walker w(true);
  cdyn_contact_problem* p = nullptr;
  ASSERT_EQ(cdyn_contact_problem_create(w.model, &p), CDYN_OK);
  cd::ConstraintSet loops = cd::cutLoopConstraints(w.cm);
  cd::ContactProblem problem(w.cm, &loops);
  const double torsion[3] = {0.0, 0.01, 0.0}, rolling[3] = {0.02, 0.0, 0.0};
  for (int i = 0; i < 3; ++i) {
    const std::string name = std::string(kLegs[i]) + "_foot";
    ASSERT_EQ(cdyn_contact_problem_add_patch_foot(p, name.c_str(), w.body(kLegs[i]), kCentre, 3,
                                                  0.02, 0.8, torsion[i], rolling[i], nullptr),
              CDYN_OK)
        << cdyn_contact_problem_last_error(p);
    problem.addGroundFoot(name, w.body(kLegs[i]), cd::Vec3(kCentre[0], kCentre[1], kCentre[2]),
                          0.02, 0.8, torsion[i], rolling[i]);
  }
  const cd::Vec3 point(0.03, 0.0, -0.07);
  ASSERT_EQ(cdyn_contact_problem_add_patch_point(p, "rh_patch", w.body("rh"), point.data(), 3,
                                                 CDYN_CONE_ROLLING, nullptr),
            CDYN_OK);
  problem.addPointContact("rh_patch", w.body("rh"), point, cd::ConeType::Rolling);
  EXPECT_EQ(cdyn_contact_problem_add_patch_point(p, "bad", 0, point.data(), 3, 1, nullptr),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(cdyn_contact_problem_last_error(p), "cone"), nullptr);
  EXPECT_EQ(
      cdyn_contact_problem_add_patch_foot(p, "bad", 0, kCentre, 3, 0.0, 0.5, -1.0, 0.0, nullptr),
      CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(cdyn_contact_problem_last_error(p), "mu_torsion"), nullptr);
  cdyn_constraint_set* set = nullptr;
  ASSERT_EQ(cdyn_constraint_set_create_cut_loops(w.model, &set), CDYN_OK);
  ASSERT_EQ(cdyn_contact_problem_add_bilateral(p, set), CDYN_OK)
      << cdyn_contact_problem_last_error(p);
  cdyn_constraint_set_free(set);
  int nc = 0, m = 0;
  cdyn_contact_problem_sizes(p, &nc, nullptr, &m);
  ASSERT_EQ(nc, 4);
  ASSERT_EQ(m, problem.rows().rows());
  ASSERT_EQ(m, problem.bilateralRows() + 6 + 6 + 3 + 6);
  cdyn_contact_workspace* ws = nullptr;
  ASSERT_EQ(cdyn_contact_workspace_create(p, &ws), CDYN_OK);
  cd::ClusterData data(w.cm);
  cd::ContactData cdata(w.cm, problem);
  std::vector<double> normal(12, 0.0), gap(4, 0.0), mu(4, 0.0), tor(4, 0.0), roll(4, 0.0);
  normal[11] = 1.0;
  gap[3] = -0.001;
  mu[3] = 0.6;
  tor[3] = 0.005;
  roll[3] = 0.01;
  cdata.gap[3] = gap[3];
  cdata.mu[3] = mu[3];
  cdata.muTorsion[3] = tor[3];
  cdata.muRolling[3] = roll[3];
  ASSERT_EQ(cdyn_contact_set_caller(p, ws, normal.data(), 12, gap.data(), 4, mu.data(), 4),
            CDYN_OK);
  ASSERT_EQ(cdyn_contact_set_caller_patch(p, ws, tor.data(), 4, roll.data(), 4), CDYN_OK);
  cd::VecX q, v;
  w.state(0.29, 0.05, q, v);
  cd::StepSettings st;
  const cdyn_contact_settings cs = settingsOf(st.beta, CDYN_CONTACT_ADMM);
  st.contact.maxIterations = cs.max_iterations;
  cd::VecX qc = q, vc = v, lambda(m), tau = cd::VecX::Zero(w.ny);
  int active = 0;
  for (int k = 0; k < 20; ++k) {
    cdyn_contact_report rep;
    const cdyn_status s =
        cdyn_contact_step(p, ws, qc.data(), w.nq, vc.data(), w.nv, tau.data(), w.ny, &cs, qc.data(),
                          w.nq, vc.data(), w.nv, lambda.data(), m, &rep);
    const cd::Status sx = cd::contactStep(w.cm, data, problem, cdata, q, v, tau, st);
    ASSERT_EQ(s, static_cast<cdyn_status>(sx))
        << k << ": " << cdyn_contact_workspace_last_error(ws);
    ASSERT_TRUE(same(qc.data(), q.data(), w.nq)) << k;
    ASSERT_TRUE(same(vc.data(), v.data(), w.nv)) << k;
    ASSERT_TRUE(same(lambda.data(), cdata.lambda.data(), m)) << k;
    active = std::max(active, rep.active_contacts);
  }
  EXPECT_EQ(active, 4);
  // Invalid coefficients are refused before any is stored.
  roll[3] = -1.0;
  EXPECT_EQ(cdyn_contact_set_caller_patch(p, ws, tor.data(), 4, roll.data(), 4),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(cdyn_contact_workspace_last_error(ws), "mu_rolling"), nullptr);
  EXPECT_EQ(cdyn_contact_set_caller_patch(p, ws, tor.data(), 3, roll.data(), 4),
            CDYN_ERR_INVALID_SIZE);
  cdyn_contact_workspace_free(ws);
  cdyn_contact_problem_free(p);
}

TEST(CapiContact, BilateralRowsAddedAfterTheFeetEqualTheCxxProblem) {
  Walker w(/*cutLoops=*/true);
  cdyn_constraint_set* loops = nullptr;
  ASSERT_EQ(cdyn_constraint_set_create_cut_loops(w.model, &loops), CDYN_OK);
  cdyn_contact_problem* p = nullptr;
  ASSERT_EQ(cdyn_contact_problem_create(w.model, &p), CDYN_OK);
  addFeetC(w, p, 0.8);
  ASSERT_EQ(cdyn_contact_problem_add_bilateral(p, loops), CDYN_OK)
      << cdyn_contact_problem_last_error(p);
  int nc = 0, nb = 0, m = 0;
  ASSERT_EQ(cdyn_contact_problem_sizes(p, &nc, &nb, &m), CDYN_OK);
  const cd::ConstraintSet cut = cd::cutLoopConstraints(w.cm);
  EXPECT_EQ(nc, 4);
  EXPECT_EQ(nb, cut.rows());
  EXPECT_EQ(m, cut.rows() + 12);
  // The same problem in C++ (bilateral rows given first).
  cd::ContactProblem problem(w.cm, &cut);
  addFeetCxx(w, problem, 0.8);
  cdyn_contact_workspace* ws = nullptr;
  ASSERT_EQ(cdyn_contact_workspace_create(p, &ws), CDYN_OK);
  cd::ClusterData data(w.cm);
  cd::ContactData cdata(w.cm, problem);
  cd::VecX q(w.nq), v = cd::VecX::Zero(w.nv);
  ASSERT_EQ(cdyn_model_reference_configuration(w.model, q.data(), w.nq), CDYN_OK);
  q[2] += 0.27;  // the trunk above the ground, the feet near it
  cd::StepSettings st;
  const cdyn_contact_settings cs = settingsOf(st.beta, CDYN_CONTACT_ADMM);
  st.contact.maxIterations = cs.max_iterations;
  cd::VecX qc = q, vc = v, lambda(m), tau = cd::VecX::Zero(w.ny);
  for (int k = 0; k < 20; ++k) {
    const cdyn_status s =
        cdyn_contact_step(p, ws, qc.data(), w.nq, vc.data(), w.nv, tau.data(), w.ny, &cs, qc.data(),
                          w.nq, vc.data(), w.nv, lambda.data(), m, nullptr);
    const cd::Status sx = cd::contactStep(w.cm, data, problem, cdata, q, v, tau, st);
    ASSERT_EQ(s, static_cast<cdyn_status>(sx)) << cdyn_contact_workspace_last_error(ws);
    ASSERT_TRUE(same(qc.data(), q.data(), w.nq)) << k;
    ASSERT_TRUE(same(lambda.data(), cdata.lambda.data(), m)) << k;
  }
  // The problem is read-only once a workspace exists; the set may go.
  EXPECT_EQ(cdyn_contact_problem_add_bilateral(p, loops), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(cdyn_contact_problem_last_error(p), "workspace"), nullptr);
  EXPECT_EQ(cdyn_constraint_set_free(loops), CDYN_OK);
  EXPECT_EQ(cdyn_contact_problem_free(p), CDYN_ERR_INVALID_ARGUMENT);  // a workspace exists
  cdyn_contact_workspace_free(ws);
  EXPECT_EQ(cdyn_contact_problem_free(p), CDYN_OK);
}

namespace {

/// n states x T steps: the rollout's reference from reset + single steps on one workspace.
struct Rollouts {
  Rollouts(const Walker& w, int m, int n, int T) : n(n), T(T), m(m), nq(w.nq), nv(w.nv), ny(w.ny) {
    q0.resize(n * nq);
    v0.resize(n * nv);
    tau.resize(std::size_t(n) * T * ny);
    for (int i = 0; i < n; ++i) {
      cd::VecX q, v;
      w.state(0.27 + 0.02 + 0.004 * i, 0.02 * i, q, v);
      std::copy_n(q.data(), nq, q0.data() + i * nq);
      std::copy_n(v.data(), nv, v0.data() + i * nv);
    }
    for (std::size_t k = 0; k < tau.size(); ++k) tau[k] = 0.2 * std::sin(0.37 * double(k));
    q.assign(std::size_t(n) * T * nq, 0.0);
    v.assign(std::size_t(n) * T * nv, 0.0);
    lambda.assign(std::size_t(n) * T * m, 0.0);
    reports.resize(std::size_t(n) * T);
  }
  void reference(cdyn_contact_problem* p, cdyn_contact_workspace* ws,
                 const cdyn_contact_settings& s) {
    rq = q, rv = v, rl = lambda;
    for (int i = 0; i < n; ++i) {
      ASSERT_EQ(cdyn_contact_workspace_reset(p, ws), CDYN_OK);
      for (int t = 0; t < T; ++t) {
        const std::size_t k = std::size_t(i) * T + t;
        const double* qi = t == 0 ? &q0[i * nq] : &rq[(k - 1) * nq];
        const double* vi = t == 0 ? &v0[i * nv] : &rv[(k - 1) * nv];
        ASSERT_EQ(cdyn_contact_step(p, ws, qi, nq, vi, nv, &tau[k * ny], ny, &s, &rq[k * nq], nq,
                                    &rv[k * nv], nv, &rl[k * m], m, nullptr),
                  CDYN_OK)
            << cdyn_contact_workspace_last_error(ws);
      }
    }
  }
  bool matches() const {
    return same(q.data(), rq.data(), q.size()) && same(v.data(), rv.data(), v.size()) &&
           same(lambda.data(), rl.data(), lambda.size());
  }
  int n, T, m, nq, nv, ny;
  std::vector<double> q0, v0, tau, q, v, lambda, rq, rv, rl;
  std::vector<cdyn_contact_report> reports;
};

}  // namespace

TEST(CapiContact, RolloutsAreBitIdenticalToSingleSteps) {
  Walker w;
  CProblem c(w, 3);
  const cdyn_contact_settings s = settingsOf(0.2, CDYN_CONTACT_ADMM);
  Rollouts r(w, c.m, 7, 60);
  r.reference(c.problem, c.ws[2], s);
  for (const int nws : {1, 3}) {
    std::fill(r.q.begin(), r.q.end(), 0.0);
    int failed = -2;
    ASSERT_EQ(cdyn_batch_contact_rollout(c.problem, c.ws.data(), nws, r.n, r.T, &s, r.q0.data(),
                                         r.nq, r.v0.data(), r.nv, r.tau.data(), r.ny, r.q.data(),
                                         r.nq, r.v.data(), r.nv, r.lambda.data(), c.m,
                                         r.reports.data(), &failed),
              CDYN_OK)
        << cdyn_contact_workspace_last_error(c.ws[0]);
    EXPECT_EQ(failed, -1);
    EXPECT_TRUE(r.matches()) << nws << " workspaces";
    for (const auto& rep : r.reports) EXPECT_EQ(rep.converged, 1);
  }
  cdyn_pool* pool = nullptr;
  ASSERT_EQ(cdyn_pool_create(w.model, 3, &pool), CDYN_OK);
  std::fill(r.q.begin(), r.q.end(), 0.0);
  ASSERT_EQ(cdyn_pool_contact_rollout(c.problem, pool, c.ws.data(), 3, r.n, r.T, &s, r.q0.data(),
                                      r.nq, r.v0.data(), r.nv, r.tau.data(), r.ny, r.q.data(), r.nq,
                                      r.v.data(), r.nv, r.lambda.data(), c.m, nullptr, nullptr),
            CDYN_OK)
      << cdyn_pool_last_error(pool);
  EXPECT_TRUE(r.matches()) << "pool";
  // The pool wants one workspace per thread.
  EXPECT_EQ(cdyn_pool_contact_rollout(c.problem, pool, c.ws.data(), 2, r.n, r.T, &s, r.q0.data(),
                                      r.nq, r.v0.data(), r.nv, r.tau.data(), r.ny, r.q.data(), r.nq,
                                      r.v.data(), r.nv, nullptr, 0, nullptr, nullptr),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(cdyn_pool_last_error(pool), "nws"), nullptr);
  cdyn_pool_free(pool);
}

TEST(CapiContact, RolloutReportsTheLowestFailedState) {
  Walker w;
  CProblem c(w, 2);
  const cdyn_contact_settings s = settingsOf(0.2, CDYN_CONTACT_ADMM);
  Rollouts r(w, c.m, 6, 10);
  for (const int bad : {4, 2}) r.q0[bad * r.nq + 3] = 2.0;  // not a unit quaternion
  int failed = -2;
  const cdyn_status st = cdyn_batch_contact_rollout(
      c.problem, c.ws.data(), 2, r.n, r.T, &s, r.q0.data(), r.nq, r.v0.data(), r.nv, r.tau.data(),
      r.ny, r.q.data(), r.nq, r.v.data(), r.nv, nullptr, 0, nullptr, &failed);
  EXPECT_NE(st, CDYN_OK);
  EXPECT_EQ(failed, 2);
  EXPECT_NE(std::strstr(cdyn_contact_workspace_last_error(c.ws[0]), "state 2, step 0"), nullptr)
      << cdyn_contact_workspace_last_error(c.ws[0]);
  // The states before it are complete: equal to single steps.
  Rollouts ok(w, c.m, 2, 10);
  std::copy_n(r.tau.data(), ok.tau.size(), ok.tau.data());
  ok.reference(c.problem, c.ws[1], s);
  EXPECT_TRUE(same(r.q.data(), ok.rq.data(), ok.rq.size()));
}

TEST(CapiContact, ArgumentErrorsNameTheArgumentAndLeaveTheWorkspaceUsable) {
  Walker w;
  CProblem c(w, 1);
  cd::VecX q, v;
  w.state(0.3, 0.0, q, v);
  cd::VecX tau = cd::VecX::Zero(w.ny), qo(w.nq), vo(w.nv), lambda(c.m);
  cdyn_contact_workspace* ws = c.ws[0];
  const auto step = [&](const double* qq, int nq, const cdyn_contact_settings* s, int nlambda) {
    return cdyn_contact_step(c.problem, ws, qq, nq, v.data(), w.nv, tau.data(), w.ny, s, qo.data(),
                             w.nq, vo.data(), w.nv, lambda.data(), nlambda, nullptr);
  };
  const auto says = [&](const char* text) {
    return std::strstr(cdyn_contact_workspace_last_error(ws), text) != nullptr;
  };
  EXPECT_EQ(step(q.data(), w.nq + 1, nullptr, c.m), CDYN_ERR_INVALID_SIZE);
  EXPECT_TRUE(says("q has length"));
  EXPECT_EQ(step(nullptr, w.nq, nullptr, c.m), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(step(q.data(), w.nq, nullptr, c.m - 1), CDYN_ERR_INVALID_SIZE);
  EXPECT_TRUE(says("lambda"));
  cdyn_contact_settings s = settingsOf(0.2, CDYN_CONTACT_ADMM);
  s.dt = 0.0;
  EXPECT_EQ(step(q.data(), w.nq, &s, c.m), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(says("settings->dt"));
  s = settingsOf(0.2, 7);
  EXPECT_EQ(step(q.data(), w.nq, &s, c.m), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(says("settings->solver"));
  s = settingsOf(NAN, CDYN_CONTACT_ADMM);
  EXPECT_EQ(step(q.data(), w.nq, &s, c.m), CDYN_ERR_NON_FINITE);
  EXPECT_TRUE(says("settings->beta"));
  s = settingsOf(0.2, CDYN_CONTACT_ADMM);
  s.polish_after = -1;
  EXPECT_EQ(step(q.data(), w.nq, &s, c.m), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(says("settings->polish_after"));
  s = settingsOf(0.2, CDYN_CONTACT_ADMM);
  s.active_set_steps = -2;
  EXPECT_EQ(step(q.data(), w.nq, &s, c.m), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(says("settings->active_set_steps"));
  cd::VecX qbad = q;
  qbad[0] = NAN;
  EXPECT_EQ(step(qbad.data(), w.nq, nullptr, c.m), CDYN_ERR_NON_FINITE);
  // Still usable: the same step as a fresh workspace.
  ASSERT_EQ(cdyn_contact_workspace_reset(c.problem, ws), CDYN_OK);
  ASSERT_EQ(step(q.data(), w.nq, nullptr, c.m), CDYN_OK) << cdyn_contact_workspace_last_error(ws);
  CProblem fresh(w, 1);
  cd::VecX qf(w.nq), vf(w.nv);
  ASSERT_EQ(
      cdyn_contact_step(fresh.problem, fresh.ws[0], q.data(), w.nq, v.data(), w.nv, tau.data(),
                        w.ny, nullptr, qf.data(), w.nq, vf.data(), w.nv, nullptr, 0, nullptr),
      CDYN_OK);
  EXPECT_TRUE(same(qf.data(), qo.data(), w.nq));
  // Handles: the workspace of another problem, NULL.
  EXPECT_EQ(cdyn_contact_step(fresh.problem, ws, q.data(), w.nq, v.data(), w.nv, tau.data(), w.ny,
                              nullptr, qo.data(), w.nq, vo.data(), w.nv, nullptr, 0, nullptr),
            CDYN_ERR_WORKSPACE_MISMATCH);
  EXPECT_EQ(cdyn_contact_step(c.problem, nullptr, q.data(), w.nq, v.data(), w.nv, tau.data(), w.ny,
                              nullptr, qo.data(), w.nq, vo.data(), w.nv, nullptr, 0, nullptr),
            CDYN_ERR_NULL_POINTER);
  // Caller data: lengths and values checked before any is stored.
  std::vector<double> n3(3 * c.nc, 0.0), gap(c.nc, 0.0), mu(c.nc, 0.5);
  EXPECT_EQ(cdyn_contact_set_caller(c.problem, ws, n3.data(), 3, gap.data(), c.nc, mu.data(), c.nc),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_TRUE(says("normal"));
  // Building a problem: bad body, duplicate name, zero normal, negative radius.
  cdyn_contact_problem* p = nullptr;
  ASSERT_EQ(cdyn_contact_problem_create(w.model, &p), CDYN_OK);
  const auto psays = [&](const char* text) {
    return std::strstr(cdyn_contact_problem_last_error(p), text) != nullptr;
  };
  EXPECT_EQ(cdyn_contact_problem_add_foot(p, "a", 1000, kCentre, 3, 0.0, 0.5, nullptr),
            CDYN_ERR_INVALID_INDEX);
  EXPECT_TRUE(psays("body"));
  EXPECT_EQ(cdyn_contact_problem_add_foot(p, "a", 0, kCentre, 2, 0.0, 0.5, nullptr),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_TRUE(psays("centre"));
  EXPECT_EQ(cdyn_contact_problem_add_foot(p, "a", 0, kCentre, 3, -1.0, 0.5, nullptr),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(psays("radius"));
  EXPECT_EQ(cdyn_contact_problem_add_point(p, "a", 0, kCentre, 3, nullptr), CDYN_OK);
  EXPECT_EQ(cdyn_contact_problem_add_point(p, "a", 0, kCentre, 3, nullptr),
            CDYN_ERR_INVALID_ARGUMENT);
  const double zero[3] = {0, 0, 0};
  EXPECT_EQ(cdyn_contact_problem_set_ground(p, zero, 3, 0.0), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(psays("normal"));
  EXPECT_EQ(cdyn_contact_problem_free(p), CDYN_OK);
}

TEST(CapiContact, ComputeCallsDoNotAllocate) {
#ifdef CLUSTERDYN_SANITIZED
  GTEST_SKIP() << "no allocation counter in sanitized builds";
#endif
  Walker w;
  CProblem c(w, 2);
  cd::VecX q, v;
  w.state(0.27 + 0.005 + 0.02, 0.05, q, v);
  cd::VecX tau = cd::VecX::Constant(w.ny, 0.1), lambda(c.m), qbad = q;
  qbad[3] = 3.0;
  const cdyn_contact_settings s = settingsOf(0.2, CDYN_CONTACT_ADMM);
  const cdyn_contact_settings sp = settingsOf(0.2, CDYN_CONTACT_PGS);
  Rollouts r(w, c.m, 3, 20);
  cdyn_pool* pool = nullptr;
  ASSERT_EQ(cdyn_pool_create(w.model, 2, &pool), CDYN_OK);
  cdyn_contact_report rep;
  std::vector<double> R(9 * c.nc), gap(c.nc);
  int failed = 0;
  long allocations = 0;
  {
    cd::test::AllocationScope scope;
    for (int k = 0; k < 200; ++k) {
      cdyn_contact_step(c.problem, c.ws[0], q.data(), w.nq, v.data(), w.nv, tau.data(), w.ny,
                        k % 2 ? &s : &sp, q.data(), w.nq, v.data(), w.nv, lambda.data(), c.m, &rep);
      cdyn_contact_frames(c.problem, c.ws[0], R.data(), 9 * c.nc, gap.data(), c.nc, nullptr, 0);
    }
    cdyn_contact_solve(c.problem, c.ws[0], q.data(), w.nq, v.data(), w.nv, tau.data(), w.ny, &s,
                       lambda.data(), c.m, &rep);
    cdyn_contact_step(c.problem, c.ws[0], qbad.data(), w.nq, v.data(), w.nv, tau.data(), w.ny, &s,
                      q.data(), w.nq, v.data(), w.nv, nullptr, 0, &rep);  // fails
    cdyn_contact_workspace_reset(c.problem, c.ws[0]);
    cdyn_batch_contact_rollout(c.problem, c.ws.data(), 1, r.n, r.T, &s, r.q0.data(), r.nq,
                               r.v0.data(), r.nv, r.tau.data(), r.ny, r.q.data(), r.nq, r.v.data(),
                               r.nv, r.lambda.data(), c.m, r.reports.data(), &failed);
    cdyn_pool_contact_rollout(c.problem, pool, c.ws.data(), 2, r.n, r.T, &s, r.q0.data(), r.nq,
                              r.v0.data(), r.nv, r.tau.data(), r.ny, r.q.data(), r.nq, r.v.data(),
                              r.nv, r.lambda.data(), c.m, r.reports.data(), &failed);
    allocations = scope.stop();
  }
  EXPECT_TRUE(cd::test::noAllocation(allocations, "contact steps, solves and rollouts"));
  EXPECT_EQ(failed, -1);
  EXPECT_EQ(rep.status, CDYN_ERR_NOT_UNIT_QUATERNION);
  cdyn_pool_free(pool);
}
