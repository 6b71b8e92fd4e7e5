// libFuzzer target: the C API compute calls on the bundled models (models/cd_quadruped.urdf,
// models/cd_four_bar.urdf, and the four-bar loaded with CDYN_LOAD_CUT_LOOPS) with fuzzed
// states, efforts, array lengths and leading dimensions, including the constraint calls
// (cdyn_constraint_jacobian, cdyn_delassus_matrix, cdyn_damped_delassus_inverse,
// cdyn_constrained_aba, cdyn_prox_pv, cdyn_constrained_dynamics_dense, cdyn_constraint_wrenches,
// with fuzzed proximal settings and row counts; sets built from fuzzed cdyn_constraint_set_add
// arguments) and the constraint-force calls (cdyn_forces_*) after CE-ABA / CE-RNEA.
// Every buffer is exactly as long as the length passed with it, so a write past a declared
// length is an AddressSanitizer report. Properties checked: no crash, no sanitizer report, a
// valid status code, a non-empty message after a failure, and finite outputs whenever a
// function returns CDYN_OK (and, for the proximal solves, CDYN_ERR_NOT_CONVERGED, whose
// outputs are documented as the last finite iterate).
#include <cmath>
#include <cstdint>
#include <cstring>
#include <vector>

#include "clusterdyn.h"

#ifndef CLUSTERDYN_MODELS_DIR
#error "CLUSTERDYN_MODELS_DIR must name the models/ folder"
#endif

namespace {

/// A constraint set of a model with one constraint workspace.
struct Constraints {
  cdyn_constraint_set* set = nullptr;
  cdyn_constraint_workspace* ws = nullptr;
  int m = 0;
  bool contactOnly = false;
};

struct Loaded {
  cdyn_model* m = nullptr;
  cdyn_workspace* ws = nullptr;
  cdyn_forces* forces = nullptr;
  int nq = 0, nv = 0, ny = 0, nyq = 0, nb = 0, nframes = 0, nclusters = 0, nloops = 0;
  int nrelations = 0;
  Constraints sets[2];  // [0]: contacts with the world only; [1]: any constraints (may be empty)
};

void finishSet(const Loaded& l, Constraints& c, bool contactOnly) {
  if (cdyn_constraint_workspace_create(l.m, c.set, &c.ws) != CDYN_OK ||
      cdyn_constraint_set_nrows(c.set, &c.m) != CDYN_OK)
    __builtin_trap();
  c.contactOnly = contactOnly;
}

Loaded load(const char* path, unsigned flags) {
  Loaded l;
  char err[512];
  if (cdyn_model_load(CDYN_ABI_VERSION, path, flags, nullptr, &l.m, err, sizeof err) != CDYN_OK ||
      cdyn_workspace_create(l.m, &l.ws) != CDYN_OK || cdyn_forces_create(l.m, &l.forces) != CDYN_OK)
    __builtin_trap();
  cdyn_model_nq(l.m, &l.nq);
  cdyn_model_nv(l.m, &l.nv);
  cdyn_model_ny(l.m, &l.ny);
  cdyn_model_nyq(l.m, &l.nyq);
  cdyn_model_nbodies(l.m, &l.nb);
  cdyn_model_nframes(l.m, &l.nframes);
  cdyn_model_nclusters(l.m, &l.nclusters);
  cdyn_model_nloops(l.m, &l.nloops);
  cdyn_model_nrelations(l.m, &l.nrelations);
  // Set 0: contacts of links with the world (constrainedABA applies).
  Constraints& contacts = l.sets[0];
  if (cdyn_constraint_set_create(l.m, &contacts.set) != CDYN_OK) __builtin_trap();
  const char* quadrupedFeet[] = {"lf_foot", "rf_foot", "lh_foot", "rh_foot"};
  const bool quadruped = l.nb > 10;
  if (quadruped) {
    for (int k = 0; k < 4; ++k)
      if (cdyn_constraint_set_add_contact(
              contacts.set, quadrupedFeet[k], k == 1 ? CDYN_CONSTRAINT_WELD : CDYN_CONSTRAINT_POINT,
              k % 2 ? CDYN_LOCAL_WORLD_ALIGNED : CDYN_LOCAL, nullptr, nullptr) != CDYN_OK)
        __builtin_trap();
  } else if (cdyn_constraint_set_add_contact(contacts.set, "coupler", CDYN_CONSTRAINT_POINT,
                                             CDYN_LOCAL, nullptr, nullptr) != CDYN_OK) {
    __builtin_trap();
  }
  finishSet(l, contacts, true);
  // Set 1: the cut loops (four-bar with CDYN_LOAD_CUT_LOOPS) or body-body constraints.
  Constraints& general = l.sets[1];
  if (cdyn_constraint_set_create_cut_loops(l.m, &general.set) != CDYN_OK) __builtin_trap();
  int ncut = 0;
  cdyn_constraint_set_size(general.set, &ncut);
  if (ncut == 0 && quadruped) {
    const double gains[2] = {10.0, 2.0};
    double shift[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0.05, 0, -0.1, 1};
    if (cdyn_constraint_set_add(general.set, "rev", CDYN_CONSTRAINT_REVOLUTE, 4, shift, 0, nullptr,
                                CDYN_LOCAL, gains, nullptr) != CDYN_OK ||
        cdyn_constraint_set_add(general.set, "pt", CDYN_CONSTRAINT_POINT, 7, nullptr, -1, shift,
                                CDYN_LOCAL_WORLD_ALIGNED, nullptr, nullptr) != CDYN_OK)
      __builtin_trap();
  }
  finishSet(l, general, false);
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

bool finiteMatrix(const std::vector<double>& A, int ld, int rows, int cols) {
  if (ld < rows) return true;  // rejected call: nothing written
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i)
      if (!std::isfinite(A[static_cast<size_t>(i) + static_cast<size_t>(j) * ld])) return false;
  return true;
}

void checkConstraintStatus(const Constraints& c, cdyn_status s) {
  const int code = static_cast<int>(s);
  if (!((code >= 0 && code <= CDYN_ERR_NOT_CONVERGED) || s == CDYN_ERR_NULL_POINTER))
    __builtin_trap();
  if (s != CDYN_OK && s != CDYN_ERR_NULL_POINTER &&
      cdyn_constraint_workspace_last_error(c.ws)[0] == '\0')
    __builtin_trap();
}

/// Fuzzed proximal settings: the defaults, or fuzzed mu / tolerance / iterations / warm start.
cdyn_proximal_settings settings(Input& in) {
  cdyn_proximal_settings ps;
  cdyn_proximal_settings_default(&ps);
  const std::uint8_t mode = in.byte();
  if (mode & 1) ps.mu = (mode & 2) ? in.value() : std::pow(10.0, in.byte() % 24 - 16.0);
  if (mode & 4) ps.tolerance = (mode & 8) ? in.value() : std::pow(10.0, in.byte() % 24 - 20.0);
  if (mode & 16) ps.max_iterations = static_cast<int>(in.byte()) - 8;
  ps.warm_start = (mode >> 5) & 1;
  return ps;
}

/// One of the constraint compute calls on set c (fn selects it; 6: cdyn_constraint_wrenches).
void constraintCall(const Loaded& l, const Constraints& c, int fn, Input& in,
                    const std::vector<double>& q, const std::vector<double>& v, int nq, int nv) {
  // The constraint calls take q, v at the model's sizes: pass full-length buffers.
  std::vector<double> qf(l.nq), vf(l.nv);
  for (int i = 0; i < l.nq && i < nq; ++i) qf[i] = q[i];
  for (int i = 0; i < l.nv && i < nv; ++i) vf[i] = v[i];
  if (nq != l.nq) cdyn_model_reference_configuration(l.m, qf.data(), l.nq);
  const int m = in.length(c.m), ld = in.length(c.m);
  cdyn_status s = CDYN_OK;
  switch (fn) {
    case 0: {
      std::vector<double> J(static_cast<size_t>(ld > 0 ? ld : 0) * l.ny), gamma(c.m);
      const bool withV = in.byte() & 1;
      s = cdyn_constraint_jacobian(c.set, c.ws, qf.data(), withV ? vf.data() : nullptr, m, ptr(J),
                                   ld, gamma.data());
      if (s == CDYN_OK && !(finiteMatrix(J, ld, c.m, l.ny) && finite(gamma))) __builtin_trap();
      break;
    }
    case 1: {
      std::vector<double> D(static_cast<size_t>(ld > 0 ? ld : 0) * c.m);
      s = cdyn_delassus_matrix(c.set, c.ws, qf.data(), ptr(D), ld);
      if (s == CDYN_OK && !finiteMatrix(D, ld, c.m, c.m)) __builtin_trap();
      break;
    }
    case 2: {
      std::vector<double> D(static_cast<size_t>(ld > 0 ? ld : 0) * c.m);
      const double rho = (in.byte() & 1) ? in.value() : std::pow(10.0, in.byte() % 24 - 16.0);
      s = cdyn_damped_delassus_inverse(c.set, c.ws, qf.data(), rho, ptr(D), ld);
      if (s == CDYN_OK && !finiteMatrix(D, ld, c.m, c.m)) __builtin_trap();
      break;
    }
    case 3:
    case 4:
    case 5: {
      const cdyn_proximal_settings ps = settings(in);
      const bool defaults = in.byte() % 8 == 0, withQdd = in.byte() & 1;
      std::vector<double> tau = in.vector(l.ny), fext;
      if (in.byte() & 1) fext = in.vector(6 * l.nb);
      std::vector<double> ydd(l.ny), qdd(l.nv), lambda(m > 0 ? m : 0);
      cdyn_proximal_result res;
      const cdyn_proximal_settings* psp = defaults ? nullptr : &ps;
      auto* solve = fn == 3   ? cdyn_constrained_aba
                    : fn == 4 ? cdyn_prox_pv
                              : cdyn_constrained_dynamics_dense;
      s = solve(c.set, c.ws, qf.data(), vf.data(), ptr(tau), ptr(fext), psp, ydd.data(),
                withQdd ? qdd.data() : nullptr, ptr(lambda), m, &res);
      if ((s == CDYN_OK || s == CDYN_ERR_NOT_CONVERGED) &&
          !(finite(ydd) && finite(qdd) && finite(lambda) && std::isfinite(res.residual) &&
            std::isfinite(res.dual_step)))
        __builtin_trap();
      if ((s == CDYN_OK) != (res.converged == 1) && (s == CDYN_OK || s == CDYN_ERR_NOT_CONVERGED))
        __builtin_trap();
      break;
    }
    default: {
      const int ldw = in.length(6);
      int nc = 0;
      cdyn_constraint_set_size(c.set, &nc);
      std::vector<double> W(static_cast<size_t>(ldw > 0 ? ldw : 0) * nc);
      s = cdyn_constraint_wrenches(c.set, c.ws, ptr(W), ldw);
      if (s == CDYN_OK && !finiteMatrix(W, ldw, 6, nc)) __builtin_trap();
      break;
    }
  }
  checkConstraintStatus(c, s);
}

/// A set built from fuzzed cdyn_constraint_set_add arguments, used once and freed.
void fuzzedSet(const Loaded& l, Input& in, const std::vector<double>& q,
               const std::vector<double>& v, int nq, int nv) {
  Constraints c;
  if (cdyn_constraint_set_create(l.m, &c.set) != CDYN_OK) __builtin_trap();
  const int n = 1 + in.byte() % 3;
  for (int k = 0; k < n; ++k) {
    const int type = static_cast<int>(in.byte() % 7) - 1;
    const int b1 = static_cast<int>(in.byte()) % (l.nb + 2) - 1;
    const int b2 = static_cast<int>(in.byte()) % (l.nb + 2) - 2;
    const int rf = in.byte() % 4;
    double P1[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}, P2[16];
    std::memcpy(P2, P1, sizeof P1);
    const std::uint8_t pm = in.byte();
    if (pm & 1)
      for (int i = 12; i < 15; ++i) P1[i] = in.value();
    if (pm & 2)
      for (int i = 12; i < 15; ++i) P2[i] = in.value();
    if (pm & 4) P1[in.byte() % 16] = in.value();  // usually not a rotation any more
    double gains[2] = {in.value(), in.value()};
    char name[8] = {'c', static_cast<char>('0' + k), 0};
    if (in.byte() % 16 == 0) name[0] = 0;
    const cdyn_status s =
        cdyn_constraint_set_add(c.set, name, type, b1, (pm & 8) ? nullptr : P1, b2,
                                (pm & 16) ? nullptr : P2, rf, (pm & 32) ? nullptr : gains, nullptr);
    if (s != CDYN_OK && cdyn_constraint_set_last_error(c.set)[0] == '\0') __builtin_trap();
  }
  if (cdyn_constraint_workspace_create(l.m, c.set, &c.ws) != CDYN_OK) __builtin_trap();
  cdyn_constraint_set_nrows(c.set, &c.m);
  constraintCall(l, c, in.byte() % 7, in, q, v, nq, nv);
  if (cdyn_constraint_workspace_free(c.ws) != CDYN_OK || cdyn_constraint_set_free(c.set) != CDYN_OK)
    __builtin_trap();
}

/// The constraint-force queries after a CE-ABA / CE-RNEA call on l.ws (whatever its status).
void forceCalls(const Loaded& l, Input& in, int fn) {
  // The efforts of the dynamics call are not kept: fuzzed ones of a fuzzed length (the forces
  // are then not those of the call, but must still be finite).
  const std::vector<double> tau = in.vector(in.length(fn == 8 ? l.nv : l.ny));
  const int ntau = static_cast<int>(tau.size());
  cdyn_status s;
  if (fn == 10)
    s = cdyn_forces_after_ce_rnea(l.m, l.ws, l.forces);
  else
    s = cdyn_forces_after_ce_aba(l.m, l.ws, l.forces, ptr(tau), ntau,
                                 fn == 8 ? 1 : static_cast<int>(in.byte() % 8 == 0));
  checkStatus(l, s);
  const int frame = static_cast<int>(in.byte() % 5) - 1, ldw = in.length(6);
  std::vector<double> W(static_cast<size_t>(ldw > 0 ? ldw : 0) * l.nb);
  cdyn_status sw = cdyn_forces_joint_wrenches(l.m, l.ws, l.forces, frame, ptr(W), ldw);
  checkStatus(l, sw);
  if (s == CDYN_OK && sw == CDYN_OK && !finiteMatrix(W, ldw, 6, l.nb)) __builtin_trap();
  std::vector<double> L(static_cast<size_t>(ldw > 0 ? ldw : 0) * l.nloops);
  sw = cdyn_forces_loop_wrenches(l.m, l.forces, ptr(L), ldw);
  checkStatus(l, sw);
  if (s == CDYN_OK && sw == CDYN_OK && !finiteMatrix(L, ldw, 6, l.nloops)) __builtin_trap();
  const int loop = static_cast<int>(in.byte()) % (l.nloops + 2) - 1;
  int nrows = 0, pre = 0, suc = 0;
  double pose[12];
  const char* name = nullptr;
  checkStatus(l, cdyn_forces_loop_info(l.m, loop, &name, &pre, &suc, &nrows, pose));
  std::vector<double> rows(in.length(nrows));
  sw = cdyn_forces_loop_rows(l.m, l.forces, loop, ptr(rows), static_cast<int>(rows.size()));
  checkStatus(l, sw);
  if (s == CDYN_OK && sw == CDYN_OK && !finite(rows)) __builtin_trap();
  const int rel = static_cast<int>(in.byte()) % (l.nrelations + 2) - 1;
  int nterms = 0;
  checkStatus(l, cdyn_forces_coupling_info(l.m, rel, &name, &nterms));
  int vi = 0;
  double coeff = 0.0, mult = 0.0;
  checkStatus(
      l, cdyn_forces_coupling_term(l.m, rel, static_cast<int>(in.byte() % 4) - 1, &vi, &coeff));
  std::vector<double> jf(in.length(nterms));
  sw = cdyn_forces_coupling(l.m, l.forces, rel, &mult, ptr(jf), static_cast<int>(jf.size()));
  checkStatus(l, sw);
  if (s == CDYN_OK && sw == CDYN_OK && !(finite(jf) && std::isfinite(mult))) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  static Loaded models[3] = {load(CLUSTERDYN_MODELS_DIR "/cd_quadruped.urdf", 0),
                             load(CLUSTERDYN_MODELS_DIR "/cd_four_bar.urdf", 0),
                             load(CLUSTERDYN_MODELS_DIR "/cd_four_bar.urdf", CDYN_LOAD_CUT_LOOPS)};
  Input in(bytes, size);
  const Loaded& l = models[in.byte() % 3];
  for (int call = 0; call < 8 && !in.done(); ++call) {
    const int fn = in.byte() % 32;
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
      case 19:
        s = cdyn_generalized_gravity(l.m, l.ws, ptr(q), nq, ptr(out1),
                                     static_cast<int>(out1.size()));
        break;
      case 31:
        fuzzedSet(l, in, q, v, nq, nv);
        break;
      default:  // 20..30: the constraint calls on set 0 (contacts) or set 1
        constraintCall(l, l.sets[fn % 2], in.byte() % 7, in, q, v, nq, nv);
        break;
    }
    checkStatus(l, s);
    // Constraint forces after a CE-ABA / CE-RNEA call (success or not).
    if (fn >= 7 && fn <= 10 && (in.byte() & 1)) forceCalls(l, in, fn);
  }
  return 0;
}
