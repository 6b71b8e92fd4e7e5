// The machinery of the batched evaluation (not installed; hidden visibility): a Job (the stacked
// arguments, read from a function's description in capi_args.hpp, and a per-state function),
// the threads that run it (capi_batch_run.cpp) and the pool (capi_batch_pool.cpp). Everything
// here uses clusterdyn.h only: no dynamics and no knowledge of the handles' internals.
#pragma once

#include <atomic>
#include <climits>
#include <cstddef>
#include <cstdint>

#include "capi_args.hpp"
#include "capi_errors.hpp"
#include "clusterdyn.h"

namespace cdyn_batch {

using cdyn_internal::refuse;

constexpr int kMaxThreads = 1024;
constexpr int kMaxArgs = 8;
constexpr int kGuessArg = kMaxArgs;  ///< Job::badArg value of a wrong q_guess

using Sizes = cdyn_args::Sizes;

/// Sizes of a model, read once per call through the public queries.
cdyn_status readSizes(const cdyn_model* m, Sizes* s);

/// Doubles of per-thread scratch any batch function needs: every array of one state (gathered
/// for the column-major layout) plus a spanning state (q, v) for the independent solve.
std::size_t scratchSize(const Sizes& s);

/// One stacked array argument: `len` doubles per state (0 and nullptr when an optional array is
/// absent); `expected` is the model's per-state length.
struct Arg {
  const double* in = nullptr;  ///< input base (nullptr for outputs)
  double* out = nullptr;       ///< output base (nullptr for inputs)
  int len = 0;
  int expected = 0;
  bool optional = false;
  const char* name = "";
};

/// What one thread works with: a workspace (constrained solves: a constraint workspace) and a
/// scratch for the gathered arrays of one state (column-major layout) and the spanning state.
struct Worker {
  cdyn_workspace* ws = nullptr;
  cdyn_constraint_workspace* cws = nullptr;
  double* scratch = nullptr;
  cdyn_derivative_workspace* dws = nullptr;  ///< derivatives: ws is its inner workspace
  cdyn_contact_workspace* ctw = nullptr;     ///< contact rollouts (capi_contact_batch.cpp)
};

struct Job;
/// Evaluates state i: p[k] is the state's pointer of argument k (nullptr when absent), tmp a
/// scratch of nq + nv doubles.
using StateFn = cdyn_status (*)(const Job&, const Worker&, int i, double* const* p, double* tmp);

/// One batch call: the arguments, the per-state function, and the shared progress counters.
struct Job {
  const cdyn_model* model = nullptr;
  int n = 0;
  int layout = CDYN_BATCH_ROW_MAJOR;
  int nargs = 0;
  Arg args[kMaxArgs];
  const double* qGuess = nullptr;  ///< start of every position solve (independent only)
  int nqGuess = 0;
  int nq = 0;                ///< size of the tmp spanning configuration
  bool stacksGuess = false;  ///< takes q_guess (checked with the arguments)
  StateFn fn = nullptr;
  int chunk = 1;
  int badArg = -1;                  ///< first argument checkArgs rejected
  const Worker* workers = nullptr;  ///< one per thread; workers[0] is the calling thread's
  // Constrained solves (cdyn_*_constrained_dynamics): a state that stops above the tolerance
  // (CDYN_ERR_NOT_CONVERGED) still writes its outputs and does not stop the batch.
  bool constrained = false;
  const cdyn_constraint_set* set = nullptr;
  int solver = 0;
  const cdyn_proximal_settings* settings = nullptr;
  cdyn_proximal_result* results = nullptr;  ///< n results (optional, not stacked)
  // Contact rollouts (capi_contact_batch.cpp): like the constrained solves, a state whose steps
  // stopped above the tolerance writes its outputs; rolloutContext: that file's per-call data.
  bool rollout = false;
  const void* rolloutContext = nullptr;
  std::atomic<int> next{0};                     ///< first state not yet taken
  std::atomic<int> firstFail{INT_MAX};          ///< lowest failed state so far
  std::atomic<int> firstNotConverged{INT_MAX};  ///< lowest state that did not converge
};

/// The stacked arguments of a job from a function's description (capi_args.hpp): a[k] is the
/// caller's base pointer and per-state length of argument k.
template <std::size_t N>
void setArgs(Job& j, const cdyn_args::ArgSpec (&spec)[N], const Sizes& s,
             const cdyn_args::ArrayArg (&a)[N]) {
  static_assert(N <= kMaxArgs, "a batch job holds at most kMaxArgs arrays");
  j.nargs = static_cast<int>(N);
  for (std::size_t k = 0; k < N; ++k) {
    const bool in = spec[k].dir == cdyn_args::Dir::In;
    j.args[k] = {in ? a[k].p : nullptr,
                 in ? nullptr : const_cast<double*>(a[k].p),
                 a[k].n,
                 s.of(spec[k].len),
                 spec[k].optional,
                 spec[k].name};
  }
}

/// A job of a function with the description spec (capi_args.hpp): model sizes read here (a NULL
/// or invalid model is reported by the caller before); *sizes receives them when given.
template <std::size_t N>
cdyn_status makeJob(Job& j, const cdyn_model* model, int n, int layout,
                    const cdyn_args::ArgSpec (&spec)[N], const cdyn_args::ArrayArg (&a)[N],
                    StateFn fn, Sizes* sizes = nullptr) {
  Sizes s;
  if (cdyn_status st = readSizes(model, &s)) return st;
  j.model = model;
  j.n = n;
  j.layout = layout;
  setArgs(j, spec, s, a);
  j.fn = fn;
  if (sizes) *sizes = s;
  return CDYN_OK;
}

/// Runs state i of the job on worker w.
cdyn_status runState(const Job& job, const Worker& w, int i);

/// Work loop of one thread: takes chunks of states until none is left; records the lowest
/// failed state (states after a known failure are skipped).
void work(Job& job, const Worker& w) noexcept;

/// Argument checks before any state runs (see capi_batch_run.cpp).
cdyn_status checkArgs(Job& job, const Worker& w0);

int chunkFor(int n, int threads);

/// Common prologue: layout and n. Returns CDYN_OK or the status to return.
cdyn_status checkShape(int n, int layout);

/// The status of the lowest failed state (else of the lowest state that did not converge),
/// re-run on worker w0 so that its message is in w0's workspace.
cdyn_status finish(Job& job, const Worker& w0, int* failedIndex);

/// Runs the job on `threads` workers (workers[0] on the calling thread).
void runStarted(Job& job, const Worker* workers, int threads);

/// cdyn_batch_*: threads started here, one per caller workspace (the caller's thread is one).
cdyn_status runWithWorkspaces(Job& job, cdyn_workspace* const* ws, int nws, int* failedIndex);

/// cdyn_pool_*: the pool's workers and workspaces (constrained solves: the caller's constraint
/// workspaces cws, one per thread); no allocation (capi_batch_pool.cpp).
cdyn_status runOnPool(Job& job, cdyn_pool* pool, int* failedIndex,
                      cdyn_constraint_workspace* const* cws = nullptr, int ncws = 0);

/// Runs a job on the pool's threads with workers the caller made, one per pool thread (contact
/// rollouts: arguments checked by the caller before); no allocation (capi_batch_pool.cpp).
cdyn_status runWorkersOnPool(Job& job, cdyn_pool* pool, const Worker* workers, int nworkers,
                             int* failedIndex);

/// A valid pool handle, and its model and reference configuration (the default q_guess).
bool validPool(const cdyn_pool* p);
const cdyn_model* poolModel(const cdyn_pool* p);
const double* poolReference(const cdyn_pool* p);

/// The caller's per-thread handles: 1..kMaxThreads of them, none NULL, no handle twice (one
/// workspace on two threads).
template <typename Handle>
cdyn_status checkHandleArray(Handle* const* ws, int nws) {
  if (ws == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "ws (the array of workspaces) is NULL");
  if (nws < 1 || nws > kMaxThreads)
    return refuse(CDYN_ERR_INVALID_ARGUMENT, "nws must be in 1..1024");
  for (int k = 0; k < nws; ++k) {
    if (ws[k] == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "an element of ws is NULL");
    for (int l = 0; l < k; ++l)
      if (ws[l] == ws[k])
        return refuse(CDYN_ERR_INVALID_ARGUMENT,
                      "ws holds one workspace twice (one workspace per thread)");
  }
  return CDYN_OK;
}

}  // namespace cdyn_batch
