// cdyn_integrate_independent / cdyn_difference_independent (clusterdyn.h, "Configuration
// space"): the C++ integrateIndependent / differenceIndependent bit for bit, their inverse
// relation, in-place stepping, the tree case (y = q: cdyn_integrate), and the refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "clusterdyn.h"
#include "clusterdyn/clusterdyn.hpp"
#include "test_util.hpp"

namespace {

namespace cd = clusterdyn;

struct CModel {
  cdyn_model* m = nullptr;
  cdyn_workspace* ws = nullptr;
  int nq = 0, nv = 0, nyq = 0, ny = 0;
  explicit CModel(const std::string& path) {
    char err[512];
    EXPECT_EQ(cdyn_model_load(CDYN_ABI_VERSION, path.c_str(), 0, nullptr, &m, err, sizeof err),
              CDYN_OK)
        << err;
    if (!m) return;
    EXPECT_EQ(cdyn_workspace_create(m, &ws), CDYN_OK);
    cdyn_model_nq(m, &nq);
    cdyn_model_nv(m, &nv);
    cdyn_model_nyq(m, &nyq);
    cdyn_model_ny(m, &ny);
  }
  ~CModel() {
    cdyn_workspace_free(ws);
    cdyn_model_free(m);
  }
};

std::string model(const char* name) { return std::string(CLUSTERDYN_MODELS_DIR) + "/" + name; }

/// A random independent configuration: the reference configuration's y moved along a random
/// tangent (the C++ integrateIndependent, so every quaternion stays unit).
cd::VecX randomY(const cd::ClusterModel& cm, std::mt19937_64& rng) {
  cd::VecX y(cm.nyq);
  for (int k = 0; k < cm.nyq; ++k) y[k] = cm.qReference[cm.independentPosition[k]];
  EXPECT_EQ(cd::integrateIndependent(cm, y, cd::test::randomVector(cm.ny, rng, -1.0, 1.0), 1.0, y),
            cd::Status::Ok);
  return y;
}

// cd_ups_wrist: independent ball joints inside loop clusters (quaternions in y, nyq > ny).
TEST(CapiIndependentConfiguration, EqualsCxxAndInvertsOnQuaternionLoops) {
  const std::string path = model("cd_ups_wrist.urdf");
  CModel c(path);
  ASSERT_TRUE(c.m);
  const cd::ClusterModel cm = cd::loadModel(path);
  ASSERT_EQ(c.nyq, cm.nyq);
  ASSERT_GT(c.nyq, c.ny) << "the test model must put a quaternion in y";
  std::mt19937_64 rng(11);
  double worst = 0.0;
  for (int trial = 0; trial < 20; ++trial) {
    const cd::VecX y = randomY(cm, rng);
    const cd::VecX ydot = cd::test::randomVector(cm.ny, rng, -2.0, 2.0);
    const double dt = 0.37;
    cd::VecX want(cm.nyq), got(cm.nyq);
    ASSERT_EQ(cd::integrateIndependent(cm, y, ydot, dt, want), cd::Status::Ok);
    ASSERT_EQ(cdyn_integrate_independent(c.m, c.ws, y.data(), c.nyq, ydot.data(), c.ny, dt,
                                         got.data(), c.nyq),
              CDYN_OK)
        << cdyn_workspace_last_error(c.ws);
    for (int i = 0; i < cm.nyq; ++i) ASSERT_EQ(got[i], want[i]) << "y[" << i << "]";
    cd::VecX inPlace = y;  // yout aliasing y
    ASSERT_EQ(cdyn_integrate_independent(c.m, c.ws, inPlace.data(), c.nyq, ydot.data(), c.ny, dt,
                                         inPlace.data(), c.nyq),
              CDYN_OK);
    for (int i = 0; i < cm.nyq; ++i) ASSERT_EQ(inPlace[i], want[i]) << "in place, y[" << i << "]";
    // difference(y, integrate(y, e, 1)) = e and integrate(y, difference(y, y1), 1) = y1.
    cd::VecX e(cm.ny), eCxx(cm.ny), back(cm.nyq);
    ASSERT_EQ(
        cdyn_difference_independent(c.m, c.ws, y.data(), c.nyq, got.data(), c.nyq, e.data(), c.ny),
        CDYN_OK)
        << cdyn_workspace_last_error(c.ws);
    ASSERT_EQ(cd::differenceIndependent(cm, y, got, eCxx), cd::Status::Ok);
    for (int i = 0; i < cm.ny; ++i) ASSERT_EQ(e[i], eCxx[i]) << "ydot[" << i << "]";
    worst = std::max(worst, (e - dt * ydot).cwiseAbs().maxCoeff());
    ASSERT_EQ(cdyn_integrate_independent(c.m, c.ws, y.data(), c.nyq, e.data(), c.ny, 1.0,
                                         back.data(), c.nyq),
              CDYN_OK);
    worst = std::max(worst, (back - got).cwiseAbs().maxCoeff());
  }
  EXPECT_LT(worst, 1e-12);
  std::printf("  cd_ups_wrist: integrate / difference round trip %.2e\n", worst);
}

// A tree (floating base): y = q, ydot = v, and the result is cdyn_integrate's / cdyn_difference's.
TEST(CapiIndependentConfiguration, TreeEqualsIntegrate) {
  CModel c(model("cd_quadruped_approximate.urdf"));
  ASSERT_TRUE(c.m);
  ASSERT_EQ(c.nyq, c.nq);
  ASSERT_EQ(c.ny, c.nv);
  std::vector<double> q(c.nq), v(c.nv), a(c.nq), b(c.nq), d1(c.nv), d2(c.nv);
  cdyn_neutral_configuration(c.m, c.ws, q.data(), c.nq);
  for (int i = 0; i < c.nv; ++i) v[i] = 0.3 * std::sin(1.0 + i);
  ASSERT_EQ(cdyn_integrate(c.m, c.ws, q.data(), c.nq, v.data(), c.nv, 0.7, a.data(), c.nq),
            CDYN_OK);
  ASSERT_EQ(
      cdyn_integrate_independent(c.m, c.ws, q.data(), c.nq, v.data(), c.nv, 0.7, b.data(), c.nq),
      CDYN_OK);
  for (int i = 0; i < c.nq; ++i) EXPECT_EQ(a[i], b[i]) << "q[" << i << "]";
  ASSERT_EQ(cdyn_difference(c.m, c.ws, q.data(), c.nq, a.data(), c.nq, d1.data(), c.nv), CDYN_OK);
  ASSERT_EQ(cdyn_difference_independent(c.m, c.ws, q.data(), c.nq, a.data(), c.nq, d2.data(), c.nv),
            CDYN_OK);
  for (int i = 0; i < c.nv; ++i) EXPECT_EQ(d1[i], d2[i]) << "v[" << i << "]";
}

// Refusals: the status and a message naming the argument; outputs untouched.
TEST(CapiIndependentConfiguration, Refusals) {
  const std::string path = model("cd_ups_wrist.urdf");
  CModel c(path);
  ASSERT_TRUE(c.m);
  const cd::ClusterModel cm = cd::loadModel(path);
  std::mt19937_64 rng(3);
  cd::VecX y = randomY(cm, rng), ydot = cd::VecX::Zero(cm.ny), out = cd::VecX::Constant(cm.nyq, 7);
  const auto message = [&] { return std::string(cdyn_workspace_last_error(c.ws)); };
  EXPECT_EQ(cdyn_integrate_independent(c.m, c.ws, y.data(), c.nyq, ydot.data(), c.ny - 1, 0.1,
                                       out.data(), c.nyq),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_NE(message().find("ydot"), std::string::npos) << message();
  EXPECT_EQ(cdyn_integrate_independent(c.m, c.ws, y.data(), c.nyq, ydot.data(), c.ny, NAN,
                                       out.data(), c.nyq),
            CDYN_ERR_NON_FINITE);
  EXPECT_NE(message().find("dt"), std::string::npos) << message();
  // The first independent quaternion scaled: not unit.
  int yq = -1;
  for (int k = 0; k < cm.nyq && yq < 0; ++k)
    for (int b : cm.treeModel.quaternionBodies)
      if (cm.independentPosition[k] == cm.treeModel.idx_q[b]) yq = k;
  ASSERT_GE(yq, 0);
  cd::VecX bad = y;
  bad.segment<4>(yq) *= 1.01;
  EXPECT_EQ(cdyn_integrate_independent(c.m, c.ws, bad.data(), c.nyq, ydot.data(), c.ny, 0.1,
                                       out.data(), c.nyq),
            CDYN_ERR_NOT_UNIT_QUATERNION);
  EXPECT_NE(message().find("y[" + std::to_string(yq) + ".."), std::string::npos) << message();
  cd::VecX e = cd::VecX::Constant(cm.ny, 7);
  EXPECT_EQ(
      cdyn_difference_independent(c.m, c.ws, y.data(), c.nyq, bad.data(), c.nyq, e.data(), c.ny),
      CDYN_ERR_NOT_UNIT_QUATERNION);
  EXPECT_NE(message().find("y1["), std::string::npos) << message();
  bad = y;
  bad[0] = INFINITY;
  EXPECT_EQ(
      cdyn_difference_independent(c.m, c.ws, bad.data(), c.nyq, y.data(), c.nyq, e.data(), c.ny),
      CDYN_ERR_NON_FINITE);
  EXPECT_NE(message().find("y0"), std::string::npos) << message();
  EXPECT_EQ(cdyn_difference_independent(c.m, c.ws, y.data(), c.nyq, y.data(), c.nyq, nullptr, c.ny),
            CDYN_ERR_NULL_POINTER);
  for (int i = 0; i < cm.nyq; ++i) EXPECT_EQ(out[i], 7.0);
  for (int i = 0; i < cm.ny; ++i) EXPECT_EQ(e[i], 7.0);
}

}  // namespace
