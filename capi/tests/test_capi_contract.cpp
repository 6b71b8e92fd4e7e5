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
  for (int k = 0; k < nyq; ++k) y[k] += y0 * (k + 1);
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

}  // namespace
