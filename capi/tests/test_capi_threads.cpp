// Thread safety of the C API: 8 threads share one model, each with its own workspace (one on
// the heap, the next in caller memory, alternately), and must reproduce the single-threaded
// results bit for bit: tree functions, cluster-tree dynamics (CE-ABA, CE-RNEA, H, C, G) and
// loop-closure solves (always given the same warm start, so the Newton iterates are the same),
// and the derivatives (tree and cluster tree, M^-1 and H^-1) on a derivative workspace per thread.
//
// Usage: test_capi_threads model.urdf...
#include <cmath>
#include <cstdio>
#include <cstring>
#include <initializer_list>
#include <random>
#include <thread>
#include <vector>

#include "clusterdyn.h"

namespace {

constexpr int kThreads = 8;
constexpr int kStates = 20;
constexpr int kRounds = 25;

struct Inputs {
  std::vector<std::vector<double>> q, v, a, tau;
  // Closed states, their independent coordinates, independent efforts, a perturbed closed q.
  std::vector<std::vector<double>> qc, vc, y, ydot, tauY, qp;
  std::vector<double> qref;
  int ny = 0, nyq = 0;
};

/// Everything computed for one state, concatenated.
std::vector<double> computeAll(const cdyn_model* m, cdyn_workspace* ws,
                               cdyn_derivative_workspace* dws, const Inputs& in, int k, int nq,
                               int nv, int nb, int nf, bool* ok) {
  std::vector<double> r;
  std::vector<double> out(nv), M(nv * nv), J(6 * nv), fext(6 * nb);
  for (int i = 0; i < 6 * nb; ++i) fext[i] = std::sin(0.1 * i + k);
  const double *q = in.q[k].data(), *v = in.v[k].data(), *a = in.a[k].data(),
               *tau = in.tau[k].data();
  auto check = [&](cdyn_status s) {
    if (s != CDYN_OK) *ok = false;
  };
  auto append = [&](const double* x, int n) { r.insert(r.end(), x, x + n); };
  check(cdyn_rnea(m, ws, q, nq, v, nv, a, nv, fext.data(), 6 * nb, out.data(), nv));
  append(out.data(), nv);
  check(cdyn_aba(m, ws, q, nq, v, nv, tau, nv, nullptr, 0, out.data(), nv));
  append(out.data(), nv);
  check(cdyn_crba(m, ws, q, nq, M.data(), nv));
  append(M.data(), nv * nv);
  check(cdyn_nonlinear_effects(m, ws, q, nq, v, nv, out.data(), nv));
  append(out.data(), nv);
  std::vector<double> q2(nq);
  check(cdyn_integrate(m, ws, q, nq, v, nv, 0.01, q2.data(), nq));
  append(q2.data(), nq);
  check(cdyn_forward_kinematics(m, ws, q, nq, v, nv, a, nv));
  for (int f = 0; f < nf; ++f) {
    double T[16], m6[6];
    check(cdyn_frame_placement_matrix(m, ws, f, T, 4));
    append(T, 16);
    check(cdyn_frame_acceleration(m, ws, f, CDYN_WORLD, m6));
    append(m6, 6);
    check(cdyn_frame_jacobian(m, ws, f, CDYN_LOCAL, J.data(), 6));
    append(J.data(), 6 * nv);
  }
  double e = 0;
  check(cdyn_kinetic_energy(m, ws, q, nq, v, nv, &e));
  append(&e, 1);

  // Cluster tree.
  const int ny = in.ny, nyq = in.nyq;
  const double *qc = in.qc[k].data(), *vc = in.vc[k].data(), *y = in.y[k].data(),
               *ydot = in.ydot[k].data(), *tauY = in.tauY[k].data();
  std::vector<double> oy(ny), oa(nv), oq(nq), ov(nv), H(ny * ny), G(nv * ny), g(nv);
  check(cdyn_ce_aba(m, ws, qc, nq, vc, nv, tauY, ny, fext.data(), 6 * nb, oy.data(), ny, oa.data(),
                    nv));
  append(oy.data(), ny);
  append(oa.data(), nv);
  check(cdyn_ce_aba_spanning_forces(m, ws, qc, nq, vc, nv, tau, nv, nullptr, 0, oy.data(), ny,
                                    nullptr, 0));
  append(oy.data(), ny);
  check(cdyn_ce_rnea(m, ws, qc, nq, vc, nv, tauY, ny, fext.data(), 6 * nb, oy.data(), ny, oa.data(),
                     nv));
  append(oy.data(), ny);
  append(oa.data(), nv);
  check(cdyn_cluster_mass_matrix(m, ws, qc, nq, H.data(), ny > 0 ? ny : 1));
  append(H.data(), ny * ny);
  check(cdyn_cluster_bias(m, ws, qc, nq, vc, nv, oy.data(), ny));
  append(oy.data(), ny);
  check(cdyn_constraint_matrices(m, ws, qc, nq, vc, nv, G.data(), nv > 0 ? nv : 1, g.data(), nv));
  append(G.data(), nv * ny);
  append(g.data(), nv);
  check(cdyn_solve_loop_closure(m, ws, y, nyq, in.qref.data(), nq, oq.data(), nq));
  append(oq.data(), nq);
  check(cdyn_ce_aba_independent(m, ws, y, nyq, ydot, ny, tauY, ny, nullptr, 0, oy.data(), ny,
                                oq.data(), nq, ov.data(), nv, nullptr, 0));
  append(oy.data(), ny);
  append(oq.data(), nq);
  append(ov.data(), nv);
  check(cdyn_project_to_constraints(m, ws, in.qp[k].data(), nq, vc, nv, oq.data(), nq, ov.data(),
                                    nv));
  append(oq.data(), nq);
  append(ov.data(), nv);

  // Derivatives. A model the H^-1 recursion or the derivatives do not cover (joint dynamics)
  // returns the same status in every thread: the status is compared, the outputs when Ok.
  const int ldv = nv > 0 ? nv : 1, ldy = ny > 0 ? ny : 1;
  std::vector<double> A(ldv * ldv), B(ldv * ldv), Cm(ldv * ldv), Y1(ldy * ldy), Y2(ldy * ldy),
      Y3(ldy * ldy);
  auto appendStatus = [&](cdyn_status s, std::initializer_list<const std::vector<double>*> outs) {
    const double code = s;
    append(&code, 1);
    if (s == CDYN_OK)
      for (const std::vector<double>* o : outs) append(o->data(), static_cast<int>(o->size()));
  };
  appendStatus(cdyn_rnea_derivatives(m, dws, q, nq, v, nv, a, nv, fext.data(), 6 * nb, out.data(),
                                     nv, A.data(), B.data(), Cm.data(), ldv),
               {&out, &A, &B, &Cm});
  appendStatus(cdyn_aba_derivatives(m, dws, q, nq, v, nv, tau, nv, fext.data(), 6 * nb, out.data(),
                                    nv, A.data(), B.data(), Cm.data(), ldv),
               {&out, &A, &B, &Cm});
  appendStatus(cdyn_minverse(m, dws, q, nq, A.data(), ldv), {&A});
  appendStatus(cdyn_ce_rnea_derivatives(m, dws, qc, nq, vc, nv, tauY, ny, fext.data(), 6 * nb,
                                        oy.data(), ny, Y1.data(), Y2.data(), Y3.data(), ldy),
               {&oy, &Y1, &Y2, &Y3});
  appendStatus(cdyn_ce_aba_derivatives(m, dws, qc, nq, vc, nv, tauY, ny, fext.data(), 6 * nb,
                                       oy.data(), ny, Y1.data(), Y2.data(), Y3.data(), ldy),
               {&oy, &Y1, &Y2, &Y3});
  appendStatus(cdyn_cluster_minverse(m, dws, qc, nq, Y1.data(), ldy), {&Y1});
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int failures = 0, derivativeModels = 0;
  for (int arg = 1; arg < argc; ++arg) {
    char err[512];
    cdyn_model* m = nullptr;
    if (cdyn_model_load(CDYN_ABI_VERSION, argv[arg], 0, nullptr, &m, err, sizeof err) != CDYN_OK) {
      std::fprintf(stderr, "cannot load %s: %s\n", argv[arg], err);
      return 1;
    }
    int nq, nv, nb, nf;
    cdyn_model_nq(m, &nq);
    cdyn_model_nv(m, &nv);
    cdyn_model_nbodies(m, &nb);
    cdyn_model_nframes(m, &nf);

    // Random valid states, made with the C API itself.
    cdyn_workspace* ws0 = nullptr;
    cdyn_workspace_create(m, &ws0);
    Inputs in;
    cdyn_model_ny(m, &in.ny);
    cdyn_model_nyq(m, &in.nyq);
    in.qref.resize(nq);
    cdyn_model_reference_configuration(m, in.qref.data(), nq);
    std::mt19937_64 rng(1234);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    for (int k = 0; k < kStates; ++k) {
      std::vector<double> q(nq), dq(nv), v(nv), a(nv), tau(nv);
      cdyn_neutral_configuration(m, ws0, q.data(), nq);
      for (int i = 0; i < nv; ++i) {
        dq[i] = u(rng);
        v[i] = u(rng);
        a[i] = u(rng);
        tau[i] = u(rng);
      }
      cdyn_integrate(m, ws0, q.data(), nq, dq.data(), nv, 1.0, q.data(), nq);
      in.q.push_back(q);
      in.v.push_back(v);
      in.a.push_back(a);
      in.tau.push_back(tau);
      // A closed state near q (from the reference configuration when q's loops cannot close).
      std::vector<double> y(in.nyq), ydot(in.ny), tauY(in.ny), qc(nq), vc(nv), qp(nq);
      for (int i = 0; i < in.ny; ++i) tauY[i] = u(rng);
      cdyn_spanning_to_independent(m, ws0, q.data(), nq, v.data(), nv, y.data(), in.nyq,
                                   ydot.data(), in.ny);
      if (cdyn_independent_to_spanning(m, ws0, y.data(), in.nyq, ydot.data(), in.ny, in.qref.data(),
                                       nq, qc.data(), nq, vc.data(), nv) != CDYN_OK) {
        cdyn_spanning_to_independent(m, ws0, in.qref.data(), nq, v.data(), nv, y.data(), in.nyq,
                                     ydot.data(), in.ny);
        cdyn_independent_to_spanning(m, ws0, y.data(), in.nyq, ydot.data(), in.ny, in.qref.data(),
                                     nq, qc.data(), nq, vc.data(), nv);
      }
      cdyn_integrate(m, ws0, qc.data(), nq, dq.data(), nv, 0.01, qp.data(), nq);
      in.qc.push_back(qc);
      in.vc.push_back(vc);
      in.y.push_back(y);
      in.ydot.push_back(ydot);
      in.tauY.push_back(tauY);
      in.qp.push_back(qp);
    }
    // Single-threaded reference.
    std::vector<std::vector<double>> ref;
    bool ok = true;
    cdyn_derivative_workspace* dws0 = nullptr;
    if (cdyn_derivative_workspace_create(m, &dws0) != CDYN_OK) {
      std::fprintf(stderr, "%s: cannot create a derivative workspace: %s\n", argv[arg],
                   cdyn_last_error());
      return 1;
    }
    for (int k = 0; k < kStates; ++k)
      ref.push_back(computeAll(m, ws0, dws0, in, k, nq, nv, nb, nf, &ok));
    {  // the derivatives are compared, not only their statuses, on the models they cover
      std::vector<double> d1(nv * nv + 1), d2(nv * nv + 1), yy(in.ny * in.ny + 1);
      if (cdyn_aba_derivatives(m, dws0, in.q[0].data(), nq, in.v[0].data(), nv, in.tau[0].data(),
                               nv, nullptr, 0, nullptr, 0, d1.data(), d2.data(), nullptr,
                               nv > 0 ? nv : 1) == CDYN_OK &&
          cdyn_ce_aba_derivatives(m, dws0, in.qc[0].data(), nq, in.vc[0].data(), nv,
                                  in.tauY[0].data(), in.ny, nullptr, 0, nullptr, 0, yy.data(),
                                  yy.data(), nullptr, in.ny > 0 ? in.ny : 1) == CDYN_OK)
        ++derivativeModels;
    }
    if (!ok) {
      std::fprintf(stderr, "%s: a reference call failed: %s\n", argv[arg],
                   cdyn_workspace_last_error(ws0));
      return 1;
    }

    std::vector<int> mismatches(kThreads, 0), errors(kThreads, 0);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        cdyn_workspace* ws = nullptr;
        cdyn_derivative_workspace* dws = nullptr;
        if (cdyn_derivative_workspace_create(m, &dws) != CDYN_OK) {
          ++errors[t];
          return;
        }
        std::vector<unsigned char> mem;
        if (t % 2 == 0) {
          if (cdyn_workspace_create(m, &ws) != CDYN_OK) {
            ++errors[t];
            cdyn_derivative_workspace_free(dws);
            return;
          }
        } else {
          size_t size = 0;
          cdyn_workspace_size(m, &size);
          mem.resize(size);
          if (cdyn_workspace_init_in(m, mem.data(), size, &ws) != CDYN_OK) {
            ++errors[t];
            cdyn_derivative_workspace_free(dws);
            return;
          }
        }
        for (int round = 0; round < kRounds; ++round) {
          for (int j = 0; j < kStates; ++j) {
            const int k = (j + t * 3 + round) % kStates;  // threads interleave differently
            bool good = true;
            const std::vector<double> r = computeAll(m, ws, dws, in, k, nq, nv, nb, nf, &good);
            if (!good) ++errors[t];
            if (r.size() != ref[k].size() ||
                std::memcmp(r.data(), ref[k].data(), r.size() * sizeof(double)) != 0)
              ++mismatches[t];
          }
        }
        cdyn_workspace_free(ws);
        cdyn_derivative_workspace_free(dws);
      });
    }
    for (auto& th : threads) th.join();
    int total = 0, totalErrors = 0;
    for (int t = 0; t < kThreads; ++t) {
      total += mismatches[t];
      totalErrors += errors[t];
    }
    std::printf("%s: %d threads x %d rounds x %d states: %d mismatches, %d errors\n", argv[arg],
                kThreads, kRounds, kStates, total, totalErrors);
    if (total || totalErrors) ++failures;
    cdyn_workspace_free(ws0);
    cdyn_derivative_workspace_free(dws0);
    if (cdyn_model_free(m) != CDYN_OK) ++failures;
  }
  std::printf("derivatives compared on %d of %d models\n", derivativeModels, argc - 1);
  if (argc > 1 && derivativeModels == 0) ++failures;
  return failures ? 1 : 0;
}
