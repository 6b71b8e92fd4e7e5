// Batched evaluation of the C API (cdyn_batch_*, cdyn_pool_*): n states per call, spread over
// threads, each state evaluated by the public single-state function (cdyn_ce_aba, ...,
// cdyn_prox_pv), so the results are bit-identical to single calls by construction. This file
// uses clusterdyn.h and, for the constrained solves, capi_batch_internal.hpp (argument checks
// and a gather buffer of the constraint workspace): it holds no dynamics and no knowledge of
// the handles' internals.
#include <algorithm>
#include <atomic>
#include <climits>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "capi_batch_internal.hpp"
#include "clusterdyn.h"

namespace cdyn_internal {
void setLastError(const char* staticMessage) noexcept;  // capi_internal.cpp (cdyn_last_error)
}  // namespace cdyn_internal

namespace {
/// A refusal with no handle to hold its message: recorded for cdyn_last_error.
cdyn_status refuse(cdyn_status s, const char* staticMessage) noexcept {
  cdyn_internal::setLastError(staticMessage);
  return s;
}
}  // namespace

namespace {

constexpr std::uint32_t kPoolTag = 0x4c504443u;  // "CDPL"
constexpr std::uint32_t kDeadTag = 0xdeaddeadu;
constexpr int kMaxThreads = 1024;
constexpr int kMaxArgs = 8;

/// Sizes of a model, read once per call through the public queries.
struct Sizes {
  int nq = 0, nv = 0, ny = 0, nyq = 0, nbodies = 0;
};

cdyn_status readSizes(const cdyn_model* m, Sizes* s) {
  if (cdyn_status st = cdyn_model_nq(m, &s->nq)) return st;
  if (cdyn_status st = cdyn_model_nv(m, &s->nv)) return st;
  if (cdyn_status st = cdyn_model_ny(m, &s->ny)) return st;
  if (cdyn_status st = cdyn_model_nyq(m, &s->nyq)) return st;
  return cdyn_model_nbodies(m, &s->nbodies);
}

/// Doubles of per-thread scratch any batch function needs: every array of one state (gathered
/// for the column-major layout) plus a spanning state (q, v) for the independent solve.
std::size_t scratchSize(const Sizes& s) {
  const std::size_t nq = s.nq, nv = s.nv, ny = s.ny, nyq = s.nyq, nb = s.nbodies;
  const std::size_t aba = nq + 2 * nv + 2 * ny + 6 * nb;  // q v tau fext ydd qdd
  const std::size_t indep =
      nyq + 2 * ny + 6 * nb + ny + nq + 2 * nv;  // y ydot tau fext ydd q v qdd
  const std::size_t h = nq + ny * ny;
  return std::max({aba, indep, h}) + nq + nv;
}

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
  int nq = 0;  ///< size of the tmp spanning configuration
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
  cdyn_proximal_result* results = nullptr;      ///< n results (optional, not stacked)
  std::atomic<int> next{0};                     ///< first state not yet taken
  std::atomic<int> firstFail{INT_MAX};          ///< lowest failed state so far
  std::atomic<int> firstNotConverged{INT_MAX};  ///< lowest state that did not converge
};

/// Whether a state's outputs are written: success, or a constrained solve that did not converge.
bool outputsWritten(const Job& job, cdyn_status s) {
  return s == CDYN_OK || (job.constrained && s == CDYN_ERR_NOT_CONVERGED);
}

void lowerTo(std::atomic<int>& a, int i) {
  int cur = a.load(std::memory_order_relaxed);
  while (i < cur && !a.compare_exchange_weak(cur, i)) {
  }
}

/// Runs state i of the job on worker w.
cdyn_status runState(const Job& job, const Worker& w, int i) {
  double* p[kMaxArgs] = {};
  const std::size_t n = static_cast<std::size_t>(job.n), si = static_cast<std::size_t>(i);
  double* cursor = w.scratch;
  const bool rowMajor = job.layout == CDYN_BATCH_ROW_MAJOR;
  for (int k = 0; k < job.nargs; ++k) {
    const Arg& a = job.args[k];
    const double* base = a.in ? a.in : a.out;
    if (base == nullptr || a.len == 0) continue;
    const std::size_t len = static_cast<std::size_t>(a.len);
    if (rowMajor) {
      p[k] = const_cast<double*>(base) + si * len;  // inputs are only read through p
    } else {
      p[k] = cursor;
      cursor += len;
      if (a.in)
        for (std::size_t j = 0; j < len; ++j) p[k][j] = a.in[si + j * n];
    }
  }
  const cdyn_status s = job.fn(job, w, i, p, cursor);
  if (outputsWritten(job, s) && !rowMajor) {
    for (int k = 0; k < job.nargs; ++k) {
      const Arg& a = job.args[k];
      if (a.out == nullptr || a.len == 0) continue;
      for (std::size_t j = 0; j < static_cast<std::size_t>(a.len); ++j) a.out[si + j * n] = p[k][j];
    }
  }
  return s;
}

/// Work loop of one thread: takes chunks of states until none is left; records the lowest
/// failed state (states after a known failure are skipped).
void work(Job& job, const Worker& w) noexcept {
  for (;;) {
    const int begin = job.next.fetch_add(job.chunk, std::memory_order_relaxed);
    if (begin < 0 || begin >= job.n) return;  // begin < 0: the counter wrapped (n near INT_MAX)
    const int end = std::min(job.n, begin + job.chunk);
    for (int i = begin; i < end; ++i) {
      if (i > job.firstFail.load(std::memory_order_relaxed)) return;
      const cdyn_status s = runState(job, w, i);
      if (s == CDYN_OK) continue;
      if (outputsWritten(job, s)) {
        lowerTo(job.firstNotConverged, i);
        continue;
      }
      lowerTo(job.firstFail, i);
      return;
    }
  }
}

cdyn_status stateCeAbaIndependent(const Job& j, const Worker& w, int i, double* const* p,
                                  double* tmp);
constexpr int kGuessArg = kMaxArgs;  ///< Job::badArg value of a wrong q_guess

/// Argument checks before any state runs. When an array's length or pointer is wrong, the
/// single-state function is called once on worker w0 with the unshifted pointers: it rejects the
/// same argument, with its status and message, before reading any data. Constrained solves take
/// their lengths from the model: their checks are the constraint layer's (message in w0.cws).
cdyn_status checkArgs(Job& job, const Worker& w0) {
  job.badArg = -1;
  if (job.constrained) {
    const Arg* a = job.args;  // q v tau fext ydd qdd lambda
    return cdyn_batch_internal::checkBatchedSolve(job.solver, job.set, w0.cws, a[0].in, a[1].in,
                                                  a[2].in, a[4].out, a[6].out, a[6].len,
                                                  job.settings);
  }
  for (int k = 0; k < job.nargs && job.badArg < 0; ++k) {
    const Arg& a = job.args[k];
    const void* base = a.in ? static_cast<const void*>(a.in) : static_cast<const void*>(a.out);
    if (a.optional && base == nullptr && a.len == 0) continue;
    if (a.len != a.expected || (base == nullptr && a.len > 0)) job.badArg = k;
  }
  // The one q_guess of the independent solves (not stacked): (NULL, 0) or nq doubles.
  if (job.badArg < 0 && job.fn == stateCeAbaIndependent &&
      (job.nqGuess != job.nq || job.qGuess == nullptr))
    job.badArg = kGuessArg;
  if (job.badArg < 0) return CDYN_OK;
  double* p[kMaxArgs] = {};
  for (int k = 0; k < job.nargs; ++k)
    p[k] = job.args[k].in ? const_cast<double*>(job.args[k].in) : job.args[k].out;
  const cdyn_status s = job.fn(job, w0, 0, p, w0.scratch);
  return s != CDYN_OK ? s : CDYN_ERR_INVALID_SIZE;
}

int chunkFor(int n, int threads) { return std::max(1, std::min(64, n / (8 * threads))); }

// ---- the per-state functions ---------------------------------------------------------------

cdyn_status stateCeAba(const Job& j, const Worker& w, int, double* const* p, double*) {
  const Arg* a = j.args;
  return cdyn_ce_aba(j.model, w.ws, p[0], a[0].len, p[1], a[1].len, p[2], a[2].len, p[3], a[3].len,
                     p[4], a[4].len, p[5], a[5].len);
}

cdyn_status stateCeRnea(const Job& j, const Worker& w, int, double* const* p, double*) {
  const Arg* a = j.args;
  return cdyn_ce_rnea(j.model, w.ws, p[0], a[0].len, p[1], a[1].len, p[2], a[2].len, p[3], a[3].len,
                      p[4], a[4].len, p[5], a[5].len);
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

// ---- running a job on threads --------------------------------------------------------------

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

/// Common prologue: layout and n. Returns CDYN_OK or the status to return.
cdyn_status checkShape(int n, int layout) {
  if (n < 0) return refuse(CDYN_ERR_INVALID_SIZE, "n (the number of states) is negative");
  if (layout != CDYN_BATCH_ROW_MAJOR && layout != CDYN_BATCH_COL_MAJOR)
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "layout is not CDYN_BATCH_ROW_MAJOR or CDYN_BATCH_COL_MAJOR");
  return CDYN_OK;
}

/// After the threads finished: the status of the lowest failed state (else of the lowest state
/// that did not converge), re-run on worker w0 (the states are deterministic, so the re-run
/// ends the same way, writes the same outputs and leaves its message in w0's workspace).
cdyn_status finish(Job& job, const Worker& w0, int* failedIndex) {
  int fail = job.firstFail.load();
  if (fail == INT_MAX) fail = job.firstNotConverged.load();
  if (fail == INT_MAX) return CDYN_OK;
  if (failedIndex) *failedIndex = fail;
  const cdyn_status s = runState(job, w0, fail);
  return s != CDYN_OK ? s : CDYN_ERR_INTERNAL;
}

/// Runs the job on `threads` workers (workers[0] on the calling thread, the others on threads
/// started here; fewer when a thread cannot start).
void runStarted(Job& job, const Worker* workers, int threads) {
  job.workers = workers;
  job.chunk = chunkFor(job.n, threads);
  std::vector<std::thread> started;
  if (threads > 1) started.reserve(threads - 1);
  for (int k = 1; k < threads; ++k) {
    try {
      started.emplace_back(work, std::ref(job), std::cref(workers[k]));
    } catch (const std::system_error&) {
      break;  // fewer threads: the started ones and this one take every state
    }
  }
  work(job, workers[0]);
  for (std::thread& t : started) t.join();
}

/// cdyn_batch_*: threads started here, one per caller workspace (the caller's thread is one).
cdyn_status runWithWorkspaces(Job& job, cdyn_workspace* const* ws, int nws, int* failedIndex) {
  if (failedIndex) *failedIndex = -1;
  if (cdyn_status s = checkHandleArray(ws, nws)) return s;
  if (cdyn_status s = checkShape(job.n, job.layout)) return s;
  for (int k = 0; k < nws; ++k) {
    // Handle kind and model of every workspace (cdyn_last_loop_closure reads nothing else).
    if (cdyn_status s = cdyn_last_loop_closure(job.model, ws[k], nullptr, nullptr)) return s;
  }
  try {
    Sizes sizes;
    if (cdyn_status s = readSizes(job.model, &sizes)) return s;
    const int threads = std::max(1, std::min(nws, job.n));
    std::vector<std::vector<double>> scratch(threads, std::vector<double>(scratchSize(sizes)));
    std::vector<Worker> workers(threads);
    for (int k = 0; k < threads; ++k) workers[k] = {ws[k], nullptr, scratch[k].data()};
    if (cdyn_status s = checkArgs(job, workers[0])) return s;
    if (job.n == 0) return CDYN_OK;
    runStarted(job, workers.data(), threads);
    return finish(job, workers[0], failedIndex);
  } catch (const std::bad_alloc&) {
    return CDYN_ERR_OUT_OF_MEMORY;
  } catch (...) {
    return CDYN_ERR_INTERNAL;
  }
}

}  // namespace

// ---- the pool --------------------------------------------------------------------------------

struct cdyn_pool {
  std::uint32_t tag = kPoolTag;
  const cdyn_model* model = nullptr;
  int nthreads = 0;
  std::vector<cdyn_workspace*> ws;
  std::vector<std::vector<double>> scratch;
  std::vector<Worker> threadWorkers;      ///< ws[k] with scratch[k]
  std::vector<Worker> constraintWorkers;  ///< the caller's constraint workspaces of one call
  std::vector<double> qReference;         ///< start of the independent solves without q_guess
  std::vector<std::thread> workers;
  std::mutex callMutex;  ///< one batch at a time
  std::mutex mutex;      ///< guards job, generation, pending, stop
  std::condition_variable startCv, doneCv;
  Job* job = nullptr;
  std::uint64_t generation = 0;
  int pending = 0;
  bool stop = false;
  char message[512] = {};
};

namespace {

bool validPool(const cdyn_pool* p) { return p != nullptr && p->tag == kPoolTag; }

void workerLoop(cdyn_pool* pool, int k) {
  std::uint64_t seen = 0;
  for (;;) {
    Job* job = nullptr;
    {
      std::unique_lock<std::mutex> lock(pool->mutex);
      pool->startCv.wait(lock, [&] { return pool->stop || pool->generation != seen; });
      if (pool->stop) return;
      seen = pool->generation;
      job = pool->job;
    }
    work(*job, job->workers[k]);
    std::lock_guard<std::mutex> lock(pool->mutex);
    if (--pool->pending == 0) pool->doneCv.notify_one();
  }
}

void stopWorkers(cdyn_pool* pool) {
  {
    std::lock_guard<std::mutex> lock(pool->mutex);  // notified under the lock (helgrind-clean)
    pool->stop = true;
    pool->startCv.notify_all();
  }
  for (std::thread& t : pool->workers) t.join();
  pool->workers.clear();
}

void setMessage(cdyn_pool* pool, const char* text) {
  std::snprintf(pool->message, sizeof pool->message, "%s", text);
}

/// The constraint workspaces of a constrained pool call, one per pool thread: each checked
/// against the set (message copied to the pool), then used as the call's workers.
cdyn_status takeConstraintWorkspaces(Job& job, cdyn_pool* pool,
                                     cdyn_constraint_workspace* const* cws, int ncws) {
  if (cws == nullptr) {
    setMessage(pool, "ws (the constraint workspaces) is NULL");
    return CDYN_ERR_NULL_POINTER;
  }
  if (ncws != pool->nthreads) {
    std::snprintf(pool->message, sizeof pool->message,
                  "nws is %d, expected the pool's %d threads (one constraint workspace each)", ncws,
                  pool->nthreads);
    return CDYN_ERR_INVALID_ARGUMENT;
  }
  for (int k = 0; k < ncws; ++k) {
    if (cws[k] == nullptr) {
      std::snprintf(pool->message, sizeof pool->message, "ws[%d] is NULL", k);
      return CDYN_ERR_NULL_POINTER;
    }
    for (int l = 0; l < k; ++l)
      if (cws[l] == cws[k]) {
        std::snprintf(pool->message, sizeof pool->message,
                      "ws[%d] and ws[%d] are the same constraint workspace", l, k);
        return CDYN_ERR_INVALID_ARGUMENT;
      }
    // Handle, set, settings: the full check (the arrays' NULL-ness is checked again on ws[0]).
    const Arg* a = job.args;
    if (cdyn_status s = cdyn_batch_internal::checkBatchedSolve(job.solver, job.set, cws[k], a[0].in,
                                                               a[1].in, a[2].in, a[4].out, a[6].out,
                                                               a[6].len, job.settings)) {
      setMessage(pool, cdyn_constraint_workspace_last_error(cws[k]));
      return s;
    }
    pool->constraintWorkers[k] = {nullptr, cws[k], cdyn_batch_internal::constraintGather(cws[k])};
  }
  return CDYN_OK;
}

/// cdyn_pool_*: the pool's workers and workspaces (constrained solves: the caller's constraint
/// workspaces cws, one per thread); no allocation.
cdyn_status runOnPool(Job& job, cdyn_pool* pool, int* failedIndex,
                      cdyn_constraint_workspace* const* cws = nullptr, int ncws = 0) {
  if (failedIndex) *failedIndex = -1;
  if (pool == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "pool is NULL");
  if (!validPool(pool))
    return refuse(CDYN_ERR_INVALID_ARGUMENT, "pool is not a valid cdyn_pool handle");
  std::lock_guard<std::mutex> call(pool->callMutex);
  pool->message[0] = '\0';
  if (job.constrained && job.set == nullptr) {
    setMessage(pool, "set is NULL");
    return CDYN_ERR_NULL_POINTER;
  }
  if (job.model == nullptr) {
    setMessage(pool,
               job.constrained ? "set is not a valid cdyn_constraint_set handle" : "model is NULL");
    return job.constrained ? CDYN_ERR_INVALID_ARGUMENT : CDYN_ERR_NULL_POINTER;
  }
  if (job.model != pool->model) {
    setMessage(pool, job.constrained ? "the pool was created for another model than the set's"
                                     : "the pool was created for another model");
    return CDYN_ERR_WORKSPACE_MISMATCH;
  }
  if (cdyn_status s = checkShape(job.n, job.layout)) {
    setMessage(pool, s == CDYN_ERR_INVALID_SIZE
                         ? "n (the number of states) is negative"
                         : "layout is not CDYN_BATCH_ROW_MAJOR or CDYN_BATCH_COL_MAJOR");
    return s;
  }
  job.workers = pool->threadWorkers.data();
  if (job.constrained) {
    if (cdyn_status s = takeConstraintWorkspaces(job, pool, cws, ncws)) return s;
    job.workers = pool->constraintWorkers.data();
  }
  const Worker& w0 = job.workers[0];
  cdyn_status s = checkArgs(job, w0);
  if (s == CDYN_OK && job.n > 0) {
    job.chunk = chunkFor(job.n, pool->nthreads);
    if (pool->nthreads > 1) {
      {
        std::lock_guard<std::mutex> lock(pool->mutex);
        pool->job = &job;
        pool->pending = pool->nthreads - 1;
        ++pool->generation;
        pool->startCv.notify_all();
      }
    }
    work(job, w0);
    if (pool->nthreads > 1) {
      std::unique_lock<std::mutex> lock(pool->mutex);
      pool->doneCv.wait(lock, [&] { return pool->pending == 0; });
      pool->job = nullptr;
    }
    s = finish(job, w0, failedIndex);
  }
  if (s != CDYN_OK) {
    if (job.badArg == kGuessArg) {
      std::snprintf(pool->message, sizeof pool->message, "q_guess has length %d, expected %d",
                    job.nqGuess, job.nq);
    } else if (job.badArg >= 0) {
      const Arg& a = job.args[job.badArg];
      if (a.len != a.expected)
        std::snprintf(pool->message, sizeof pool->message,
                      "%s has length %d per state, expected %d", a.name, a.len, a.expected);
      else
        std::snprintf(pool->message, sizeof pool->message, "%s is NULL", a.name);
    } else {
      setMessage(pool, job.constrained ? cdyn_constraint_workspace_last_error(w0.cws)
                                       : cdyn_workspace_last_error(w0.ws));
    }
  }
  return s;
}

}  // namespace

extern "C" {

cdyn_status cdyn_pool_create(const cdyn_model* model, int nthreads, cdyn_pool** pool) {
  if (pool == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "cdyn_pool_create: pool is NULL");
  *pool = nullptr;
  if (model == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "cdyn_pool_create: model is NULL");
  if (nthreads < 1 || nthreads > kMaxThreads)
    return refuse(CDYN_ERR_INVALID_ARGUMENT, "cdyn_pool_create: nthreads must be in 1..1024");
  Sizes sizes;
  if (cdyn_status s = readSizes(model, &sizes)) return s;
  cdyn_pool* p = nullptr;
  try {
    p = new cdyn_pool;
    p->model = model;
    p->nthreads = nthreads;
    p->ws.assign(nthreads, nullptr);
    p->scratch.assign(nthreads, std::vector<double>(scratchSize(sizes)));
    p->qReference.assign(sizes.nq, 0.0);
    if (cdyn_status s = cdyn_model_reference_configuration(model, p->qReference.data(), sizes.nq)) {
      delete p;
      return s;
    }
    for (int k = 0; k < nthreads; ++k) {
      if (cdyn_status s = cdyn_workspace_create(model, &p->ws[k])) {
        cdyn_pool_free(p);
        return s;
      }
    }
    p->threadWorkers.resize(nthreads);
    for (int k = 0; k < nthreads; ++k)
      p->threadWorkers[k] = {p->ws[k], nullptr, p->scratch[k].data()};
    p->constraintWorkers.resize(nthreads);
    p->workers.reserve(nthreads - 1);
    for (int k = 1; k < nthreads; ++k) p->workers.emplace_back(workerLoop, p, k);
  } catch (...) {  // bad_alloc, or system_error when a thread cannot start
    if (p) cdyn_pool_free(p);
    return CDYN_ERR_OUT_OF_MEMORY;
  }
  *pool = p;
  return CDYN_OK;
}

cdyn_status cdyn_pool_free(cdyn_pool* pool) {
  if (pool == nullptr) return CDYN_OK;
  if (!validPool(pool))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_pool_free: pool is not a valid cdyn_pool handle");
  pool->tag = kDeadTag;
  stopWorkers(pool);
  for (cdyn_workspace* w : pool->ws) cdyn_workspace_free(w);
  delete pool;
  return CDYN_OK;
}

cdyn_status cdyn_pool_nthreads(const cdyn_pool* pool, int* nthreads) {
  if (pool == nullptr || nthreads == nullptr)
    return refuse(CDYN_ERR_NULL_POINTER, "cdyn_pool_nthreads: pool or nthreads is NULL");
  if (!validPool(pool))
    return refuse(CDYN_ERR_INVALID_ARGUMENT,
                  "cdyn_pool_nthreads: pool is not a valid cdyn_pool handle");
  *nthreads = pool->nthreads;
  return CDYN_OK;
}

const char* cdyn_pool_last_error(const cdyn_pool* pool) {
  if (pool == nullptr) return "pool is NULL";
  if (!validPool(pool)) return "not a valid cdyn_pool handle";
  return pool->message;
}

}  // extern "C"

// ---- the batch functions: fill a Job, run it one of the two ways -----------------------------

namespace {

/// Jobs of the four functions (model sizes read here; a NULL or invalid model is reported by
/// the caller before).
cdyn_status ceAbaJob(Job& j, const cdyn_model* model, int n, int layout, const double* q, int nq,
                     const double* v, int nv, const double* tau, int ntau, const double* fext,
                     int nfext, double* ydd, int nydd, double* qdd, int nqdd) {
  Sizes s;
  if (cdyn_status st = readSizes(model, &s)) return st;
  j.model = model;
  j.n = n;
  j.layout = layout;
  j.nargs = 6;
  j.args[0] = {q, nullptr, nq, s.nq, false, "q"};
  j.args[1] = {v, nullptr, nv, s.nv, false, "v"};
  j.args[2] = {tau, nullptr, ntau, s.ny, false, "tau"};
  j.args[3] = {fext, nullptr, nfext, 6 * s.nbodies, true, "fext"};
  j.args[4] = {nullptr, ydd, nydd, s.ny, false, "ydd"};
  j.args[5] = {nullptr, qdd, nqdd, s.nv, true, "qdd"};
  j.fn = stateCeAba;
  return CDYN_OK;
}

cdyn_status ceRneaJob(Job& j, const cdyn_model* model, int n, int layout, const double* q, int nq,
                      const double* v, int nv, const double* ydd, int nydd, const double* fext,
                      int nfext, double* tau, int ntau, double* qdd, int nqdd) {
  Sizes s;
  if (cdyn_status st = readSizes(model, &s)) return st;
  j.model = model;
  j.n = n;
  j.layout = layout;
  j.nargs = 6;
  j.args[0] = {q, nullptr, nq, s.nq, false, "q"};
  j.args[1] = {v, nullptr, nv, s.nv, false, "v"};
  j.args[2] = {ydd, nullptr, nydd, s.ny, false, "ydd"};
  j.args[3] = {fext, nullptr, nfext, 6 * s.nbodies, true, "fext"};
  j.args[4] = {nullptr, tau, ntau, s.ny, false, "tau"};
  j.args[5] = {nullptr, qdd, nqdd, s.nv, true, "qdd"};
  j.fn = stateCeRnea;
  return CDYN_OK;
}

cdyn_status massMatrixJob(Job& j, const cdyn_model* model, int n, int layout, const double* q,
                          int nq, double* H, int nh) {
  Sizes s;
  if (cdyn_status st = readSizes(model, &s)) return st;
  j.model = model;
  j.n = n;
  j.layout = layout;
  j.nargs = 2;
  j.args[0] = {q, nullptr, nq, s.nq, false, "q"};
  j.args[1] = {nullptr, H, nh, s.ny * s.ny, false, "H"};
  j.fn = stateMassMatrix;
  return CDYN_OK;
}

cdyn_status ceAbaIndependentJob(Job& j, const cdyn_model* model, int n, int layout, const double* y,
                                int nyq, const double* ydot, int ny, const double* tau, int ntau,
                                const double* fext, int nfext, const double* qGuess, int nqGuess,
                                const double* qReference, double* ydd, int nydd, double* q, int nq,
                                double* v, int nv, double* qdd, int nqdd) {
  Sizes s;
  if (cdyn_status st = readSizes(model, &s)) return st;
  j.model = model;
  j.n = n;
  j.layout = layout;
  j.nargs = 8;
  j.args[0] = {y, nullptr, nyq, s.nyq, false, "y"};
  j.args[1] = {ydot, nullptr, ny, s.ny, false, "ydot"};
  j.args[2] = {tau, nullptr, ntau, s.ny, false, "tau"};
  j.args[3] = {fext, nullptr, nfext, 6 * s.nbodies, true, "fext"};
  j.args[4] = {nullptr, ydd, nydd, s.ny, false, "ydd"};
  j.args[5] = {nullptr, q, nq, s.nq, true, "q"};
  j.args[6] = {nullptr, v, nv, s.nv, true, "v"};
  j.args[7] = {nullptr, qdd, nqdd, s.nv, true, "qdd"};
  j.nq = s.nq;
  const bool hasGuess = !(qGuess == nullptr && nqGuess == 0);
  j.qGuess = hasGuess ? qGuess : qReference;
  j.nqGuess = hasGuess ? nqGuess : s.nq;
  j.fn = stateCeAbaIndependent;
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
  if (validPool(pool) && model == pool->model)
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
  return batchEntry(model, ws, nws, failed_index, [&](Job& job) {
    return ceAbaJob(job, model, n, layout, q, nq, v, nv, tau, ntau, fext, nfext, ydd, nydd, qdd,
                    nqdd);
  });
}

cdyn_status cdyn_pool_ce_aba(const cdyn_model* model, cdyn_pool* pool, int n, int layout,
                             const double* q, int nq, const double* v, int nv, const double* tau,
                             int ntau, const double* fext, int nfext, double* ydd, int nydd,
                             double* qdd, int nqdd, int* failed_index) {
  return poolEntry(model, pool, n, layout, failed_index, [&](Job& job) {
    return ceAbaJob(job, model, n, layout, q, nq, v, nv, tau, ntau, fext, nfext, ydd, nydd, qdd,
                    nqdd);
  });
}

cdyn_status cdyn_batch_ce_rnea(const cdyn_model* model, cdyn_workspace* const* ws, int nws, int n,
                               int layout, const double* q, int nq, const double* v, int nv,
                               const double* ydd, int nydd, const double* fext, int nfext,
                               double* tau, int ntau, double* qdd, int nqdd, int* failed_index) {
  return batchEntry(model, ws, nws, failed_index, [&](Job& job) {
    return ceRneaJob(job, model, n, layout, q, nq, v, nv, ydd, nydd, fext, nfext, tau, ntau, qdd,
                     nqdd);
  });
}

cdyn_status cdyn_pool_ce_rnea(const cdyn_model* model, cdyn_pool* pool, int n, int layout,
                              const double* q, int nq, const double* v, int nv, const double* ydd,
                              int nydd, const double* fext, int nfext, double* tau, int ntau,
                              double* qdd, int nqdd, int* failed_index) {
  return poolEntry(model, pool, n, layout, failed_index, [&](Job& job) {
    return ceRneaJob(job, model, n, layout, q, nq, v, nv, ydd, nydd, fext, nfext, tau, ntau, qdd,
                     nqdd);
  });
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
  try {
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
  } catch (const std::bad_alloc&) {
    return CDYN_ERR_OUT_OF_MEMORY;
  }
}

cdyn_status cdyn_pool_ce_aba_independent(const cdyn_model* model, cdyn_pool* pool, int n,
                                         int layout, const double* y, int nyq, const double* ydot,
                                         int ny, const double* tau, int ntau, const double* fext,
                                         int nfext, const double* q_guess, int nq_guess,
                                         double* ydd, int nydd, double* q, int nq, double* v,
                                         int nv, double* qdd, int nqdd, int* failed_index) {
  return poolEntry(model, pool, n, layout, failed_index, [&](Job& job) {
    return ceAbaIndependentJob(job, model, n, layout, y, nyq, ydot, ny, tau, ntau, fext, nfext,
                               q_guess, nq_guess, pool->qReference.data(), ydd, nydd, q, nq, v, nv,
                               qdd, nqdd);
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
  j.nargs = 7;
  j.args[0] = {q, nullptr, s.nq, s.nq, false, "q"};
  j.args[1] = {v, nullptr, s.nv, s.nv, false, "v"};
  j.args[2] = {tau, nullptr, s.ny, s.ny, false, "tau"};
  j.args[3] = {fext, nullptr, fext ? 6 * s.nbodies : 0, 6 * s.nbodies, true, "fext"};
  j.args[4] = {nullptr, ydd, s.ny, s.ny, false, "ydd"};
  j.args[5] = {nullptr, qdd, qdd ? s.nv : 0, s.nv, true, "qdd"};
  j.args[6] = {nullptr, lambda, std::max(0, m), m, false, "lambda"};  // m is checked by the set
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
  try {
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
  } catch (const std::bad_alloc&) {
    return CDYN_ERR_OUT_OF_MEMORY;
  } catch (...) {
    return CDYN_ERR_INTERNAL;
  }
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
