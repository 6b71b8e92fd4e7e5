// Batched evaluation (cdyn_batch_*, cdyn_pool_*): for every model given, random closed states;
// every batch function, both layouts, 1..4 threads, caller workspaces and pools, optional
// outputs and external forces, against single calls BIT FOR BIT; failures (the lowest failed
// state is reported with its message), argument errors; and no heap allocation in pool calls
// (this executable links the shared allocation counter tests/alloc_counter.cpp, exported to
// libclusterdyn.so, which counts in every thread).
//
// Usage: test_capi_batch model.urdf...
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "clusterdyn.h"

namespace {

int g_failures = 0;
int g_checks = 0;

#define CHECK(cond)                                                                 \
  do {                                                                              \
    ++g_checks;                                                                     \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                                 \
    }                                                                               \
  } while (0)

using Vec = std::vector<double>;

/// Bitwise equality of two arrays (NaN-safe, -0 vs 0 distinguished).
bool same(const Vec& a, const Vec& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0;
}

/// Row i of a stacked array in either layout.
Vec row(const Vec& X, int n, int len, int i, int layout) {
  Vec r(len);
  for (int j = 0; j < len; ++j)
    r[j] = layout == CDYN_BATCH_ROW_MAJOR ? X[static_cast<size_t>(i) * len + j]
                                          : X[i + static_cast<size_t>(j) * n];
  return r;
}

/// Rows stacked in the given layout.
Vec stack(const std::vector<Vec>& rows, int layout) {
  const int n = static_cast<int>(rows.size()), len = n ? static_cast<int>(rows[0].size()) : 0;
  Vec X(static_cast<size_t>(n) * len);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < len; ++j)
      (layout == CDYN_BATCH_ROW_MAJOR ? X[static_cast<size_t>(i) * len + j]
                                      : X[i + static_cast<size_t>(j) * n]) = rows[i][j];
  return X;
}

struct Sizes {
  int nq, nv, ny, nyq, nb;
};

/// N random closed states of a model: (q, v) from the reference configuration moved by a random
/// velocity and projected onto the constraints; independent y, ydot; random tau, ydd, fext.
struct States {
  std::vector<Vec> q, v, y, ydot, tau, ydd, fext;
};

States makeStates(const cdyn_model* m, cdyn_workspace* ws, const Sizes& s, int N,
                  std::mt19937& rng) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  States st;
  Vec q0(s.nq), dq(s.nv), q(s.nq), v(s.nv), y(s.nyq), ydot(s.ny);
  cdyn_model_reference_configuration(m, q0.data(), s.nq);
  for (int i = 0; i < N; ++i) {
    for (double& x : dq) x = 0.2 * u(rng);
    for (double& x : v) x = u(rng);
    cdyn_integrate(m, ws, q0.data(), s.nq, dq.data(), s.nv, 1.0, q.data(), s.nq);
    if (cdyn_project_to_constraints(m, ws, q.data(), s.nq, v.data(), s.nv, q.data(), s.nq, v.data(),
                                    s.nv) != CDYN_OK) {
      --i;  // out of the mechanism's range: draw again
      continue;
    }
    cdyn_spanning_to_independent(m, ws, q.data(), s.nq, v.data(), s.nv, y.data(), s.nyq,
                                 ydot.data(), s.ny);
    st.q.push_back(q);
    st.v.push_back(v);
    st.y.push_back(y);
    st.ydot.push_back(ydot);
    Vec t(s.ny), a(s.ny), f(6 * s.nb);
    for (double& x : t) x = u(rng);
    for (double& x : a) x = u(rng);
    for (double& x : f) x = 0.5 * u(rng);
    st.tau.push_back(t);
    st.ydd.push_back(a);
    st.fext.push_back(f);
  }
  return st;
}

/// Single-call results of every batch function on every state (the oracle).
struct Expected {
  std::vector<Vec> ydd, qdd, yddF, tauRnea, qddRnea, H, yddI, qI, vI, qddI;
};

Expected singleCalls(const cdyn_model* m, cdyn_workspace* ws, const Sizes& s, const States& st) {
  Expected e;
  const int N = static_cast<int>(st.q.size());
  Vec qref(s.nq);
  cdyn_model_reference_configuration(m, qref.data(), s.nq);
  for (int i = 0; i < N; ++i) {
    Vec ydd(s.ny), qdd(s.nv), yddF(s.ny), tau(s.ny), qddR(s.nv), H(s.ny * s.ny);
    CHECK(cdyn_ce_aba(m, ws, st.q[i].data(), s.nq, st.v[i].data(), s.nv, st.tau[i].data(), s.ny,
                      nullptr, 0, ydd.data(), s.ny, qdd.data(), s.nv) == CDYN_OK);
    CHECK(cdyn_ce_aba(m, ws, st.q[i].data(), s.nq, st.v[i].data(), s.nv, st.tau[i].data(), s.ny,
                      st.fext[i].data(), 6 * s.nb, yddF.data(), s.ny, nullptr, 0) == CDYN_OK);
    CHECK(cdyn_ce_rnea(m, ws, st.q[i].data(), s.nq, st.v[i].data(), s.nv, st.ydd[i].data(), s.ny,
                       st.fext[i].data(), 6 * s.nb, tau.data(), s.ny, qddR.data(),
                       s.nv) == CDYN_OK);
    CHECK(cdyn_cluster_mass_matrix(m, ws, st.q[i].data(), s.nq, H.data(), s.ny > 0 ? s.ny : 1) ==
          CDYN_OK);
    e.ydd.push_back(ydd);
    e.qdd.push_back(qdd);
    e.yddF.push_back(yddF);
    e.tauRnea.push_back(tau);
    e.qddRnea.push_back(qddR);
    e.H.push_back(H);
    // Independent: a fresh workspace per state (warm start = reference configuration).
    cdyn_workspace* fresh = nullptr;
    CHECK(cdyn_workspace_create(m, &fresh) == CDYN_OK);
    Vec yddI(s.ny), qI(s.nq), vI(s.nv), qddI(s.nv);
    CHECK(cdyn_ce_aba_independent(m, fresh, st.y[i].data(), s.nyq, st.ydot[i].data(), s.ny,
                                  st.tau[i].data(), s.ny, nullptr, 0, yddI.data(), s.ny, qI.data(),
                                  s.nq, vI.data(), s.nv, qddI.data(), s.nv) == CDYN_OK);
    cdyn_workspace_free(fresh);
    e.yddI.push_back(yddI);
    e.qI.push_back(qI);
    e.vI.push_back(vI);
    e.qddI.push_back(qddI);
  }
  return e;
}

/// Compares every state of a stacked output with the expected rows.
bool matches(const Vec& X, const std::vector<Vec>& rows, int layout) {
  const int n = static_cast<int>(rows.size());
  for (int i = 0; i < n; ++i)
    if (!same(row(X, n, static_cast<int>(rows[i].size()), i, layout), rows[i])) return false;
  return true;
}

/// Runs one batch function either on caller workspaces (pool == nullptr) or on a pool.
struct Runner {
  const cdyn_model* m;
  cdyn_workspace* const* ws;
  int nws;
  cdyn_pool* pool;

  cdyn_status ceAba(int n, int layout, const Vec& q, const Vec& v, const Vec& tau,
                    const double* fext, int nfext, Vec& ydd, double* qdd, int nqdd, const Sizes& s,
                    int* failed) const {
    if (pool)
      return cdyn_pool_ce_aba(m, pool, n, layout, q.data(), s.nq, v.data(), s.nv, tau.data(), s.ny,
                              fext, nfext, ydd.data(), s.ny, qdd, nqdd, failed);
    return cdyn_batch_ce_aba(m, ws, nws, n, layout, q.data(), s.nq, v.data(), s.nv, tau.data(),
                             s.ny, fext, nfext, ydd.data(), s.ny, qdd, nqdd, failed);
  }
  cdyn_status ceRnea(int n, int layout, const Vec& q, const Vec& v, const Vec& ydd, const Vec& fext,
                     Vec& tau, Vec& qdd, const Sizes& s, int* failed) const {
    if (pool)
      return cdyn_pool_ce_rnea(m, pool, n, layout, q.data(), s.nq, v.data(), s.nv, ydd.data(), s.ny,
                               fext.data(), 6 * s.nb, tau.data(), s.ny, qdd.data(), s.nv, failed);
    return cdyn_batch_ce_rnea(m, ws, nws, n, layout, q.data(), s.nq, v.data(), s.nv, ydd.data(),
                              s.ny, fext.data(), 6 * s.nb, tau.data(), s.ny, qdd.data(), s.nv,
                              failed);
  }
  cdyn_status massMatrix(int n, int layout, const Vec& q, Vec& H, const Sizes& s,
                         int* failed) const {
    if (pool)
      return cdyn_pool_cluster_mass_matrix(m, pool, n, layout, q.data(), s.nq, H.data(),
                                           s.ny * s.ny, failed);
    return cdyn_batch_cluster_mass_matrix(m, ws, nws, n, layout, q.data(), s.nq, H.data(),
                                          s.ny * s.ny, failed);
  }
  cdyn_status ceAbaIndependent(int n, int layout, const Vec& y, const Vec& ydot, const Vec& tau,
                               const double* guess, int nguess, Vec& ydd, Vec& q, Vec& v, Vec& qdd,
                               const Sizes& s, int* failed) const {
    if (pool)
      return cdyn_pool_ce_aba_independent(m, pool, n, layout, y.data(), s.nyq, ydot.data(), s.ny,
                                          tau.data(), s.ny, nullptr, 0, guess, nguess, ydd.data(),
                                          s.ny, q.data(), s.nq, v.data(), s.nv, qdd.data(), s.nv,
                                          failed);
    return cdyn_batch_ce_aba_independent(
        m, ws, nws, n, layout, y.data(), s.nyq, ydot.data(), s.ny, tau.data(), s.ny, nullptr, 0,
        guess, nguess, ydd.data(), s.ny, q.data(), s.nq, v.data(), s.nv, qdd.data(), s.nv, failed);
  }
  const char* lastError() const {
    return pool ? cdyn_pool_last_error(pool) : cdyn_workspace_last_error(ws[0]);
  }
};

/// Every batch function through `r`, both layouts, against the single calls.
void checkRunner(const Runner& r, const Sizes& s, const States& st, const Expected& e,
                 const char* what) {
  const int N = static_cast<int>(st.q.size());
  Vec qref(s.nq);
  cdyn_model_reference_configuration(r.m, qref.data(), s.nq);
  for (int layout : {CDYN_BATCH_ROW_MAJOR, CDYN_BATCH_COL_MAJOR}) {
    const Vec Q = stack(st.q, layout), V = stack(st.v, layout), T = stack(st.tau, layout),
              A = stack(st.ydd, layout), F = stack(st.fext, layout), Y = stack(st.y, layout),
              YD = stack(st.ydot, layout);
    Vec ydd(static_cast<size_t>(N) * s.ny), qdd(static_cast<size_t>(N) * s.nv);
    int failed = 7;
    CHECK(r.ceAba(N, layout, Q, V, T, nullptr, 0, ydd, qdd.data(), s.nv, s, &failed) == CDYN_OK);
    CHECK(failed == -1);
    CHECK(matches(ydd, e.ydd, layout));
    CHECK(matches(qdd, e.qdd, layout));
    CHECK(r.ceAba(N, layout, Q, V, T, F.data(), 6 * s.nb, ydd, nullptr, 0, s, nullptr) == CDYN_OK);
    CHECK(matches(ydd, e.yddF, layout));
    Vec tau(static_cast<size_t>(N) * s.ny);
    CHECK(r.ceRnea(N, layout, Q, V, A, F, tau, qdd, s, &failed) == CDYN_OK);
    CHECK(matches(tau, e.tauRnea, layout));
    CHECK(matches(qdd, e.qddRnea, layout));
    Vec H(static_cast<size_t>(N) * s.ny * s.ny);
    CHECK(r.massMatrix(N, layout, Q, H, s, &failed) == CDYN_OK);
    CHECK(matches(H, e.H, layout));
    Vec q(static_cast<size_t>(N) * s.nq), v(static_cast<size_t>(N) * s.nv);
    CHECK(r.ceAbaIndependent(N, layout, Y, YD, T, nullptr, 0, ydd, q, v, qdd, s, &failed) ==
          CDYN_OK);
    CHECK(matches(ydd, e.yddI, layout));
    CHECK(matches(q, e.qI, layout));
    CHECK(matches(v, e.vI, layout));
    CHECK(matches(qdd, e.qddI, layout));
    // An explicit q_guess equal to the reference configuration gives the same bits.
    CHECK(r.ceAbaIndependent(N, layout, Y, YD, T, qref.data(), s.nq, ydd, q, v, qdd, s, &failed) ==
          CDYN_OK);
    CHECK(matches(ydd, e.yddI, layout));
  }

  // Failures: NaN in two states; the lowest is reported, with the single call's message.
  if (N >= 6 && s.nv > 0) {
    std::vector<Vec> vbad = st.v;
    vbad[5][0] = NAN;
    vbad[3][s.nv - 1] = INFINITY;
    const Vec Q = stack(st.q, CDYN_BATCH_ROW_MAJOR), V = stack(vbad, CDYN_BATCH_ROW_MAJOR),
              T = stack(st.tau, CDYN_BATCH_ROW_MAJOR);
    Vec ydd(static_cast<size_t>(N) * s.ny);
    int failed = -7;
    CHECK(r.ceAba(N, CDYN_BATCH_ROW_MAJOR, Q, V, T, nullptr, 0, ydd, nullptr, 0, s, &failed) ==
          CDYN_ERR_NON_FINITE);
    CHECK(failed == 3);
    char expect[64];
    std::snprintf(expect, sizeof expect, "v[%d] is not finite", s.nv - 1);
    CHECK(std::strstr(r.lastError(), expect) != nullptr);
    if (std::strstr(r.lastError(), expect) == nullptr)
      std::fprintf(stderr, "%s: message '%s'\n", what, r.lastError());
    // States before the failed one are written.
    for (int i = 0; i < 3; ++i) CHECK(same(row(ydd, N, s.ny, i, CDYN_BATCH_ROW_MAJOR), e.ydd[i]));
  }

  // Argument errors: before any state, status and message of the single call, failed = -1.
  {
    const Vec Q = stack(st.q, CDYN_BATCH_ROW_MAJOR), V = stack(st.v, CDYN_BATCH_ROW_MAJOR),
              T = stack(st.tau, CDYN_BATCH_ROW_MAJOR);
    Vec ydd(static_cast<size_t>(N) * s.ny);
    int failed = 9;
    const cdyn_status st1 =
        r.pool
            ? cdyn_pool_ce_aba(r.m, r.pool, N, 0, Q.data(), s.nq - 1, V.data(), s.nv, T.data(),
                               s.ny, nullptr, 0, ydd.data(), s.ny, nullptr, 0, &failed)
            : cdyn_batch_ce_aba(r.m, r.ws, r.nws, N, 0, Q.data(), s.nq - 1, V.data(), s.nv,
                                T.data(), s.ny, nullptr, 0, ydd.data(), s.ny, nullptr, 0, &failed);
    CHECK(st1 == CDYN_ERR_INVALID_SIZE);
    CHECK(failed == -1);
    CHECK(std::strstr(r.lastError(), "q has length") != nullptr);
    CHECK(r.ceAba(N, 2, Q, V, T, nullptr, 0, ydd, nullptr, 0, s, &failed) ==
          CDYN_ERR_INVALID_ARGUMENT);
    CHECK(r.ceAba(-1, 0, Q, V, T, nullptr, 0, ydd, nullptr, 0, s, &failed) ==
          CDYN_ERR_INVALID_SIZE);
    CHECK(r.ceAba(0, 0, Q, V, T, nullptr, 0, ydd, nullptr, 0, s, &failed) == CDYN_OK);
    CHECK(failed == -1);
    const cdyn_status st2 =
        r.pool ? cdyn_pool_ce_aba(r.m, r.pool, N, 0, nullptr, s.nq, V.data(), s.nv, T.data(), s.ny,
                                  nullptr, 0, ydd.data(), s.ny, nullptr, 0, &failed)
               : cdyn_batch_ce_aba(r.m, r.ws, r.nws, N, 0, nullptr, s.nq, V.data(), s.nv, T.data(),
                                   s.ny, nullptr, 0, ydd.data(), s.ny, nullptr, 0, &failed);
    CHECK(st2 == CDYN_ERR_NULL_POINTER);
    Vec H(static_cast<size_t>(N) * s.ny * s.ny + 1);
    const cdyn_status st3 =
        r.pool ? cdyn_pool_cluster_mass_matrix(r.m, r.pool, N, 0, Q.data(), s.nq, H.data(),
                                               s.ny * s.ny + 1, &failed)
               : cdyn_batch_cluster_mass_matrix(r.m, r.ws, r.nws, N, 0, Q.data(), s.nq, H.data(),
                                                s.ny * s.ny + 1, &failed);
    CHECK(st3 == CDYN_ERR_INVALID_SIZE);
    // The one q_guess of the independent solves must have nq elements.
    const Vec Y = stack(st.y, 0), YD = stack(st.ydot, 0);
    Vec q(static_cast<size_t>(N) * s.nq), v(static_cast<size_t>(N) * s.nv),
        qdd(static_cast<size_t>(N) * s.nv), guess(s.nq + 1, 0.0);
    failed = 5;
    CHECK(r.ceAbaIndependent(N, 0, Y, YD, T, guess.data(), s.nq + 1, ydd, q, v, qdd, s, &failed) ==
          CDYN_ERR_INVALID_SIZE);
    CHECK(failed == -1);
    CHECK(std::strstr(r.lastError(), "q_guess has length") != nullptr);
  }
}

/// No allocation in pool calls (every function, both layouts, failing calls included).
void checkNoAllocation(cdyn_pool* pool, const cdyn_model* m, const Sizes& s, const States& st) {
  const int N = static_cast<int>(st.q.size());
  Runner r{m, nullptr, 0, pool};
  std::vector<Vec> vbad = st.v;
  if (s.nv > 0) vbad[N / 2][0] = NAN;
  Vec Q[2], V[2], VB[2], T[2], A[2], F[2], Y[2], YD[2];
  for (int l = 0; l < 2; ++l) {
    Q[l] = stack(st.q, l), V[l] = stack(st.v, l), VB[l] = stack(vbad, l), T[l] = stack(st.tau, l);
    A[l] = stack(st.ydd, l), F[l] = stack(st.fext, l), Y[l] = stack(st.y, l);
    YD[l] = stack(st.ydot, l);
  }
  Vec ydd(static_cast<size_t>(N) * s.ny), qdd(static_cast<size_t>(N) * s.nv),
      tau(static_cast<size_t>(N) * s.ny), H(static_cast<size_t>(N) * s.ny * s.ny),
      q(static_cast<size_t>(N) * s.nq), v(static_cast<size_t>(N) * s.nv);
  int failed = 0, bad = 0;
  long allocations = 0;
  {
    clusterdyn::test::AllocationScope scope;
    for (int round = 0; round < 5; ++round) {
      for (int l = 0; l < 2; ++l) {
        bad += r.ceAba(N, l, Q[l], V[l], T[l], F[l].data(), 6 * s.nb, ydd, qdd.data(), s.nv, s,
                       &failed) != CDYN_OK;
        bad += r.ceRnea(N, l, Q[l], V[l], A[l], F[l], tau, qdd, s, &failed) != CDYN_OK;
        bad += r.massMatrix(N, l, Q[l], H, s, &failed) != CDYN_OK;
        bad += r.ceAbaIndependent(N, l, Y[l], YD[l], T[l], nullptr, 0, ydd, q, v, qdd, s,
                                  &failed) != CDYN_OK;
        bad += r.ceAba(N, l, Q[l], VB[l], T[l], nullptr, 0, ydd, nullptr, 0, s, &failed) ==
               CDYN_OK;  // a failing batch
        bad += r.ceAba(N, l, Q[l], V[l], T[l], nullptr, 0, ydd, nullptr, s.nv + 1, s, &failed) ==
               CDYN_OK;  // an argument error
      }
    }
    allocations = scope.stop();
  }
  CHECK(bad == 0);
  CHECK(allocations == 0);
  if (allocations != 0)  // with the backtrace of the first one
    std::fprintf(stderr, "  %s\n",
                 clusterdyn::test::noAllocation(allocations, "pool calls").message());
  // Positive control: the counter sees allocations made in the library (a workspace).
  cdyn_workspace* w = nullptr;
  long created = 0;
  {
    clusterdyn::test::AllocationScope control;
    cdyn_workspace_create(m, &w);
    created = control.stop();
  }
  CHECK(created > 0);
  cdyn_workspace_free(w);
}

void checkModel(const char* path) {
  char err[512];
  cdyn_model* m = nullptr;
  if (cdyn_model_load(CDYN_ABI_VERSION, path, 0, nullptr, &m, err, sizeof err) != CDYN_OK) {
    std::fprintf(stderr, "cannot load %s: %s\n", path, err);
    ++g_failures;
    return;
  }
  Sizes s{};
  cdyn_model_nq(m, &s.nq);
  cdyn_model_nv(m, &s.nv);
  cdyn_model_ny(m, &s.ny);
  cdyn_model_nyq(m, &s.nyq);
  cdyn_model_nbodies(m, &s.nb);
  cdyn_workspace* ws[4] = {};
  for (cdyn_workspace*& w : ws) CHECK(cdyn_workspace_create(m, &w) == CDYN_OK);
  std::mt19937 rng(20240611u);
  const int N = 37;  // not a multiple of the chunk or thread counts
  const States st = makeStates(m, ws[0], s, N, rng);
  const Expected e = singleCalls(m, ws[0], s, st);

  for (int nws = 1; nws <= 4; ++nws) checkRunner({m, ws, nws, nullptr}, s, st, e, "batch");
  for (int threads = 1; threads <= 3; ++threads) {
    cdyn_pool* pool = nullptr;
    CHECK(cdyn_pool_create(m, threads, &pool) == CDYN_OK);
    int nt = 0;
    CHECK(cdyn_pool_nthreads(pool, &nt) == CDYN_OK && nt == threads);
    checkRunner({m, nullptr, 0, pool}, s, st, e, "pool");
    checkNoAllocation(pool, m, s, st);
    // The model cannot be freed while a pool (its workspaces) exists.
    CHECK(cdyn_model_free(m) == CDYN_ERR_INVALID_ARGUMENT);
    CHECK(cdyn_pool_free(pool) == CDYN_OK);
  }

  // Handles: duplicate / NULL / foreign workspaces, pools of another model, bad thread counts.
  {
    const Vec Q = stack(st.q, 0), V = stack(st.v, 0), T = stack(st.tau, 0);
    Vec ydd(static_cast<size_t>(N) * s.ny);
    cdyn_workspace* dup[2] = {ws[1], ws[1]};
    CHECK(cdyn_batch_ce_aba(m, dup, 2, N, 0, Q.data(), s.nq, V.data(), s.nv, T.data(), s.ny,
                            nullptr, 0, ydd.data(), s.ny, nullptr, 0,
                            nullptr) == CDYN_ERR_INVALID_ARGUMENT);
    cdyn_workspace* withNull[2] = {ws[1], nullptr};
    CHECK(cdyn_batch_ce_aba(m, withNull, 2, N, 0, Q.data(), s.nq, V.data(), s.nv, T.data(), s.ny,
                            nullptr, 0, ydd.data(), s.ny, nullptr, 0,
                            nullptr) == CDYN_ERR_NULL_POINTER);
    CHECK(cdyn_batch_ce_aba(m, ws, 0, N, 0, Q.data(), s.nq, V.data(), s.nv, T.data(), s.ny, nullptr,
                            0, ydd.data(), s.ny, nullptr, 0, nullptr) == CDYN_ERR_INVALID_ARGUMENT);
    CHECK(cdyn_batch_ce_aba(nullptr, ws, 1, N, 0, Q.data(), s.nq, V.data(), s.nv, T.data(), s.ny,
                            nullptr, 0, ydd.data(), s.ny, nullptr, 0,
                            nullptr) == CDYN_ERR_NULL_POINTER);
    cdyn_model* other = nullptr;
    CHECK(cdyn_model_load(CDYN_ABI_VERSION, path, 0, nullptr, &other, err, sizeof err) == CDYN_OK);
    cdyn_workspace* foreign = nullptr;
    CHECK(cdyn_workspace_create(other, &foreign) == CDYN_OK);
    cdyn_workspace* mixed[2] = {ws[0], foreign};
    CHECK(cdyn_batch_ce_aba(m, mixed, 2, N, 0, Q.data(), s.nq, V.data(), s.nv, T.data(), s.ny,
                            nullptr, 0, ydd.data(), s.ny, nullptr, 0,
                            nullptr) == CDYN_ERR_WORKSPACE_MISMATCH);
    cdyn_pool* pool = nullptr;
    CHECK(cdyn_pool_create(other, 2, &pool) == CDYN_OK);
    CHECK(cdyn_pool_ce_aba(m, pool, N, 0, Q.data(), s.nq, V.data(), s.nv, T.data(), s.ny, nullptr,
                           0, ydd.data(), s.ny, nullptr, 0,
                           nullptr) == CDYN_ERR_WORKSPACE_MISMATCH);
    CHECK(std::strstr(cdyn_pool_last_error(pool), "another model") != nullptr);
    CHECK(cdyn_pool_ce_aba(m, nullptr, N, 0, Q.data(), s.nq, V.data(), s.nv, T.data(), s.ny,
                           nullptr, 0, ydd.data(), s.ny, nullptr, 0,
                           nullptr) == CDYN_ERR_NULL_POINTER);
    CHECK(cdyn_pool_ce_aba(m, reinterpret_cast<cdyn_pool*>(ws[0]), N, 0, Q.data(), s.nq, V.data(),
                           s.nv, T.data(), s.ny, nullptr, 0, ydd.data(), s.ny, nullptr, 0,
                           nullptr) == CDYN_ERR_INVALID_ARGUMENT);
    CHECK(cdyn_pool_free(pool) == CDYN_OK);
    cdyn_workspace_free(foreign);
    CHECK(cdyn_model_free(other) == CDYN_OK);
    cdyn_pool* p = reinterpret_cast<cdyn_pool*>(1);
    CHECK(cdyn_pool_create(m, 0, &p) == CDYN_ERR_INVALID_ARGUMENT && p == nullptr);
    CHECK(cdyn_pool_create(m, 1025, &p) == CDYN_ERR_INVALID_ARGUMENT);
    CHECK(cdyn_pool_create(nullptr, 2, &p) == CDYN_ERR_NULL_POINTER);
    CHECK(cdyn_pool_create(m, 2, nullptr) == CDYN_ERR_NULL_POINTER);
    CHECK(cdyn_pool_free(nullptr) == CDYN_OK);
    CHECK(std::strcmp(cdyn_pool_last_error(nullptr), "pool is NULL") == 0);
  }

  for (cdyn_workspace* w : ws) cdyn_workspace_free(w);
  CHECK(cdyn_model_free(m) == CDYN_OK);
  std::printf("%s: nq %d nv %d ny %d, %d states: batch and pool results bit-identical\n", path,
              s.nq, s.nv, s.ny, N);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s model.urdf...\n", argv[0]);
    return 2;
  }
  cdyn_set_log_level(CDYN_LOG_OFF);
  for (int i = 1; i < argc; ++i) checkModel(argv[i]);
  std::printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
