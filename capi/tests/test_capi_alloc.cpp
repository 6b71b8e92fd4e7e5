// Real-time check of the C API: no heap allocation in any call that takes a workspace (tree and
// cluster-tree compute functions, loop-closure solves, failing calls included) and in the model
// queries, none in cdyn_workspace_init_in / cdyn_workspace_free, thousands of calls per model. This
// executable links the shared allocation counter (tests/alloc_counter.cpp: malloc & co. and every
// operator new / delete replaced, exported to libclusterdyn.so) and counts every allocation and
// free made while a scope is armed.
//
// Usage: test_capi_alloc model.urdf...
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "clusterdyn.h"

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
  clusterdyn::test::AllocationScope scope;
  f();
  const long allocations = scope.stop();
  if (frees) *frees = scope.frees();
  return allocations;
}

/// Buffers and sizes for runCalls(), prepared before counting starts.
struct Buffers {
  Buffers(const cdyn_model* m, cdyn_workspace* ws) {
    cdyn_model_nq(m, &nq);
    cdyn_model_nv(m, &nv);
    cdyn_model_nbodies(m, &nb);
    cdyn_model_nframes(m, &nf);
    cdyn_model_ny(m, &ny);
    cdyn_model_nyq(m, &nyq);
    cdyn_model_nclusters(m, &ncl);
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
    // A closed state (reference configuration, v = G ydot), an open velocity, cluster sizes.
    qc.assign(nq, 0.0);
    vc.assign(nv, 0.0);
    vopen.assign(nv, 0.0);
    y.assign(nyq, 0.0);
    ydot.assign(ny, 0.0);
    tauY.assign(ny, 0.4);
    ynan.assign(nyq, NAN);
    outY.assign(ny + 1, 0.0);
    outYq.assign(nyq + 1, 0.0);
    outQ.assign(nq + 1, 0.0);
    H.assign(ny * ny + 1, 0.0);
    G.assign(nv * ny + 1, 0.0);
    text.assign(64, '\0');
    cdyn_model_reference_configuration(m, qc.data(), nq);
    cdyn_spanning_to_independent(m, ws, qc.data(), nq, vc.data(), nv, y.data(), nyq, ydot.data(),
                                 ny);
    for (int i = 0; i < ny; ++i) ydot[i] = 0.3 - 0.05 * i;
    if (cdyn_independent_to_spanning(m, ws, y.data(), nyq, ydot.data(), ny, nullptr, 0, qc.data(),
                                     nq, vc.data(), nv) != CDYN_OK)
      std::fprintf(stderr, "independent_to_spanning: %s\n", cdyn_workspace_last_error(ws));
    std::vector<int> iv(ny);
    cdyn_model_independent_indices(m, nullptr, 0, iv.data(), ny);
    vopen = vc;
    for (int i = 0, k = 0; i < nv; ++i) {  // move the first dependent coordinate
      if (k < ny && iv[k] == i) {
        ++k;
        continue;
      }
      vopen[i] += 1.0;
      dependent = i;
      break;
    }
    clusterNv.assign(ncl, 0);
    clusterNy.assign(ncl, 0);
    for (int k = 0; k < ncl; ++k)
      cdyn_model_cluster_coordinates(m, k, nullptr, nullptr, nullptr, &clusterNv[k], nullptr,
                                     nullptr, nullptr, &clusterNy[k]);
  }
  int nq = 0, nv = 0, nb = 0, nf = 0, ny = 0, nyq = 0, ncl = 0, dependent = -1;
  std::vector<double> q, q2, v, vnan, a, tau, out, fext, M, J;
  std::vector<double> qc, vc, vopen, y, ydot, tauY, ynan, outY, outYq, outQ, H, G;
  std::vector<int> clusterNv, clusterNy;
  std::vector<char> text;
};

/// The cluster-tree functions and queries (once).
template <typename Expect>
void runClusterCalls(const cdyn_model* m, cdyn_workspace* ws, Buffers& b, Expect&& expect) {
  const int nq = b.nq, nv = b.nv, nb = b.nb, ny = b.ny, nyq = b.nyq;
  const double *qc = b.qc.data(), *vc = b.vc.data();
  double* oy = b.outY.data();
  double* ov = b.out.data();
  double* oq = b.outQ.data();
  expect(cdyn_ce_aba(m, ws, qc, nq, vc, nv, b.tauY.data(), ny, nullptr, 0, oy, ny, ov, nv),
         CDYN_OK);
  expect(cdyn_ce_aba(m, ws, qc, nq, vc, nv, b.tauY.data(), ny, b.fext.data(), 6 * nb, oy, ny,
                     nullptr, 0),
         CDYN_OK);
  expect(cdyn_ce_aba_spanning_forces(m, ws, qc, nq, vc, nv, b.tau.data(), nv, b.fext.data(), 6 * nb,
                                     oy, ny, ov, nv),
         CDYN_OK);
  expect(cdyn_ce_aba_independent(m, ws, b.y.data(), nyq, b.ydot.data(), ny, b.tauY.data(), ny,
                                 b.fext.data(), 6 * nb, oy, ny, oq, nq, ov, nv, b.M.data(), nv),
         CDYN_OK);
  expect(
      cdyn_ce_rnea(m, ws, qc, nq, vc, nv, b.tauY.data(), ny, b.fext.data(), 6 * nb, oy, ny, ov, nv),
      CDYN_OK);
  expect(cdyn_cluster_mass_matrix(m, ws, qc, nq, b.H.data(), ny > 0 ? ny : 1), CDYN_OK);
  expect(cdyn_cluster_bias(m, ws, qc, nq, vc, nv, oy, ny), CDYN_OK);
  expect(cdyn_solve_loop_closure(m, ws, b.y.data(), nyq, qc, nq, oq, nq), CDYN_OK);
  expect(cdyn_solve_loop_closure(m, ws, b.y.data(), nyq, nullptr, 0, oq, nq), CDYN_OK);
  expect(cdyn_independent_to_spanning(m, ws, b.y.data(), nyq, b.ydot.data(), ny, nullptr, 0, oq, nq,
                                      ov, nv),
         CDYN_OK);
  expect(cdyn_spanning_to_independent(m, ws, qc, nq, vc, nv, b.outYq.data(), nyq, oy, ny), CDYN_OK);
  expect(cdyn_integrate_independent(m, ws, b.y.data(), nyq, b.ydot.data(), ny, 1e-3, b.outYq.data(),
                                    nyq),
         CDYN_OK);
  expect(cdyn_difference_independent(m, ws, b.y.data(), nyq, b.outYq.data(), nyq, oy, ny), CDYN_OK);
  expect(cdyn_project_to_constraints(m, ws, b.q.data(), nq, b.v.data(), nv, oq, nq, ov, nv),
         CDYN_OK);
  expect(cdyn_constraint_matrices(m, ws, qc, nq, vc, nv, b.G.data(), nv > 0 ? nv : 1, ov, nv),
         CDYN_OK);
  for (int k = 0; k < b.ncl; ++k)
    expect(cdyn_cluster_constraint_matrices(m, ws, k, qc, nq, vc, nv, b.G.data(),
                                            b.clusterNv[k] > 0 ? b.clusterNv[k] : 1, ov,
                                            b.clusterNv[k]),
           CDYN_OK);
  int iterations = 0;
  double residual = 0.0;
  expect(cdyn_last_loop_closure(m, ws, &iterations, &residual), CDYN_OK);
  // Failing calls.
  expect(cdyn_ce_aba(m, ws, qc, nq, vc, nv, b.tauY.data(), ny + 1, nullptr, 0, oy, ny, nullptr, 0),
         CDYN_ERR_INVALID_SIZE);
  if (nyq > 0)
    expect(cdyn_solve_loop_closure(m, ws, b.ynan.data(), nyq, nullptr, 0, oq, nq),
           CDYN_ERR_NON_FINITE);
  if (b.dependent >= 0)
    expect(cdyn_ce_rnea(m, ws, qc, nq, b.vopen.data(), nv, b.tauY.data(), ny, nullptr, 0, oy, ny,
                        nullptr, 0),
           CDYN_ERR_CONSTRAINT_FAILURE);
  expect(cdyn_cluster_constraint_matrices(m, ws, b.ncl, qc, nq, vc, nv, b.G.data(), 1, nullptr, 0),
         CDYN_ERR_INVALID_INDEX);
  // Queries.
  const char* name = nullptr;
  int k = 0;
  size_t needed = 0;
  expect(cdyn_model_describe_clusters(m, b.text.data(), b.text.size(), &needed), CDYN_OK);
  expect(cdyn_model_describe(m, b.text.data(), b.text.size(), &needed), CDYN_OK);
  expect(cdyn_model_cluster_tree_dot(m, b.text.data(), b.text.size(), &needed), CDYN_OK);
  expect(cdyn_model_cluster_name(m, b.ncl - 1, &name), CDYN_OK);
  expect(cdyn_model_cluster_index(m, name, &k), CDYN_OK);
  expect(cdyn_model_cluster_info(m, b.ncl - 1, &k, &k, &k, &k, &k), CDYN_OK);
  expect(cdyn_model_independent_velocity_name(m, ny - 1, &name), CDYN_OK);
  expect(cdyn_model_independent_velocity_index(m, name, &k), CDYN_OK);
  expect(cdyn_model_independent_position_name(m, nyq - 1, &name), CDYN_OK);
  expect(cdyn_model_independent_position_index(m, name, &k), CDYN_OK);
  expect(cdyn_model_reference_configuration(m, oq, nq), CDYN_OK);
  expect(cdyn_model_body_cluster(m, nb - 1, &k), CDYN_OK);
}

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
      runClusterCalls(m, ws, b, expect);
    }
  };
  body();
  *calls = n;
  return bad;
}

/// A loop that cannot close (the four-bar driven by its rocker, beyond the rocker's range):
/// failing Newton solves, their messages and the warm-start reset allocate nothing either.
void failingLoopClosure(const std::string& fourBarPath) {
  std::FILE* f = std::fopen(fourBarPath.c_str(), "rb");
  if (!f) {
    CHECK(!"cannot read the four-bar");
    return;
  }
  std::string urdf;
  char chunk[4096];
  for (size_t n; (n = std::fread(chunk, 1, sizeof chunk, f)) > 0;) urdf.append(chunk, n);
  std::fclose(f);
  auto swap = [&](const std::string& a, const std::string& b) {
    const size_t pos = urdf.find(a);
    CHECK(pos != std::string::npos);
    if (pos != std::string::npos) urdf.replace(pos, a.size(), b);
  };
  swap("\"crank_joint\" type=\"continuous\" independent=\"true\"",
       "\"crank_joint\" type=\"continuous\" independent=\"false\"");
  swap("\"rocker_joint\" type=\"revolute\" independent=\"false\"",
       "\"rocker_joint\" type=\"revolute\" independent=\"true\"");
  char err[512];
  cdyn_model* m = nullptr;
  cdyn_workspace* ws = nullptr;
  if (cdyn_model_load_string(CDYN_ABI_VERSION, urdf.data(), urdf.size(), 0, nullptr, &m, err,
                             sizeof err) != CDYN_OK ||
      cdyn_workspace_create(m, &ws) != CDYN_OK) {
    std::fprintf(stderr, "swapped four-bar: %s\n", err);
    CHECK(!"swapped four-bar did not load");
    return;
  }
  int nq = 0, nv = 0;
  cdyn_model_nq(m, &nq);
  cdyn_model_nv(m, &nv);
  std::vector<double> q(nq), v(nv);
  const double bad[1] = {2.5}, good[1] = {0.1}, ydot[1] = {0.2}, tau[1] = {0.0};
  double ydd[1];
  long wrong = 0, calls = 0;
  auto expect = [&](cdyn_status s, cdyn_status want) {
    ++calls;
    if (s != want) ++wrong;
  };
  long frees = 0;
  const long allocs = counted(
      [&] {
        for (int r = 0; r < 100; ++r) {
          expect(cdyn_solve_loop_closure(m, ws, bad, 1, nullptr, 0, q.data(), nq),
                 CDYN_ERR_CONSTRAINT_FAILURE);
          expect(cdyn_independent_to_spanning(m, ws, bad, 1, ydot, 1, nullptr, 0, q.data(), nq,
                                              v.data(), nv),
                 CDYN_ERR_CONSTRAINT_FAILURE);
          expect(cdyn_ce_aba_independent(m, ws, bad, 1, ydot, 1, tau, 1, nullptr, 0, ydd, 1,
                                         nullptr, 0, nullptr, 0, nullptr, 0),
                 CDYN_ERR_CONSTRAINT_FAILURE);
          expect(cdyn_ce_aba_independent(m, ws, good, 1, ydot, 1, tau, 1, nullptr, 0, ydd, 1,
                                         q.data(), nq, v.data(), nv, nullptr, 0),
                 CDYN_OK);
        }
      },
      &frees);
  std::printf(
      "%s with the rocker independent: %ld failing/recovering loop-closure calls, %ld "
      "allocations, %ld frees, %ld bad statuses\n",
      fourBarPath.c_str(), calls, allocs, frees, wrong);
  CHECK(allocs == 0);
  CHECK(frees == 0);
  CHECK(wrong == 0);
  cdyn_workspace_free(ws);
  cdyn_model_free(m);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s model.urdf...\n", argv[0]);
    return 2;
  }
  // The counter works: a malloc and its free inside the window are seen.
  long controlFrees = 0;
  const long control = counted(
      [] {
        void* volatile p = std::malloc(24);
        std::free(p);
      },
      &controlFrees);
  CHECK(control == 1);
  CHECK(controlFrees == 1);

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
      Buffers buffers(m, w);
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
    const std::string path = argv[k];
    if (path.size() >= 16 && path.compare(path.size() - 16, 16, "cd_four_bar.urdf") == 0)
      failingLoopClosure(path);
  }
  if (g_failures) std::fprintf(stderr, "%d check(s) failed\n", g_failures);
  return g_failures ? 1 : 0;
}
