// The header's contract, statement by statement, through the C API only (issue 22: what a C
// programmer with clusterdyn.h alone must be able to rely on): every refusal leaves a message,
// handle lifetimes, ld >= m for m = 0, the tau check of cdyn_forces_after_ce_aba, one spanning
// order for cut and embedded loops, what gamma and phi are, the sign relation of cut-loop
// multipliers and embedded loop rows, statuses of NaN settings, forces before a fill.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "clusterdyn.h"

namespace {

using Vec = std::vector<double>;

std::string bundled(const char* name) { return std::string(CLUSTERDYN_MODELS_DIR) + "/" + name; }

cdyn_model* load(const std::string& path, unsigned flags = 0) {
  char err[512];
  cdyn_model* m = nullptr;
  EXPECT_EQ(cdyn_model_load(CDYN_ABI_VERSION, path.c_str(), flags, nullptr, &m, err, sizeof err),
            CDYN_OK)
      << err;
  return m;
}

int query(cdyn_status (*f)(const cdyn_model*, int*), const cdyn_model* m) {
  int n = -1;
  EXPECT_EQ(f(m, &n), CDYN_OK);
  return n;
}

/// A closed state of an embedded-loop model from random independent coordinates.
void closedState(cdyn_model* m, cdyn_workspace* ws, double y0, Vec& q, Vec& v) {
  const int nq = query(cdyn_model_nq, m), nv = query(cdyn_model_nv, m);
  const int nyq = query(cdyn_model_nyq, m), ny = query(cdyn_model_ny, m);
  Vec y(nyq), yd(ny);
  q.assign(nq, 0);
  ASSERT_EQ(cdyn_model_reference_configuration(m, q.data(), nq), CDYN_OK);
  ASSERT_EQ(cdyn_spanning_to_independent(m, ws, q.data(), nq, Vec(nv, 0).data(), nv, y.data(), nyq,
                                         yd.data(), ny),
            CDYN_OK);
  for (int k = 0; k < nyq; ++k) {  // 1-dof joints only (their names have no ':' suffix)
    const char* name = nullptr;
    ASSERT_EQ(cdyn_model_independent_position_name(m, k, &name), CDYN_OK);
    if (std::strchr(name, ':') == nullptr) y[k] += y0 * (1 + 0.3 * k);
  }
  for (int k = 0; k < ny; ++k) yd[k] = 0.7 - 0.3 * k;
  q.assign(nq, 0), v.assign(nv, 0);
  ASSERT_EQ(cdyn_independent_to_spanning(m, ws, y.data(), nyq, yd.data(), ny, nullptr, 0, q.data(),
                                         nq, v.data(), nv),
            CDYN_OK)
      << cdyn_workspace_last_error(ws);
}

// ---- 1, 2: every refusal leaves a message; cdyn_model_free counts cdyn_forces ---------------

struct Case {
  const char* what;
  std::function<cdyn_status()> call;
  std::function<const char*()> message;  ///< where the header says the message is
  const char* expect;                    ///< a piece of it
};

TEST(Misuse, EveryRefusalLeavesAMessage) {
  cdyn_model* m = load(bundled("cd_four_bar.urdf"));
  cdyn_model* other = load(bundled("cd_four_bar.urdf"), CDYN_LOAD_CUT_LOOPS);
  ASSERT_TRUE(m && other);
  cdyn_workspace* ws = nullptr;
  cdyn_forces* forces = nullptr;
  cdyn_constraint_set *set = nullptr, *otherSet = nullptr;
  cdyn_constraint_workspace* cws = nullptr;
  cdyn_pool* pool = nullptr;
  ASSERT_EQ(cdyn_workspace_create(m, &ws), CDYN_OK);
  ASSERT_EQ(cdyn_forces_create(other, &forces), CDYN_OK);
  ASSERT_EQ(cdyn_constraint_set_create(m, &set), CDYN_OK);
  ASSERT_EQ(cdyn_constraint_set_create_cut_loops(other, &otherSet), CDYN_OK);
  ASSERT_EQ(cdyn_constraint_workspace_create(other, otherSet, &cws), CDYN_OK);
  const int nq = query(cdyn_model_nq, m), nv = query(cdyn_model_nv, m),
            ny = query(cdyn_model_ny, m);
  Vec q(nq), v(nv), tau(ny, 0.5), ydd(ny), W(6 * 8), lim(nq + 1);
  closedState(m, ws, 0.2, q, v);
  const char* s = nullptr;
  int i = 0;
  const auto last = [] { return cdyn_last_error(); };
  const auto wsMsg = [&] { return cdyn_workspace_last_error(ws); };
  const auto setMsg = [&] { return cdyn_constraint_set_last_error(otherSet); };
  auto* notWs = reinterpret_cast<cdyn_workspace*>(set);  // a handle of another kind
  const std::vector<Case> cases = {
      {"model free with a cdyn_forces alive", [&] { return cdyn_model_free(other); }, last,
       "cdyn_model_free"},
      {"model free with a workspace alive", [&] { return cdyn_model_free(m); }, last,
       "cdyn_model_free"},
      {"set free with a constraint workspace alive",
       [&] { return cdyn_constraint_set_free(otherSet); }, setMsg, "workspace"},
      {"the same, in cdyn_last_error", [&] { return cdyn_constraint_set_free(otherSet); }, last,
       "cdyn_constraint_set_free"},
      {"constraint workspace with another model's set",
       [&] {
         cdyn_constraint_workspace* w = nullptr;
         return cdyn_constraint_workspace_create(m, otherSet, &w);
       },
       last, "another model"},
      {"workspace free of a set handle", [&] { return cdyn_workspace_free(notWs); }, last,
       "cdyn_workspace_free"},
      {"compute call with a NULL workspace",
       [&] {
         return cdyn_ce_aba(m, nullptr, q.data(), nq, v.data(), nv, tau.data(), ny, nullptr, 0,
                            ydd.data(), ny, nullptr, 0);
       },
       last, "NULL"},
      {"body name out of range", [&] { return cdyn_model_body_name(m, 99, &s); }, last, "range"},
      {"unknown joint name", [&] { return cdyn_model_joint_index(m, "nope", &i); }, last,
       "no element"},
      {"joint type to NULL", [&] { return cdyn_model_joint_type(m, 0, nullptr); }, last,
       "type is NULL"},
      {"position limits of a wrong length",
       [&] { return cdyn_model_position_limits(m, lim.data(), lim.data(), nq + 1); }, last,
       "n is not nq"},
      {"cluster out of range",
       [&] { return cdyn_model_cluster_info(m, -1, nullptr, nullptr, nullptr, nullptr, nullptr); },
       last, "cluster is out of range"},
      {"NULL model", [&] { return cdyn_model_nq(nullptr, &i); }, last, "model is NULL"},
      {"row name out of range", [&] { return cdyn_constraint_set_row_name(otherSet, 77, &s); },
       last, "row is out of range"},
      {"constraint out of range",
       [&] {
         return cdyn_constraint_set_constraint(otherSet, 3, nullptr, nullptr, nullptr, nullptr,
                                               nullptr, nullptr, nullptr, nullptr, nullptr,
                                               nullptr);
       },
       last, "index is out of range"},
      {"loop rows of a loop out of range",
       [&] { return cdyn_forces_loop_rows(other, forces, 5, W.data(), 5); }, last,
       "loop is out of range"},
      {"loop wrenches of NULL forces",
       [&] { return cdyn_forces_loop_wrenches(m, nullptr, W.data(), 6); }, last, "forces is NULL"},
      {"forces of another model", [&] { return cdyn_forces_loop_wrenches(m, forces, W.data(), 6); },
       last, "another model"},
      {"pool of 0 threads", [&] { return cdyn_pool_create(m, 0, &pool); }, last, "nthreads"},
      {"log level 99", [&] { return cdyn_set_log_level(99); }, last, "cdyn_log_level"},
      {"forces after CE-ABA with another tau",
       [&] {
         EXPECT_EQ(cdyn_ce_aba(m, ws, q.data(), nq, v.data(), nv, tau.data(), ny, nullptr, 0,
                               ydd.data(), ny, nullptr, 0),
                   CDYN_OK);
         cdyn_forces* f = nullptr;
         EXPECT_EQ(cdyn_forces_create(m, &f), CDYN_OK);
         Vec other_tau = tau;
         other_tau[0] += 1.0;
         const cdyn_status st = cdyn_forces_after_ce_aba(m, ws, f, other_tau.data(), ny, 0);
         cdyn_forces_free(f);
         return st;
       },
       wsMsg, "differs"},
  };
  for (const Case& c : cases) {
    const cdyn_status st = c.call();
    EXPECT_NE(st, CDYN_OK) << c.what;
    const char* msg = c.message();
    ASSERT_NE(msg, nullptr) << c.what;
    EXPECT_NE(std::string(msg), "") << c.what;
    EXPECT_NE(std::string(msg).find(c.expect), std::string::npos)
        << c.what << ": message '" << msg << "' lacks '" << c.expect << "'";
  }
  // The refused frees freed nothing: every handle still works, then the right order frees all.
  EXPECT_EQ(cdyn_model_nq(other, &i), CDYN_OK);
  EXPECT_EQ(cdyn_forces_loop_wrenches(other, forces, W.data(), 6), CDYN_OK);
  EXPECT_EQ(cdyn_constraint_workspace_free(cws), CDYN_OK);
  EXPECT_EQ(cdyn_constraint_set_free(otherSet), CDYN_OK);
  EXPECT_EQ(cdyn_model_free(other), CDYN_ERR_INVALID_ARGUMENT);  // the forces still count
  EXPECT_EQ(cdyn_forces_free(forces), CDYN_OK);
  EXPECT_EQ(cdyn_model_free(other), CDYN_OK);
  EXPECT_EQ(cdyn_constraint_set_free(set), CDYN_OK);
  EXPECT_EQ(cdyn_workspace_free(ws), CDYN_OK);
  EXPECT_EQ(cdyn_model_free(m), CDYN_OK);
}

// ---- 3: ld >= m also for an empty set --------------------------------------------------------

TEST(HeaderContract, LeadingDimensionZeroForAnEmptySet) {
  cdyn_model* m = load(bundled("cd_quadruped.urdf"));
  cdyn_workspace* ws = nullptr;
  cdyn_constraint_set* set = nullptr;
  cdyn_constraint_workspace* cws = nullptr;
  ASSERT_EQ(cdyn_workspace_create(m, &ws), CDYN_OK);
  ASSERT_EQ(cdyn_constraint_set_create(m, &set), CDYN_OK);
  ASSERT_EQ(cdyn_constraint_workspace_create(m, set, &cws), CDYN_OK);
  const int nq = query(cdyn_model_nq, m);
  Vec q(nq), J(1, 7.0);
  ASSERT_EQ(cdyn_model_reference_configuration(m, q.data(), nq), CDYN_OK);
  EXPECT_EQ(cdyn_delassus_matrix(set, cws, q.data(), nullptr, 0), CDYN_OK)
      << cdyn_constraint_workspace_last_error(cws);
  EXPECT_EQ(cdyn_damped_delassus_inverse(set, cws, q.data(), 1e-6, nullptr, 0), CDYN_OK)
      << cdyn_constraint_workspace_last_error(cws);
  EXPECT_EQ(cdyn_constraint_jacobian(set, cws, q.data(), nullptr, 0, J.data(), 0, nullptr), CDYN_OK)
      << cdyn_constraint_workspace_last_error(cws);
  EXPECT_EQ(J[0], 7.0);  // nothing written
  EXPECT_EQ(cdyn_delassus_matrix(set, cws, q.data(), nullptr, -1), CDYN_ERR_INVALID_SIZE);
  cdyn_constraint_workspace_free(cws);
  cdyn_constraint_set_free(set);
  cdyn_workspace_free(ws);
  cdyn_model_free(m);
}

// ---- 4: forces_after_ce_aba takes exactly the efforts of the CE-ABA call --------------------

TEST(HeaderContract, ForcesAfterCeAbaUseTheEffortsOfThatCall) {
  cdyn_model* m = load(bundled("cd_six_bar.urdf"));
  cdyn_workspace* ws = nullptr;
  cdyn_forces *a = nullptr, *b = nullptr;
  ASSERT_EQ(cdyn_workspace_create(m, &ws), CDYN_OK);
  ASSERT_EQ(cdyn_forces_create(m, &a), CDYN_OK);
  ASSERT_EQ(cdyn_forces_create(m, &b), CDYN_OK);
  const int nq = query(cdyn_model_nq, m), nv = query(cdyn_model_nv, m),
            ny = query(cdyn_model_ny, m);
  const int nb = query(cdyn_model_nbodies, m);
  Vec q, v, ydd(ny), tau(ny), tauS(nv), Wa(6 * nb), Wb(6 * nb);
  closedState(m, ws, 0.1, q, v);
  for (int k = 0; k < ny; ++k) tau[k] = 0.3 + 0.2 * k;
  for (int k = 0; k < nv; ++k) tauS[k] = -0.1 * k;
  for (int spanning = 0; spanning < 2; ++spanning) {
    const Vec& t = spanning ? tauS : tau;
    const int nt = static_cast<int>(t.size());
    const auto dyn = [&] {
      return spanning ? cdyn_ce_aba_spanning_forces(m, ws, q.data(), nq, v.data(), nv, t.data(), nt,
                                                    nullptr, 0, ydd.data(), ny, nullptr, 0)
                      : cdyn_ce_aba(m, ws, q.data(), nq, v.data(), nv, t.data(), nt, nullptr, 0,
                                    ydd.data(), ny, nullptr, 0);
    };
    ASSERT_EQ(dyn(), CDYN_OK);
    ASSERT_EQ(cdyn_forces_after_ce_aba(m, ws, a, t.data(), nt, spanning), CDYN_OK);
    ASSERT_EQ(cdyn_forces_after_ce_aba(m, ws, b, nullptr, 0, spanning), CDYN_OK)
        << cdyn_workspace_last_error(ws);
    ASSERT_EQ(cdyn_forces_joint_wrenches(m, ws, a, CDYN_FORCE_FRAME_BODY, Wa.data(), 6), CDYN_OK);
    ASSERT_EQ(cdyn_forces_joint_wrenches(m, ws, b, CDYN_FORCE_FRAME_BODY, Wb.data(), 6), CDYN_OK);
    EXPECT_EQ(Wa, Wb);  // NULL: the same efforts, bit for bit
    ASSERT_EQ(dyn(), CDYN_OK);
    Vec wrong = t;
    wrong[nt - 1] = std::nextafter(wrong[nt - 1], 1e9);  // one ulp is already another state
    EXPECT_EQ(cdyn_forces_after_ce_aba(m, ws, a, wrong.data(), nt, spanning),
              CDYN_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(cdyn_workspace_last_error(ws)).find("tau[" + std::to_string(nt - 1)),
              std::string::npos)
        << cdyn_workspace_last_error(ws);
  }
  cdyn_forces_free(a);
  cdyn_forces_free(b);
  cdyn_workspace_free(ws);
  cdyn_model_free(m);
}

// ---- 5: one spanning order for a file with cut and with embedded loops ----------------------

/// Handles of one model with a constraint set (cut loops or contacts) and its workspaces.
struct Rig {
  cdyn_model* m = nullptr;
  cdyn_workspace* ws = nullptr;
  cdyn_constraint_set* set = nullptr;
  cdyn_constraint_workspace* cws = nullptr;
  explicit Rig(const std::string& path, unsigned flags = 0) {
    if (path.rfind("<", 0) == 0) {  // URDF text
      char err[512];
      EXPECT_EQ(cdyn_model_load_string(CDYN_ABI_VERSION, path.data(), path.size(), flags, nullptr,
                                       &m, err, sizeof err),
                CDYN_OK)
          << err;
    } else {
      m = load(path, flags);
    }
    EXPECT_EQ(cdyn_workspace_create(m, &ws), CDYN_OK);
    EXPECT_EQ(cdyn_constraint_set_create_cut_loops(m, &set), CDYN_OK);
  }
  void ready() { EXPECT_EQ(cdyn_constraint_workspace_create(m, set, &cws), CDYN_OK); }
  ~Rig() {
    cdyn_constraint_workspace_free(cws);
    cdyn_constraint_set_free(set);
    cdyn_workspace_free(ws);
    cdyn_model_free(m);
  }
};

/// The bundled four-bar with a body hanging from the crank, declared before the coupler: the
/// spanning tree's depth-first order puts it inside the loop's bodies, the cluster tree after
/// them (the case where cut and embedded models used to differ).
std::string fourBarWithTip() {
  std::FILE* fp = std::fopen(bundled("cd_four_bar.urdf").c_str(), "r");
  std::string text;
  for (int c; fp && (c = std::fgetc(fp)) != EOF;) text += static_cast<char>(c);
  if (fp) std::fclose(fp);
  const std::string tip =
      "  <link name=\"tip\"><inertial><mass value=\"0.2\"/><inertia ixx=\"1e-3\" "
      "iyy=\"2e-3\" izz=\"1e-3\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>\n"
      "  <joint name=\"tip_joint\" type=\"continuous\"><parent link=\"crank\"/>"
      "<child link=\"tip\"/><origin xyz=\"0.05 0 0\"/><axis xyz=\"0 1 0\"/></joint>\n";
  const std::size_t at = text.find("  <joint name=\"coupler_joint\"");
  return at == std::string::npos ? std::string() : text.insert(at, tip);
}

std::vector<std::string> loopFiles() {
  std::vector<std::string> f = {fourBarWithTip(), bundled("cd_four_bar.urdf"),
                                bundled("cd_six_bar.urdf")};
  for (const char* rel : {"/benchmarks/variable_four_bar_urdf/four_bar_branch_2_3.urdf",
                          "/benchmarks/parallel_chains/Implicit/depth5/loop_size5.urdf"}) {
    const std::string path = std::string(CAPI_SHARED_URDF) + rel;
    if (std::FILE* fp = std::fopen(path.c_str(), "r")) {
      std::fclose(fp);
      f.push_back(path);
    }
  }
  return f;
}

TEST(HeaderContract, CutLoopsKeepTheEmbeddedSpanningOrder) {
  ASSERT_EQ(cdyn_set_log_level(CDYN_LOG_ERROR), CDYN_OK);  // the shared models' inertia warnings
  for (const std::string& path : loopFiles()) {
    Rig emb(path), cut(path, CDYN_LOAD_CUT_LOOPS);
    cut.ready();
    const int nq = query(cdyn_model_nq, emb.m), nv = query(cdyn_model_nv, emb.m);
    const int ny = query(cdyn_model_ny, emb.m), m = [&] {
      int r = 0;
      EXPECT_EQ(cdyn_constraint_set_nrows(cut.set, &r), CDYN_OK);
      return r;
    }();
    ASSERT_EQ(query(cdyn_model_nq, cut.m), nq);
    const char *a = nullptr, *b = nullptr;
    for (int i = 0; i < nq; ++i) {
      ASSERT_EQ(cdyn_model_position_name(emb.m, i, &a), CDYN_OK);
      ASSERT_EQ(cdyn_model_position_name(cut.m, i, &b), CDYN_OK);
      EXPECT_STREQ(a, b) << path.substr(0, 60) << " q[" << i << "]";
    }
    // The documented recipe with the embedded model's vectors as they are: efforts on the
    // independent joints, a closed state; proxPV on the cut model equals CE-ABA.
    Vec q, v, tau(ny), ydd(ny), qdd(nv), tauCut(nv, 0.0), yddC(nv), qddC(nv), lam(m);
    closedState(emb.m, emb.ws, 0.15, q, v);
    for (int k = 0; k < ny; ++k) {
      tau[k] = 0.4 - 0.25 * k;
      int iv = -1;
      ASSERT_EQ(cdyn_model_independent_velocity_name(emb.m, k, &a), CDYN_OK);
      ASSERT_EQ(cdyn_model_velocity_index(cut.m, a, &iv), CDYN_OK);
      tauCut[iv] = tau[k];
    }
    ASSERT_EQ(cdyn_ce_aba(emb.m, emb.ws, q.data(), nq, v.data(), nv, tau.data(), ny, nullptr, 0,
                          ydd.data(), ny, qdd.data(), nv),
              CDYN_OK);
    cdyn_proximal_settings ps;
    cdyn_proximal_settings_default(&ps);
    ps.tolerance = 1e-11;
    ps.max_iterations = 300;
    ASSERT_EQ(cdyn_prox_pv(cut.set, cut.cws, q.data(), v.data(), tauCut.data(), nullptr, &ps,
                           yddC.data(), qddC.data(), lam.data(), m, nullptr),
              CDYN_OK)
        << path.substr(0, 60) << ": " << cdyn_constraint_workspace_last_error(cut.cws);
    for (int i = 0; i < nv; ++i)
      EXPECT_NEAR(qddC[i], qdd[i], 1e-7 * (1 + std::abs(qdd[i])))
          << path.substr(0, 60) << " qdd[" << i << "]";
  }
}

// ---- 6: gamma, phi, lambda's sign, NaN settings, forces before a fill ------------------------

/// The quadruped's four feet: point (world-aligned), point (local), weld (local), weld (world).
struct Feet : Rig {
  static constexpr const char* kFeet[4] = {"lf_foot", "rf_foot", "lh_foot", "rh_foot"};
  Feet() : Rig(bundled("cd_quadruped.urdf")) {
    cdyn_constraint_set_free(set);
    EXPECT_EQ(cdyn_constraint_set_create(m, &set), CDYN_OK);
    const int type[4] = {CDYN_CONSTRAINT_POINT, CDYN_CONSTRAINT_POINT, CDYN_CONSTRAINT_WELD,
                         CDYN_CONSTRAINT_WELD};
    const int rf[4] = {CDYN_LOCAL_WORLD_ALIGNED, CDYN_LOCAL, CDYN_LOCAL, CDYN_LOCAL_WORLD_ALIGNED};
    for (int k = 0; k < 4; ++k)
      EXPECT_EQ(cdyn_constraint_set_add_contact(set, kFeet[k], type[k], rf[k], nullptr, nullptr),
                CDYN_OK)
          << cdyn_constraint_set_last_error(set);
    ready();
  }
  int rows() const {
    int r = 0;
    cdyn_constraint_set_nrows(set, &r);
    return r;
  }
  void kin(const Vec& q, const Vec* v, Vec* J, Vec* gamma, Vec* phi) {
    const int r = rows();
    ASSERT_EQ(cdyn_constraint_kinematics(
                  set, cws, q.data(), v ? v->data() : nullptr, r, J ? J->data() : nullptr, r,
                  gamma ? gamma->data() : nullptr, phi ? phi->data() : nullptr),
              CDYN_OK)
        << cdyn_constraint_workspace_last_error(cws);
  }
  /// A closed state away from the reference configuration.
  void state(Vec& q, Vec& v) {
    const int nq = query(cdyn_model_nq, m), nv = query(cdyn_model_nv, m);
    Vec q0(nq), dv(nv);
    ASSERT_EQ(cdyn_model_reference_configuration(m, q0.data(), nq), CDYN_OK);
    v.assign(nv, 0.0);
    for (int i = 0; i < nv; ++i) dv[i] = 0.3 * std::sin(1.7 * i + 0.4), v[i] = std::cos(0.9 * i);
    Vec qi(nq), vi = v;
    ASSERT_EQ(cdyn_integrate(m, ws, q0.data(), nq, dv.data(), nv, 1.0, qi.data(), nq), CDYN_OK);
    // Closed (the gears are explicit constraints: constant G, so q (+) v t stays closed).
    q.assign(nq, 0.0);
    ASSERT_EQ(cdyn_project_to_constraints(m, ws, qi.data(), nq, vi.data(), nv, q.data(), nq,
                                          v.data(), nv),
              CDYN_OK)
        << cdyn_workspace_last_error(ws);
  }
};

TEST(HeaderContract, GammaIsTheDerivativeOfTheRowVelocities) {
  Feet f;
  const int r = f.rows(), nq = query(cdyn_model_nq, f.m), nv = query(cdyn_model_nv, f.m);
  const int ny = query(cdyn_model_ny, f.m), nyq = query(cdyn_model_nyq, f.m);
  Vec q, v, J(r * ny), gamma(r), Jp(r * ny), Jm(r * ny), qp(nq), qm(nq), y(nyq), yd(ny);
  f.state(q, v);
  ASSERT_EQ(cdyn_spanning_to_independent(f.m, f.ws, q.data(), nq, v.data(), nv, y.data(), nyq,
                                         yd.data(), ny),
            CDYN_OK);
  f.kin(q, &v, &J, &gamma, nullptr);
  const double h = 1e-5;
  ASSERT_EQ(cdyn_integrate(f.m, f.ws, q.data(), nq, v.data(), nv, h, qp.data(), nq), CDYN_OK);
  ASSERT_EQ(cdyn_integrate(f.m, f.ws, q.data(), nq, v.data(), nv, -h, qm.data(), nq), CDYN_OK);
  f.kin(qp, nullptr, &Jp, nullptr, nullptr);
  f.kin(qm, nullptr, &Jm, nullptr, nullptr);
  // Row velocities J ydot and their central difference along q(t) = q (+) v t (ydd = 0).
  Vec Jv(r, 0.0), dJv(r, 0.0);
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < ny; ++j)
      Jv[i] += J[i + j * r] * yd[j], dJv[i] += (Jp[i + j * r] - Jm[i + j * r]) * yd[j] / (2 * h);
  // rf_foot (rows 3..5) is a LOCAL point: classical, + omega_A x (J v).
  int frame = -1;
  double vel[6];
  ASSERT_EQ(cdyn_model_frame_index(f.m, "rf_foot", &frame), CDYN_OK);
  ASSERT_EQ(cdyn_forward_kinematics(f.m, f.ws, q.data(), nq, v.data(), nv, nullptr, 0), CDYN_OK);
  ASSERT_EQ(cdyn_frame_velocity(f.m, f.ws, frame, CDYN_LOCAL, vel), CDYN_OK);
  const double* w = vel;
  const double* u = Jv.data() + 3;
  const double wxu[3] = {w[1] * u[2] - w[2] * u[1], w[2] * u[0] - w[0] * u[2],
                         w[0] * u[1] - w[1] * u[0]};
  double scale = 1.0;
  for (double g : gamma) scale = std::max(scale, std::abs(g));
  for (int i = 0; i < r; ++i) {
    const double expected = dJv[i] + (i >= 3 && i < 6 ? wxu[i - 3] : 0.0);
    EXPECT_NEAR(gamma[i], expected, 1e-6 * scale) << "row " << i;
  }
  EXPECT_GT(std::abs(wxu[0]) + std::abs(wxu[1]) + std::abs(wxu[2]), 1e-3);  // the term matters
  // No gravity in gamma: zero at zero velocity.
  f.kin(q, nullptr, nullptr, &gamma, nullptr);
  for (int i = 0; i < r; ++i) EXPECT_NEAR(gamma[i], 0.0, 1e-12) << "row " << i;  // not 9.81
}

/// Rotation vector of a rotation matrix (column-major 3 x 3, angle < pi).
std::array<double, 3> rotationLog(const double* R) {
  const double c = std::max(-1.0, std::min(1.0, (R[0] + R[4] + R[8] - 1) / 2));
  const double angle = std::acos(c), s = std::sin(angle);
  const double k = angle < 1e-12 ? 0.5 : angle / (2 * s);
  return {k * (R[5] - R[7]), k * (R[6] - R[2]), k * (R[1] - R[3])};
}

TEST(HeaderContract, PhiIsThePoseErrorOfTheRows) {
  Feet f;
  const int r = f.rows(), nq = query(cdyn_model_nq, f.m);
  Vec q0(nq), q, v, phi(r, 1.0);
  ASSERT_EQ(cdyn_model_reference_configuration(f.m, q0.data(), nq), CDYN_OK);
  f.kin(q0, nullptr, nullptr, nullptr, &phi);  // contacts hold at the reference configuration
  for (int i = 0; i < r; ++i) EXPECT_NEAR(phi[i], 0.0, 1e-12) << "row " << i;
  f.state(q, v);
  f.kin(q, nullptr, nullptr, nullptr, &phi);
  // Poses of the feet at q (A) and at the reference configuration (B).
  const auto pose = [&](const Vec& at, int k, double* R, double* p) {
    int frame = -1;
    ASSERT_EQ(cdyn_model_frame_index(f.m, Feet::kFeet[k], &frame), CDYN_OK);
    ASSERT_EQ(cdyn_forward_kinematics(f.m, f.ws, at.data(), nq, nullptr, 0, nullptr, 0), CDYN_OK);
    ASSERT_EQ(cdyn_frame_placement(f.m, f.ws, frame, R, 3, p), CDYN_OK);
  };
  int row = 0;
  for (int k = 0; k < 4; ++k) {
    double RA[9], pA[3], RB[9], pB[3], d[3], RBtRA[9];
    pose(q, k, RA, pA);
    pose(q0, k, RB, pB);
    for (int i = 0; i < 3; ++i) d[i] = pA[i] - pB[i];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        RBtRA[i + 3 * j] = 0;
        for (int l = 0; l < 3; ++l) RBtRA[i + 3 * j] += RB[l + 3 * i] * RA[l + 3 * j];
      }
    const std::array<double, 3> lg = rotationLog(RBtRA);
    const bool local = k == 1 || k == 2, weld = k >= 2;
    // A's axes (local) or world axes: x_world = R_A x_A.
    const auto axes = [&](const double* x, double* out) {
      for (int i = 0; i < 3; ++i) {
        out[i] = 0;
        for (int l = 0; l < 3; ++l) out[i] += local ? RA[l + 3 * i] * x[l] : RA[i + 3 * l] * x[l];
      }
    };
    double ang[3], lin[3];
    if (local) {
      std::copy(lg.begin(), lg.end(), ang);
      axes(d, lin);
    } else {
      axes(lg.data(), ang);
      std::copy(d, d + 3, lin);
    }
    if (weld)
      for (int i = 0; i < 3; ++i) EXPECT_NEAR(phi[row++], ang[i], 1e-9) << Feet::kFeet[k];
    for (int i = 0; i < 3; ++i) EXPECT_NEAR(phi[row++], lin[i], 1e-9) << Feet::kFeet[k];
  }
  ASSERT_EQ(row, r);
  // A cut loop at a closed state: phi = 0; off the constraint manifold: not.
  Rig emb(bundled("cd_four_bar.urdf")), cut(bundled("cd_four_bar.urdf"), CDYN_LOAD_CUT_LOOPS);
  cut.ready();
  int m = 0;
  ASSERT_EQ(cdyn_constraint_set_nrows(cut.set, &m), CDYN_OK);
  Vec qc, vc, phic(m);
  closedState(emb.m, emb.ws, 0.3, qc, vc);
  ASSERT_EQ(cdyn_constraint_kinematics(cut.set, cut.cws, qc.data(), nullptr, m, nullptr, 0, nullptr,
                                       phic.data()),
            CDYN_OK);
  for (double x : phic) EXPECT_NEAR(x, 0.0, 1e-10);
  qc[1] += 0.05;
  ASSERT_EQ(cdyn_constraint_kinematics(cut.set, cut.cws, qc.data(), nullptr, m, nullptr, 0, nullptr,
                                       phic.data()),
            CDYN_OK);
  double big = 0;
  for (double x : phic) big = std::max(big, std::abs(x));
  EXPECT_GT(big, 1e-3);
}

TEST(HeaderContract, CutLoopLambdaIsMinusTheEmbeddedLoopWrench) {
  const std::string path = bundled("cd_four_bar.urdf");
  Rig emb(path), cut(path, CDYN_LOAD_CUT_LOOPS);
  cut.ready();
  cdyn_forces* forces = nullptr;
  ASSERT_EQ(cdyn_forces_create(emb.m, &forces), CDYN_OK);
  const int nq = query(cdyn_model_nq, emb.m), nv = query(cdyn_model_nv, emb.m);
  const int ny = query(cdyn_model_ny, emb.m);
  int m = 0, type = -1, body1 = -9, body2 = -9, rf = -1, pred = -9, succ = -9, nrows = 0;
  ASSERT_EQ(cdyn_constraint_set_nrows(cut.set, &m), CDYN_OK);
  double A[16], B[16], P[12], gains[2];
  ASSERT_EQ(cdyn_constraint_set_constraint(cut.set, 0, nullptr, &type, &body1, A, &body2, B, &rf,
                                           gains, nullptr, nullptr),
            CDYN_OK);
  ASSERT_EQ(cdyn_forces_loop_info(emb.m, 0, nullptr, &pred, &succ, &nrows, P), CDYN_OK);
  EXPECT_EQ(type, CDYN_CONSTRAINT_REVOLUTE);
  EXPECT_EQ(rf, CDYN_LOCAL);
  EXPECT_EQ(gains[0], 0.0);
  EXPECT_EQ(body1, pred);  // same body numbering in both models
  EXPECT_EQ(body2, succ);
  EXPECT_EQ(m, nrows);
  // R: A's axes in P's (P and A on the predecessor, same origin).
  double R[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      R[i + 3 * j] = 0;
      for (int l = 0; l < 3; ++l) R[i + 3 * j] += P[l + 3 * i] * A[l + 4 * j];
    }
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(A[12 + i], P[9 + i], 1e-12);
  Vec q, v, tau(ny, 0.3), ydd(ny), tauCut(nv, 0.0), yddC(nv), lam(m), Wloop(6), Wcut(6);
  closedState(emb.m, emb.ws, 0.25, q, v);
  for (int k = 0; k < ny; ++k) {
    const char* name = nullptr;
    int iv = -1;
    ASSERT_EQ(cdyn_model_independent_velocity_name(emb.m, k, &name), CDYN_OK);
    ASSERT_EQ(cdyn_model_velocity_index(cut.m, name, &iv), CDYN_OK);
    tauCut[iv] = tau[k];
  }
  ASSERT_EQ(cdyn_ce_aba(emb.m, emb.ws, q.data(), nq, v.data(), nv, tau.data(), ny, nullptr, 0,
                        ydd.data(), ny, nullptr, 0),
            CDYN_OK);
  ASSERT_EQ(cdyn_forces_after_ce_aba(emb.m, emb.ws, forces, nullptr, 0, 0), CDYN_OK);
  ASSERT_EQ(cdyn_forces_loop_wrenches(emb.m, forces, Wloop.data(), 6), CDYN_OK);
  cdyn_proximal_settings ps;
  cdyn_proximal_settings_default(&ps);
  ps.tolerance = 1e-12;
  ps.max_iterations = 300;
  ASSERT_EQ(cdyn_prox_pv(cut.set, cut.cws, q.data(), v.data(), tauCut.data(), nullptr, &ps,
                         yddC.data(), nullptr, lam.data(), m, nullptr),
            CDYN_OK);
  ASSERT_EQ(cdyn_constraint_wrenches(cut.set, cut.cws, Wcut.data(), 6), CDYN_OK);
  double scale = 0;
  for (int i = 0; i < 6; ++i) {
    double expected = 0;
    for (int l = 0; l < 3; ++l) expected -= R[l + 3 * (i % 3)] * Wloop[(i / 3) * 3 + l];
    EXPECT_NEAR(Wcut[i], expected, 1e-7) << "component " << i;
    scale = std::max(scale, std::abs(expected));
  }
  EXPECT_GT(scale, 0.1);
  cdyn_forces_free(forces);
}

TEST(HeaderContract, NanSettingsAreInvalidArguments) {
  Feet f;
  const int r = f.rows(), nq = query(cdyn_model_nq, f.m), nv = query(cdyn_model_nv, f.m);
  const int ny = query(cdyn_model_ny, f.m);
  Vec q0(nq), v(nv, 0.0), tau(ny, 0.0), ydd(ny), lam(r), D(r * r);
  ASSERT_EQ(cdyn_model_reference_configuration(f.m, q0.data(), nq), CDYN_OK);
  cdyn_proximal_settings ps;
  for (int field = 0; field < 2; ++field) {
    cdyn_proximal_settings_default(&ps);
    (field == 0 ? ps.mu : ps.tolerance) = std::nan("");
    EXPECT_EQ(cdyn_prox_pv(f.set, f.cws, q0.data(), v.data(), tau.data(), nullptr, &ps, ydd.data(),
                           nullptr, lam.data(), r, nullptr),
              CDYN_ERR_INVALID_ARGUMENT);
    EXPECT_NE(std::string(cdyn_constraint_workspace_last_error(f.cws)), "");
  }
  EXPECT_EQ(cdyn_damped_delassus_inverse(f.set, f.cws, q0.data(), std::nan(""), D.data(), r),
            CDYN_ERR_INVALID_ARGUMENT);
}

TEST(HeaderContract, ForcesAreZeroBeforeTheFirstFill) {
  cdyn_model* m = load(bundled("cd_four_bar.urdf"));
  cdyn_workspace* ws = nullptr;
  cdyn_forces* forces = nullptr;
  ASSERT_EQ(cdyn_workspace_create(m, &ws), CDYN_OK);
  ASSERT_EQ(cdyn_forces_create(m, &forces), CDYN_OK);
  const int nb = query(cdyn_model_nbodies, m);
  Vec W(6 * nb, 7.0), L(6, 7.0), rows(5, 7.0);
  EXPECT_EQ(cdyn_forces_joint_wrenches(m, ws, forces, CDYN_FORCE_FRAME_WORLD, W.data(), 6),
            CDYN_OK);
  EXPECT_EQ(cdyn_forces_loop_wrenches(m, forces, L.data(), 6), CDYN_OK);
  EXPECT_EQ(cdyn_forces_loop_rows(m, forces, 0, rows.data(), 5), CDYN_OK);
  for (double x : W) EXPECT_EQ(x, 0.0);
  for (double x : L) EXPECT_EQ(x, 0.0);
  for (double x : rows) EXPECT_EQ(x, 0.0);
  cdyn_forces_free(forces);
  cdyn_workspace_free(ws);
  cdyn_model_free(m);
}

}  // namespace
