// C API of the constraint forces (cdyn_forces_*) vs the C++ API on the bundled loop, coupling
// and mimic models, plus the documented statuses of misuse.
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

struct CHandles {
  cdyn_model* m = nullptr;
  cdyn_workspace* ws = nullptr;
  cdyn_forces* f = nullptr;
  ~CHandles() {
    cdyn_forces_free(f);
    cdyn_workspace_free(ws);
    cdyn_model_free(m);
  }
};

void load(CHandles& h, const std::string& path) {
  char err[512];
  ASSERT_EQ(cdyn_model_load(CDYN_ABI_VERSION, path.c_str(), 0, nullptr, &h.m, err, sizeof err),
            CDYN_OK)
      << err;
  ASSERT_EQ(cdyn_workspace_create(h.m, &h.ws), CDYN_OK);
  ASSERT_EQ(cdyn_forces_create(h.m, &h.f), CDYN_OK);
}

std::string model(const char* name) { return std::string(CLUSTERDYN_MODELS_DIR) + "/" + name; }

class CapiForces : public ::testing::TestWithParam<const char*> {};

TEST_P(CapiForces, MatchesCppApi) {
  const std::string path = model(GetParam());
  CHandles h;
  load(h, path);
  const cd::ClusterModel cm = cd::loadModel(path);
  cd::ClusterData data(cm);
  cd::JointForces F(cm);
  std::mt19937_64 rng(5);
  cd::VecX y(cm.nyq), yd(cm.ny);
  ASSERT_EQ(
      cd::spanningToIndependent(cm, data, cm.qReference, cd::VecX::Zero(cm.treeModel.nv), y, yd),
      cd::Status::Ok);
  yd = cd::test::randomVector(cm.ny, rng);
  ASSERT_EQ(cd::independentToSpanning(cm, data, y, yd), cd::Status::Ok);
  const cd::VecX q = data.q, v = data.v, tau = cd::test::randomVector(cm.ny, rng);
  const cd::VecX tauS = cd::test::randomVector(cm.treeModel.nv, rng);
  const int n = cm.treeModel.nbodies, nl = static_cast<int>(cm.loops.size());
  std::vector<double> ydd(cm.ny), W(6 * n), Ww(6 * n), L(6 * std::max(nl, 1));
  for (int spanning = 0; spanning < 2; ++spanning) {
    const cd::VecX& t = spanning ? tauS : tau;
    if (spanning) {
      ASSERT_EQ(
          cdyn_ce_aba_spanning_forces(h.m, h.ws, q.data(), q.size(), v.data(), v.size(), t.data(),
                                      t.size(), nullptr, 0, ydd.data(), cm.ny, nullptr, 0),
          CDYN_OK);
      ASSERT_EQ(cd::ceAbaSpanningForces(cm, data, q, v, t), cd::Status::Ok);
    } else {
      ASSERT_EQ(cdyn_ce_aba(h.m, h.ws, q.data(), q.size(), v.data(), v.size(), t.data(), t.size(),
                            nullptr, 0, ydd.data(), cm.ny, nullptr, 0),
                CDYN_OK);
      ASSERT_EQ(cd::ceAba(cm, data, q, v, t), cd::Status::Ok);
    }
    ASSERT_EQ(cdyn_forces_after_ce_aba(h.m, h.ws, h.f, t.data(), t.size(), spanning), CDYN_OK);
    ASSERT_EQ(cd::ceAbaConstraintForces(cm, data, F, t,
                                        spanning ? cd::GeneralizedForceLayout::Spanning
                                                 : cd::GeneralizedForceLayout::Independent),
              cd::Status::Ok);
    ASSERT_EQ(cd::jointForcesInWorld(cm, data, F), cd::Status::Ok);
    ASSERT_EQ(cdyn_forces_joint_wrenches(h.m, h.ws, h.f, CDYN_FORCE_FRAME_BODY, W.data(), 6),
              CDYN_OK);
    ASSERT_EQ(cdyn_forces_joint_wrenches(h.m, h.ws, h.f, CDYN_FORCE_FRAME_WORLD, Ww.data(), 6),
              CDYN_OK);
    for (int b = 0; b < n; ++b)
      for (int r = 0; r < 6; ++r) {
        EXPECT_NEAR(W[6 * b + r], F.joint[b][r], 1e-12 * (1 + std::abs(F.joint[b][r])));
        EXPECT_NEAR(Ww[6 * b + r], F.jointWorld[b][r], 1e-12 * (1 + std::abs(F.jointWorld[b][r])));
      }
    ASSERT_EQ(cdyn_forces_loop_wrenches(h.m, h.f, L.data(), 6), CDYN_OK);
    for (int l = 0; l < nl; ++l) {
      for (int r = 0; r < 6; ++r) EXPECT_NEAR(L[6 * l + r], F.loopWrench[l][r], 1e-12);
      const char* name = nullptr;
      int pre = -2, suc = -2, rows = -1;
      double pose[12];
      ASSERT_EQ(cdyn_forces_loop_info(h.m, l, &name, &pre, &suc, &rows, pose), CDYN_OK);
      EXPECT_EQ(std::string(name), cm.loops[l].name);
      EXPECT_EQ(pre, cm.loops[l].predecessorBody);
      EXPECT_EQ(suc, cm.loops[l].successorBody);
      EXPECT_EQ(pose[9], cm.loops[l].predecessorPlacement.p[0]);
      std::vector<double> rowForce(rows);
      ASSERT_EQ(cdyn_forces_loop_rows(h.m, h.f, l, rowForce.data(), rows), CDYN_OK);
      for (int j = 0; j < rows; ++j)
        EXPECT_NEAR(rowForce[j], F.loopRowForce[F.loopRowStart[l] + j], 1e-12);
      EXPECT_EQ(cdyn_forces_loop_rows(h.m, h.f, l, rowForce.data(), rows + 1),
                CDYN_ERR_INVALID_SIZE);
    }
    for (int r = 0; r < static_cast<int>(cm.relations.size()); ++r) {
      const char* name = nullptr;
      int nterms = 0;
      ASSERT_EQ(cdyn_forces_coupling_info(h.m, r, &name, &nterms), CDYN_OK);
      EXPECT_EQ(std::string(name), cm.relations[r].name);
      std::vector<double> jf(nterms);
      double lambda = NAN;
      ASSERT_EQ(cdyn_forces_coupling(h.m, h.f, r, &lambda, jf.data(), nterms), CDYN_OK);
      EXPECT_NEAR(lambda, F.relationMultiplier[r], 1e-12 * (1 + std::abs(lambda)));
      for (int t = 0; t < nterms; ++t) {
        int iv = -1;
        double coeff = 0;
        ASSERT_EQ(cdyn_forces_coupling_term(h.m, r, t, &iv, &coeff), CDYN_OK);
        EXPECT_EQ(iv, cm.relations[r].terms[t].first);
        EXPECT_NEAR(jf[t], coeff * lambda, 1e-12 * (1 + std::abs(jf[t])));
      }
      EXPECT_EQ(cdyn_forces_coupling_term(h.m, r, nterms, nullptr, nullptr),
                CDYN_ERR_INVALID_INDEX);
    }
  }
  // After CE-RNEA with the accelerations of CE-ABA: the same forces.
  ASSERT_EQ(cdyn_ce_aba(h.m, h.ws, q.data(), q.size(), v.data(), v.size(), tau.data(), tau.size(),
                        nullptr, 0, ydd.data(), cm.ny, nullptr, 0),
            CDYN_OK);
  ASSERT_EQ(cdyn_forces_after_ce_aba(h.m, h.ws, h.f, tau.data(), tau.size(), 0), CDYN_OK);
  ASSERT_EQ(cdyn_forces_joint_wrenches(h.m, h.ws, h.f, CDYN_FORCE_FRAME_BODY, W.data(), 6),
            CDYN_OK);
  std::vector<double> tauBack(cm.ny), W2(6 * n);
  ASSERT_EQ(cdyn_ce_rnea(h.m, h.ws, q.data(), q.size(), v.data(), v.size(), ydd.data(), cm.ny,
                         nullptr, 0, tauBack.data(), cm.ny, nullptr, 0),
            CDYN_OK);
  ASSERT_EQ(cdyn_forces_after_ce_rnea(h.m, h.ws, h.f), CDYN_OK);
  ASSERT_EQ(cdyn_forces_joint_wrenches(h.m, h.ws, h.f, CDYN_FORCE_FRAME_BODY, W2.data(), 6),
            CDYN_OK);
  double scale = 1.0;
  for (double x : W) scale = std::max(scale, std::abs(x));
  for (int i = 0; i < 6 * n; ++i) EXPECT_NEAR(W[i], W2[i], 1e-9 * scale);
}

INSTANTIATE_TEST_SUITE_P(Models, CapiForces,
                         ::testing::Values("cd_quadruped.urdf", "cd_four_bar.urdf",
                                           "cd_six_bar.urdf", "cd_differential.urdf",
                                           "cd_belt_leg.urdf", "cd_mimic_gripper.urdf"));

TEST(CapiForcesMisuse, DocumentedStatuses) {
  CHandles a, b;
  load(a, model("cd_four_bar.urdf"));
  load(b, model("cd_quadruped.urdf"));
  int ny = 0;
  ASSERT_EQ(cdyn_model_ny(a.m, &ny), CDYN_OK);
  std::vector<double> tau(ny + 1, 0.0), W(6 * 64);
  EXPECT_EQ(cdyn_forces_after_ce_aba(a.m, a.ws, a.f, tau.data(), ny + 1, 0), CDYN_ERR_INVALID_SIZE);
  EXPECT_NE(std::string(cdyn_workspace_last_error(a.ws)).find("tau"), std::string::npos);
  EXPECT_EQ(cdyn_forces_after_ce_aba(a.m, a.ws, a.f, tau.data(), ny, 2), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(cdyn_forces_after_ce_aba(a.m, a.ws, b.f, tau.data(), ny, 0),
            CDYN_ERR_WORKSPACE_MISMATCH);
  EXPECT_NE(std::string(cdyn_workspace_last_error(a.ws)).find("forces"), std::string::npos);
  EXPECT_EQ(cdyn_forces_after_ce_aba(a.m, b.ws, a.f, tau.data(), ny, 0),
            CDYN_ERR_WORKSPACE_MISMATCH);
  EXPECT_EQ(cdyn_forces_after_ce_rnea(a.m, a.ws, nullptr), CDYN_ERR_NULL_POINTER);
  // No dynamics call on a.ws yet: rejected by name.
  EXPECT_EQ(cdyn_forces_after_ce_aba(a.m, a.ws, a.f, tau.data(), ny, 0), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(cdyn_workspace_last_error(a.ws)).find("cdyn_ce_aba"), std::string::npos)
      << cdyn_workspace_last_error(a.ws);
  tau[0] = NAN;
  EXPECT_EQ(cdyn_forces_after_ce_aba(a.m, a.ws, a.f, tau.data(), ny, 0), CDYN_ERR_NON_FINITE);
  EXPECT_EQ(cdyn_forces_joint_wrenches(a.m, a.ws, a.f, CDYN_FORCE_FRAME_LOOP, W.data(), 6),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(cdyn_forces_joint_wrenches(a.m, a.ws, a.f, CDYN_FORCE_FRAME_BODY, W.data(), 5),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(cdyn_forces_loop_wrenches(a.m, b.f, W.data(), 6), CDYN_ERR_WORKSPACE_MISMATCH);
  EXPECT_EQ(cdyn_forces_loop_info(a.m, 99, nullptr, nullptr, nullptr, nullptr, nullptr),
            CDYN_ERR_INVALID_INDEX);
  EXPECT_EQ(cdyn_forces_coupling_info(a.m, -1, nullptr, nullptr), CDYN_ERR_INVALID_INDEX);
  EXPECT_EQ(cdyn_forces_create(a.m, nullptr), CDYN_ERR_NULL_POINTER);
  cdyn_forces* f = nullptr;
  EXPECT_EQ(cdyn_forces_create(nullptr, &f), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(f, nullptr);
  EXPECT_EQ(cdyn_forces_free(nullptr), CDYN_OK);
}

// The forces need the workspace's last call to be the matching dynamics call; world-frame wrenches
// keep the poses of that call.
TEST(CapiForcesMisuse, SequenceOfCalls) {
  const std::string path = model("cd_four_bar.urdf");
  CHandles h;
  load(h, path);
  const cd::ClusterModel cm = cd::loadModel(path);
  cd::ClusterData data(cm);
  std::mt19937_64 rng(8);
  cd::VecX y(cm.nyq), yd(cm.ny);
  ASSERT_EQ(
      cd::spanningToIndependent(cm, data, cm.qReference, cd::VecX::Zero(cm.treeModel.nv), y, yd),
      cd::Status::Ok);
  yd = cd::test::randomVector(cm.ny, rng);
  ASSERT_EQ(cd::independentToSpanning(cm, data, y, yd), cd::Status::Ok);
  const cd::VecX q = data.q, v = data.v, tau = cd::test::randomVector(cm.ny, rng);
  const cd::VecX tauS = cd::test::randomVector(cm.treeModel.nv, rng);
  const int n = cm.treeModel.nbodies;
  std::vector<double> ydd(cm.ny), tauBack(cm.ny), Ww(6 * n), Ww2(6 * n);
  auto ceAba = [&] {
    return cdyn_ce_aba(h.m, h.ws, q.data(), q.size(), v.data(), v.size(), tau.data(), tau.size(),
                       nullptr, 0, ydd.data(), cm.ny, nullptr, 0);
  };
  auto message = [&] { return std::string(cdyn_workspace_last_error(h.ws)); };
  ASSERT_EQ(ceAba(), CDYN_OK);
  ASSERT_EQ(cdyn_forces_after_ce_aba(h.m, h.ws, h.f, tau.data(), tau.size(), 0), CDYN_OK);
  ASSERT_EQ(cdyn_forces_joint_wrenches(h.m, h.ws, h.f, CDYN_FORCE_FRAME_WORLD, Ww.data(), 6),
            CDYN_OK);
  // Another call moves the workspace: the world wrenches stay those of the CE-ABA call ...
  std::vector<double> q2(q.data(), q.data() + q.size());
  q2[0] += 0.3;
  ASSERT_EQ(cdyn_forward_kinematics(h.m, h.ws, q2.data(), q.size(), nullptr, 0, nullptr, 0),
            CDYN_OK);
  ASSERT_EQ(cdyn_forces_joint_wrenches(h.m, h.ws, h.f, CDYN_FORCE_FRAME_WORLD, Ww2.data(), 6),
            CDYN_OK);
  EXPECT_EQ(Ww, Ww2);
  // ... and the forces can no longer be filled from it.
  EXPECT_EQ(cdyn_forces_after_ce_aba(h.m, h.ws, h.f, tau.data(), tau.size(), 0),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message().find("last call"), std::string::npos) << message();
  // The layout must match the call: CE-ABA with independent efforts is not spanning = 1.
  ASSERT_EQ(ceAba(), CDYN_OK);
  EXPECT_EQ(cdyn_forces_after_ce_aba(h.m, h.ws, h.f, tauS.data(), tauS.size(), 1),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(message().find("cdyn_ce_aba_spanning_forces"), std::string::npos) << message();
  // CE-RNEA forces after CE-ABA (and the reverse) are rejected; a failed CE-ABA leaves nothing.
  ASSERT_EQ(ceAba(), CDYN_OK);
  EXPECT_EQ(cdyn_forces_after_ce_rnea(h.m, h.ws, h.f), CDYN_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(cdyn_ce_rnea(h.m, h.ws, q.data(), q.size(), v.data(), v.size(), ydd.data(), cm.ny,
                         nullptr, 0, tauBack.data(), cm.ny, nullptr, 0),
            CDYN_OK);
  EXPECT_EQ(cdyn_forces_after_ce_aba(h.m, h.ws, h.f, tau.data(), tau.size(), 0),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(cdyn_forces_after_ce_rnea(h.m, h.ws, h.f), CDYN_OK);
  std::vector<double> bad(q.data(), q.data() + q.size());
  bad[0] = NAN;
  EXPECT_EQ(cdyn_ce_aba(h.m, h.ws, bad.data(), q.size(), v.data(), v.size(), tau.data(), tau.size(),
                        nullptr, 0, ydd.data(), cm.ny, nullptr, 0),
            CDYN_ERR_NON_FINITE);
  EXPECT_EQ(cdyn_forces_after_ce_aba(h.m, h.ws, h.f, tau.data(), tau.size(), 0),
            CDYN_ERR_INVALID_ARGUMENT);
}

}  // namespace
