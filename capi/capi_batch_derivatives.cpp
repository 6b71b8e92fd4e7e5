// Batched derivatives of the C API (cdyn_batch_rnea_derivatives, cdyn_batch_aba_derivatives,
// cdyn_batch_ce_rnea_derivatives, cdyn_batch_ce_aba_derivatives, cdyn_batch_minverse,
// cdyn_batch_cluster_minverse):
// n states per call on the
// threads of the batch machinery (capi_batch_job.hpp, capi_batch_run.cpp), one caller
// derivative workspace per thread. Every state is evaluated by the public single-state function,
// so the results are bit-identical to single calls by construction.
#include <algorithm>
#include <vector>

#include "capi_batch_job.hpp"
#include "capi_derivatives_internal.hpp"

using namespace cdyn_batch;
using cdyn_args::ArrayArg;

namespace {

/// The matrices of a derivative job (arguments first..nargs-1: 5, 6, 7 of the derivatives, 1 of
/// H^-1): each given one must hold the per-state dim * dim elements (message in the worker's
/// derivative workspace).
cdyn_status matrixLengths(const Job& j, const Worker& w, double* const* p, int first) {
  for (int k = first; k < j.nargs; ++k) {
    const Arg& a = j.args[k];
    if (a.optional && p[k] == nullptr && a.len == 0) continue;
    if (a.len != a.expected)
      return cdyn_internal::fail(w.dws->ws, CDYN_ERR_INVALID_SIZE,
                                 "%s has length %d per state, expected %d", a.name, a.len,
                                 a.expected);
    if (p[k] == nullptr && a.len > 0)
      return cdyn_internal::fail(w.dws->ws, CDYN_ERR_NULL_POINTER, "%s is NULL", a.name);
  }
  return CDYN_OK;
}

/// The leading dimension of a state's matrices (the first at argument `first`): dim =
/// sqrt(per-state length), at least 1.
int leadingDimension(const Job& j, int first) {
  int dim = 0;
  while (dim * dim < j.args[first].expected) ++dim;
  return std::max(1, dim);
}

using DerivativeFn = cdyn_status (*)(const cdyn_model*, cdyn_derivative_workspace*, const double*,
                                     int, const double*, int, const double*, int, const double*,
                                     int, double*, int, double*, double*, double*, int);

/// Arguments: 0 q, 1 v, 2 a / tau / ydd, 3 fext, 4 tau / ddq / ydd (optional), 5..7 matrices.
template <DerivativeFn fn>
cdyn_status stateDerivatives(const Job& j, const Worker& w, int, double* const* p, double*) {
  if (cdyn_status s = matrixLengths(j, w, p, 5)) return s;
  const Arg* a = j.args;
  return fn(j.model, w.dws, p[0], a[0].len, p[1], a[1].len, p[2], a[2].len, p[3], a[3].len, p[4],
            a[4].len, p[5], p[6], p[7], leadingDimension(j, 5));
}

using InverseFn = cdyn_status (*)(const cdyn_model*, cdyn_derivative_workspace*, const double*, int,
                                  double*, int);

/// Arguments: 0 q, 1 Minv (cdyn_minverse) or Hinv (cdyn_cluster_minverse).
template <InverseFn fn>
cdyn_status stateInverse(const Job& j, const Worker& w, int, double* const* p, double*) {
  if (cdyn_status s = matrixLengths(j, w, p, 1)) return s;
  return fn(j.model, w.dws, p[0], j.args[0].len, p[1], leadingDimension(j, 1));
}

/// Runs a derivative job on the caller's derivative workspaces (one per thread; the calling
/// thread is one). No allocation with nws == 1 and CDYN_BATCH_ROW_MAJOR.
cdyn_status runOnDerivativeWorkspaces(Job& job, cdyn_derivative_workspace* const* dws, int nws,
                                      int* failedIndex) {
  if (cdyn_status s = checkHandleArray(dws, nws)) return s;
  if (cdyn_status s = checkShape(job.n, job.layout)) return s;
  for (int k = 0; k < nws; ++k) {
    if (!cdyn_derivatives_internal::validDerivativeWorkspace(dws[k]))
      return refuse(CDYN_ERR_INVALID_ARGUMENT,
                    "an element of dws is not a valid cdyn_derivative_workspace handle");
    if (dws[k]->model != job.model)
      return refuse(CDYN_ERR_WORKSPACE_MISMATCH, "an element of dws was created for another model");
  }
  return cdyn_internal::guard(cdyn_internal::Sink{}, cdyn_internal::Phase::Call, [&] {
    const int threads = std::max(1, std::min(nws, job.n));
    std::size_t gather = 0;  // one state's arrays, for the column-major layout only
    if (job.layout == CDYN_BATCH_COL_MAJOR)
      for (int k = 0; k < job.nargs; ++k)
        gather += static_cast<std::size_t>(std::max(0, job.args[k].len));
    std::vector<double> scratch;
    if (gather > 0) scratch.resize(gather * static_cast<std::size_t>(threads));
    Worker one[1];
    std::vector<Worker> many;
    Worker* workers = one;
    if (threads > 1) {
      many.resize(threads);
      workers = many.data();
    }
    for (int k = 0; k < threads; ++k) {
      workers[k].ws = dws[k]->ws;
      workers[k].dws = dws[k];
      workers[k].scratch = gather > 0 ? scratch.data() + gather * k : nullptr;
    }
    if (cdyn_status s = checkArgs(job, workers[0])) return s;
    if (job.n == 0) return CDYN_OK;
    runStarted(job, workers, threads);
    return finish(job, workers[0], failedIndex);
  });
}

/// Entry point of a cdyn_batch_*_derivatives function.
template <std::size_t N>
cdyn_status batchDerivatives(const cdyn_model* model, cdyn_derivative_workspace* const* dws,
                             int nws, int n, int layout, const cdyn_args::ArgSpec (&spec)[N],
                             const ArrayArg (&a)[N], StateFn fn, int* failedIndex) {
  if (failedIndex) *failedIndex = -1;
  int nq = 0;
  if (model == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "model is NULL");
  if (cdyn_status s = cdyn_model_nq(model, &nq)) return s;
  Job job;
  if (cdyn_status s = makeJob(job, model, n, layout, spec, a, fn)) return s;
  return runOnDerivativeWorkspaces(job, dws, nws, failedIndex);
}

}  // namespace

extern "C" {

cdyn_status cdyn_batch_rnea_derivatives(const cdyn_model* model,
                                        cdyn_derivative_workspace* const* dws, int nws, int n,
                                        int layout, const double* q, int nq, const double* v,
                                        int nv, const double* a, int na, const double* fext,
                                        int nfext, double* tau, int ntau, double* dtau_dq, int ndq,
                                        double* dtau_dv, int ndv, double* dtau_da, int nda,
                                        int* failed_index) {
  return batchDerivatives(model, dws, nws, n, layout, cdyn_args::kRneaDerivatives,
                          {{q, nq},
                           {v, nv},
                           {a, na},
                           {fext, nfext},
                           {tau, ntau},
                           {dtau_dq, ndq},
                           {dtau_dv, ndv},
                           {dtau_da, nda}},
                          stateDerivatives<cdyn_rnea_derivatives>, failed_index);
}

cdyn_status cdyn_batch_aba_derivatives(const cdyn_model* model,
                                       cdyn_derivative_workspace* const* dws, int nws, int n,
                                       int layout, const double* q, int nq, const double* v, int nv,
                                       const double* tau, int ntau, const double* fext, int nfext,
                                       double* ddq, int nddq, double* ddq_dq, int ndq,
                                       double* ddq_dv, int ndv, double* Minv, int nminv,
                                       int* failed_index) {
  return batchDerivatives(model, dws, nws, n, layout, cdyn_args::kAbaDerivatives,
                          {{q, nq},
                           {v, nv},
                           {tau, ntau},
                           {fext, nfext},
                           {ddq, nddq},
                           {ddq_dq, ndq},
                           {ddq_dv, ndv},
                           {Minv, nminv}},
                          stateDerivatives<cdyn_aba_derivatives>, failed_index);
}

cdyn_status cdyn_batch_ce_rnea_derivatives(const cdyn_model* model,
                                           cdyn_derivative_workspace* const* dws, int nws, int n,
                                           int layout, const double* q, int nq, const double* v,
                                           int nv, const double* ydd, int nydd, const double* fext,
                                           int nfext, double* tau, int ntau, double* dtau_dy,
                                           int ndy, double* dtau_dydot, int ndydot, double* H,
                                           int nh, int* failed_index) {
  return batchDerivatives(model, dws, nws, n, layout, cdyn_args::kCeRneaDerivatives,
                          {{q, nq},
                           {v, nv},
                           {ydd, nydd},
                           {fext, nfext},
                           {tau, ntau},
                           {dtau_dy, ndy},
                           {dtau_dydot, ndydot},
                           {H, nh}},
                          stateDerivatives<cdyn_ce_rnea_derivatives>, failed_index);
}

cdyn_status cdyn_batch_ce_aba_derivatives(const cdyn_model* model,
                                          cdyn_derivative_workspace* const* dws, int nws, int n,
                                          int layout, const double* q, int nq, const double* v,
                                          int nv, const double* tau, int ntau, const double* fext,
                                          int nfext, double* ydd, int nydd, double* dydd_dy,
                                          int ndy, double* dydd_dydot, int ndydot, double* Hinv,
                                          int nhinv, int* failed_index) {
  return batchDerivatives(model, dws, nws, n, layout, cdyn_args::kCeAbaDerivatives,
                          {{q, nq},
                           {v, nv},
                           {tau, ntau},
                           {fext, nfext},
                           {ydd, nydd},
                           {dydd_dy, ndy},
                           {dydd_dydot, ndydot},
                           {Hinv, nhinv}},
                          stateDerivatives<cdyn_ce_aba_derivatives>, failed_index);
}

cdyn_status cdyn_batch_minverse(const cdyn_model* model, cdyn_derivative_workspace* const* dws,
                                int nws, int n, int layout, const double* q, int nq, double* Minv,
                                int nminv, int* failed_index) {
  return batchDerivatives(model, dws, nws, n, layout, cdyn_args::kMinverse,
                          {{q, nq}, {Minv, nminv}}, stateInverse<cdyn_minverse>, failed_index);
}

cdyn_status cdyn_batch_cluster_minverse(const cdyn_model* model,
                                        cdyn_derivative_workspace* const* dws, int nws, int n,
                                        int layout, const double* q, int nq, double* Hinv,
                                        int nhinv, int* failed_index) {
  return batchDerivatives(model, dws, nws, n, layout, cdyn_args::kClusterMinverse,
                          {{q, nq}, {Hinv, nhinv}}, stateInverse<cdyn_cluster_minverse>,
                          failed_index);
}

}  // extern "C"
