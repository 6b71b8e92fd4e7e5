// Batched constrained dynamics of the C API (cdyn_batch_constrained_dynamics,
// cdyn_pool_constrained_dynamics): every state's ydd, qdd, lambda and result must equal the
// single call (cdyn_constrained_aba / cdyn_prox_pv / cdyn_constrained_dynamics_dense) bit for bit,
// for both layouts, any number of threads and on a pool; states that do not converge still write
// their outputs; a failed state gives the lowest index; argument errors come before any state
// with a message; the pool and the one-workspace batch do not allocate.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "clusterdyn.h"
#include "test_util.hpp"

namespace {

namespace cd = clusterdyn;

const char* const kFeet[4] = {"lf_foot", "rf_foot", "lh_foot", "rh_foot"};

/// A model, a constraint set and workspaces, freed in the right order.
struct Rig {
  cdyn_model* m = nullptr;
  cdyn_constraint_set* set = nullptr;
  std::vector<cdyn_constraint_workspace*> ws;
  cdyn_workspace* plain = nullptr;  ///< for the loop closure of the random states
  int nq = 0, nv = 0, ny = 0, nyq = 0, nb = 0, rows = 0;
  ~Rig() {
    for (cdyn_constraint_workspace* w : ws) EXPECT_EQ(cdyn_constraint_workspace_free(w), CDYN_OK);
    EXPECT_EQ(cdyn_constraint_set_free(set), CDYN_OK);
    EXPECT_EQ(cdyn_workspace_free(plain), CDYN_OK);
    EXPECT_EQ(cdyn_model_free(m), CDYN_OK);
  }
};

/// Loads `file` (models/), builds its set (foot contacts of the quadruped, or the cut loops)
/// and `nws` constraint workspaces.
void setUp(Rig& s, const char* file, bool cutLoops, int nws) {
  char err[512];
  const std::string path = cd::test::modelsPath(file);
  ASSERT_EQ(cdyn_model_load(CDYN_ABI_VERSION, path.c_str(), cutLoops ? CDYN_LOAD_CUT_LOOPS : 0u,
                            nullptr, &s.m, err, sizeof err),
            CDYN_OK)
      << err;
  if (cutLoops) {
    ASSERT_EQ(cdyn_constraint_set_create_cut_loops(s.m, &s.set), CDYN_OK);
  } else {
    ASSERT_EQ(cdyn_constraint_set_create(s.m, &s.set), CDYN_OK);
    for (const char* foot : kFeet)
      ASSERT_EQ(cdyn_constraint_set_add_contact(s.set, foot, CDYN_CONSTRAINT_POINT,
                                                CDYN_LOCAL_WORLD_ALIGNED, nullptr, nullptr),
                CDYN_OK)
          << cdyn_constraint_set_last_error(s.set);
  }
  s.ws.assign(nws, nullptr);
  for (auto& w : s.ws) ASSERT_EQ(cdyn_constraint_workspace_create(s.m, s.set, &w), CDYN_OK);
  ASSERT_EQ(cdyn_workspace_create(s.m, &s.plain), CDYN_OK);
  cdyn_model_nq(s.m, &s.nq);
  cdyn_model_nv(s.m, &s.nv);
  cdyn_model_ny(s.m, &s.ny);
  cdyn_model_nyq(s.m, &s.nyq);
  cdyn_model_nbodies(s.m, &s.nb);
  cdyn_constraint_set_nrows(s.set, &s.rows);
  ASSERT_GT(s.rows, 0);
}

/// n random closed states, row-major: q (n x nq), v (n x nv), tau (n x ny), fext (n x 6 nb).
struct States {
  int n = 0;
  std::vector<double> q, v, tau, fext;
};

States randomStates(const Rig& s, int n, unsigned seed) {
  States st;
  st.n = n;
  st.q.resize(static_cast<size_t>(n) * s.nq);
  st.v.resize(static_cast<size_t>(n) * s.nv);
  st.tau.resize(static_cast<size_t>(n) * s.ny);
  st.fext.resize(static_cast<size_t>(n) * 6 * s.nb);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  // The reference configuration moved along a random velocity, projected onto the loops.
  std::vector<double> qref(s.nq), dq(s.nv), q(s.nq), v(s.nv);
  cdyn_model_reference_configuration(s.m, qref.data(), s.nq);
  for (int i = 0; i < n; ++i) {
    int attempt = 0;
    for (; attempt < 100; ++attempt) {
      for (int k = 0; k < s.nv; ++k) dq[k] = 0.3 * u(rng), v[k] = u(rng);
      if (cdyn_integrate(s.m, s.plain, qref.data(), s.nq, dq.data(), s.nv, 1.0, q.data(), s.nq) ==
              CDYN_OK &&
          cdyn_project_to_constraints(s.m, s.plain, q.data(), s.nq, v.data(), s.nv, &st.q[i * s.nq],
                                      s.nq, &st.v[i * s.nv], s.nv) == CDYN_OK)
        break;
    }
    EXPECT_LT(attempt, 100) << "no closed state found";
    for (int k = 0; k < s.ny; ++k) st.tau[i * s.ny + k] = 5.0 * u(rng);
    for (int k = 0; k < 6 * s.nb; ++k) st.fext[i * 6 * s.nb + k] = u(rng);
  }
  return st;
}

/// Row-major n x len -> column-major (element j of state i at i + j n).
std::vector<double> toColMajor(const std::vector<double>& a, int n, int len) {
  std::vector<double> b(a.size());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < len; ++j) b[i + j * n] = a[i * len + j];
  return b;
}
std::vector<double> toRowMajor(const std::vector<double>& b, int n, int len) {
  std::vector<double> a(b.size());
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < len; ++j) a[i * len + j] = b[i + j * n];
  return a;
}

/// Outputs of n states, row-major.
struct Outputs {
  std::vector<double> ydd, qdd, lambda;
  std::vector<cdyn_proximal_result> results;
  std::vector<int> status;
};

Outputs sized(const Rig& s, int n) {
  Outputs o;
  o.ydd.assign(static_cast<size_t>(n) * s.ny, -7.0);
  o.qdd.assign(static_cast<size_t>(n) * s.nv, -7.0);
  o.lambda.assign(static_cast<size_t>(n) * s.rows, -7.0);
  o.results.assign(n, cdyn_proximal_result{-1, -1, -1.0, -1.0, -1});
  o.status.assign(n, -1);
  return o;
}

using SolveFn = cdyn_status (*)(const cdyn_constraint_set*, cdyn_constraint_workspace*,
                                const double*, const double*, const double*, const double*,
                                const cdyn_proximal_settings*, double*, double*, double*, int,
                                cdyn_proximal_result*);
SolveFn single(int solver) {
  return solver == CDYN_SOLVER_CONSTRAINED_ABA ? cdyn_constrained_aba
         : solver == CDYN_SOLVER_PROX_PV       ? cdyn_prox_pv
                                               : cdyn_constrained_dynamics_dense;
}

/// The single-state calls on one workspace, state after state.
Outputs singleCalls(const Rig& s, const States& st, int solver,
                    const cdyn_proximal_settings* settings, bool withFext) {
  Outputs o = sized(s, st.n);
  for (int i = 0; i < st.n; ++i)
    o.status[i] =
        single(solver)(s.set, s.ws[0], &st.q[i * s.nq], &st.v[i * s.nv], &st.tau[i * s.ny],
                       withFext ? &st.fext[i * 6 * s.nb] : nullptr, settings, &o.ydd[i * s.ny],
                       &o.qdd[i * s.nv], &o.lambda[i * s.rows], s.rows, &o.results[i]);
  return o;
}

/// The batch call (pool: when given, on the pool with all of s.ws) in `layout`; outputs
/// returned row-major.
cdyn_status batch(const Rig& s, const States& st, int solver,
                  const cdyn_proximal_settings* settings, bool withFext, int layout, int nws,
                  cdyn_pool* pool, Outputs& out, int* failed) {
  out = sized(s, st.n);
  const int n = st.n;
  const bool col = layout == CDYN_BATCH_COL_MAJOR;
  std::vector<double> q = col ? toColMajor(st.q, n, s.nq) : st.q;
  std::vector<double> v = col ? toColMajor(st.v, n, s.nv) : st.v;
  std::vector<double> tau = col ? toColMajor(st.tau, n, s.ny) : st.tau;
  std::vector<double> f = col ? toColMajor(st.fext, n, 6 * s.nb) : st.fext;
  cdyn_status r;
  if (pool)
    r = cdyn_pool_constrained_dynamics(
        s.set, pool, s.ws.data(), static_cast<int>(s.ws.size()), n, layout, solver, q.data(),
        v.data(), tau.data(), withFext ? f.data() : nullptr, settings, out.ydd.data(),
        out.qdd.data(), out.lambda.data(), s.rows, out.results.data(), failed);
  else
    r = cdyn_batch_constrained_dynamics(s.set, s.ws.data(), nws, n, layout, solver, q.data(),
                                        v.data(), tau.data(), withFext ? f.data() : nullptr,
                                        settings, out.ydd.data(), out.qdd.data(), out.lambda.data(),
                                        s.rows, out.results.data(), failed);
  if (col) {
    out.ydd = toRowMajor(out.ydd, n, s.ny);
    out.qdd = toRowMajor(out.qdd, n, s.nv);
    out.lambda = toRowMajor(out.lambda, n, s.rows);
  }
  return r;
}

::testing::AssertionResult sameBits(const std::vector<double>& a, const std::vector<double>& b,
                                    size_t from, size_t to, const char* what) {
  for (size_t i = from; i < to; ++i)
    if (std::memcmp(&a[i], &b[i], sizeof(double)) != 0)
      return ::testing::AssertionFailure()
             << what << "[" << i << "]: batch " << a[i] << " vs single " << b[i];
  return ::testing::AssertionSuccess();
}

/// States [0, upto) of the batch equal the single calls, bit for bit, results included.
void expectSameStates(const Rig& s, const Outputs& b, const Outputs& ref, int upto,
                      const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_TRUE(sameBits(b.ydd, ref.ydd, 0, static_cast<size_t>(upto) * s.ny, "ydd"));
  EXPECT_TRUE(sameBits(b.qdd, ref.qdd, 0, static_cast<size_t>(upto) * s.nv, "qdd"));
  EXPECT_TRUE(sameBits(b.lambda, ref.lambda, 0, static_cast<size_t>(upto) * s.rows, "lambda"));
  for (int i = 0; i < upto; ++i) {
    EXPECT_EQ(b.results[i].status, ref.results[i].status) << "state " << i;
    EXPECT_EQ(b.results[i].iterations, ref.results[i].iterations) << "state " << i;
    EXPECT_EQ(b.results[i].converged, ref.results[i].converged) << "state " << i;
    EXPECT_EQ(std::memcmp(&b.results[i].residual, &ref.results[i].residual, sizeof(double)), 0)
        << "state " << i;
  }
}

const char* solverName(int solver) {
  return solver == CDYN_SOLVER_CONSTRAINED_ABA ? "constrainedABA"
         : solver == CDYN_SOLVER_PROX_PV       ? "proxPV"
                                               : "dense";
}

/// Every way of running the batch against the single calls, on one set.
void checkAllWays(const char* file, bool cutLoops, const std::vector<int>& solvers) {
  Rig s;
  setUp(s, file, cutLoops, 3);
  const States st = randomStates(s, 37, 11);  // 37: chunks do not divide it
  cdyn_pool* pool = nullptr;
  ASSERT_EQ(cdyn_pool_create(s.m, 3, &pool), CDYN_OK);
  cdyn_proximal_settings settings;
  cdyn_proximal_settings_default(&settings);
  for (int solver : solvers) {
    for (bool withFext : {false, true}) {
      const Outputs ref = singleCalls(s, st, solver, &settings, withFext);
      for (int i = 0; i < st.n; ++i)
        ASSERT_EQ(ref.status[i], CDYN_OK) << solverName(solver) << " state " << i << ": "
                                          << cdyn_constraint_workspace_last_error(s.ws[0]);
      for (int layout : {CDYN_BATCH_ROW_MAJOR, CDYN_BATCH_COL_MAJOR}) {
        for (int way = 0; way < 3; ++way) {  // 1 workspace, 3 workspaces, the pool
          const int nws = way == 0 ? 1 : 3;
          Outputs b;
          int failed = 99;
          const cdyn_status r = batch(s, st, solver, way == 2 ? nullptr : &settings, withFext,
                                      layout, nws, way == 2 ? pool : nullptr, b, &failed);
          const std::string what = std::string(file) + " " + solverName(solver) +
                                   (withFext ? " fext" : "") + " layout " + std::to_string(layout) +
                                   " way " + std::to_string(way);
          ASSERT_EQ(r, CDYN_OK) << what << ": "
                                << (way == 2 ? cdyn_pool_last_error(pool)
                                             : cdyn_constraint_workspace_last_error(s.ws[0]));
          EXPECT_EQ(failed, -1) << what;
          expectSameStates(s, b, ref, st.n, what);
        }
      }
    }
  }
  EXPECT_EQ(cdyn_pool_free(pool), CDYN_OK);
}

TEST(CApiConstraintsBatch, ContactsBitIdenticalToSingleCalls) {
  checkAllWays("cd_quadruped.urdf", false,
               {CDYN_SOLVER_CONSTRAINED_ABA, CDYN_SOLVER_PROX_PV, CDYN_SOLVER_DENSE});
}

TEST(CApiConstraintsBatch, CutLoopsBitIdenticalToSingleCalls) {
  checkAllWays("cd_four_bar.urdf", true, {CDYN_SOLVER_PROX_PV, CDYN_SOLVER_DENSE});
}

TEST(CApiConstraintsBatch, NotConvergedStatesWriteTheirOutputs) {
  Rig s;
  setUp(s, "cd_quadruped.urdf", false, 2);
  const States st = randomStates(s, 25, 5);
  cdyn_proximal_settings settings;
  cdyn_proximal_settings_default(&settings);
  settings.max_iterations = 0;  // the single augmented pass: above 1e-14 on most states
  settings.tolerance = 1e-14;
  const Outputs ref = singleCalls(s, st, CDYN_SOLVER_CONSTRAINED_ABA, &settings, false);
  int lowest = -1, notConverged = 0;
  for (int i = 0; i < st.n; ++i) {
    ASSERT_TRUE(ref.status[i] == CDYN_OK || ref.status[i] == CDYN_ERR_NOT_CONVERGED);
    if (ref.status[i] == CDYN_ERR_NOT_CONVERGED) {
      ++notConverged;
      if (lowest < 0) lowest = i;
    }
  }
  ASSERT_GT(notConverged, 0) << "the settings must leave some state unconverged";
  for (int layout : {CDYN_BATCH_ROW_MAJOR, CDYN_BATCH_COL_MAJOR}) {
    Outputs b;
    int failed = 99;
    EXPECT_EQ(
        batch(s, st, CDYN_SOLVER_CONSTRAINED_ABA, &settings, false, layout, 2, nullptr, b, &failed),
        CDYN_ERR_NOT_CONVERGED);
    EXPECT_EQ(failed, lowest);
    expectSameStates(s, b, ref, st.n, "layout " + std::to_string(layout));
    for (int i = 0; i < st.n; ++i)
      for (int k = 0; k < s.ny; ++k) ASSERT_TRUE(std::isfinite(b.ydd[i * s.ny + k]));
  }
}

TEST(CApiConstraintsBatch, FailedStateGivesTheLowestIndexAndMessage) {
  Rig s;
  setUp(s, "cd_quadruped.urdf", false, 3);
  States st = randomStates(s, 30, 7);
  const Outputs ref = singleCalls(s, st, CDYN_SOLVER_PROX_PV, nullptr, false);
  st.v[20 * s.nv + 2] = std::numeric_limits<double>::quiet_NaN();
  st.v[9 * s.nv + 1] = std::numeric_limits<double>::infinity();
  cdyn_pool* pool = nullptr;
  ASSERT_EQ(cdyn_pool_create(s.m, 3, &pool), CDYN_OK);
  for (int way = 0; way < 2; ++way) {
    for (int layout : {CDYN_BATCH_ROW_MAJOR, CDYN_BATCH_COL_MAJOR}) {
      Outputs b;
      int failed = 99;
      const cdyn_status r = batch(s, st, CDYN_SOLVER_PROX_PV, nullptr, false, layout, 3,
                                  way == 1 ? pool : nullptr, b, &failed);
      EXPECT_EQ(r, CDYN_ERR_NON_FINITE);
      EXPECT_EQ(failed, 9);
      const std::string msg =
          way == 1 ? cdyn_pool_last_error(pool) : cdyn_constraint_workspace_last_error(s.ws[0]);
      EXPECT_NE(msg.find("v[1]"), std::string::npos) << msg;
      expectSameStates(s, b, ref, 9, "before the failed state");
    }
  }
  EXPECT_EQ(cdyn_pool_free(pool), CDYN_OK);
}

TEST(CApiConstraintsBatch, ArgumentErrorsBeforeAnyState) {
  Rig s;
  setUp(s, "cd_quadruped.urdf", false, 2);
  const States st = randomStates(s, 4, 3);
  Outputs o = sized(s, st.n);
  cdyn_proximal_settings settings;
  cdyn_proximal_settings_default(&settings);
  cdyn_constraint_workspace* const* ws = s.ws.data();
  auto call = [&](cdyn_constraint_workspace* const* w, int nws, int n, int layout, int solver,
                  const double* q, const cdyn_proximal_settings* ps, int m, int* failed) {
    return cdyn_batch_constrained_dynamics(s.set, w, nws, n, layout, solver, q, st.v.data(),
                                           st.tau.data(), nullptr, ps, o.ydd.data(), nullptr,
                                           o.lambda.data(), m, nullptr, failed);
  };
  auto message = [&] { return std::string(cdyn_constraint_workspace_last_error(s.ws[0])); };
  const int P = CDYN_SOLVER_PROX_PV, R = CDYN_BATCH_ROW_MAJOR;
  int failed = 99;
  cdyn_proximal_settings warm = settings;
  warm.warm_start = 1;
  EXPECT_EQ(call(ws, 2, 4, R, P, st.q.data(), &warm, s.rows, &failed), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(failed, -1);
  EXPECT_NE(message().find("warm_start"), std::string::npos) << message();
  cdyn_proximal_settings badMu = settings;
  badMu.mu = -1.0;
  EXPECT_EQ(call(ws, 2, 4, R, P, st.q.data(), &badMu, s.rows, nullptr), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message().find("mu"), std::string::npos) << message();
  EXPECT_EQ(call(ws, 2, 4, R, P, st.q.data(), &settings, s.rows + 1, nullptr),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_NE(message().find("row count"), std::string::npos) << message();
  EXPECT_EQ(call(ws, 2, 4, R, P, nullptr, &settings, s.rows, nullptr), CDYN_ERR_NULL_POINTER);
  EXPECT_NE(message().find("q is NULL"), std::string::npos) << message();
  EXPECT_EQ(call(ws, 2, 4, R, 7, st.q.data(), &settings, s.rows, nullptr),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message().find("solver 7"), std::string::npos) << message();
  EXPECT_EQ(call(ws, 2, -1, R, P, st.q.data(), &settings, s.rows, nullptr), CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(call(ws, 2, 4, 5, P, st.q.data(), &settings, s.rows, nullptr),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(call(ws, 0, 4, R, P, st.q.data(), &settings, s.rows, nullptr),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(call(nullptr, 2, 4, R, P, st.q.data(), &settings, s.rows, nullptr),
            CDYN_ERR_NULL_POINTER);
  cdyn_constraint_workspace* twice[2] = {s.ws[0], s.ws[0]};
  EXPECT_EQ(call(twice, 2, 4, R, P, st.q.data(), &settings, s.rows, nullptr),
            CDYN_ERR_INVALID_ARGUMENT);
  // Nothing was written by any of them.
  for (double x : o.ydd) EXPECT_EQ(x, -7.0);
  for (double x : o.lambda) EXPECT_EQ(x, -7.0);

  // A workspace of another set; constrainedABA on a set with two-body constraints.
  Rig other;
  setUp(other, "cd_four_bar.urdf", true, 1);
  cdyn_constraint_workspace* mixed[2] = {s.ws[0], other.ws[0]};
  EXPECT_EQ(call(mixed, 2, 4, R, P, st.q.data(), &settings, s.rows, nullptr),
            CDYN_ERR_WORKSPACE_MISMATCH);
  {
    const States fs = randomStates(other, 2, 1);
    Outputs fo = sized(other, 2);
    EXPECT_EQ(cdyn_batch_constrained_dynamics(
                  other.set, other.ws.data(), 1, 2, R, CDYN_SOLVER_CONSTRAINED_ABA, fs.q.data(),
                  fs.v.data(), fs.tau.data(), nullptr, nullptr, fo.ydd.data(), nullptr,
                  fo.lambda.data(), other.rows, nullptr, nullptr),
              CDYN_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(cdyn_constraint_workspace_last_error(other.ws[0])).find("PROX_PV"),
              std::string::npos);
  }

  // Pools: one workspace per thread, the set's model.
  cdyn_pool* pool = nullptr;
  ASSERT_EQ(cdyn_pool_create(s.m, 2, &pool), CDYN_OK);
  auto poolCall = [&](const cdyn_constraint_set* set, cdyn_pool* p, int nws) {
    return cdyn_pool_constrained_dynamics(
        set, p, s.ws.data(), nws, 4, R, P, st.q.data(), st.v.data(), st.tau.data(), nullptr,
        nullptr, o.ydd.data(), nullptr, o.lambda.data(), s.rows, nullptr, nullptr);
  };
  EXPECT_EQ(poolCall(s.set, pool, 1), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cdyn_pool_last_error(pool)).find("2 threads"), std::string::npos)
      << cdyn_pool_last_error(pool);
  EXPECT_EQ(poolCall(nullptr, pool, 2), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(poolCall(other.set, pool, 2), CDYN_ERR_WORKSPACE_MISMATCH);
  EXPECT_EQ(poolCall(s.set, nullptr, 2), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(poolCall(s.set, pool, 2), CDYN_OK) << cdyn_pool_last_error(pool);
  EXPECT_EQ(cdyn_pool_free(pool), CDYN_OK);
}

TEST(CApiConstraintsBatch, PoolAndOneWorkspaceDoNotAllocate) {
#ifdef CLUSTERDYN_SANITIZED
  GTEST_SKIP() << "allocation counting replaces malloc (not in sanitizer builds)";
#else
  Rig s;
  setUp(s, "cd_quadruped.urdf", false, 2);
  const States st = randomStates(s, 16, 9);
  cdyn_pool* pool = nullptr;
  ASSERT_EQ(cdyn_pool_create(s.m, 2, &pool), CDYN_OK);
  const std::vector<double> q = toColMajor(st.q, st.n, s.nq), v = toColMajor(st.v, st.n, s.nv),
                            tau = toColMajor(st.tau, st.n, s.ny);
  Outputs o = sized(s, st.n);
  for (int layout : {CDYN_BATCH_ROW_MAJOR, CDYN_BATCH_COL_MAJOR}) {
    const bool col = layout == CDYN_BATCH_COL_MAJOR;
    const double* qp = col ? q.data() : st.q.data();
    const double* vp = col ? v.data() : st.v.data();
    const double* tp = col ? tau.data() : st.tau.data();
    for (int round = 0; round < 2; ++round) {  // round 0 warms up (thread start-up, lazy init)
      cd::test::AllocationScope scope;
      const cdyn_status a = cdyn_pool_constrained_dynamics(
          s.set, pool, s.ws.data(), 2, st.n, layout, CDYN_SOLVER_PROX_PV, qp, vp, tp, nullptr,
          nullptr, o.ydd.data(), o.qdd.data(), o.lambda.data(), s.rows, o.results.data(), nullptr);
      const cdyn_status b = cdyn_batch_constrained_dynamics(
          s.set, s.ws.data(), 1, st.n, layout, CDYN_SOLVER_CONSTRAINED_ABA, qp, vp, tp, nullptr,
          nullptr, o.ydd.data(), o.qdd.data(), o.lambda.data(), s.rows, o.results.data(), nullptr);
      const long count = scope.stop();
      ASSERT_EQ(a, CDYN_OK) << cdyn_pool_last_error(pool);
      ASSERT_EQ(b, CDYN_OK) << cdyn_constraint_workspace_last_error(s.ws[0]);
      if (round == 1) EXPECT_TRUE(cd::test::noAllocation(count, "batched constrained dynamics"));
    }
  }
  EXPECT_EQ(cdyn_pool_free(pool), CDYN_OK);
#endif
}

}  // namespace
