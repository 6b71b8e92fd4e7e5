// C API of the constraints against the C++ API (include/clusterdyn/constraints.hpp): constraint
// sets, the row Jacobian, the Delassus matrix (PV-OSIMr, Sathya, Decre, Swevers 2024), the damped
// inverse and the proximal solves (constrainedABA, proxPV: Sathya & Carpentier 2024; dense
// baseline) must give the C++ results bit for bit on the same closed states; every error status
// comes with its message and leaves the outputs untouched; no compute call allocates (counted by
// tests/alloc_counter.cpp, linked in); N threads with their own workspaces are
// bit-identical to one thread.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "alloc_counter.hpp"
#include "closed_states.hpp"
#include "clusterdyn.h"
#include "clusterdyn/clusterdyn.hpp"
#include "clusterdyn/constraints.hpp"
#include "dense_oracles.hpp"
#include "test_util.hpp"

namespace {

namespace cd = clusterdyn;

std::string quadrupedPath() { return cd::test::modelsPath("cd_quadruped.urdf"); }
std::string cheetahPath() { return cd::test::sharedPath("urdfplus/mini_cheetah_approximate.urdf"); }
/// The Mini Cheetah is a third-party model of the shared folder (CLUSTERDYN_SHARED_DIR): a test
/// that needs it skips itself with a message, one that also runs on a bundled model says so.
bool haveCheetah() { return std::filesystem::exists(cheetahPath()); }
/// The bundled quadruped as a plain tree (same frame names as cd_quadruped, no couplings).
std::string quadrupedTreePath() { return cd::test::modelsPath("cd_quadruped_approximate.urdf"); }
const char* const kQuadrupedFeet[4] = {"lf_foot", "rf_foot", "lh_foot", "rh_foot"};
const char* const kCheetahKnees[4] = {"FR_knee_link", "FL_knee_link", "HR_knee_link",
                                      "HL_knee_link"};

/// C model + set + workspace, freed in the right order.
struct CSetup {
  cdyn_model* m = nullptr;
  cdyn_constraint_set* set = nullptr;
  cdyn_constraint_workspace* ws = nullptr;
  ~CSetup() {
    EXPECT_EQ(cdyn_constraint_workspace_free(ws), CDYN_OK);
    EXPECT_EQ(cdyn_constraint_set_free(set), CDYN_OK);
    EXPECT_EQ(cdyn_model_free(m), CDYN_OK);
  }
};

void loadC(CSetup& c, const std::string& path, unsigned flags = 0) {
  char err[512];
  ASSERT_EQ(cdyn_model_load(CDYN_ABI_VERSION, path.c_str(), flags, nullptr, &c.m, err, sizeof err),
            CDYN_OK)
      << err;
  ASSERT_EQ(cdyn_constraint_set_create(c.m, &c.set), CDYN_OK);
}

/// 4 x 4 column-major homogeneous matrix of a transform.
std::vector<double> homogeneous(const cd::Transform& T) {
  std::vector<double> h(16, 0.0);
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) h[i + 4 * j] = T.R(i, j);
  for (int i = 0; i < 3; ++i) h[12 + i] = T.p[i];
  h[15] = 1.0;
  return h;
}

/// Random closed state of a cluster model (independent coordinates, loop closure:
/// support::randomClosedState) and efforts tau uniform in [-5, 5].
bool closedState(const cd::ClusterModel& cm, std::mt19937_64& rng, cd::VecX& q, cd::VecX& v,
                 cd::VecX& tau) {
  cd::ClusterData data(cm);
  cd::support::ClosedState s;
  if (!cd::support::randomClosedState(cm, data, rng, s)) return false;
  q = s.q, v = s.v;
  tau = 5.0 * cd::support::uniformVector(cm.ny, rng);
  return true;
}

::testing::AssertionResult same(const double* a, const double* b, long n, const char* what) {
  for (long i = 0; i < n; ++i)
    if (!(a[i] == b[i]))
      return ::testing::AssertionFailure()
             << what << "[" << i << "]: C API " << a[i] << " vs C++ " << b[i];
  return ::testing::AssertionSuccess();
}
#define EXPECT_SAME(a, b, n) EXPECT_TRUE(same((a), (b), (n), #a))

/// Column-major m x n block of a buffer with leading dimension ld, as an Eigen matrix.
cd::MatX block(const std::vector<double>& buf, int m, int n, int ld) {
  cd::MatX A(m, n);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) A(i, j) = buf[i + j * ld];
  return A;
}

/// Every C compute function against C++ on `samples` random closed states. The C++ set is built
/// by `build`, the C set must already hold the same constraints.
template <typename Build>
void compareSets(const std::string& path, unsigned flags, cd::ModelOptions options, CSetup& c,
                 Build&& build, int samples, bool contactsOnly) {
  const cd::ClusterModel cm = cd::loadModel(path, options);
  cd::ConstraintSet set(cm);
  build(set);
  ASSERT_EQ(cdyn_constraint_workspace_create(c.m, c.set, &c.ws), CDYN_OK);
  int m = -1, n = -1;
  ASSERT_EQ(cdyn_constraint_set_nrows(c.set, &m), CDYN_OK);
  ASSERT_EQ(cdyn_constraint_set_size(c.set, &n), CDYN_OK);
  ASSERT_EQ(m, set.rows());
  ASSERT_EQ(n, set.size());
  ASSERT_GT(m, 0);
  for (int r = 0; r < m; ++r) {
    const char* name = nullptr;
    ASSERT_EQ(cdyn_constraint_set_row_name(c.set, r, &name), CDYN_OK);
    EXPECT_EQ(std::string(name), set.rowNames()[r]);
  }
  (void)flags;
  cd::ClusterData data(cm);
  cd::ConstraintData cdata(cm, set);
  const int ny = cm.ny, nv = cm.treeModel.nv, ld = m + 3;
  const double sentinel = -12345.0;
  std::mt19937_64 rng(17);
  cdyn_proximal_settings ps;
  ASSERT_EQ(cdyn_proximal_settings_default(&ps), CDYN_OK);
  cd::ProximalSettings cps;
  EXPECT_EQ(ps.mu, cps.mu);
  EXPECT_EQ(ps.tolerance, cps.tolerance);
  EXPECT_EQ(ps.max_iterations, cps.maxIterations);
  ps.tolerance = cps.tolerance = 1e-11;
  for (int k = 0; k < samples; ++k) {
    cd::VecX q, v, tau;
    ASSERT_TRUE(closedState(cm, rng, q, v, tau));
    std::vector<cd::Force> fx = cd::test::randomForces(cm.treeModel, rng, 2.0);
    std::vector<double> fext(6 * cm.treeModel.nbodies);
    for (int i = 0; i < cm.treeModel.nbodies; ++i)
      for (int r = 0; r < 6; ++r) fext[6 * i + r] = fx[i][r];

    // Jacobian and gamma.
    std::vector<double> J(ld * ny, sentinel), gamma(m);
    ASSERT_EQ(
        cdyn_constraint_jacobian(c.set, c.ws, q.data(), v.data(), m, J.data(), ld, gamma.data()),
        CDYN_OK)
        << cdyn_constraint_workspace_last_error(c.ws);
    ASSERT_EQ(cd::constraintJacobian(cm, data, set, cdata, q, v), cd::Status::Ok);
    EXPECT_TRUE(block(J, m, ny, ld) == cdata.jacobian);
    EXPECT_SAME(gamma.data(), cdata.gamma.data(), m);
    for (int j = 0; j < ny; ++j)
      for (int i = m; i < ld; ++i) ASSERT_EQ(J[i + j * ld], sentinel) << "row " << i << " written";

    // Delassus matrix and damped inverse.
    std::vector<double> D(ld * m, sentinel), Di(ld * m, sentinel);
    ASSERT_EQ(cdyn_delassus_matrix(c.set, c.ws, q.data(), D.data(), ld), CDYN_OK)
        << cdyn_constraint_workspace_last_error(c.ws);
    ASSERT_EQ(cd::delassusMatrix(cm, data, set, cdata, q), cd::Status::Ok);
    EXPECT_TRUE(block(D, m, m, ld) == cdata.delassus);
    ASSERT_EQ(cdyn_damped_delassus_inverse(c.set, c.ws, q.data(), 1e-6, Di.data(), ld), CDYN_OK)
        << cdyn_constraint_workspace_last_error(c.ws);
    ASSERT_EQ(cd::dampedDelassusInverse(cm, data, set, cdata, q, 1e-6), cd::Status::Ok);
    EXPECT_TRUE(block(Di, m, m, ld) == cdata.dampedInverse);
    for (int j = 0; j < m; ++j)
      for (int i = m; i < ld; ++i) {
        ASSERT_EQ(D[i + j * ld], sentinel);
        ASSERT_EQ(Di[i + j * ld], sentinel);
      }
    // The oracle sees something that could fail: D is J H^-1 J^T.
    ASSERT_EQ(cd::clusterMassMatrix(cm, data, q), cd::Status::Ok);
    cd::MatX Dd;
    ASSERT_TRUE(cd::oracle::delassus(data.H, cdata.jacobian, Dd));
    EXPECT_TRUE(cd::test::isClose(block(D, m, m, ld), Dd, 1e-9));

    // The three solves, with and without external forces, and a warm-started one.
    using CFn = decltype(&cdyn_prox_pv);
    struct Solve {
      const char* name;
      CFn fn;
      int which;
    };
    const Solve solves[3] = {{"constrainedAba", &cdyn_constrained_aba, 0},
                             {"proxPv", &cdyn_prox_pv, 1},
                             {"dense", &cdyn_constrained_dynamics_dense, 2}};
    for (const Solve& s : solves) {
      if (s.which == 0 && !contactsOnly) {
        std::vector<double> ydd(ny, sentinel), lambda(m, sentinel);
        EXPECT_EQ(s.fn(c.set, c.ws, q.data(), v.data(), tau.data(), nullptr, &ps, ydd.data(),
                       nullptr, lambda.data(), m, nullptr),
                  CDYN_ERR_INVALID_ARGUMENT);
        EXPECT_NE(std::strstr(cdyn_constraint_workspace_last_error(c.ws), "proxPv"), nullptr)
            << cdyn_constraint_workspace_last_error(c.ws);
        EXPECT_EQ(ydd[0], sentinel);
        continue;
      }
      for (int withForces = 0; withForces < 2; ++withForces)
        for (int warm = 0; warm < (s.which == 2 ? 1 : 2); ++warm) {
          SCOPED_TRACE(std::string(s.name) + (withForces ? " fext" : "") + (warm ? " warm" : ""));
          cdyn_proximal_settings p = ps;
          p.warm_start = warm;
          cd::ProximalSettings cp = cps;
          std::vector<double> ydd(ny), qdd(nv), lambda(m);
          cdyn_proximal_result res{};
          const double* f = withForces ? fext.data() : nullptr;
          const cdyn_status st = s.fn(c.set, c.ws, q.data(), v.data(), tau.data(), f, &p,
                                      ydd.data(), qdd.data(), lambda.data(), m, &res);
          ASSERT_TRUE(st == CDYN_OK || st == CDYN_ERR_NOT_CONVERGED)
              << cdyn_constraint_workspace_last_error(c.ws);
          const cd::Force* cf = withForces ? fx.data() : nullptr;
          // The C++ warm start is the C++ workspace's previous lambda, as the C one's.
          const cd::Status cst =
              s.which == 0 ? cd::constrainedAba(cm, data, set, cdata, q, v, tau, cp, cf, warm)
              : s.which == 1
                  ? cd::proxPv(cm, data, set, cdata, q, v, tau, cp, cf, warm)
                  : cd::constrainedDynamicsDense(cm, data, set, cdata, q, v, tau, cp, cf);
          EXPECT_EQ(static_cast<int>(st), static_cast<int>(cst));
          EXPECT_EQ(res.status, static_cast<int>(st));
          EXPECT_SAME(ydd.data(), data.ydd.data(), ny);
          EXPECT_SAME(qdd.data(), data.qdd.data(), nv);
          EXPECT_SAME(lambda.data(), cdata.lambda.data(), m);
          EXPECT_EQ(res.iterations, cdata.result.iterations);
          EXPECT_EQ(res.residual, cdata.result.residual);
          EXPECT_EQ(res.dual_step, cdata.result.dualStep);
          EXPECT_EQ(res.converged, cdata.result.converged ? 1 : 0);
          // Per-constraint wrenches from this solve's multipliers, bitwise as the C++ ones.
          const int nc = set.size();
          std::vector<double> W(7 * std::max(nc, 1), sentinel);
          ASSERT_EQ(cdyn_constraint_wrenches(c.set, c.ws, W.data(), 7), CDYN_OK)
              << cdyn_constraint_workspace_last_error(c.ws);
          for (int j = 0; j < nc; ++j) {
            const cd::Force w = cd::constraintWrench(set, cdata, j);
            EXPECT_SAME(W.data() + 7 * j, w.data(), 6);
            EXPECT_EQ(W[7 * j + 6], sentinel);
          }
          // Independent check: the rows hold, J ydd + gamma = k (Baumgarte targets).
          if (!withForces && st == CDYN_OK) {
            const Eigen::Map<const cd::VecX> Y(ydd.data(), ny);
            EXPECT_LT(
                (block(J, m, ny, ld) * Y + Eigen::Map<cd::VecX>(gamma.data(), m) - cdata.desired)
                    .cwiseAbs()
                    .maxCoeff(),
                1e-8);
          }
        }
    }
  }
}

TEST(CApiConstraints, QuadrupedFeetMatchCxx) {
  CSetup c;
  loadC(c, quadrupedPath());
  for (const char* foot : kQuadrupedFeet) {
    int index = -1;
    ASSERT_EQ(cdyn_constraint_set_add_contact(c.set, foot, CDYN_CONSTRAINT_POINT, CDYN_LOCAL,
                                              nullptr, &index),
              CDYN_OK)
        << cdyn_constraint_set_last_error(c.set);
    EXPECT_STREQ(cdyn_constraint_set_last_error(c.set), "");
  }
  compareSets(
      quadrupedPath(), 0, {}, c,
      [](cd::ConstraintSet& s) {
        for (const char* foot : kQuadrupedFeet) s.addContact(foot, cd::ConstraintType::Point);
      },
      4, true);
}

TEST(CApiConstraints, MiniCheetahKneesMatchCxx) {
  if (!haveCheetah()) GTEST_SKIP() << "missing " << cheetahPath() << " (CLUSTERDYN_SHARED_DIR)";
  CSetup c;
  loadC(c, cheetahPath());
  for (const char* knee : kCheetahKnees)
    ASSERT_EQ(cdyn_constraint_set_add_contact(c.set, knee, CDYN_CONSTRAINT_POINT, CDYN_LOCAL, "",
                                              nullptr),
              CDYN_OK)
        << cdyn_constraint_set_last_error(c.set);
  compareSets(
      cheetahPath(), 0, {}, c,
      [](cd::ConstraintSet& s) {
        for (const char* knee : kCheetahKnees) s.addContact(knee, cd::ConstraintType::Point);
      },
      4, true);
}

TEST(CApiConstraints, WeldsWorldAlignedAndGainsMatchCxx) {
  // 6D contacts (world-aligned) on two feet, a point with Baumgarte gains at an offset pose.
  CSetup c;
  loadC(c, quadrupedPath());
  std::mt19937_64 rng(3);
  const cd::Transform off(cd::test::randomRotation(rng), cd::Vec3(0.01, -0.02, 0.03));
  const cd::Transform world(cd::test::randomRotation(rng), cd::Vec3(0.1, 0.2, -0.3));
  const std::vector<double> h1 = homogeneous(off), h2 = homogeneous(world);
  const double gains[2] = {20.0, 3.0};
  int shank = -1;
  ASSERT_EQ(cdyn_model_body_index(c.m, "rh_shank", &shank), CDYN_OK);
  ASSERT_EQ(cdyn_constraint_set_add_contact(c.set, "lf_foot", CDYN_CONSTRAINT_WELD,
                                            CDYN_LOCAL_WORLD_ALIGNED, "lf", nullptr),
            CDYN_OK);
  ASSERT_EQ(cdyn_constraint_set_add_contact(c.set, "rf_foot", CDYN_CONSTRAINT_WELD, CDYN_LOCAL,
                                            "rf", nullptr),
            CDYN_OK);
  int index = -1;
  ASSERT_EQ(cdyn_constraint_set_add(c.set, "rh", CDYN_CONSTRAINT_POINT, shank, h1.data(), -1,
                                    h2.data(), CDYN_LOCAL, gains, &index),
            CDYN_OK)
      << cdyn_constraint_set_last_error(c.set);
  EXPECT_EQ(index, 2);
  compareSets(
      quadrupedPath(), 0, {}, c,
      [&](cd::ConstraintSet& s) {
        s.addContact("lf_foot", cd::ConstraintType::Weld, cd::ReferenceFrame::LocalWorldAligned,
                     "lf");
        s.addContact("rf_foot", cd::ConstraintType::Weld, cd::ReferenceFrame::Local, "rf");
        cd::RigidConstraint r;
        r.name = "rh";
        r.type = cd::ConstraintType::Point;
        r.body1 = shank;
        r.placement1 = off;
        r.placement2 = world;
        r.kp = 20.0;
        r.kd = 3.0;
        s.add(r);
      },
      3, true);
}

TEST(CApiConstraints, TwoBodyLoopsMatchCxx) {
  // Revolute, planar and prismatic constraints between two bodies: proxPv and the dense baseline;
  // constrainedAba refuses (contacts only) naming proxPv.
  CSetup c;
  loadC(c, quadrupedPath());
  int a = -1, b = -1, d = -1;
  ASSERT_EQ(cdyn_model_body_index(c.m, "lf_shank", &a), CDYN_OK);
  ASSERT_EQ(cdyn_model_body_index(c.m, "rf_shank", &b), CDYN_OK);
  ASSERT_EQ(cdyn_model_body_index(c.m, "trunk", &d), CDYN_OK);
  std::mt19937_64 rng(8);
  const cd::Transform p1(cd::test::randomRotation(rng), cd::Vec3(0.0, 0.05, -0.1));
  const cd::Transform p2(cd::test::randomRotation(rng), cd::Vec3(0.02, -0.05, 0.1));
  const std::vector<double> h1 = homogeneous(p1), h2 = homogeneous(p2);
  ASSERT_EQ(cdyn_constraint_set_add(c.set, "rev", CDYN_CONSTRAINT_REVOLUTE, a, h1.data(), b,
                                    h2.data(), CDYN_LOCAL, nullptr, nullptr),
            CDYN_OK)
      << cdyn_constraint_set_last_error(c.set);
  ASSERT_EQ(cdyn_constraint_set_add(c.set, "pl", CDYN_CONSTRAINT_PLANAR, d, nullptr, a, h2.data(),
                                    CDYN_LOCAL, nullptr, nullptr),
            CDYN_OK)
      << cdyn_constraint_set_last_error(c.set);
  ASSERT_EQ(cdyn_constraint_set_add(c.set, "pr", CDYN_CONSTRAINT_PRISMATIC, b, h2.data(), d,
                                    h1.data(), CDYN_LOCAL, nullptr, nullptr),
            CDYN_OK)
      << cdyn_constraint_set_last_error(c.set);
  compareSets(
      quadrupedPath(), 0, {}, c,
      [&](cd::ConstraintSet& s) {
        cd::RigidConstraint r;
        r.name = "rev";
        r.type = cd::ConstraintType::Revolute;
        r.body1 = a;
        r.body2 = b;
        r.placement1 = p1;
        r.placement2 = p2;
        s.add(r);
        cd::RigidConstraint pl;
        pl.name = "pl";
        pl.type = cd::ConstraintType::Planar;
        pl.body1 = d;
        pl.body2 = a;
        pl.placement2 = p2;
        s.add(pl);
        cd::RigidConstraint pr;
        pr.name = "pr";
        pr.type = cd::ConstraintType::Prismatic;
        pr.body1 = b;
        pr.body2 = d;
        pr.placement1 = p2;
        pr.placement2 = p1;
        s.add(pr);
      },
      3, false);
}

TEST(CApiConstraints, CutLoopsMatchCxx) {
  CSetup c;
  char err[512];
  const std::string path = cd::test::modelsPath("cd_four_bar.urdf");
  ASSERT_EQ(cdyn_model_load(CDYN_ABI_VERSION, path.c_str(), CDYN_LOAD_CUT_LOOPS, nullptr, &c.m, err,
                            sizeof err),
            CDYN_OK)
      << err;
  ASSERT_EQ(cdyn_constraint_set_create_cut_loops(c.m, &c.set), CDYN_OK);
  cd::ModelOptions o;
  o.cutLoops = true;
  const cd::ClusterModel cm = cd::loadModel(path, o);
  const cd::ConstraintSet ref = cd::cutLoopConstraints(cm);
  compareSets(
      path, CDYN_LOAD_CUT_LOOPS, o, c,
      [&](cd::ConstraintSet& s) {
        for (const cd::RigidConstraint& r : ref.constraints()) s.add(r);
      },
      3, false);
}

// ---- errors ---------------------------------------------------------------------------------

TEST(CApiConstraints, SetErrors) {
  CSetup c;
  loadC(c, quadrupedPath());
  int nb = 0;
  ASSERT_EQ(cdyn_model_nbodies(c.m, &nb), CDYN_OK);
  auto expectAdd = [&](cdyn_status st, const char* text, auto&&... args) {
    EXPECT_EQ(cdyn_constraint_set_add(c.set, args...), st);
    EXPECT_NE(std::strstr(cdyn_constraint_set_last_error(c.set), text), nullptr)
        << cdyn_constraint_set_last_error(c.set) << " (expected: " << text << ")";
    int n = -1;
    EXPECT_EQ(cdyn_constraint_set_size(c.set, &n), CDYN_OK);
    EXPECT_EQ(n, 0) << "a failed add must not change the set";
  };
  double bad[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  double nan[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  double nonRotation[16] = {2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  bad[3] = 1.0;
  nan[13] = std::numeric_limits<double>::quiet_NaN();
  const double badGains[2] = {-1.0, 0.0},
               infGains[2] = {std::numeric_limits<double>::infinity(), 0.0};
  expectAdd(CDYN_ERR_NULL_POINTER, "name is NULL", nullptr, 0, 0, nullptr, -1, nullptr, 0, nullptr,
            nullptr);
  expectAdd(CDYN_ERR_INVALID_ARGUMENT, "type 7 is not a cdyn_constraint_type (0..4)", "x", 7, 0,
            nullptr, -1, nullptr, 0, nullptr, nullptr);
  expectAdd(CDYN_ERR_INVALID_INDEX, "body1 = 99", "x", 0, 99, nullptr, -1, nullptr, 0, nullptr,
            nullptr);
  expectAdd(CDYN_ERR_INVALID_INDEX, "body2 = -2", "x", 0, 0, nullptr, -2, nullptr, 0, nullptr,
            nullptr);
  expectAdd(CDYN_ERR_INVALID_ARGUMENT, "reference frame 1", "x", 0, 0, nullptr, -1, nullptr,
            CDYN_WORLD, nullptr, nullptr);
  expectAdd(CDYN_ERR_INVALID_ARGUMENT, "use ReferenceFrame::Local", "x", CDYN_CONSTRAINT_REVOLUTE,
            0, nullptr, -1, nullptr, CDYN_LOCAL_WORLD_ALIGNED, nullptr, nullptr);
  expectAdd(CDYN_ERR_INVALID_ARGUMENT, "not homogeneous", "x", 0, 0, bad, -1, nullptr, 0, nullptr,
            nullptr);
  expectAdd(CDYN_ERR_NON_FINITE, "placement2[13] is not finite", "x", 0, 0, nullptr, -1, nan, 0,
            nullptr, nullptr);
  expectAdd(CDYN_ERR_INVALID_ARGUMENT, "not a rotation", "x", 0, 0, nonRotation, -1, nullptr, 0,
            nullptr, nullptr);
  expectAdd(CDYN_ERR_INVALID_ARGUMENT, "gains must be finite and >= 0", "x", 0, 0, nullptr, -1,
            nullptr, 0, badGains, nullptr);
  expectAdd(CDYN_ERR_NON_FINITE, "gains are not finite", "x", 0, 0, nullptr, -1, nullptr, 0,
            infGains, nullptr);
  expectAdd(CDYN_ERR_INVALID_ARGUMENT, "the name is empty", "", 0, 0, nullptr, -1, nullptr, 0,
            nullptr, nullptr);
  expectAdd(CDYN_ERR_INVALID_ARGUMENT, "body1 and body2 are the same body", "x", 0, 2, nullptr, 2,
            nullptr, 0, nullptr, nullptr);
  // Contacts.
  EXPECT_EQ(cdyn_constraint_set_add_contact(c.set, "no_such_link", CDYN_CONSTRAINT_POINT,
                                            CDYN_LOCAL, nullptr, nullptr),
            CDYN_ERR_NOT_FOUND);
  EXPECT_NE(std::strstr(cdyn_constraint_set_last_error(c.set), "no link or frame named"), nullptr);
  EXPECT_EQ(cdyn_constraint_set_add_contact(c.set, "lf_foot", CDYN_CONSTRAINT_REVOLUTE, CDYN_LOCAL,
                                            nullptr, nullptr),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(cdyn_constraint_set_last_error(c.set), "neither CDYN_CONSTRAINT_POINT"),
            nullptr);
  EXPECT_EQ(cdyn_constraint_set_add_contact(c.set, "world", CDYN_CONSTRAINT_POINT, CDYN_LOCAL,
                                            nullptr, nullptr),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(cdyn_constraint_set_last_error(c.set), "fixed to the world"), nullptr)
      << cdyn_constraint_set_last_error(c.set);
  EXPECT_EQ(cdyn_constraint_set_add_contact(c.set, nullptr, 0, 0, nullptr, nullptr),
            CDYN_ERR_NULL_POINTER);
  ASSERT_EQ(cdyn_constraint_set_add_contact(c.set, "lf_foot", CDYN_CONSTRAINT_POINT, CDYN_LOCAL,
                                            nullptr, nullptr),
            CDYN_OK);
  EXPECT_STREQ(cdyn_constraint_set_last_error(c.set), "");
  EXPECT_EQ(cdyn_constraint_set_add_contact(c.set, "lf_foot", CDYN_CONSTRAINT_POINT, CDYN_LOCAL,
                                            nullptr, nullptr),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(cdyn_constraint_set_last_error(c.set), "exists already"), nullptr);
  // Queries.
  const char* name = nullptr;
  EXPECT_EQ(cdyn_constraint_set_row_name(c.set, 3, &name), CDYN_ERR_INVALID_INDEX);
  EXPECT_EQ(cdyn_constraint_set_row_name(c.set, 2, &name), CDYN_OK);
  EXPECT_STREQ(name, "lf_foot_contact3d:lin_z");
  EXPECT_EQ(cdyn_constraint_set_nrows(nullptr, nullptr), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_proximal_settings_default(nullptr), CDYN_ERR_NULL_POINTER);
  // Handles of the wrong kind; lifetime rules.
  cdyn_constraint_set* none = reinterpret_cast<cdyn_constraint_set*>(&nb);
  EXPECT_EQ(cdyn_constraint_set_create(nullptr, &none), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(none, nullptr);  // the out handle is cleared first
  CSetup other;
  loadC(other, quadrupedPath());
  EXPECT_EQ(cdyn_model_free(c.m), CDYN_ERR_INVALID_ARGUMENT) << "a model with sets must stay";
  EXPECT_EQ(cdyn_constraint_workspace_create(other.m, c.set, &c.ws), CDYN_ERR_WORKSPACE_MISMATCH);
  EXPECT_EQ(c.ws, nullptr);
  EXPECT_EQ(cdyn_constraint_set_free(reinterpret_cast<cdyn_constraint_set*>(c.m)),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(cdyn_constraint_set_last_error(nullptr), "set is NULL");
  ASSERT_EQ(cdyn_constraint_set_add_contact(c.set, "rf_foot", CDYN_CONSTRAINT_POINT, CDYN_LOCAL,
                                            nullptr, nullptr),
            CDYN_OK);
  ASSERT_EQ(cdyn_constraint_workspace_create(c.m, c.set, &c.ws), CDYN_OK);
  EXPECT_EQ(cdyn_constraint_set_free(c.set), CDYN_ERR_INVALID_ARGUMENT)
      << "a set with workspaces must stay";
  EXPECT_EQ(cdyn_constraint_set_add_contact(c.set, "lh_foot", CDYN_CONSTRAINT_POINT, CDYN_LOCAL,
                                            nullptr, nullptr),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strstr(cdyn_constraint_set_last_error(c.set), "add constraints before"), nullptr);
}

/// A quadruped with four foot contacts, a C workspace and a closed state.
struct ComputeFixture {
  CSetup c;
  cd::ClusterModel cm = cd::loadModel(quadrupedPath());
  cd::VecX q, v, tau;
  int m = 0;
  void init() {
    loadC(c, quadrupedPath());
    for (const char* foot : kQuadrupedFeet)
      ASSERT_EQ(cdyn_constraint_set_add_contact(c.set, foot, CDYN_CONSTRAINT_POINT, CDYN_LOCAL,
                                                nullptr, nullptr),
                CDYN_OK);
    ASSERT_EQ(cdyn_constraint_workspace_create(c.m, c.set, &c.ws), CDYN_OK);
    ASSERT_EQ(cdyn_constraint_set_nrows(c.set, &m), CDYN_OK);
    std::mt19937_64 rng(4);
    ASSERT_TRUE(closedState(cm, rng, q, v, tau));
  }
};

TEST(CApiConstraints, ComputeErrors) {
  ComputeFixture f;
  f.init();
  cdyn_constraint_set* set = f.c.set;
  cdyn_constraint_workspace* ws = f.c.ws;
  const int m = f.m, ny = f.cm.ny, nv = f.cm.treeModel.nv;
  const double S = -777.0;
  std::vector<double> D(m * m, S), ydd(ny, S), qdd(nv, S), lambda(m, S), J(m * ny, S), g(m, S);
  auto untouched = [&] {
    for (double x : D) ASSERT_EQ(x, S);
    for (double x : ydd) ASSERT_EQ(x, S);
    for (double x : qdd) ASSERT_EQ(x, S);
    for (double x : lambda) ASSERT_EQ(x, S);
    for (double x : J) ASSERT_EQ(x, S);
    for (double x : g) ASSERT_EQ(x, S);
  };
  auto message = [&](const char* text) {
    const char* e = cdyn_constraint_workspace_last_error(ws);
    return std::strstr(e, text) != nullptr
               ? ::testing::AssertionSuccess()
               : ::testing::AssertionFailure() << "message '" << e << "' lacks '" << text << "'";
  };
  const double* q = f.q.data();
  const double* v = f.v.data();
  const double* tau = f.tau.data();
  cdyn_proximal_settings ps;
  cdyn_proximal_settings_default(&ps);
  cdyn_proximal_result res{};

  // Sizes: the explicit row count and the leading dimension.
  EXPECT_EQ(cdyn_delassus_matrix(set, ws, q, D.data(), m - 1), CDYN_ERR_INVALID_SIZE);
  EXPECT_TRUE(message("ldd is 11, expected >= 12"));
  EXPECT_EQ(cdyn_damped_delassus_inverse(set, ws, q, 1e-6, D.data(), 0), CDYN_ERR_INVALID_SIZE);
  EXPECT_TRUE(message("ldd is 0"));
  EXPECT_EQ(cdyn_constraint_wrenches(set, ws, D.data(), 5), CDYN_ERR_INVALID_SIZE);
  EXPECT_TRUE(message("ldw is 5, expected >= 6"));
  EXPECT_EQ(cdyn_constraint_wrenches(set, ws, nullptr, 6), CDYN_ERR_NULL_POINTER);
  EXPECT_TRUE(message("W is NULL"));
  EXPECT_EQ(cdyn_constraint_jacobian(set, ws, q, v, m + 1, J.data(), m, g.data()),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_TRUE(message("m is 13, expected the set's row count 12"));
  EXPECT_EQ(cdyn_constraint_jacobian(set, ws, q, v, m, J.data(), m - 2, g.data()),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_TRUE(message("ldj is 10"));
  EXPECT_EQ(cdyn_prox_pv(set, ws, q, v, tau, nullptr, &ps, ydd.data(), qdd.data(), lambda.data(), 3,
                         &res),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_TRUE(message("m is 3, expected the set's row count 12"));
  // NULL pointers.
  EXPECT_EQ(cdyn_delassus_matrix(set, ws, nullptr, D.data(), m), CDYN_ERR_NULL_POINTER);
  EXPECT_TRUE(message("q is NULL"));
  EXPECT_EQ(cdyn_delassus_matrix(set, ws, q, nullptr, m), CDYN_ERR_NULL_POINTER);
  EXPECT_TRUE(message("D is NULL"));
  EXPECT_EQ(cdyn_constrained_aba(set, ws, q, nullptr, tau, nullptr, &ps, ydd.data(), qdd.data(),
                                 lambda.data(), m, &res),
            CDYN_ERR_NULL_POINTER);
  EXPECT_TRUE(message("v is NULL"));
  EXPECT_EQ(cdyn_constrained_aba(set, ws, q, v, tau, nullptr, &ps, ydd.data(), qdd.data(), nullptr,
                                 m, &res),
            CDYN_ERR_NULL_POINTER);
  EXPECT_TRUE(message("lambda is NULL"));
  EXPECT_EQ(cdyn_constrained_aba(set, nullptr, q, v, tau, nullptr, &ps, ydd.data(), qdd.data(),
                                 lambda.data(), m, &res),
            CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_delassus_matrix(nullptr, ws, q, D.data(), m), CDYN_ERR_NULL_POINTER);
  EXPECT_TRUE(message("set is NULL"));
  untouched();

  // Non-finite inputs, non-unit quaternion, state off the constraints (messages of the core).
  cd::VecX bad = f.q;
  bad[2] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(cdyn_delassus_matrix(set, ws, bad.data(), D.data(), m), CDYN_ERR_NON_FINITE);
  EXPECT_TRUE(message("not finite"));
  cd::VecX badv = f.v;
  badv[4] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(cdyn_prox_pv(set, ws, q, badv.data(), tau, nullptr, &ps, ydd.data(), qdd.data(),
                         lambda.data(), m, &res),
            CDYN_ERR_NON_FINITE);
  EXPECT_TRUE(message("not finite"));
  std::vector<double> fext(6 * f.cm.treeModel.nbodies, 0.0);
  fext[7] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(cdyn_constrained_aba(set, ws, q, v, tau, fext.data(), &ps, ydd.data(), qdd.data(),
                                 lambda.data(), m, &res),
            CDYN_ERR_NON_FINITE);
  EXPECT_NE(std::strlen(cdyn_constraint_workspace_last_error(ws)), 0u);
  cd::VecX quat = f.q;
  quat[3] += 0.1;  // floating base quaternion (x y z w at 3..6)
  EXPECT_EQ(cdyn_delassus_matrix(set, ws, quat.data(), D.data(), m), CDYN_ERR_NOT_UNIT_QUATERNION);
  EXPECT_NE(std::strlen(cdyn_constraint_workspace_last_error(ws)), 0u);
  cd::VecX open = f.v;
  for (int i = 6; i < nv; ++i) open[i] += 0.3;  // breaks the rotor couplings
  EXPECT_EQ(cdyn_prox_pv(set, ws, q, open.data(), tau, nullptr, &ps, ydd.data(), qdd.data(),
                         lambda.data(), m, &res),
            CDYN_ERR_CONSTRAINT_FAILURE);
  EXPECT_TRUE(message("violates the velocity constraints"));
  // Settings and rho.
  EXPECT_EQ(cdyn_damped_delassus_inverse(set, ws, q, 0.0, D.data(), m), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::strlen(cdyn_constraint_workspace_last_error(ws)), 0u);
  cdyn_proximal_settings badSettings = ps;
  badSettings.mu = -1.0;
  EXPECT_EQ(cdyn_prox_pv(set, ws, q, v, tau, nullptr, &badSettings, ydd.data(), qdd.data(),
                         lambda.data(), m, &res),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(message("mu"));
  badSettings = ps;
  badSettings.warm_start = 1;
  EXPECT_EQ(cdyn_constrained_dynamics_dense(set, ws, q, v, tau, nullptr, &badSettings, ydd.data(),
                                            qdd.data(), lambda.data(), m, &res),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(message("warm_start is not supported by the dense baseline"));
  untouched();

  // A workspace of another set (same model) and of another model; handles of the wrong kind.
  CSetup other;
  loadC(other, quadrupedTreePath());
  ASSERT_EQ(cdyn_constraint_set_add_contact(other.set, kQuadrupedFeet[0], CDYN_CONSTRAINT_POINT,
                                            CDYN_LOCAL, nullptr, nullptr),
            CDYN_OK);
  ASSERT_EQ(cdyn_constraint_workspace_create(other.m, other.set, &other.ws), CDYN_OK);
  EXPECT_EQ(cdyn_delassus_matrix(set, other.ws, q, D.data(), m), CDYN_ERR_WORKSPACE_MISMATCH);
  EXPECT_STREQ(cdyn_constraint_workspace_last_error(other.ws),
               "the constraint workspace was created for another constraint set");
  cdyn_constraint_set* second = nullptr;
  ASSERT_EQ(cdyn_constraint_set_create(f.c.m, &second), CDYN_OK);
  EXPECT_EQ(cdyn_prox_pv(second, ws, q, v, tau, nullptr, &ps, ydd.data(), qdd.data(), lambda.data(),
                         m, &res),
            CDYN_ERR_WORKSPACE_MISMATCH);
  EXPECT_TRUE(message("another constraint set"));
  EXPECT_EQ(cdyn_constraint_set_free(second), CDYN_OK);
  EXPECT_EQ(cdyn_delassus_matrix(reinterpret_cast<cdyn_constraint_set*>(ws), ws, q, D.data(), m),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_TRUE(message("not a valid cdyn_constraint_set"));
  EXPECT_EQ(
      cdyn_delassus_matrix(set, reinterpret_cast<cdyn_constraint_workspace*>(set), q, D.data(), m),
      CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(
      cdyn_constraint_workspace_last_error(reinterpret_cast<cdyn_constraint_workspace*>(set)),
      "not a valid cdyn_constraint_workspace handle");
  untouched();

  // Not converged: status 9 with a message, the outputs hold the last iterate.
  cdyn_proximal_settings tight = ps;
  tight.max_iterations = 0;
  tight.tolerance = 1e-300;
  for (auto fn : {&cdyn_constrained_aba, &cdyn_prox_pv, &cdyn_constrained_dynamics_dense}) {
    std::fill(ydd.begin(), ydd.end(), S);
    std::fill(lambda.begin(), lambda.end(), S);
    res = cdyn_proximal_result{};
    EXPECT_EQ(fn(set, ws, q, v, tau, nullptr, &tight, ydd.data(), nullptr, lambda.data(), m, &res),
              CDYN_ERR_NOT_CONVERGED);
    EXPECT_TRUE(message("tolerance"));
    EXPECT_STREQ(cdyn_status_string(CDYN_ERR_NOT_CONVERGED),
                 "iterations did not reach the tolerance");
    EXPECT_EQ(res.status, CDYN_ERR_NOT_CONVERGED);
    EXPECT_EQ(res.converged, 0);
    EXPECT_GT(res.residual, 0.0);
    for (double x : ydd) EXPECT_TRUE(std::isfinite(x) && x != S);
    for (double x : lambda) EXPECT_TRUE(std::isfinite(x) && x != S);
  }
  // A success clears the message; NULL settings are the defaults.
  EXPECT_EQ(cdyn_prox_pv(set, ws, q, v, tau, nullptr, nullptr, ydd.data(), nullptr, lambda.data(),
                         m, nullptr),
            CDYN_OK);
  EXPECT_STREQ(cdyn_constraint_workspace_last_error(ws), "");
}

// ---- real time and threads ------------------------------------------------------------------

TEST(CApiConstraints, ComputeCallsDoNotAllocate) {
#ifdef CLUSTERDYN_SANITIZED
  GTEST_SKIP() << "allocation counting replaces malloc (not in sanitizer builds)";
#else
  std::vector<std::string> paths = {quadrupedPath()};
  if (haveCheetah())
    paths.push_back(cheetahPath());
  else
    std::cout << "[   NOTE   ] missing " << cheetahPath() << ": the bundled quadruped only\n";
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    CSetup c;
    loadC(c, path);
    const char* const* frames = path == quadrupedPath() ? kQuadrupedFeet : kCheetahKnees;
    for (int i = 0; i < 4; ++i)
      ASSERT_EQ(cdyn_constraint_set_add_contact(c.set, frames[i], CDYN_CONSTRAINT_POINT, CDYN_LOCAL,
                                                nullptr, nullptr),
                CDYN_OK);
    ASSERT_EQ(cdyn_constraint_workspace_create(c.m, c.set, &c.ws), CDYN_OK);
    const cd::ClusterModel cm = cd::loadModel(path);
    std::mt19937_64 rng(11);
    cd::VecX q, v, tau;
    ASSERT_TRUE(closedState(cm, rng, q, v, tau));
    int m = 0;
    ASSERT_EQ(cdyn_constraint_set_nrows(c.set, &m), CDYN_OK);
    std::vector<double> D(m * m), J(m * cm.ny), g(m), ydd(cm.ny), qdd(cm.treeModel.nv), lambda(m);
    std::vector<double> fext(6 * cm.treeModel.nbodies, 0.5);
    cd::VecX bad = q;
    bad[0] = std::numeric_limits<double>::quiet_NaN();
    cdyn_proximal_settings ps, warm, tight;
    cdyn_proximal_settings_default(&ps);
    warm = ps;
    warm.warm_start = 1;
    tight = ps;
    tight.max_iterations = 0;
    tight.tolerance = 1e-300;
    cdyn_proximal_result res;
    long calls = 0, failures = 0;
    long allocations = 0;
    cd::test::AllocationScope scope;
    for (int rep = 0; rep < 50; ++rep) {
      calls += 12;
      failures += cdyn_constraint_jacobian(c.set, c.ws, q.data(), v.data(), m, J.data(), m,
                                           g.data()) != CDYN_OK;
      failures += cdyn_delassus_matrix(c.set, c.ws, q.data(), D.data(), m) != CDYN_OK;
      failures += cdyn_damped_delassus_inverse(c.set, c.ws, q.data(), 1e-6, D.data(), m) != CDYN_OK;
      failures +=
          cdyn_constrained_aba(c.set, c.ws, q.data(), v.data(), tau.data(), fext.data(), &ps,
                               ydd.data(), qdd.data(), lambda.data(), m, &res) != CDYN_OK;
      failures += cdyn_constrained_aba(c.set, c.ws, q.data(), v.data(), tau.data(), nullptr, &warm,
                                       ydd.data(), qdd.data(), lambda.data(), m, &res) != CDYN_OK;
      failures += cdyn_prox_pv(c.set, c.ws, q.data(), v.data(), tau.data(), fext.data(), &ps,
                               ydd.data(), qdd.data(), lambda.data(), m, &res) != CDYN_OK;
      failures += cdyn_prox_pv(c.set, c.ws, q.data(), v.data(), tau.data(), nullptr, &warm,
                               ydd.data(), nullptr, lambda.data(), m, &res) != CDYN_OK;
      failures += cdyn_constrained_dynamics_dense(c.set, c.ws, q.data(), v.data(), tau.data(),
                                                  nullptr, nullptr, ydd.data(), qdd.data(),
                                                  lambda.data(), m, &res) != CDYN_OK;
      // Failing calls format messages: still no allocation.
      failures += cdyn_delassus_matrix(c.set, c.ws, bad.data(), D.data(), m) != CDYN_OK ? 0 : 1;
      failures +=
          cdyn_prox_pv(c.set, c.ws, q.data(), v.data(), tau.data(), nullptr, &tight, ydd.data(),
                       qdd.data(), lambda.data(), m, &res) == CDYN_ERR_NOT_CONVERGED
              ? 0
              : 1;
      failures += cdyn_delassus_matrix(c.set, c.ws, q.data(), D.data(), 0) != CDYN_OK ? 0 : 1;
      failures += cdyn_constraint_jacobian(c.set, c.ws, q.data(), v.data(), m + 1, J.data(), m,
                                           nullptr) != CDYN_OK
                      ? 0
                      : 1;
    }
    allocations = scope.stop();
    EXPECT_EQ(failures, 0);
    EXPECT_EQ(allocations, 0) << "in " << calls << " compute calls";
    // Positive control: the counter sees the library's allocations (a set creation).
    cdyn_constraint_set* extra = nullptr;
    cd::test::AllocationScope control;
    const cdyn_status st = cdyn_constraint_set_create(c.m, &extra);
    allocations = control.stop();
    ASSERT_EQ(st, CDYN_OK);
    EXPECT_GT(allocations, 0);
    cdyn_constraint_set_free(extra);
  }
#endif
}

TEST(CApiConstraints, ThreadsAreBitIdentical) {
  // The Mini Cheetah's knees, or the bundled quadruped's feet without the shared folder.
  const std::string path = haveCheetah() ? cheetahPath() : quadrupedPath();
  const char* const* frames = haveCheetah() ? kCheetahKnees : kQuadrupedFeet;
  SCOPED_TRACE(path);
  CSetup c;
  loadC(c, path);
  for (int i = 0; i < 4; ++i)
    ASSERT_EQ(cdyn_constraint_set_add_contact(c.set, frames[i], CDYN_CONSTRAINT_POINT, CDYN_LOCAL,
                                              nullptr, nullptr),
              CDYN_OK);
  const cd::ClusterModel cm = cd::loadModel(path);
  constexpr int kStates = 12, kThreads = 6, kRounds = 5;
  std::mt19937_64 rng(21);
  std::vector<cd::VecX> qs(kStates), vs(kStates), taus(kStates);
  for (int k = 0; k < kStates; ++k) ASSERT_TRUE(closedState(cm, rng, qs[k], vs[k], taus[k]));
  int m = 0;
  ASSERT_EQ(cdyn_constraint_set_nrows(c.set, &m), CDYN_OK);
  const int ny = cm.ny;
  const int per = m * m * 2 + 3 * (ny + m);  // D, Dinv, three solves (ydd, lambda)
  // Evaluates every state with one workspace into out (kStates * per doubles).
  auto evaluate = [&](cdyn_constraint_workspace* ws, std::vector<double>& out) -> int {
    int bad = 0;
    for (int k = 0; k < kStates; ++k) {
      double* o = out.data() + k * per;
      bad += cdyn_delassus_matrix(c.set, ws, qs[k].data(), o, m) != CDYN_OK;
      o += m * m;
      bad += cdyn_damped_delassus_inverse(c.set, ws, qs[k].data(), 1e-6, o, m) != CDYN_OK;
      o += m * m;
      for (auto fn : {&cdyn_constrained_aba, &cdyn_prox_pv, &cdyn_constrained_dynamics_dense}) {
        bad += fn(c.set, ws, qs[k].data(), vs[k].data(), taus[k].data(), nullptr, nullptr, o,
                  nullptr, o + ny, m, nullptr) != CDYN_OK;
        o += ny + m;
      }
    }
    return bad;
  };
  cdyn_constraint_workspace* ws0 = nullptr;
  ASSERT_EQ(cdyn_constraint_workspace_create(c.m, c.set, &ws0), CDYN_OK);
  std::vector<double> reference(kStates * per);
  ASSERT_EQ(evaluate(ws0, reference), 0) << cdyn_constraint_workspace_last_error(ws0);
  ASSERT_EQ(cdyn_constraint_workspace_free(ws0), CDYN_OK);
  std::atomic<int> mismatches{0}, failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      cdyn_constraint_workspace* ws = nullptr;
      if (cdyn_constraint_workspace_create(c.m, c.set, &ws) != CDYN_OK) {
        ++failures;
        return;
      }
      std::vector<double> out(kStates * per);
      for (int r = 0; r < kRounds; ++r) {
        failures += evaluate(ws, out);
        for (std::size_t i = 0; i < out.size(); ++i)
          if (!(out[i] == reference[i])) ++mismatches;
      }
      cdyn_constraint_workspace_free(ws);
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(mismatches.load(), 0);
}

}  // namespace
