// Batched contact rollouts (clusterdyn.h, "Contacts": cdyn_batch_contact_rollout,
// cdyn_pool_contact_rollout): n states x nsteps steps, one state per job item, run by the batch
// machinery (capi_batch_run.cpp: started threads; capi_batch_pool.cpp: the pool). Every step is
// the single step of capi_contact.cpp (stepOnce) from a reset warm start, so a rollout is
// bit-identical to a reset followed by nsteps calls of cdyn_contact_step.
#include <algorithm>
#include <climits>
#include <cstdio>
#include <vector>

#include "capi_batch_job.hpp"
#include "capi_contact_internal.hpp"

using namespace cdyn_contact_internal;
using cdyn_batch::Job;
using cdyn_batch::Worker;

namespace {

/// The per-call data of a rollout job (Job::rolloutContext).
struct Rollout {
  const cdyn_contact_problem* problem = nullptr;
  cd::StepSettings settings;
  int nsteps = 0, nq = 0, nv = 0, ny = 0, m = 0;
  cdyn_contact_report* reports = nullptr;
};

/// State i: reset, then nsteps steps. p: the state's q0 v0 tau q v lambda (lambda nullptr when
/// absent). A failed step stops the state with a message naming the step.
cdyn_status stateRollout(const Job& j, const Worker& w, int i, double* const* p, double*) {
  const Rollout& r = *static_cast<const Rollout*>(j.rolloutContext);
  cdyn_contact_workspace* ws = w.ctw;
  return cdyn_internal::guard(sinkOf(ws), cdyn_internal::Phase::Call, [&]() -> cdyn_status {
    ws->cdata.lambda.setZero();
    ws->cdata.result = cd::ContactSolverResult();
    const std::size_t T = static_cast<std::size_t>(r.nsteps);
    int firstNotConverged = -1;
    char message[sizeof ws->data.treeData.lastError] = {0};
    for (std::size_t t = 0; t < T; ++t) {
      const double* q = t == 0 ? p[0] : p[3] + (t - 1) * r.nq;
      const double* v = t == 0 ? p[1] : p[4] + (t - 1) * r.nv;
      cdyn_contact_report* rep =
          r.reports ? r.reports + static_cast<std::size_t>(i) * T + t : nullptr;
      const cdyn_status s = stepOnce(ws, r.settings, q, v, p[2] + t * r.ny, p[3] + t * r.nq,
                                     p[4] + t * r.nv, p[5] ? p[5] + t * r.m : nullptr, rep);
      if (s == CDYN_OK) continue;
      if (s == CDYN_ERR_NOT_CONVERGED) {  // the step was taken: go on, report the first
        if (firstNotConverged < 0) {
          firstNotConverged = static_cast<int>(t);
          std::snprintf(message, sizeof message, "%s", cdyn_contact_workspace_last_error(ws));
        }
        continue;
      }
      std::snprintf(message, sizeof message, "%s", cdyn_contact_workspace_last_error(ws));
      return fail(ws, s, "state %d, step %d: %.200s", i, static_cast<int>(t), message);
    }
    if (firstNotConverged < 0) return CDYN_OK;
    return fail(ws, CDYN_ERR_NOT_CONVERGED, "state %d, step %d: %.200s", i, firstNotConverged,
                message);
  });
}

/// The job of a rollout and its checks (messages in ws0): counts, per-step lengths, settings.
cdyn_status rolloutJob(Job& job, Rollout& r, const cdyn_contact_problem* problem,
                       cdyn_contact_workspace* ws0, int n, int nsteps,
                       const cdyn_contact_settings* settings, const double* q0, int nq,
                       const double* v0, int nv, const double* tau, int ntau, double* q, int nqout,
                       double* v, int nvout, double* lambda, int nlambda,
                       cdyn_contact_report* reports) {
  if (n < 0)
    return fail(ws0, CDYN_ERR_INVALID_SIZE, "n = %d (the number of states) is negative", n);
  if (nsteps < 0) return fail(ws0, CDYN_ERR_INVALID_SIZE, "nsteps = %d is negative", nsteps);
  const cd::ClusterModel& cm = problem->model->cm;
  cdyn_args::Sizes s = cdyn_internal::sizesOf(cm);
  s.rows = problem->problem->rows().rows();
  const auto& spec = cdyn_args::kContactRollout;
  const cdyn_args::ArrayArg a[] = {{q0, nq},   {v0, nv},   {tau, ntau},
                                   {q, nqout}, {v, nvout}, {lambda, nlambda}};
  job.nargs = cdyn_args::count(spec);
  for (int k = 0; k < job.nargs; ++k) {
    const bool absent = spec[k].optional && a[k].p == nullptr && a[k].n == 0;
    const int expected = s.of(spec[k].len);
    if (!absent && a[k].n != expected)
      return fail(ws0, CDYN_ERR_INVALID_SIZE, "%s has length %d per step, expected %d",
                  spec[k].name, a[k].n, expected);
    // Per-state length: one step's for q0 v0, nsteps steps' for the trajectories.
    const long long per = absent ? 0 : (k < 2 ? 1LL : static_cast<long long>(nsteps)) * expected;
    if (per * std::max(n, 1) > INT_MAX)
      return fail(ws0, CDYN_ERR_INVALID_SIZE, "%s: n x nsteps x %d entries exceed INT_MAX",
                  spec[k].name, expected);
    if (!absent && a[k].p == nullptr && per * n > 0)
      return fail(ws0, CDYN_ERR_NULL_POINTER, "%s is NULL", spec[k].name);
    const bool in = spec[k].dir == cdyn_args::Dir::In;
    job.args[k] = {in ? a[k].p : nullptr, in ? nullptr : const_cast<double*>(a[k].p),
                   static_cast<int>(per), static_cast<int>(per),
                   spec[k].optional,      spec[k].name};
  }
  if (cdyn_status st = readSettings(ws0, settings, &r.settings)) return st;
  r.problem = problem;
  r.nsteps = nsteps;
  r.nq = s.nq;
  r.nv = s.nv;
  r.ny = s.ny;
  r.m = s.rows;
  r.reports = reports;
  job.model = problem->model;
  job.n = n;
  job.layout = CDYN_BATCH_ROW_MAJOR;
  job.fn = stateRollout;
  job.rollout = true;
  job.rolloutContext = &r;
  return CDYN_OK;
}

/// Checks shared by both entry points: the workspaces (distinct, of the problem), then the job;
/// the caller contacts of ws[0] copied to the others (same sizes: no allocation).
cdyn_status prepare(Job& job, Rollout& r, const cdyn_contact_problem* problem,
                    cdyn_contact_workspace* const* ws, int nws, int n, int nsteps,
                    const cdyn_contact_settings* settings, const double* q0, int nq,
                    const double* v0, int nv, const double* tau, int ntau, double* q, int nqout,
                    double* v, int nvout, double* lambda, int nlambda,
                    cdyn_contact_report* reports) {
  if (cdyn_status s = cdyn_batch::checkHandleArray(ws, nws)) return s;
  for (int k = 0; k < nws; ++k)
    if (cdyn_status s = enter(problem, ws[k])) return s;
  if (cdyn_status s = rolloutJob(job, r, problem, ws[0], n, nsteps, settings, q0, nq, v0, nv, tau,
                                 ntau, q, nqout, v, nvout, lambda, nlambda, reports))
    return s;
  for (int k = 1; k < nws; ++k) {
    cd::ContactData& to = ws[k]->cdata;
    const cd::ContactData& from = ws[0]->cdata;
    std::copy(from.normal.begin(), from.normal.end(), to.normal.begin());
    to.gap = from.gap;
    to.mu = from.mu;
    to.muTorsion = from.muTorsion;
    to.muRolling = from.muRolling;
  }
  return CDYN_OK;
}

}  // namespace

extern "C" {

cdyn_status cdyn_batch_contact_rollout(const cdyn_contact_problem* problem,
                                       cdyn_contact_workspace* const* ws, int nws, int n,
                                       int nsteps, const cdyn_contact_settings* settings,
                                       const double* q0, int nq, const double* v0, int nv,
                                       const double* tau, int ntau, double* q, int nqout, double* v,
                                       int nvout, double* lambda, int nlambda,
                                       cdyn_contact_report* reports, int* failed_index) {
  if (failed_index) *failed_index = -1;
  Job job;
  Rollout r;
  if (cdyn_status s = prepare(job, r, problem, ws, nws, n, nsteps, settings, q0, nq, v0, nv, tau,
                              ntau, q, nqout, v, nvout, lambda, nlambda, reports))
    return s;
  if (n == 0) return CDYN_OK;
  const int threads = std::max(1, std::min(nws, n));
  Worker one[1];
  return cdyn_internal::guard(sinkOf(ws[0]), cdyn_internal::Phase::Call, [&] {
    std::vector<Worker> many;  // threads > 1 only: nws == 1 does not allocate
    Worker* workers = one;
    if (threads > 1) {
      many.resize(threads);
      workers = many.data();
    }
    for (int k = 0; k < threads; ++k) workers[k].ctw = ws[k];
    cdyn_batch::runStarted(job, workers, threads);
    return cdyn_batch::finish(job, workers[0], failed_index);
  });
}

cdyn_status cdyn_pool_contact_rollout(const cdyn_contact_problem* problem, cdyn_pool* pool,
                                      cdyn_contact_workspace* const* ws, int nws, int n, int nsteps,
                                      const cdyn_contact_settings* settings, const double* q0,
                                      int nq, const double* v0, int nv, const double* tau, int ntau,
                                      double* q, int nqout, double* v, int nvout, double* lambda,
                                      int nlambda, cdyn_contact_report* reports,
                                      int* failed_index) {
  if (failed_index) *failed_index = -1;
  Job job;
  Rollout r;
  if (cdyn_status s = prepare(job, r, problem, ws, nws, n, nsteps, settings, q0, nq, v0, nv, tau,
                              ntau, q, nqout, v, nvout, lambda, nlambda, reports))
    return s;
  // One Worker per workspace, kept in the workspaces' order (at most kMaxThreads: no heap).
  Worker workers[cdyn_batch::kMaxThreads];
  for (int k = 0; k < nws; ++k) workers[k].ctw = ws[k];
  return cdyn_batch::runWorkersOnPool(job, pool, workers, nws, failed_index);
}

}  // extern "C"
