// Running a batch job (capi_batch_job.hpp): the per-state gather/scatter of the two layouts,
// the work loop of a thread, the argument checks before any state runs, and the threads started
// by a cdyn_batch_* call. Results are bit-identical to single calls: every state is evaluated by
// the public single-state function.
#include <algorithm>
#include <atomic>
#include <climits>
#include <exception>
#include <new>
#include <system_error>
#include <thread>
#include <vector>

#include "capi_batch_internal.hpp"
#include "capi_batch_job.hpp"

namespace cdyn_batch {

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

/// Whether a state's outputs are written: success, or a constrained solve that did not converge.
bool outputsWritten(const Job& job, cdyn_status s) {
  return s == CDYN_OK || ((job.constrained || job.rollout) && s == CDYN_ERR_NOT_CONVERGED);
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
  if (job.badArg < 0 && job.stacksGuess && (job.nqGuess != job.nq || job.qGuess == nullptr))
    job.badArg = kGuessArg;
  if (job.badArg < 0) return CDYN_OK;
  double* p[kMaxArgs] = {};
  for (int k = 0; k < job.nargs; ++k)
    p[k] = job.args[k].in ? const_cast<double*>(job.args[k].in) : job.args[k].out;
  const cdyn_status s = job.fn(job, w0, 0, p, w0.scratch);
  return s != CDYN_OK ? s : CDYN_ERR_INVALID_SIZE;
}

int chunkFor(int n, int threads) { return std::max(1, std::min(64, n / (8 * threads))); }

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
  // Allocation failures and other exceptions: the one table (message in cdyn_last_error).
  return cdyn_internal::guard(cdyn_internal::Sink{}, cdyn_internal::Phase::Call, [&] {
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
  });
}

}  // namespace cdyn_batch
