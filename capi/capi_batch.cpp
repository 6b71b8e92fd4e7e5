// Batched evaluation of the C API (cdyn_batch_*, cdyn_pool_*): n states per call, spread over
// threads, each state evaluated by the public single-state function (cdyn_ce_aba, ...,
// cdyn_prox_pv), so the results are bit-identical to single calls by construction. This file
// makes the Job of each function from its argument description (capi_args.hpp) and its
// per-state function; capi_batch_run.cpp runs it on started threads, capi_batch_pool.cpp on a
// pool. It uses clusterdyn.h and, for the constrained solves, capi_batch_internal.hpp: no
// dynamics and no knowledge of the handles' internals.
#include <algorithm>
#include <vector>

#include "capi_batch_internal.hpp"
#include "capi_batch_job.hpp"

using namespace cdyn_batch;
using cdyn_args::ArrayArg;

namespace {

// ---- the per-state functions ---------------------------------------------------------------

/// The single-state functions of the shape (model, ws, q, nq, v, nv, in, nin, fext, nfext, out,
/// nout, qdd, nqdd): cdyn_ce_aba, cdyn_ce_rnea.
using SpanningFn = cdyn_status (*)(const cdyn_model*, cdyn_workspace*, const double*, int,
                                   const double*, int, const double*, int, const double*, int,
                                   double*, int, double*, int);

/// Arguments: 0 q, 1 v, 2 tau / ydd, 3 fext, 4 ydd / tau, 5 qdd.
template <SpanningFn fn>
cdyn_status stateSpanning(const Job& j, const Worker& w, int, double* const* p, double*) {
  const Arg* a = j.args;
  return fn(j.model, w.ws, p[0], a[0].len, p[1], a[1].len, p[2], a[2].len, p[3], a[3].len, p[4],
            a[4].len, p[5], a[5].len);
}

cdyn_status stateMassMatrix(const Job& j, const Worker& w, int, double* const* p, double*) {
  const Arg* a = j.args;
  if (a[1].len != a[1].expected)  // H is passed as a matrix: its length is checked here
    return cdyn_cluster_mass_matrix(j.model, w.ws, p[0], a[0].len, nullptr, -1);
  int ny = 0;
  cdyn_model_ny(j.model, &ny);
  return cdyn_cluster_mass_matrix(j.model, w.ws, p[0], a[0].len, p[1], std::max(1, ny));
}

/// Arguments: 0 y, 1 ydot, 2 tau, 3 fext, 4 ydd, 5 q, 6 v, 7 qdd.
cdyn_status stateCeAbaIndependent(const Job& j, const Worker& w, int, double* const* p,
                                  double* tmp) {
  cdyn_workspace* ws = w.ws;
  const Arg* a = j.args;
  double* q = p[5] ? p[5] : tmp;
  double* v = p[6] ? p[6] : tmp + j.nq;
  int nv = 0;
  cdyn_model_nv(j.model, &nv);
  // Sizes of every argument first (the solve below would otherwise report only its own).
  if (a[2].len != a[2].expected || a[4].len != a[4].expected ||
      (a[3].len != 0 && a[3].len != a[3].expected) || (a[7].len != 0 && a[7].len != nv) ||
      (a[5].len != 0 && a[5].len != j.nq) || (a[6].len != 0 && a[6].len != nv))
    return cdyn_ce_aba_independent(j.model, ws, p[0], a[0].len, p[1], a[1].len, p[2], a[2].len,
                                   p[3], a[3].len, p[4], a[4].len, p[5], a[5].len, p[6], a[6].len,
                                   p[7], a[7].len);
  if (cdyn_status s = cdyn_independent_to_spanning(j.model, ws, p[0], a[0].len, p[1], a[1].len,
                                                   j.qGuess, j.nqGuess, q, j.nq, v, nv))
    return s;
  return cdyn_ce_aba(j.model, ws, q, j.nq, v, nv, p[2], a[2].len, p[3], a[3].len, p[4], a[4].len,
                     p[7], a[7].len);
}

/// Arguments: 0 q, 1 v, 2 tau, 3 fext, 4 ydd, 5 qdd, 6 lambda (lengths from the model and m).
cdyn_status stateConstrained(const Job& j, const Worker& w, int i, double* const* p, double*) {
  cdyn_proximal_result* r = j.results ? j.results + i : nullptr;
  const int m = j.args[6].len;
  switch (j.solver) {
    case CDYN_SOLVER_CONSTRAINED_ABA:
      return cdyn_constrained_aba(j.set, w.cws, p[0], p[1], p[2], p[3], j.settings, p[4], p[5],
                                  p[6], m, r);
    case CDYN_SOLVER_PROX_PV:
      return cdyn_prox_pv(j.set, w.cws, p[0], p[1], p[2], p[3], j.settings, p[4], p[5], p[6], m, r);
    default:
      return cdyn_constrained_dynamics_dense(j.set, w.cws, p[0], p[1], p[2], p[3], j.settings, p[4],
                                             p[5], p[6], m, r);
  }
}

// ---- the batch functions: fill a Job, run it one of the two ways ---------------------------

/// The job of a SpanningFn fn with the description spec, as the job maker of batchEntry /
/// poolEntry (the six arrays in signature order).
template <SpanningFn fn>
auto spanningJob(const cdyn_model* model, int n, int layout, const cdyn_args::ArgSpec (&spec)[6],
                 const ArrayArg (&a)[6]) {
  return [=, &spec](Job& j) { return makeJob(j, model, n, layout, spec, a, stateSpanning<fn>); };
}

cdyn_status massMatrixJob(Job& j, const cdyn_model* model, int n, int layout, const double* q,
                          int nq, double* H, int nh) {
  return makeJob(j, model, n, layout, cdyn_args::kClusterMassMatrix, {{q, nq}, {H, nh}},
                 stateMassMatrix);
}

cdyn_status ceAbaIndependentJob(Job& j, const cdyn_model* model, int n, int layout, const double* y,
                                int nyq, const double* ydot, int ny, const double* tau, int ntau,
                                const double* fext, int nfext, const double* qGuess, int nqGuess,
                                const double* qReference, double* ydd, int nydd, double* q, int nq,
                                double* v, int nv, double* qdd, int nqdd) {
  Sizes s;
  if (cdyn_status st = makeJob(j, model, n, layout, cdyn_args::kCeAbaIndependent,
                               {{y, nyq},
                                {ydot, ny},
                                {tau, ntau},
                                {fext, nfext},
                                {ydd, nydd},
                                {q, nq},
                                {v, nv},
                                {qdd, nqdd}},
                               stateCeAbaIndependent, &s))
    return st;
  j.nq = s.nq;
  const bool hasGuess = !(qGuess == nullptr && nqGuess == 0);
  j.qGuess = hasGuess ? qGuess : qReference;
  j.nqGuess = hasGuess ? nqGuess : s.nq;
  j.stacksGuess = true;
  return CDYN_OK;
}

cdyn_status modelStatus(const cdyn_model* model) {
  int nq = 0;
  return model == nullptr ? CDYN_ERR_NULL_POINTER : cdyn_model_nq(model, &nq);
}

/// Entry point of a cdyn_batch_* function: the model, then the job that makeJob(job) fills
/// (sizes, arguments), then the run on the caller's workspaces.
template <typename MakeJob>
cdyn_status batchEntry(const cdyn_model* model, cdyn_workspace* const* ws, int nws,
                       int* failedIndex, MakeJob makeJob) {
  if (failedIndex) *failedIndex = -1;
  if (cdyn_status s = modelStatus(model)) return s;
  Job job;
  if (cdyn_status s = makeJob(job)) return s;
  return runWithWorkspaces(job, ws, nws, failedIndex);
}

/// Entry point of a cdyn_pool_* function: the job is made only for a valid pool of this model
/// (runOnPool reports the others, with the message in the pool).
template <typename MakeJob>
cdyn_status poolEntry(const cdyn_model* model, cdyn_pool* pool, int n, int layout, int* failedIndex,
                      MakeJob makeJob) {
  if (failedIndex) *failedIndex = -1;
  Job job;
  if (validPool(pool) && model == poolModel(pool))
    if (cdyn_status s = makeJob(job)) return s;
  job.model = model;
  job.n = n;
  job.layout = layout;
  return runOnPool(job, pool, failedIndex);
}

}  // namespace

extern "C" {

cdyn_status cdyn_batch_ce_aba(const cdyn_model* model, cdyn_workspace* const* ws, int nws, int n,
                              int layout, const double* q, int nq, const double* v, int nv,
                              const double* tau, int ntau, const double* fext, int nfext,
                              double* ydd, int nydd, double* qdd, int nqdd, int* failed_index) {
  return batchEntry(model, ws, nws, failed_index,
                    spanningJob<cdyn_ce_aba>(
                        model, n, layout, cdyn_args::kCeAba,
                        {{q, nq}, {v, nv}, {tau, ntau}, {fext, nfext}, {ydd, nydd}, {qdd, nqdd}}));
}

cdyn_status cdyn_pool_ce_aba(const cdyn_model* model, cdyn_pool* pool, int n, int layout,
                             const double* q, int nq, const double* v, int nv, const double* tau,
                             int ntau, const double* fext, int nfext, double* ydd, int nydd,
                             double* qdd, int nqdd, int* failed_index) {
  return poolEntry(model, pool, n, layout, failed_index,
                   spanningJob<cdyn_ce_aba>(
                       model, n, layout, cdyn_args::kCeAba,
                       {{q, nq}, {v, nv}, {tau, ntau}, {fext, nfext}, {ydd, nydd}, {qdd, nqdd}}));
}

cdyn_status cdyn_batch_ce_rnea(const cdyn_model* model, cdyn_workspace* const* ws, int nws, int n,
                               int layout, const double* q, int nq, const double* v, int nv,
                               const double* ydd, int nydd, const double* fext, int nfext,
                               double* tau, int ntau, double* qdd, int nqdd, int* failed_index) {
  return batchEntry(model, ws, nws, failed_index,
                    spanningJob<cdyn_ce_rnea>(
                        model, n, layout, cdyn_args::kCeRnea,
                        {{q, nq}, {v, nv}, {ydd, nydd}, {fext, nfext}, {tau, ntau}, {qdd, nqdd}}));
}

cdyn_status cdyn_pool_ce_rnea(const cdyn_model* model, cdyn_pool* pool, int n, int layout,
                              const double* q, int nq, const double* v, int nv, const double* ydd,
                              int nydd, const double* fext, int nfext, double* tau, int ntau,
                              double* qdd, int nqdd, int* failed_index) {
  return poolEntry(model, pool, n, layout, failed_index,
                   spanningJob<cdyn_ce_rnea>(
                       model, n, layout, cdyn_args::kCeRnea,
                       {{q, nq}, {v, nv}, {ydd, nydd}, {fext, nfext}, {tau, ntau}, {qdd, nqdd}}));
}

cdyn_status cdyn_batch_cluster_mass_matrix(const cdyn_model* model, cdyn_workspace* const* ws,
                                           int nws, int n, int layout, const double* q, int nq,
                                           double* H, int nh, int* failed_index) {
  return batchEntry(model, ws, nws, failed_index,
                    [&](Job& job) { return massMatrixJob(job, model, n, layout, q, nq, H, nh); });
}

cdyn_status cdyn_pool_cluster_mass_matrix(const cdyn_model* model, cdyn_pool* pool, int n,
                                          int layout, const double* q, int nq, double* H, int nh,
                                          int* failed_index) {
  return poolEntry(model, pool, n, layout, failed_index,
                   [&](Job& job) { return massMatrixJob(job, model, n, layout, q, nq, H, nh); });
}

cdyn_status cdyn_batch_ce_aba_independent(const cdyn_model* model, cdyn_workspace* const* ws,
                                          int nws, int n, int layout, const double* y, int nyq,
                                          const double* ydot, int ny, const double* tau, int ntau,
                                          const double* fext, int nfext, const double* q_guess,
                                          int nq_guess, double* ydd, int nydd, double* q, int nq,
                                          double* v, int nv, double* qdd, int nqdd,
                                          int* failed_index) {
  return cdyn_internal::guard(cdyn_internal::Sink{}, cdyn_internal::Phase::Call, [&] {
    std::vector<double> reference;  // the default warm start (no pool to hold it)
    return batchEntry(model, ws, nws, failed_index, [&](Job& job) {
      Sizes s;
      if (cdyn_status st = readSizes(model, &s)) return st;
      reference.resize(static_cast<std::size_t>(s.nq));
      if (cdyn_status st = cdyn_model_reference_configuration(model, reference.data(), s.nq))
        return st;
      return ceAbaIndependentJob(job, model, n, layout, y, nyq, ydot, ny, tau, ntau, fext, nfext,
                                 q_guess, nq_guess, reference.data(), ydd, nydd, q, nq, v, nv, qdd,
                                 nqdd);
    });
  });
}

cdyn_status cdyn_pool_ce_aba_independent(const cdyn_model* model, cdyn_pool* pool, int n,
                                         int layout, const double* y, int nyq, const double* ydot,
                                         int ny, const double* tau, int ntau, const double* fext,
                                         int nfext, const double* q_guess, int nq_guess,
                                         double* ydd, int nydd, double* q, int nq, double* v,
                                         int nv, double* qdd, int nqdd, int* failed_index) {
  return poolEntry(model, pool, n, layout, failed_index, [&](Job& job) {
    return ceAbaIndependentJob(job, model, n, layout, y, nyq, ydot, ny, tau, ntau, fext, nfext,
                               q_guess, nq_guess, poolReference(pool), ydd, nydd, q, nq, v, nv, qdd,
                               nqdd);
  });
}

}  // extern "C"

// ---- batched constrained dynamics ------------------------------------------------------------

namespace {

/// Job of a batched proximal solve. A NULL or invalid set leaves job.model NULL (reported by
/// the runners).
cdyn_status constrainedJob(Job& j, const cdyn_constraint_set* set, int n, int layout, int solver,
                           const double* q, const double* v, const double* tau, const double* fext,
                           const cdyn_proximal_settings* settings, double* ydd, double* qdd,
                           double* lambda, int m, cdyn_proximal_result* results) {
  j.constrained = true;
  j.set = set;
  j.n = n;
  j.layout = layout;
  j.model = set ? cdyn_batch_internal::constraintSetModel(set) : nullptr;
  if (j.model == nullptr) return CDYN_OK;
  Sizes s;
  if (cdyn_status st = readSizes(j.model, &s)) return st;
  j.solver = solver;
  j.settings = settings;
  j.results = results;
  // Lengths from the model (the functions take none; m is checked by the set).
  s.rows = m;
  const auto& spec = cdyn_args::kConstrainedSolve;
  const double* p[] = {q, v, tau, fext, ydd, qdd, lambda};
  ArrayArg a[cdyn_args::count(spec)];
  for (int k = 0; k < cdyn_args::count(spec); ++k)
    a[k] = {p[k], spec[k].optional && p[k] == nullptr ? 0 : std::max(0, s.of(spec[k].len))};
  setArgs(j, spec, s, a);
  j.fn = stateConstrained;
  return CDYN_OK;
}

}  // namespace

extern "C" {

cdyn_status cdyn_batch_constrained_dynamics(const cdyn_constraint_set* set,
                                            cdyn_constraint_workspace* const* ws, int nws, int n,
                                            int layout, int solver, const double* q,
                                            const double* v, const double* tau, const double* fext,
                                            const cdyn_proximal_settings* settings, double* ydd,
                                            double* qdd, double* lambda, int m,
                                            cdyn_proximal_result* results, int* failed_index) {
  if (failed_index) *failed_index = -1;
  if (cdyn_status s = checkHandleArray(ws, nws)) return s;
  if (cdyn_status s = checkShape(n, layout)) return s;
  Job job;
  if (cdyn_status s = constrainedJob(job, set, n, layout, solver, q, v, tau, fext, settings, ydd,
                                     qdd, lambda, m, results))
    return s;
  // Every workspace: handle, set, and the state-independent arguments (message in ws[k]).
  for (int k = 0; k < nws; ++k)
    if (cdyn_status s = checkArgs(job, Worker{nullptr, ws[k], nullptr})) return s;
  if (n == 0) return CDYN_OK;
  const int threads = std::max(1, std::min(nws, n));
  Worker one[1];
  return cdyn_internal::guard(cdyn_internal::Sink{}, cdyn_internal::Phase::Call, [&] {
    std::vector<Worker> many;
    Worker* workers = one;
    if (threads > 1) {
      many.resize(threads);
      workers = many.data();
    }
    for (int k = 0; k < threads; ++k)
      workers[k] = {nullptr, ws[k], cdyn_batch_internal::constraintGather(ws[k])};
    runStarted(job, workers, threads);
    return finish(job, workers[0], failed_index);
  });
}

cdyn_status cdyn_pool_constrained_dynamics(const cdyn_constraint_set* set, cdyn_pool* pool,
                                           cdyn_constraint_workspace* const* ws, int nws, int n,
                                           int layout, int solver, const double* q, const double* v,
                                           const double* tau, const double* fext,
                                           const cdyn_proximal_settings* settings, double* ydd,
                                           double* qdd, double* lambda, int m,
                                           cdyn_proximal_result* results, int* failed_index) {
  if (failed_index) *failed_index = -1;
  Job job;
  if (cdyn_status s = constrainedJob(job, set, n, layout, solver, q, v, tau, fext, settings, ydd,
                                     qdd, lambda, m, results))
    return s;
  return runOnPool(job, pool, failed_index, ws, nws);
}

}  // extern "C"
