// cdyn_constrained_dynamics_derivatives (clusterdyn.h "Constrained-dynamics derivatives") against
// the C++ call it wraps (bit-identical: the same function on the same model, set and state) on a
// quadruped with four point feet and on a cut-loop set (rank-deficient rows), the argument checks
// (a bad argument is named; a failed call leaves the workspace usable) and the real-time promise:
// no heap allocation per call once the workspace exists, failing calls included (allocation
// counter of tests/alloc_counter.cpp, exported to libclusterdyn.so).
//
// Usage: capi_constrained_derivatives_test models_dir
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "capi_test_support.hpp"
#include "clusterdyn.h"
#include "clusterdyn/clusterdyn.hpp"
#include "clusterdyn/constrained_derivatives.hpp"

namespace {

namespace cd = clusterdyn;
using Vec = std::vector<double>;

std::string g_dir;

const char* const kFeet[] = {"lf_foot", "rf_foot", "lh_foot", "rh_foot"};

/// A model through the C API with its constraint set (four point feet, or the cut loops), the
/// set's constrained derivative workspace and a closed state (from the embedded loops).
struct Fixture {
  Fixture(const std::string& file, bool cut) : path(g_dir + "/" + file), cut(cut) {
    char err[512];
    cdyn_model* emb = nullptr;  // the loops embedded: gives a closed spanning state
    EXPECT_EQ(cdyn_model_load(CDYN_ABI_VERSION, path.c_str(), 0, nullptr, &emb, err, sizeof err),
              CDYN_OK)
        << err;
    EXPECT_EQ(cdyn_model_load(CDYN_ABI_VERSION, path.c_str(), cut ? CDYN_LOAD_CUT_LOOPS : 0u,
                              nullptr, &m, err, sizeof err),
              CDYN_OK)
        << err;
    cdyn_workspace* ews = nullptr;
    EXPECT_EQ(cdyn_workspace_create(emb, &ews), CDYN_OK);
    cdyn_model_nq(m, &nq);
    cdyn_model_nv(m, &nv);
    cdyn_model_ny(m, &ny);
    cdyn_model_nbodies(m, &nb);
    capi_test::closedState(emb, ews, 0.05, &q, &v);  // the same spanning layout as m's
    cdyn_workspace_free(ews);
    cdyn_model_free(emb);
    if (cut) {
      EXPECT_EQ(cdyn_constraint_set_create_cut_loops(m, &set), CDYN_OK);
    } else {
      EXPECT_EQ(cdyn_constraint_set_create(m, &set), CDYN_OK);
      for (const char* foot : kFeet)
        EXPECT_EQ(cdyn_constraint_set_add_contact(set, foot, CDYN_CONSTRAINT_POINT,
                                                  CDYN_LOCAL_WORLD_ALIGNED, nullptr, nullptr),
                  CDYN_OK)
            << cdyn_constraint_set_last_error(set);
    }
    cdyn_constraint_set_nrows(set, &rows);
    EXPECT_EQ(cdyn_constrained_derivative_workspace_create(set, &cws), CDYN_OK);
    tau.assign(ny, 0.0);
    for (int i = 0; i < ny; ++i) tau[i] = 0.7 * std::sin(2.0 + i);
    fext.assign(6 * nb, 0.0);
    for (int i = 0; i < 6 * nb; ++i) fext[i] = 0.1 * std::cos(0.3 * i);
    ydd.assign(ny, 0.0), lam.assign(rows, 0.0);
    for (Vec* M : {&A, &B, &Cm}) M->assign(ny * ny, 0.0);
    for (Vec* M : {&L1, &L2, &L3}) M->assign(rows * ny, 0.0);
  }
  ~Fixture() {
    cdyn_constrained_derivative_workspace_free(cws);
    cdyn_constraint_set_free(set);
    cdyn_model_free(m);
  }
  /// The call with every output, fext and the given v (default: the state's).
  cdyn_status call(const double* vv = nullptr, int ldY = -1, double rankTol = 0.0,
                   const cdyn_constraint_set* s = nullptr) {
    return cdyn_constrained_dynamics_derivatives(
        s ? s : set, cws, q.data(), nq, vv ? vv : v.data(), nv, tau.data(), ny, fext.data(), 6 * nb,
        rankTol, ydd.data(), ny, lam.data(), rows, A.data(), B.data(), Cm.data(),
        ldY < 0 ? ny : ldY, L1.data(), L2.data(), L3.data(), std::max(1, rows), &rank);
  }
  std::string path;
  bool cut;
  cdyn_model* m = nullptr;
  cdyn_constraint_set* set = nullptr;
  cdyn_constrained_derivative_workspace* cws = nullptr;
  int nq = 0, nv = 0, ny = 0, nb = 0, rows = 0, rank = -1;
  Vec q, v, tau, fext, ydd, lam, A, B, Cm, L1, L2, L3;
};

/// Every entry of the column-major C output (leading dimension = rows) equals the C++ one.
void expectSame(const Vec& c, const cd::MatX& x, const char* what) {
  ASSERT_EQ(static_cast<Eigen::Index>(c.size()), x.size()) << what;
  for (Eigen::Index j = 0; j < x.cols(); ++j)
    for (Eigen::Index i = 0; i < x.rows(); ++i)
      ASSERT_EQ(c[i + j * x.rows()], x(i, j)) << what << " (" << i << ", " << j << ")";
}

struct Case {
  const char* file;
  bool cut;
};
const Case kCases[] = {{"cd_quadruped.urdf", false}, {"cd_six_bar.urdf", true}};

TEST(CapiConstrainedDerivatives, EqualTheCxxCall) {
  cd::setLogLevel(cd::LogLevel::Off);
  for (const Case& k : kCases) {
    SCOPED_TRACE(k.file);
    Fixture f(k.file, k.cut);
    ASSERT_GT(f.rows, 0);
    ASSERT_EQ(f.call(), CDYN_OK) << cdyn_constrained_derivative_workspace_last_error(f.cws);
    cd::ModelOptions opts;
    opts.cutLoops = k.cut;
    const cd::ClusterModel cm = cd::loadModel(f.path, opts);
    cd::ConstraintSet set = k.cut ? cd::cutLoopConstraints(cm) : cd::ConstraintSet(cm);
    if (!k.cut)
      for (const char* foot : kFeet)
        set.addContact(foot, cd::ConstraintType::Point, cd::ReferenceFrame::LocalWorldAligned);
    cd::ClusterData data(cm);
    cd::ConstrainedDerivativeData cdd(cm, set);
    std::vector<cd::Force> F(f.nb);
    for (int i = 0; i < f.nb; ++i) F[i] = Eigen::Map<const cd::Vec6>(f.fext.data() + 6 * i);
    ASSERT_EQ(cd::computeConstrainedDynamicsDerivatives(
                  cm, data, set, cdd, Eigen::Map<const cd::VecX>(f.q.data(), f.nq),
                  Eigen::Map<const cd::VecX>(f.v.data(), f.nv),
                  Eigen::Map<const cd::VecX>(f.tau.data(), f.ny), F.data()),
              cd::Status::Ok)
        << data.errorMessage();
    for (int i = 0; i < f.ny; ++i) ASSERT_EQ(f.ydd[i], cdd.ydd[i]);
    for (int i = 0; i < f.rows; ++i) ASSERT_EQ(f.lam[i], cdd.lambda[i]);
    expectSame(f.A, cdd.dydd_dy, "dydd_dy");
    expectSame(f.B, cdd.dydd_dydot, "dydd_dydot");
    expectSame(f.Cm, cdd.dydd_dtau, "dydd_dtau");
    expectSame(f.L1, cdd.dlambda_dy, "dlambda_dy");
    expectSame(f.L2, cdd.dlambda_dydot, "dlambda_dydot");
    expectSame(f.L3, cdd.dlambda_dtau, "dlambda_dtau");
    EXPECT_EQ(f.rank, cdd.rank);
    if (k.cut) EXPECT_LT(f.rank, f.rows) << "the cut six-bar's rows should be redundant";
    // Optional outputs absent: the required ones are unchanged.
    Vec A2(f.ny * f.ny), B2(f.ny * f.ny);
    ASSERT_EQ(cdyn_constrained_dynamics_derivatives(
                  f.set, f.cws, f.q.data(), f.nq, f.v.data(), f.nv, f.tau.data(), f.ny,
                  f.fext.data(), 6 * f.nb, 0.0, nullptr, 0, nullptr, 0, A2.data(), B2.data(),
                  nullptr, f.ny, nullptr, nullptr, nullptr, 0, nullptr),
              CDYN_OK);
    EXPECT_EQ(A2, f.A);
    EXPECT_EQ(B2, f.B);
  }
}

TEST(CapiConstrainedDerivatives, BadArgumentsAreNamed) {
  Fixture f("cd_quadruped.urdf", false);
  const auto expectError = [&](cdyn_status got, cdyn_status want, const char* word) {
    EXPECT_EQ(got, want);
    const std::string msg = cdyn_constrained_derivative_workspace_last_error(f.cws);
    EXPECT_NE(msg.find(word), std::string::npos) << "message '" << msg << "' lacks " << word;
  };
  Vec vnan(f.v);
  vnan[1] = NAN;
  expectError(f.call(vnan.data()), CDYN_ERR_NON_FINITE, "v");
  expectError(f.call(nullptr, f.ny - 1), CDYN_ERR_INVALID_SIZE, "ld_y");
  expectError(f.call(nullptr, -1, 2.0), CDYN_ERR_INVALID_ARGUMENT, "rank_tolerance");
  expectError(cdyn_constrained_dynamics_derivatives(
                  f.set, f.cws, f.q.data(), f.nq - 1, f.v.data(), f.nv, f.tau.data(), f.ny, nullptr,
                  0, 0.0, nullptr, 0, nullptr, 0, f.A.data(), f.B.data(), nullptr, f.ny, nullptr,
                  nullptr, nullptr, 0, nullptr),
              CDYN_ERR_INVALID_SIZE, "q");
  expectError(cdyn_constrained_dynamics_derivatives(
                  f.set, f.cws, f.q.data(), f.nq, f.v.data(), f.nv, f.tau.data(), f.ny, nullptr, 0,
                  0.0, nullptr, 0, f.lam.data(), f.rows + 1, f.A.data(), f.B.data(), nullptr, f.ny,
                  nullptr, nullptr, nullptr, 0, nullptr),
              CDYN_ERR_INVALID_SIZE, "lambda");
  expectError(cdyn_constrained_dynamics_derivatives(
                  f.set, f.cws, f.q.data(), f.nq, f.v.data(), f.nv, f.tau.data(), f.ny, nullptr, 0,
                  0.0, nullptr, 0, nullptr, 0, f.A.data(), f.B.data(), nullptr, f.ny, f.L1.data(),
                  nullptr, nullptr, f.rows - 1, nullptr),
              CDYN_ERR_INVALID_SIZE, "ld_m");
  expectError(cdyn_constrained_dynamics_derivatives(
                  f.set, f.cws, f.q.data(), f.nq, f.v.data(), f.nv, f.tau.data(), f.ny, nullptr, 0,
                  0.0, nullptr, 0, nullptr, 0, nullptr, f.B.data(), nullptr, f.ny, nullptr, nullptr,
                  nullptr, 0, nullptr),
              CDYN_ERR_NULL_POINTER, "dydd_dy");
  // Another set of the same model: the workspace is bound to its set.
  cdyn_constraint_set* other = nullptr;
  ASSERT_EQ(cdyn_constraint_set_create(f.m, &other), CDYN_OK);
  expectError(f.call(nullptr, -1, 0.0, other), CDYN_ERR_WORKSPACE_MISMATCH, "another");
  cdyn_constraint_set_free(other);
  // While the workspace exists the set is read-only and cannot be freed.
  EXPECT_EQ(cdyn_constraint_set_add_contact(f.set, "lf_foot", CDYN_CONSTRAINT_POINT, CDYN_LOCAL,
                                            nullptr, nullptr),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(cdyn_constraint_set_free(f.set), CDYN_ERR_INVALID_ARGUMENT);
  // Handles.
  EXPECT_EQ(cdyn_constrained_dynamics_derivatives(
                f.set, nullptr, f.q.data(), f.nq, f.v.data(), f.nv, f.tau.data(), f.ny, nullptr, 0,
                0.0, nullptr, 0, nullptr, 0, f.A.data(), f.B.data(), nullptr, f.ny, nullptr,
                nullptr, nullptr, 0, nullptr),
            CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_constrained_derivative_workspace_create(nullptr, nullptr), CDYN_ERR_NULL_POINTER);
  // The workspace stays usable after the failures; a valid rank tolerance is accepted.
  ASSERT_EQ(f.call(nullptr, -1, 1e-8), CDYN_OK)
      << cdyn_constrained_derivative_workspace_last_error(f.cws);
  EXPECT_STREQ(cdyn_constrained_derivative_workspace_last_error(f.cws), "");
  EXPECT_EQ(f.rank, f.rows);
}

TEST(CapiConstrainedDerivatives, NoAllocationOnceTheWorkspaceExists) {
  using clusterdyn::test::AllocationScope;
  using clusterdyn::test::noAllocation;
  for (const Case& k : kCases) {
    SCOPED_TRACE(k.file);
    Fixture f(k.file, k.cut);
    Vec vnan(f.v);
    vnan[0] = NAN;
    int okCalls = 0, failedCalls = 0;
    AllocationScope scope;
    for (int rep = 0; rep < 20; ++rep) {
      okCalls += f.call() == CDYN_OK;
      failedCalls += f.call(vnan.data()) == CDYN_ERR_NON_FINITE;
      failedCalls += f.call(nullptr, f.ny - 1) == CDYN_ERR_INVALID_SIZE;
    }
    EXPECT_TRUE(noAllocation(scope.stop(), "constrained derivative calls"));
    EXPECT_EQ(okCalls, 20) << cdyn_constrained_derivative_workspace_last_error(f.cws);
    EXPECT_EQ(failedCalls, 40);
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s models_dir\n", argv[0]);
    return 2;
  }
  g_dir = argv[1];
  return RUN_ALL_TESTS();
}
