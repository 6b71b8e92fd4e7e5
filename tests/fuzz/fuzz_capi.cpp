// libFuzzer target: the C API compute calls on the bundled models (models/cd_quadruped.urdf,
// models/cd_four_bar.urdf) with fuzzed states, efforts, array lengths and leading dimensions.
// Every buffer is exactly as long as the length passed with it, so a write past a declared
// length is an AddressSanitizer report. Properties checked: no crash, no sanitizer report, a
// valid status code, a non-empty message after a failure, and finite outputs whenever the
// functions that report overflow (aba, ce_aba*, ce_rnea, cluster_bias) return CDYN_OK.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "clusterdyn.h"

#ifndef CLUSTERDYN_MODELS_DIR
#error "CLUSTERDYN_MODELS_DIR must name the models/ folder"
#endif

namespace {

struct Loaded {
  cdyn_model* m = nullptr;
  cdyn_workspace* ws = nullptr;
  int nq = 0, nv = 0, ny = 0, nyq = 0, nb = 0, nframes = 0, nclusters = 0;
};

Loaded load(const char* path) {
  Loaded l;
  char err[512];
  if (cdyn_model_load(CDYN_ABI_VERSION, path, 0, nullptr, &l.m, err, sizeof err) != CDYN_OK ||
      cdyn_workspace_create(l.m, &l.ws) != CDYN_OK)
    __builtin_trap();
  cdyn_model_nq(l.m, &l.nq);
  cdyn_model_nv(l.m, &l.nv);
  cdyn_model_ny(l.m, &l.ny);
  cdyn_model_nyq(l.m, &l.nyq);
  cdyn_model_nbodies(l.m, &l.nb);
  cdyn_model_nframes(l.m, &l.nframes);
  cdyn_model_nclusters(l.m, &l.nclusters);
  return l;
}

/// Consumes the fuzzer's bytes: small integers and doubles.
class Input {
 public:
  Input(const std::uint8_t* p, std::size_t n) : p_(p), n_(n) {}
  std::uint8_t byte() { return i_ < n_ ? p_[i_++] : 0; }
  /// The expected length most of the time, sometimes off by a little, sometimes 0.
  int length(int expected) {
    const std::uint8_t b = byte();
    if (b < 200) return expected;
    if (b < 250) return expected + (b % 5) - 2 < 0 ? 0 : expected + (b % 5) - 2;
    return b == 250 ? 0 : b - 250 + expected * 2;
  }
  /// Mostly moderate values (so calls reach the algorithms); raw bit patterns (NaN, Inf,
  /// subnormals, 1e300) one time in eight.
  double value() {
    const std::uint8_t mode = byte();
    if ((mode & 7) == 7) {
      std::uint64_t bits = 0;
      for (int k = 0; k < 8; ++k) bits = bits << 8 | byte();
      double d;
      std::memcpy(&d, &bits, sizeof d);
      return d;
    }
    const int scaleExp = (mode >> 3) % 12 - 4;  // 1e-4 .. 1e7
    const double unit = (static_cast<int>(byte()) - 128) / 64.0;
    return unit * std::pow(10.0, scaleExp);
  }
  std::vector<double> vector(int n) {
    std::vector<double> v(n > 0 ? n : 0);
    for (double& x : v) x = value();
    return v;
  }
  bool done() const { return i_ >= n_; }

 private:
  const std::uint8_t* p_;
  std::size_t n_, i_ = 0;
};

bool finite(const std::vector<double>& x) {
  for (double v : x)
    if (!std::isfinite(v)) return false;
  return true;
}

void checkStatus(const Loaded& l, cdyn_status s) {
  const int code = static_cast<int>(s);
  if (!((code >= 0 && code <= CDYN_ERR_INVALID_ARGUMENT) || s == CDYN_ERR_NULL_POINTER))
    __builtin_trap();  // not a documented status
  // Failures found by the algorithms (not argument checks) explain themselves.
  if ((s == CDYN_ERR_NOT_POSITIVE_DEFINITE || s == CDYN_ERR_CONSTRAINT_FAILURE) &&
      cdyn_workspace_last_error(l.ws)[0] == '\0')
    __builtin_trap();
}

/// A configuration: the reference configuration, perturbed, or fully fuzzed.
std::vector<double> configuration(const Loaded& l, Input& in, int n) {
  std::vector<double> q(n > 0 ? n : 0);
  if (n == l.nq) {
    cdyn_model_reference_configuration(l.m, q.data(), n);
    const std::uint8_t mode = in.byte() % 3;
    if (mode == 1)
      for (double& x : q) x += 0.1 * in.value();
    else if (mode == 2)
      for (double& x : q) x = in.value();
    if (mode) cdyn_normalize_configuration(l.m, l.ws, q.data(), n);
  } else {
    for (double& x : q) x = in.value();
  }
  return q;
}

const double* ptr(const std::vector<double>& v) { return v.empty() ? nullptr : v.data(); }
double* ptr(std::vector<double>& v) { return v.empty() ? nullptr : v.data(); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  static Loaded models[2] = {load(CLUSTERDYN_MODELS_DIR "/cd_quadruped.urdf"),
                             load(CLUSTERDYN_MODELS_DIR "/cd_four_bar.urdf")};
  Input in(bytes, size);
  const Loaded& l = models[in.byte() & 1];
  for (int call = 0; call < 8 && !in.done(); ++call) {
    const int fn = in.byte() % 20;
    const int nq = in.length(l.nq), nv = in.length(l.nv), ny = in.length(l.ny);
    const int nyq = in.length(l.nyq);
    const bool withFext = in.byte() & 1;
    const int nf = withFext ? in.length(6 * l.nb) : 0;
    std::vector<double> q = configuration(l, in, nq), v = in.vector(nv), a = in.vector(nv);
    std::vector<double> fext = in.vector(nf);
    std::vector<double> out1(in.length(l.nv)), out2(in.length(l.nv)), outq(in.length(l.nq));
    std::vector<double> outy(in.length(l.ny));
    cdyn_status s = CDYN_OK;
    switch (fn) {
      case 0:
        s = cdyn_rnea(l.m, l.ws, ptr(q), nq, ptr(v), nv, ptr(a), nv, ptr(fext), nf, ptr(out1),
                      static_cast<int>(out1.size()));
        break;
      case 1:
        s = cdyn_aba(l.m, l.ws, ptr(q), nq, ptr(v), nv, ptr(a), nv, ptr(fext), nf, ptr(out1),
                     static_cast<int>(out1.size()));
        if (s == CDYN_OK && !finite(out1)) __builtin_trap();
        break;
      case 2: {
        const int ld = in.length(l.nv);
        std::vector<double> M(static_cast<size_t>(ld > 0 ? ld : 0) * l.nv);
        s = cdyn_crba(l.m, l.ws, ptr(q), nq, ptr(M), ld);
        break;
      }
      case 3:
        s = cdyn_nonlinear_effects(l.m, l.ws, ptr(q), nq, ptr(v), nv, ptr(out1),
                                   static_cast<int>(out1.size()));
        break;
      case 4: {
        double e = 0;
        s = cdyn_kinetic_energy(l.m, l.ws, ptr(q), nq, ptr(v), nv, &e);
        if (s == CDYN_OK) s = cdyn_potential_energy(l.m, l.ws, ptr(q), nq, &e);
        break;
      }
      case 5: {
        s = cdyn_forward_kinematics(l.m, l.ws, ptr(q), nq, ptr(v), nv, ptr(a), nv);
        const int frame = static_cast<int>(in.byte()) - 2, rf = in.byte() % 4, ld = in.length(6);
        std::vector<double> J(static_cast<size_t>(ld > 0 ? ld : 0) * l.nv), R(9), T(16);
        double p[3], m6[6];
        checkStatus(l, cdyn_frame_placement(l.m, l.ws, frame, R.data(), 3, p));
        checkStatus(l, cdyn_frame_placement_matrix(l.m, l.ws, frame, T.data(), 4));
        checkStatus(l, cdyn_frame_velocity(l.m, l.ws, frame, rf, m6));
        checkStatus(l, cdyn_frame_acceleration(l.m, l.ws, frame, rf, m6));
        checkStatus(l, cdyn_frame_classical_acceleration(l.m, l.ws, frame, rf, p));
        checkStatus(l, cdyn_frame_jacobian(l.m, l.ws, frame, rf, ptr(J), ld));
        checkStatus(l, cdyn_compute_frame_jacobian(l.m, l.ws, ptr(q), nq, frame, rf, ptr(J), ld));
        checkStatus(l, cdyn_center_of_mass(l.m, l.ws, ptr(q), nq, p));
        break;
      }
      case 6:
        s = cdyn_integrate(l.m, l.ws, ptr(q), nq, ptr(v), nv, in.value(), ptr(outq),
                           static_cast<int>(outq.size()));
        break;
      case 7:
        s = cdyn_ce_aba(l.m, l.ws, ptr(q), nq, ptr(v), nv, ptr(a), ny, ptr(fext), nf, ptr(outy),
                        static_cast<int>(outy.size()), ptr(out1), static_cast<int>(out1.size()));
        if (s == CDYN_OK && !(finite(outy) && finite(out1))) __builtin_trap();
        break;
      case 8:
        s = cdyn_ce_aba_spanning_forces(l.m, l.ws, ptr(q), nq, ptr(v), nv, ptr(a), nv, ptr(fext),
                                        nf, ptr(outy), static_cast<int>(outy.size()), ptr(out1),
                                        static_cast<int>(out1.size()));
        if (s == CDYN_OK && !(finite(outy) && finite(out1))) __builtin_trap();
        break;
      case 9: {
        std::vector<double> y = in.vector(nyq), yd = in.vector(ny), tau = in.vector(ny);
        s = cdyn_ce_aba_independent(
            l.m, l.ws, ptr(y), nyq, ptr(yd), ny, ptr(tau), ny, ptr(fext), nf, ptr(outy),
            static_cast<int>(outy.size()), ptr(outq), static_cast<int>(outq.size()), ptr(out1),
            static_cast<int>(out1.size()), ptr(out2), static_cast<int>(out2.size()));
        if (s == CDYN_OK && !(finite(outy) && finite(outq) && finite(out1) && finite(out2)))
          __builtin_trap();
        break;
      }
      case 10:
        s = cdyn_ce_rnea(l.m, l.ws, ptr(q), nq, ptr(v), nv, ptr(a), ny, ptr(fext), nf, ptr(outy),
                         static_cast<int>(outy.size()), ptr(out1), static_cast<int>(out1.size()));
        if (s == CDYN_OK && !(finite(outy) && finite(out1))) __builtin_trap();
        break;
      case 11: {
        const int ld = in.length(l.ny);
        std::vector<double> H(static_cast<size_t>(ld > 0 ? ld : 0) * l.ny);
        s = cdyn_cluster_mass_matrix(l.m, l.ws, ptr(q), nq, ptr(H), ld);
        break;
      }
      case 12:
        s = cdyn_cluster_bias(l.m, l.ws, ptr(q), nq, ptr(v), nv, ptr(outy),
                              static_cast<int>(outy.size()));
        if (s == CDYN_OK && !finite(outy)) __builtin_trap();
        break;
      case 13: {
        std::vector<double> y = in.vector(nyq);
        const bool guess = in.byte() & 1;
        s = cdyn_solve_loop_closure(l.m, l.ws, ptr(y), nyq, guess ? ptr(q) : nullptr,
                                    guess ? nq : 0, ptr(outq), static_cast<int>(outq.size()));
        int it = 0;
        double res = 0;
        checkStatus(l, cdyn_last_loop_closure(l.m, l.ws, &it, &res));
        break;
      }
      case 14: {
        std::vector<double> y = in.vector(nyq), yd = in.vector(ny);
        s = cdyn_independent_to_spanning(l.m, l.ws, ptr(y), nyq, ptr(yd), ny, nullptr, 0, ptr(outq),
                                         static_cast<int>(outq.size()), ptr(out1),
                                         static_cast<int>(out1.size()));
        break;
      }
      case 15: {
        std::vector<double> y(in.length(l.nyq));
        s = cdyn_spanning_to_independent(l.m, l.ws, ptr(q), nq, ptr(v), nv, ptr(y),
                                         static_cast<int>(y.size()), ptr(outy),
                                         static_cast<int>(outy.size()));
        break;
      }
      case 16:
        s = cdyn_project_to_constraints(l.m, l.ws, ptr(q), nq, ptr(v), nv, ptr(outq),
                                        static_cast<int>(outq.size()), ptr(out1),
                                        static_cast<int>(out1.size()));
        break;
      case 17: {
        const int ld = in.length(l.nv);
        std::vector<double> G(static_cast<size_t>(ld > 0 ? ld : 0) * l.ny);
        s = cdyn_constraint_matrices(l.m, l.ws, ptr(q), nq, ptr(v), nv, ptr(G), ld, ptr(out1),
                                     static_cast<int>(out1.size()));
        break;
      }
      case 18: {
        const int k = static_cast<int>(in.byte()) % (l.nclusters + 2) - 1;
        int q0 = 0, nqk = 0, v0 = 0, nvk = 1, yq0 = 0, nyqk = 0, y0 = 0, nyk = 1;
        if (k >= 0 && k < l.nclusters)
          cdyn_model_cluster_coordinates(l.m, k, &q0, &nqk, &v0, &nvk, &yq0, &nyqk, &y0, &nyk);
        const int ld = in.length(nvk);
        std::vector<double> G(static_cast<size_t>(ld > 0 ? ld : 0) * nyk), g(in.length(nvk));
        s = cdyn_cluster_constraint_matrices(l.m, l.ws, k, ptr(q), nq, ptr(v), nv, ptr(G), ld,
                                             ptr(g), static_cast<int>(g.size()));
        break;
      }
      default:
        s = cdyn_generalized_gravity(l.m, l.ws, ptr(q), nq, ptr(out1),
                                     static_cast<int>(out1.size()));
        break;
    }
    checkStatus(l, s);
  }
  return 0;
}
