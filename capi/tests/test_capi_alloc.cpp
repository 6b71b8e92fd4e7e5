// Real-time check of the C API: no heap allocation in any call that takes a workspace (and in
// the model queries), none in cdyn_workspace_init_in / cdyn_workspace_free, thousands of calls
// per model. This executable interposes the process allocator (malloc & co., which operator new
// also ends in) and counts every call made while counting is switched on.
//
// Usage: test_capi_alloc model.urdf...
#include <atomic>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "clusterdyn.h"

// ---- counting interposer (glibc) -------------------------------------------------------------

extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
void __libc_free(void*);
}

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocations{0}, g_frees{0};
inline void countAllocation() {
  if (g_counting.load(std::memory_order_relaxed)) g_allocations.fetch_add(1);
}
}  // namespace

extern "C" {
void* malloc(size_t n) {
  countAllocation();
  return __libc_malloc(n);
}
void* calloc(size_t n, size_t m) {
  countAllocation();
  return __libc_calloc(n, m);
}
void* realloc(void* p, size_t n) {
  countAllocation();
  return __libc_realloc(p, n);
}
void* memalign(size_t a, size_t n) {
  countAllocation();
  return __libc_memalign(a, n);
}
void* aligned_alloc(size_t a, size_t n) {
  countAllocation();
  return __libc_memalign(a, n);
}
int posix_memalign(void** out, size_t a, size_t n) {
  countAllocation();
  void* p = __libc_memalign(a, n);
  if (!p) return 12;  // ENOMEM
  *out = p;
  return 0;
}
void free(void* p) {
  if (p && g_counting.load(std::memory_order_relaxed)) g_frees.fetch_add(1);
  __libc_free(p);
}
}

// ---- test ----------------------------------------------------------------------------------

namespace {

int g_failures = 0;

#define CHECK(cond)                                                                 \
  do {                                                                              \
    if (!(cond)) {                                                                  \
      std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
      ++g_failures;                                                                 \
    }                                                                               \
  } while (0)

/// Counts the allocations and frees made by f().
template <typename F>
long counted(F&& f, long* frees = nullptr) {
  g_allocations = 0;
  g_frees = 0;
  g_counting = true;
  f();
  g_counting = false;
  if (frees) *frees = g_frees.load();
  return g_allocations.load();
}

/// Buffers and sizes for runCalls(), prepared before counting starts.
struct Buffers {
  explicit Buffers(const cdyn_model* m) {
    cdyn_model_nq(m, &nq);
    cdyn_model_nv(m, &nv);
    cdyn_model_nbodies(m, &nb);
    cdyn_model_nframes(m, &nf);
    q.assign(nq, 0.0);
    q2.assign(nq, 0.0);
    v.assign(nv, 0.3);
    vnan.assign(nv, NAN);
    a.assign(nv, -0.2);
    tau.assign(nv, 0.7);
    out.assign(nv + 6, 0.0);
    fext.assign(6 * nb, 0.1);
    M.assign(nv * nv + 1, 0.0);
    J.assign(6 * nv + 1, 0.0);
  }
  int nq = 0, nv = 0, nb = 0, nf = 0;
  std::vector<double> q, q2, v, vnan, a, tau, out, fext, M, J;
};

/// Runs every compute function (and the queries) `reps` times; returns the number of calls
/// whose status differed from the expected one and the number of calls in *calls.
long runCalls(const cdyn_model* m, cdyn_workspace* ws, Buffers& b, int reps, long* calls) {
  const int nq = b.nq, nv = b.nv, nb = b.nb, nf = b.nf;
  std::vector<double>&q = b.q, &q2 = b.q2, &v = b.v, &a = b.a, &tau = b.tau, &out = b.out,
  &fext = b.fext, &M = b.M, &J = b.J;
  const double* nanv = b.vnan.data();
  long bad = 0, n = 0;
  auto expect = [&](cdyn_status s, cdyn_status want) {
    ++n;
    if (s != want) ++bad;
  };
  if (cdyn_neutral_configuration(m, ws, q.data(), nq) != CDYN_OK) ++bad;

  auto body = [&] {
    for (int r = 0; r < reps; ++r) {
      expect(cdyn_neutral_configuration(m, ws, q2.data(), nq), CDYN_OK);
      expect(cdyn_integrate(m, ws, q.data(), nq, v.data(), nv, 1e-3, q.data(), nq), CDYN_OK);
      expect(cdyn_normalize_configuration(m, ws, q.data(), nq), CDYN_OK);
      expect(cdyn_forward_kinematics(m, ws, q.data(), nq, nullptr, 0, nullptr, 0), CDYN_OK);
      expect(cdyn_forward_kinematics(m, ws, q.data(), nq, v.data(), nv, nullptr, 0), CDYN_OK);
      expect(cdyn_forward_kinematics(m, ws, q.data(), nq, v.data(), nv, a.data(), nv), CDYN_OK);
      for (int f = 0; f < nf; ++f) {
        double R[9], p[3], T[16], m6[6], m3[3];
        expect(cdyn_frame_placement(m, ws, f, R, 3, p), CDYN_OK);
        expect(cdyn_frame_placement_matrix(m, ws, f, T, 4), CDYN_OK);
        for (int rf = 0; rf < 3; ++rf) {
          expect(cdyn_frame_velocity(m, ws, f, rf, m6), CDYN_OK);
          expect(cdyn_frame_acceleration(m, ws, f, rf, m6), CDYN_OK);
          expect(cdyn_frame_classical_acceleration(m, ws, f, rf, m3), CDYN_OK);
        }
        expect(cdyn_frame_jacobian(m, ws, f, CDYN_LOCAL_WORLD_ALIGNED, J.data(), 6), CDYN_OK);
      }
      expect(cdyn_compute_frame_jacobian(m, ws, q.data(), nq, nf - 1, CDYN_LOCAL, J.data(), 6),
             CDYN_OK);
      double com[3], T = 0, V = 0;
      expect(cdyn_center_of_mass(m, ws, q.data(), nq, com), CDYN_OK);
      expect(cdyn_rnea(m, ws, q.data(), nq, v.data(), nv, a.data(), nv, nullptr, 0, out.data(), nv),
             CDYN_OK);
      expect(cdyn_rnea(m, ws, q.data(), nq, v.data(), nv, a.data(), nv, fext.data(), 6 * nb,
                       out.data(), nv),
             CDYN_OK);
      expect(
          cdyn_aba(m, ws, q.data(), nq, v.data(), nv, tau.data(), nv, nullptr, 0, out.data(), nv),
          CDYN_OK);
      expect(cdyn_aba(m, ws, q.data(), nq, v.data(), nv, tau.data(), nv, fext.data(), 6 * nb,
                      out.data(), nv),
             CDYN_OK);
      expect(cdyn_crba(m, ws, q.data(), nq, M.data(), nv > 0 ? nv : 1), CDYN_OK);
      expect(cdyn_nonlinear_effects(m, ws, q.data(), nq, v.data(), nv, out.data(), nv), CDYN_OK);
      expect(cdyn_generalized_gravity(m, ws, q.data(), nq, out.data(), nv), CDYN_OK);
      expect(cdyn_kinetic_energy(m, ws, q.data(), nq, v.data(), nv, &T), CDYN_OK);
      expect(cdyn_potential_energy(m, ws, q.data(), nq, &V), CDYN_OK);
      // Failing calls (they format a message into the workspace) allocate nothing either.
      expect(cdyn_aba(m, ws, q.data(), nq + 1, v.data(), nv, tau.data(), nv, nullptr, 0, out.data(),
                      nv),
             CDYN_ERR_INVALID_SIZE);
      if (nv > 0) {
        expect(cdyn_rnea(m, ws, q.data(), nq, nanv, nv, a.data(), nv, nullptr, 0, out.data(), nv),
               CDYN_ERR_NON_FINITE);
        expect(cdyn_kinetic_energy(m, ws, q.data(), nq, nanv, nv, &T), CDYN_ERR_NON_FINITE);
      }
      expect(cdyn_frame_velocity(m, ws, nf, CDYN_LOCAL, out.data()), CDYN_ERR_INVALID_INDEX);
      const char* msg = cdyn_workspace_last_error(ws);
      if (msg[0] == '\0') ++bad;
      // Model queries.
      const char* name = nullptr;
      int idx = 0;
      expect(cdyn_model_frame_name(m, nf - 1, &name), CDYN_OK);
      expect(cdyn_model_frame_index(m, name, &idx), CDYN_OK);
      expect(cdyn_model_joint_name(m, nb - 1, &name), CDYN_OK);
      expect(cdyn_model_joint_index(m, name, &idx), CDYN_OK);
      expect(cdyn_model_velocity_name(m, nv - 1, &name), CDYN_OK);
      expect(cdyn_model_velocity_index(m, name, &idx), CDYN_OK);
      expect(cdyn_model_body_index(m, "a name longer than the small-string buffer", &idx),
             CDYN_ERR_NOT_FOUND);
    }
  };
  body();
  *calls = n;
  return bad;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s model.urdf...\n", argv[0]);
    return 2;
  }
  // The counter works: a malloc inside the window is seen.
  const long control = counted([] {
    void* volatile p = std::malloc(24);
    std::free(p);
  });
  CHECK(control == 1);

  const int reps = 200;
  for (int k = 1; k < argc; ++k) {
    char err[512];
    cdyn_model* m = nullptr;
    if (cdyn_model_load(CDYN_ABI_VERSION, argv[k], 0, nullptr, &m, err, sizeof err) != CDYN_OK) {
      std::fprintf(stderr, "cannot load %s: %s\n", argv[k], err);
      return 1;
    }
    // Positive control: heap workspace creation allocates, and the counter sees the library's
    // allocations (they reach this process allocator through libclusterdyn's redirection).
    cdyn_workspace* heapWs = nullptr;
    const long created = counted([&] { CHECK(cdyn_workspace_create(m, &heapWs) == CDYN_OK); });
    CHECK(created >= 1);

    // Caller memory: creation and destruction without any heap call.
    size_t size = 0;
    CHECK(cdyn_workspace_size(m, &size) == CDYN_OK);
    std::vector<unsigned char> mem(size);
    cdyn_workspace* ws = nullptr;
    long frees = 0;
    const long initAllocs = counted(
        [&] { CHECK(cdyn_workspace_init_in(m, mem.data(), size, &ws) == CDYN_OK); }, &frees);
    CHECK(initAllocs == 0);
    CHECK(frees == 0);

    long calls = 0, bad = 0;
    for (cdyn_workspace* w : {ws, heapWs}) {
      Buffers buffers(m);
      runCalls(m, w, buffers, 1, &calls);  // warm-up outside the window (first-touch effects)
      const long allocs = counted([&] { bad += runCalls(m, w, buffers, reps, &calls); }, &frees);
      std::printf("%s (%s workspace): %ld calls, %ld allocations, %ld frees, %ld bad statuses\n",
                  argv[k], w == ws ? "caller-memory" : "heap", calls, allocs, frees, bad);
      CHECK(allocs == 0);
      CHECK(frees == 0);
      CHECK(bad == 0);
      CHECK(calls >= 1000);
    }
    const long freeAllocs = counted([&] { CHECK(cdyn_workspace_free(ws) == CDYN_OK); }, &frees);
    CHECK(freeAllocs == 0);
    CHECK(frees == 0);
    CHECK(cdyn_workspace_free(heapWs) == CDYN_OK);
    CHECK(cdyn_model_free(m) == CDYN_OK);
  }
  if (g_failures) std::fprintf(stderr, "%d check(s) failed\n", g_failures);
  return g_failures ? 1 : 0;
}
