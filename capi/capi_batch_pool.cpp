// The thread pool of the batched evaluation (cdyn_pool_*, capi_batch_job.hpp): threads started
// once, woken per call; each call runs a Job on the pool's workspaces (constrained solves: on the
// caller's constraint workspaces) without allocating.
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "capi_batch_internal.hpp"
#include "capi_batch_job.hpp"

namespace {
constexpr std::uint32_t kPoolTag = 0x4c504443u;  // "CDPL"
constexpr std::uint32_t kDeadTag = 0xdeaddeadu;
}  // namespace

using namespace cdyn_batch;

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

namespace cdyn_batch {

namespace {

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

}  // namespace

bool validPool(const cdyn_pool* p) { return p != nullptr && p->tag == kPoolTag; }
const cdyn_model* poolModel(const cdyn_pool* p) { return p->model; }
const double* poolReference(const cdyn_pool* p) { return p->qReference.data(); }

cdyn_status runOnPool(Job& job, cdyn_pool* pool, int* failedIndex,
                      cdyn_constraint_workspace* const* cws, int ncws) {
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

cdyn_status runWorkersOnPool(Job& job, cdyn_pool* pool, const Worker* workers, int nworkers,
                             int* failedIndex) {
  if (failedIndex) *failedIndex = -1;
  if (pool == nullptr) return refuse(CDYN_ERR_NULL_POINTER, "pool is NULL");
  if (!validPool(pool))
    return refuse(CDYN_ERR_INVALID_ARGUMENT, "pool is not a valid cdyn_pool handle");
  std::lock_guard<std::mutex> call(pool->callMutex);
  pool->message[0] = '\0';
  if (job.model != pool->model) {
    setMessage(pool, "the pool was created for another model");
    return CDYN_ERR_WORKSPACE_MISMATCH;
  }
  if (nworkers != pool->nthreads) {
    std::snprintf(pool->message, sizeof pool->message,
                  "nws is %d, expected the pool's %d threads (one workspace each)", nworkers,
                  pool->nthreads);
    return CDYN_ERR_INVALID_ARGUMENT;
  }
  if (job.n == 0) return CDYN_OK;
  job.workers = workers;
  job.chunk = chunkFor(job.n, pool->nthreads);
  if (pool->nthreads > 1) {
    std::lock_guard<std::mutex> lock(pool->mutex);
    pool->job = &job;
    pool->pending = pool->nthreads - 1;
    ++pool->generation;
    pool->startCv.notify_all();
  }
  work(job, workers[0]);
  if (pool->nthreads > 1) {
    std::unique_lock<std::mutex> lock(pool->mutex);
    pool->doneCv.wait(lock, [&] { return pool->pending == 0; });
    pool->job = nullptr;
  }
  const cdyn_status s = finish(job, workers[0], failedIndex);
  if (s != CDYN_OK && workers[0].ctw)
    setMessage(pool, cdyn_contact_workspace_last_error(workers[0].ctw));
  return s;
}

}  // namespace cdyn_batch

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
    return cdyn_internal::statusOfException(cdyn_internal::Sink{}, cdyn_internal::Phase::Call);
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
