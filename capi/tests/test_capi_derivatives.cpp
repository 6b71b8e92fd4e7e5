// The derivative functions of the C API (clusterdyn.h "Derivatives") against the C++ calls they
// wrap (bit-identical: the same functions on the same model and state), the batched forms against
// single calls (bit-identical, both layouts, 1 and 2 threads, a failing state), and the real-time
// promise: no heap allocation in any derivative call once the derivative workspace exists
// (failing calls and the nws == 1 row-major batch included; allocation counter of
// tests/alloc_counter.cpp, exported to libclusterdyn.so); on the models whose embedded loops hold
// multi-dof joints, the C CE-ABA derivatives against finite differences of the C CE-ABA.
//
// Usage: capi_derivatives_test model.urdf...
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "alloc_counter.hpp"
#include "capi_test_support.hpp"
#include "clusterdyn.h"
#include "clusterdyn/clusterdyn.hpp"

namespace {

std::vector<std::string> g_models;

using Vec = std::vector<double>;

/// Whether the model has a multi-dof joint (spherical, planar, floating) inside an embedded loop.
bool multiDofLoops(const std::string& path) {
  const clusterdyn::ClusterModel cm = clusterdyn::loadModel(path);
  for (const clusterdyn::Cluster& c : cm.clusters)
    if (c.implicit() && c.nv != c.nbodies) return true;
  return false;
}

/// A model through the C API, its derivative workspace, and a closed state.
struct Fixture {
  explicit Fixture(const std::string& path) {
    char err[512];
    EXPECT_EQ(cdyn_model_load(CDYN_ABI_VERSION, path.c_str(), 0, nullptr, &m, err, sizeof err),
              CDYN_OK)
        << err;
    EXPECT_EQ(cdyn_workspace_create(m, &ws), CDYN_OK);
    EXPECT_EQ(cdyn_derivative_workspace_create(m, &dws), CDYN_OK);
    cdyn_model_nq(m, &nq);
    cdyn_model_nv(m, &nv);
    cdyn_model_ny(m, &ny);
    cdyn_model_nyq(m, &nyq);
    cdyn_model_nbodies(m, &nb);
    capi_test::closedState(m, ws, 0.0, &q, &v);
    a.assign(nv, 0.0);
    tau.assign(nv, 0.0);
    tauY.assign(ny, 0.0);
    for (int i = 0; i < nv; ++i) a[i] = 0.3 * std::sin(1.0 + i), tau[i] = 0.5 * std::cos(i);
    for (int i = 0; i < ny; ++i) tauY[i] = 0.2 * std::sin(2.0 + i);
    fext.assign(6 * nb, 0.0);
    for (int i = 0; i < 6 * nb; ++i) fext[i] = 0.1 * std::cos(0.3 * i);
  }
  ~Fixture() {
    cdyn_derivative_workspace_free(dws);
    cdyn_workspace_free(ws);
    cdyn_model_free(m);
  }
  cdyn_model* m = nullptr;
  cdyn_workspace* ws = nullptr;
  cdyn_derivative_workspace* dws = nullptr;
  int nq = 0, nv = 0, ny = 0, nyq = 0, nb = 0;
  Vec q, v, a, tau, tauY, fext;
};

/// Every entry of the column-major n x n C output equals the C++ matrix.
void expectSame(const Vec& c, const clusterdyn::MatX& x, const char* what) {
  const int n = static_cast<int>(x.rows());
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      ASSERT_EQ(c[i + j * n], x(i, j)) << what << " (" << i << ", " << j << ")";
}

TEST(CapiDerivatives, EqualTheCxxCalls) {
  namespace cd = clusterdyn;
  cd::setLogLevel(cd::LogLevel::Off);
  for (const std::string& path : g_models) {
    SCOPED_TRACE(path);
    Fixture f(path);
    const cd::ClusterModel cm = cd::loadModel(path);
    cd::ClusterData data(cm);
    cd::ClusterDerivativeData dd(cm);
    std::vector<cd::Force> F(f.nb);
    for (int i = 0; i < f.nb; ++i) F[i] = Eigen::Map<const cd::Vec6>(f.fext.data() + 6 * i);
    const Eigen::Map<const cd::VecX> q(f.q.data(), f.nq), v(f.v.data(), f.nv), a(f.a.data(), f.nv),
        tau(f.tau.data(), f.nv), tauY(f.tauY.data(), f.ny);
    const int nv = f.nv, ny = f.ny;
    Vec x(nv), A(nv * nv), B(nv * nv), C(nv * nv), y(ny), P(ny * ny), Q(ny * ny), R(ny * ny);

    ASSERT_EQ(cdyn_rnea_derivatives(f.m, f.dws, f.q.data(), f.nq, f.v.data(), nv, f.a.data(), nv,
                                    f.fext.data(), 6 * f.nb, x.data(), nv, A.data(), B.data(),
                                    C.data(), std::max(1, nv)),
              CDYN_OK)
        << cdyn_derivative_workspace_last_error(f.dws);
    ASSERT_EQ(cd::computeRNEADerivatives(cm.treeModel, data.treeData, dd.tree, q, v, a, F.data()),
              cd::Status::Ok);
    expectSame(A, dd.tree.dtau_dq, "dtau_dq");
    expectSame(B, dd.tree.dtau_dv, "dtau_dv");
    expectSame(C, dd.tree.dtau_da, "dtau_da");
    for (int i = 0; i < nv; ++i) ASSERT_EQ(x[i], dd.tree.tau[i]);

    ASSERT_EQ(cdyn_aba_derivatives(f.m, f.dws, f.q.data(), f.nq, f.v.data(), nv, f.tau.data(), nv,
                                   f.fext.data(), 6 * f.nb, x.data(), nv, A.data(), B.data(),
                                   C.data(), std::max(1, nv)),
              CDYN_OK)
        << cdyn_derivative_workspace_last_error(f.dws);
    ASSERT_EQ(cd::computeABADerivatives(cm.treeModel, data.treeData, dd.tree, q, v, tau, F.data()),
              cd::Status::Ok);
    expectSame(A, dd.tree.ddq_dq, "ddq_dq");
    expectSame(B, dd.tree.ddq_dv, "ddq_dv");
    expectSame(C, dd.tree.Minv, "Minv (ABA)");

    ASSERT_EQ(cdyn_minverse(f.m, f.dws, f.q.data(), f.nq, C.data(), std::max(1, nv)), CDYN_OK);
    ASSERT_EQ(cd::computeMinverse(cm.treeModel, data.treeData, dd.tree, q), cd::Status::Ok);
    expectSame(C, dd.tree.Minv, "Minv");

    ASSERT_EQ(cdyn_ce_aba_derivatives(f.m, f.dws, f.q.data(), f.nq, f.v.data(), nv, f.tauY.data(),
                                      ny, f.fext.data(), 6 * f.nb, y.data(), ny, P.data(), Q.data(),
                                      R.data(), std::max(1, ny)),
              CDYN_OK)
        << cdyn_derivative_workspace_last_error(f.dws);
    ASSERT_EQ(cd::computeCeAbaDerivatives(cm, data, dd, q, v, tauY, F.data()), cd::Status::Ok);
    expectSame(P, dd.dydd_dy, "dydd_dy");
    expectSame(Q, dd.dydd_dydot, "dydd_dydot");
    expectSame(R, dd.Hinv, "Hinv");
    for (int i = 0; i < ny; ++i) ASSERT_EQ(y[i], dd.ydd[i]);

    const Vec ydd = y;
    ASSERT_EQ(cdyn_ce_rnea_derivatives(f.m, f.dws, f.q.data(), f.nq, f.v.data(), nv, ydd.data(), ny,
                                       f.fext.data(), 6 * f.nb, y.data(), ny, P.data(), Q.data(),
                                       R.data(), std::max(1, ny)),
              CDYN_OK)
        << cdyn_derivative_workspace_last_error(f.dws);
    ASSERT_EQ(cd::computeCeRneaDerivatives(cm, data, dd, q, v,
                                           Eigen::Map<const cd::VecX>(ydd.data(), ny), F.data()),
              cd::Status::Ok);
    expectSame(P, dd.dtau_dy, "dtau_dy");
    expectSame(Q, dd.dtau_dydot, "dtau_dydot");
    expectSame(R, dd.H, "H");

    // H^-1 by the cluster-tree recursion: the C++ call's, and the inverse of the C mass matrix.
    ASSERT_EQ(cdyn_cluster_minverse(f.m, f.dws, f.q.data(), f.nq, P.data(), std::max(1, ny)),
              CDYN_OK)
        << cdyn_derivative_workspace_last_error(f.dws);
    ASSERT_EQ(cd::computeClusterMinverse(cm, data, dd, q), cd::Status::Ok);
    expectSame(P, dd.Hinv, "Hinv (cluster tree)");
    ASSERT_EQ(cdyn_cluster_mass_matrix(f.m, f.ws, f.q.data(), f.nq, Q.data(), std::max(1, ny)),
              CDYN_OK);
    const Eigen::Map<const cd::MatX> Hinv(P.data(), ny, ny), H(Q.data(), ny, ny);
    const cd::MatX inverse = H.inverse();
    EXPECT_LE((Hinv - inverse).cwiseAbs().maxCoeff(), 1e-9 * std::max(1.0, inverse.norm()));
    EXPECT_EQ(Hinv, Hinv.transpose());  // both triangles, the mirror exact
  }
}

TEST(CapiDerivatives, BatchesEqualSingleCalls) {
  for (const std::string& path : g_models) {
    SCOPED_TRACE(path);
    Fixture f(path);
    cdyn_derivative_workspace* second = nullptr;
    ASSERT_EQ(cdyn_derivative_workspace_create(f.m, &second), CDYN_OK);
    cdyn_derivative_workspace* both[2] = {f.dws, second};
    const int n = 5, ny = f.ny, nn = ny * ny;
    // Stacked states: the closed state with scaled velocities and efforts.
    Vec Q(n * f.nq), V(n * f.nv), T(n * ny), F(n * 6 * f.nb);
    for (int i = 0; i < n; ++i) {
      for (int k = 0; k < f.nq; ++k) Q[i * f.nq + k] = f.q[k];
      for (int k = 0; k < f.nv; ++k) V[i * f.nv + k] = f.v[k] * (1.0 + 0.2 * i);
      for (int k = 0; k < ny; ++k) T[i * ny + k] = f.tauY[k] * (i - 2);
      for (int k = 0; k < 6 * f.nb; ++k) F[i * 6 * f.nb + k] = f.fext[k] * i;
    }
    for (int layout : {CDYN_BATCH_ROW_MAJOR, CDYN_BATCH_COL_MAJOR}) {
      const auto stackIn = [&](const Vec& X, int len) {  // row-major stack -> layout
        if (layout == CDYN_BATCH_ROW_MAJOR) return X;
        Vec out(X.size());
        for (int i = 0; i < n; ++i)
          for (int j = 0; j < len; ++j) out[i + j * n] = X[i * len + j];
        return out;
      };
      const auto at = [&](const Vec& X, int len, int i, int j) {
        return layout == CDYN_BATCH_ROW_MAJOR ? X[i * len + j] : X[i + j * n];
      };
      const Vec Qs = stackIn(Q, f.nq), Vs = stackIn(V, f.nv), Ts = stackIn(T, ny),
                Fs = stackIn(F, 6 * f.nb);
      for (int nws : {1, 2}) {
        Vec Y(n * ny), A(n * nn), B(n * nn), C(n * nn);
        int failed = 7;
        ASSERT_EQ(
            cdyn_batch_ce_aba_derivatives(f.m, both, nws, n, layout, Qs.data(), f.nq, Vs.data(),
                                          f.nv, Ts.data(), ny, Fs.data(), 6 * f.nb, Y.data(), ny,
                                          A.data(), nn, B.data(), nn, C.data(), nn, &failed),
            CDYN_OK)
            << cdyn_derivative_workspace_last_error(f.dws);
        EXPECT_EQ(failed, -1);
        Vec y(ny), a(nn), b(nn), c(nn);
        for (int i = 0; i < n; ++i) {
          ASSERT_EQ(cdyn_ce_aba_derivatives(f.m, f.dws, Q.data() + i * f.nq, f.nq,
                                            V.data() + i * f.nv, f.nv, T.data() + i * ny, ny,
                                            F.data() + i * 6 * f.nb, 6 * f.nb, y.data(), ny,
                                            a.data(), b.data(), c.data(), std::max(1, ny)),
                    CDYN_OK);
          for (int j = 0; j < ny; ++j) ASSERT_EQ(at(Y, ny, i, j), y[j]);
          for (int j = 0; j < nn; ++j) {
            ASSERT_EQ(at(A, nn, i, j), a[j]);
            ASSERT_EQ(at(B, nn, i, j), b[j]);
            ASSERT_EQ(at(C, nn, i, j), c[j]);
          }
        }
      }
    }
    // cdyn_batch_cluster_minverse: both layouts, 1 and 2 threads, equal to single calls.
    {
      Vec Qc(n * f.nq), Hs(n * nn), h(nn);
      for (int i = 0; i < n; ++i)
        for (int k = 0; k < f.nq; ++k) Qc[i + k * n] = Q[i * f.nq + k];
      for (int layout : {CDYN_BATCH_ROW_MAJOR, CDYN_BATCH_COL_MAJOR})
        for (int nws : {1, 2}) {
          int failed = 7;
          ASSERT_EQ(
              cdyn_batch_cluster_minverse(f.m, both, nws, n, layout,
                                          layout == CDYN_BATCH_ROW_MAJOR ? Q.data() : Qc.data(),
                                          f.nq, Hs.data(), nn, &failed),
              CDYN_OK)
              << cdyn_derivative_workspace_last_error(f.dws);
          EXPECT_EQ(failed, -1);
          for (int i = 0; i < n; ++i) {
            ASSERT_EQ(cdyn_cluster_minverse(f.m, f.dws, Q.data() + i * f.nq, f.nq, h.data(),
                                            std::max(1, ny)),
                      CDYN_OK);
            for (int j = 0; j < nn; ++j)
              ASSERT_EQ(layout == CDYN_BATCH_ROW_MAJOR ? Hs[i * nn + j] : Hs[i + j * n], h[j]);
          }
        }
      Vec Qbad = Q;
      Qbad[2 * f.nq] = NAN;
      int failed = -1;
      EXPECT_EQ(cdyn_batch_cluster_minverse(f.m, both, 2, n, CDYN_BATCH_ROW_MAJOR, Qbad.data(),
                                            f.nq, Hs.data(), nn, &failed),
                CDYN_ERR_NON_FINITE);
      EXPECT_EQ(failed, 2);
      EXPECT_EQ(cdyn_batch_cluster_minverse(f.m, both, 1, n, CDYN_BATCH_ROW_MAJOR, Q.data(), f.nq,
                                            Hs.data(), nn - 1, &failed),
                CDYN_ERR_INVALID_SIZE);
      EXPECT_EQ(std::string(cdyn_derivative_workspace_last_error(f.dws)),
                "Hinv has length " + std::to_string(nn - 1) + " per state, expected " +
                    std::to_string(nn));
    }
    // cdyn_batch_minverse (the spanning tree's M^-1, nv x nv per state): as above.
    {
      const int mv = f.nv * f.nv;
      Vec Qt(n * f.nq), Qtc(n * f.nq), Ms(n * mv), mi(mv), dq(f.nv);
      for (int i = 0; i < n; ++i) {  // distinct configurations (not closed: M^-1 needs none)
        for (int k = 0; k < f.nv; ++k) dq[k] = 0.1 * (i + 1) * std::sin(1.0 + k + 3.0 * i);
        ASSERT_EQ(cdyn_integrate(f.m, f.ws, f.q.data(), f.nq, dq.data(), f.nv, 1.0,
                                 Qt.data() + i * f.nq, f.nq),
                  CDYN_OK);
        for (int k = 0; k < f.nq; ++k) Qtc[i + k * n] = Qt[i * f.nq + k];
      }
      for (int layout : {CDYN_BATCH_ROW_MAJOR, CDYN_BATCH_COL_MAJOR})
        for (int nws : {1, 2}) {
          int failed = 7;
          ASSERT_EQ(cdyn_batch_minverse(f.m, both, nws, n, layout,
                                        layout == CDYN_BATCH_ROW_MAJOR ? Qt.data() : Qtc.data(),
                                        f.nq, Ms.data(), mv, &failed),
                    CDYN_OK)
              << cdyn_derivative_workspace_last_error(f.dws);
          EXPECT_EQ(failed, -1);
          for (int i = 0; i < n; ++i) {
            ASSERT_EQ(
                cdyn_minverse(f.m, f.dws, Qt.data() + i * f.nq, f.nq, mi.data(), std::max(1, f.nv)),
                CDYN_OK);
            for (int j = 0; j < mv; ++j)
              ASSERT_EQ(layout == CDYN_BATCH_ROW_MAJOR ? Ms[i * mv + j] : Ms[i + j * n], mi[j]);
          }
        }
      int failed = -1;
      EXPECT_EQ(cdyn_batch_minverse(f.m, both, 1, n, CDYN_BATCH_ROW_MAJOR, Qt.data(), f.nq,
                                    Ms.data(), mv + 1, &failed),
                CDYN_ERR_INVALID_SIZE);
      EXPECT_EQ(std::string(cdyn_derivative_workspace_last_error(f.dws)),
                "Minv has length " + std::to_string(mv + 1) + " per state, expected " +
                    std::to_string(mv));
    }
    // A failing state: its index, its status, the message in dws[0]; a wrong matrix length.
    Vec Vbad = V, A(n * nn), B(n * nn);
    Vbad[3 * f.nv] = NAN;
    int failed = -1;
    EXPECT_EQ(cdyn_batch_ce_aba_derivatives(f.m, both, 2, n, CDYN_BATCH_ROW_MAJOR, Q.data(), f.nq,
                                            Vbad.data(), f.nv, T.data(), ny, nullptr, 0, nullptr, 0,
                                            A.data(), nn, B.data(), nn, nullptr, 0, &failed),
              CDYN_ERR_NON_FINITE);
    EXPECT_EQ(failed, 3);
    EXPECT_NE(std::string(cdyn_derivative_workspace_last_error(f.dws)).find("v[0]"),
              std::string::npos);
    EXPECT_EQ(cdyn_batch_ce_aba_derivatives(f.m, both, 2, n, CDYN_BATCH_ROW_MAJOR, Q.data(), f.nq,
                                            V.data(), f.nv, T.data(), ny, nullptr, 0, nullptr, 0,
                                            A.data(), nn + 1, B.data(), nn, nullptr, 0, &failed),
              CDYN_ERR_INVALID_SIZE);
    EXPECT_EQ(std::string(cdyn_derivative_workspace_last_error(f.dws)),
              "dydd_dy has length " + std::to_string(nn + 1) + " per state, expected " +
                  std::to_string(nn));
    cdyn_derivative_workspace_free(second);
  }
}

TEST(CapiDerivatives, NoAllocationOnceTheWorkspaceExists) {
  using clusterdyn::test::AllocationScope;
  using clusterdyn::test::noAllocation;
  for (const std::string& path : g_models) {
    SCOPED_TRACE(path);
    Fixture f(path);
    const int nv = f.nv, ny = f.ny, nn = ny * ny;
    Vec x(nv), A(nv * nv), B(nv * nv), C(nv * nv), y(ny), P(nn), Q(nn), R(nn), vnan(f.v);
    vnan[0] = NAN;
    Vec dq(nv), Yb(2 * ny), Pb(2 * nn), Qb(2 * nn), Rb(2 * nn), Q2(2 * f.nq), V2(2 * f.nv),
        T2(2 * ny);
    for (int i = 0; i < 2; ++i) {
      std::copy(f.q.begin(), f.q.end(), Q2.begin() + i * f.nq);
      std::copy(f.v.begin(), f.v.end(), V2.begin() + i * f.nv);
      std::copy(f.tauY.begin(), f.tauY.end(), T2.begin() + i * ny);
    }
    cdyn_derivative_workspace* one[1] = {f.dws};
    int okCalls = 0, failedCalls = 0;
    AllocationScope scope;
    for (int rep = 0; rep < 20; ++rep) {
      const int lv = std::max(1, nv), ly = std::max(1, ny);
      okCalls += cdyn_rnea_derivatives(f.m, f.dws, f.q.data(), f.nq, f.v.data(), nv, f.a.data(), nv,
                                       f.fext.data(), 6 * f.nb, x.data(), nv, A.data(), B.data(),
                                       C.data(), lv) == CDYN_OK;
      okCalls += cdyn_aba_derivatives(f.m, f.dws, f.q.data(), f.nq, f.v.data(), nv, f.tau.data(),
                                      nv, f.fext.data(), 6 * f.nb, x.data(), nv, A.data(), B.data(),
                                      C.data(), lv) == CDYN_OK;
      okCalls += cdyn_minverse(f.m, f.dws, f.q.data(), f.nq, C.data(), lv) == CDYN_OK;
      okCalls += cdyn_cluster_minverse(f.m, f.dws, f.q.data(), f.nq, P.data(), ly) == CDYN_OK;
      okCalls += cdyn_batch_cluster_minverse(f.m, one, 1, 2, CDYN_BATCH_ROW_MAJOR, Q2.data(), f.nq,
                                             Pb.data(), nn, nullptr) == CDYN_OK;
      okCalls += cdyn_ce_aba_derivatives(f.m, f.dws, f.q.data(), f.nq, f.v.data(), nv,
                                         f.tauY.data(), ny, f.fext.data(), 6 * f.nb, y.data(), ny,
                                         P.data(), Q.data(), R.data(), ly) == CDYN_OK;
      okCalls += cdyn_ce_rnea_derivatives(f.m, f.dws, f.q.data(), f.nq, f.v.data(), nv, y.data(),
                                          ny, nullptr, 0, nullptr, 0, P.data(), Q.data(), nullptr,
                                          ly) == CDYN_OK;
      okCalls +=
          cdyn_difference(f.m, f.ws, f.q.data(), f.nq, f.q.data(), f.nq, dq.data(), nv) == CDYN_OK;
      okCalls += cdyn_batch_ce_aba_derivatives(f.m, one, 1, 2, CDYN_BATCH_ROW_MAJOR, Q2.data(),
                                               f.nq, V2.data(), f.nv, T2.data(), ny, nullptr, 0,
                                               Yb.data(), ny, Pb.data(), nn, Qb.data(), nn,
                                               Rb.data(), nn, nullptr) == CDYN_OK;
      // Failing calls: a NaN, a short ld.
      failedCalls += cdyn_ce_aba_derivatives(f.m, f.dws, f.q.data(), f.nq, vnan.data(), nv,
                                             f.tauY.data(), ny, nullptr, 0, nullptr, 0, P.data(),
                                             Q.data(), nullptr, ly) == CDYN_ERR_NON_FINITE;
      failedCalls += cdyn_rnea_derivatives(f.m, f.dws, f.q.data(), f.nq, f.v.data(), nv, f.a.data(),
                                           nv, nullptr, 0, nullptr, 0, A.data(), B.data(), nullptr,
                                           nv - 1) == CDYN_ERR_INVALID_SIZE;
      failedCalls += cdyn_cluster_minverse(f.m, f.dws, f.q.data(), f.nq, P.data(), ny - 1) ==
                     CDYN_ERR_INVALID_SIZE;
    }
    EXPECT_TRUE(noAllocation(scope.stop(), "derivative calls"));
    EXPECT_EQ(okCalls, 20 * 9) << cdyn_derivative_workspace_last_error(f.dws);
    EXPECT_EQ(failedCalls, 20 * 3);
  }
}

}  // namespace

// Multi-dof joints inside embedded loops (ball joints of the RSU ankle, the delta, the Stewart
// platform): the C CE-ABA derivatives against central differences of the C CE-ABA on the closed
// manifold (independent joints moved by +-h, dependent ones re-closed by
// cdyn_independent_to_spanning from the state, ydot and tau_y held), one Richardson step.
TEST(CapiDerivatives, MultiDofLoopsAgainstFiniteDifferences) {
  int checked = 0;
  for (const std::string& path : g_models) {
    if (!multiDofLoops(path)) continue;
    SCOPED_TRACE(path);
    Fixture f(path);
    const int ny = f.ny, nn = ny * ny;
    if (f.nyq != ny) {  // an independent ball joint (a quaternion in y): y + h is not the tangent
      std::printf("  %s: quaternion in y, left to test_multidof_independent (C++ FD on y (+) e)\n",
                  path.c_str());
      continue;
    }
    Vec ydd(ny), P(nn), Q(nn), R(nn), y(ny), ydot(ny);
    ASSERT_EQ(cdyn_ce_aba_derivatives(f.m, f.dws, f.q.data(), f.nq, f.v.data(), f.nv, f.tauY.data(),
                                      ny, f.fext.data(), 6 * f.nb, ydd.data(), ny, P.data(),
                                      Q.data(), R.data(), ny),
              CDYN_OK)
        << cdyn_derivative_workspace_last_error(f.dws);
    ASSERT_EQ(cdyn_spanning_to_independent(f.m, f.ws, f.q.data(), f.nq, f.v.data(), f.nv, y.data(),
                                           ny, ydot.data(), ny),
              CDYN_OK);
    Vec qs(f.nq), vs(f.nv), out(ny), qdd(f.nv);
    // CE-ABA at the closed state of (y + dy, ydot + dyd).
    const auto aba = [&](int k, double dy, double dyd) {
      Vec yp = y, ydp = ydot;
      yp[k] += dy;
      ydp[k] += dyd;
      EXPECT_EQ(cdyn_independent_to_spanning(f.m, f.ws, yp.data(), ny, ydp.data(), ny, f.q.data(),
                                             f.nq, qs.data(), f.nq, vs.data(), f.nv),
                CDYN_OK)
          << cdyn_workspace_last_error(f.ws);
      EXPECT_EQ(cdyn_ce_aba(f.m, f.ws, qs.data(), f.nq, vs.data(), f.nv, f.tauY.data(), ny,
                            f.fext.data(), 6 * f.nb, out.data(), ny, qdd.data(), f.nv),
                CDYN_OK)
          << cdyn_workspace_last_error(f.ws);
      return out;
    };
    double scale = 1.0, err = 0.0;
    for (double x : P) scale = std::max(scale, std::fabs(x));
    for (double x : Q) scale = std::max(scale, std::fabs(x));
    for (int k = 0; k < ny; ++k) {
      // Configuration: steps 5e-4 and 2.5e-4, Richardson; velocity: ydd is quadratic in ydot, so
      // central differences are exact at any step (0.1).
      const auto central = [&](double h, bool config) {
        const Vec a = config ? aba(k, h, 0.0) : aba(k, 0.0, h);
        const Vec b = config ? aba(k, -h, 0.0) : aba(k, 0.0, -h);
        Vec d(ny);
        for (int i = 0; i < ny; ++i) d[i] = (a[i] - b[i]) / (2.0 * h);
        return d;
      };
      const Vec c1 = central(5e-4, true), c2 = central(2.5e-4, true), cv = central(0.1, false);
      for (int i = 0; i < ny; ++i) {
        err = std::max(err, std::fabs(P[i + k * ny] - (4.0 * c2[i] - c1[i]) / 3.0) / scale);
        err = std::max(err, std::fabs(Q[i + k * ny] - cv[i]) / scale);
      }
    }
    EXPECT_LT(err, 1e-7);
    std::printf("  %s: ny %d, C CE-ABA derivatives vs finite differences %.2e\n", path.c_str(), ny,
                err);
    ++checked;
  }
  if (checked == 0) GTEST_SKIP() << "no model with a multi-dof joint in a loop among the inputs";
}

TEST(CapiDerivatives, ClusterMinverseWithJointDynamics) {
  // cd_geared_leg.xml (rotor armature), next to the bundled models given on the command line:
  // with and without its joint dynamics, the inverse of cdyn_cluster_mass_matrix's H (with
  // them H = G^T (M + A) G), and the two inverses differ.
  std::string path;
  for (const std::string& p : g_models) {
    const std::string dir = p.substr(0, p.find_last_of('/') + 1);
    if (std::FILE* file = std::fopen((dir + "cd_geared_leg.xml").c_str(), "r")) {
      std::fclose(file);
      path = dir + "cd_geared_leg.xml";
      break;
    }
  }
  if (path.empty()) GTEST_SKIP() << "cd_geared_leg.xml is not next to the input models";
  std::vector<Vec> inverses;
  for (unsigned flags : {0u, unsigned{CDYN_LOAD_NO_JOINT_DYNAMICS}}) {
    char err[512];
    cdyn_model* m = nullptr;
    ASSERT_EQ(cdyn_model_load(CDYN_ABI_VERSION, path.c_str(), flags, nullptr, &m, err, sizeof err),
              CDYN_OK)
        << err;
    cdyn_workspace* ws = nullptr;
    cdyn_derivative_workspace* dws = nullptr;
    ASSERT_EQ(cdyn_workspace_create(m, &ws), CDYN_OK);
    ASSERT_EQ(cdyn_derivative_workspace_create(m, &dws), CDYN_OK);
    int nq = 0, nv = 0, ny = 0;
    cdyn_model_nq(m, &nq);
    cdyn_model_nv(m, &nv);
    cdyn_model_ny(m, &ny);
    Vec q, v, Hinv(ny * ny, -1.0), H(ny * ny);
    capi_test::closedState(m, ws, 0.0, &q, &v);
    ASSERT_EQ(cdyn_cluster_minverse(m, dws, q.data(), nq, Hinv.data(), ny), CDYN_OK)
        << cdyn_derivative_workspace_last_error(dws);
    ASSERT_EQ(cdyn_cluster_mass_matrix(m, ws, q.data(), nq, H.data(), ny), CDYN_OK);
    const Eigen::Map<const clusterdyn::MatX> A(Hinv.data(), ny, ny), B(H.data(), ny, ny);
    EXPECT_LE((A * B - clusterdyn::MatX::Identity(ny, ny)).cwiseAbs().maxCoeff(), 1e-9);
    inverses.push_back(Hinv);
    cdyn_derivative_workspace_free(dws);
    cdyn_workspace_free(ws);
    cdyn_model_free(m);
  }
  double difference = 0.0;
  for (size_t i = 0; i < inverses[0].size(); ++i)
    difference = std::max(difference, std::fabs(inverses[0][i] - inverses[1][i]));
  EXPECT_GT(difference, 1e-3);  // the armature of the rotors
}

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) g_models.emplace_back(argv[i]);
  if (g_models.empty()) {
    std::fprintf(stderr, "usage: %s model.urdf...\n", argv[0]);
    return 2;
  }
  return RUN_ALL_TESTS();
}
