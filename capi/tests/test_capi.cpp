// C API vs C++ API: every C function on every shared tree model, every bundled (loop) model and
// random models (trees and generated loop mechanisms) must give the C++ result bit for bit;
// every misuse must give the documented status and a message. The C model is the cluster
// model of the URDF (clusterdyn::loadModel); its tree functions run on ClusterModel::treeModel.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "closed_states.hpp"
#include "clusterdyn.h"
#include "loop_model_generator.hpp"
#include "test_util.hpp"

namespace {

namespace cd = clusterdyn;
using cd::test::sharedPath;
using cd::test::sharedTreeModelFiles;

/// RAII C model + workspace.
struct CModel {
  cdyn_model* m = nullptr;
  cdyn_workspace* ws = nullptr;
  ~CModel() {
    cdyn_workspace_free(ws);
    cdyn_model_free(m);
  }
};

/// Loads a C model from a file or a string; fails the test on error.
void loadC(CModel& c, const std::string& pathOrXml, bool isString, unsigned flags = 0,
           const double* gravity = nullptr) {
  char err[512];
  const cdyn_status s =
      isString ? cdyn_model_load_string(CDYN_ABI_VERSION, pathOrXml.data(), pathOrXml.size(), flags,
                                        gravity, &c.m, err, sizeof err)
               : cdyn_model_load(CDYN_ABI_VERSION, pathOrXml.c_str(), flags, gravity, &c.m, err,
                                 sizeof err);
  ASSERT_EQ(s, CDYN_OK) << err;
  ASSERT_STREQ(err, "");
  ASSERT_EQ(cdyn_workspace_create(c.m, &c.ws), CDYN_OK);
}

/// Exact (bitwise for finite values) equality of two arrays.
::testing::AssertionResult sameArray(const double* a, const double* b, long n, const char* what) {
  for (long i = 0; i < n; ++i)
    if (!(a[i] == b[i]))
      return ::testing::AssertionFailure()
             << what << "[" << i << "]: C API " << a[i] << " vs C++ " << b[i];
  return ::testing::AssertionSuccess();
}

#define EXPECT_SAME(a, b, n) EXPECT_TRUE(sameArray((a), (b), (n), #a))

/// Compares every C compute function with its C++ counterpart on random states.
void compareWithCxx(const cd::Model& model, CModel& c, std::mt19937_64& rng, int samples) {
  const int nq = model.nq, nv = model.nv, nb = model.nbodies;
  const int nf = static_cast<int>(model.frames.size());
  cd::Data data(model);
  for (int k = 0; k < samples; ++k) {
    const cd::test::RandomState st = cd::test::randomState(model, rng);
    const std::vector<cd::Force> fx = cd::test::randomForces(model, rng);
    std::vector<double> fext(6 * nb);
    for (int i = 0; i < nb; ++i)
      for (int r = 0; r < 6; ++r) fext[6 * i + r] = fx[i][r];
    const double* q = st.q.data();
    const double* v = st.v.data();
    const double* a = st.a.data();
    std::vector<double> out(nv), out2(nq);

    // Dynamics.
    ASSERT_EQ(cdyn_rnea(c.m, c.ws, q, nq, v, nv, a, nv, nullptr, 0, out.data(), nv), CDYN_OK);
    ASSERT_EQ(cd::rnea(model, data, st.q, st.v, st.a), cd::Status::Ok);
    EXPECT_SAME(out.data(), data.tau.data(), nv);
    ASSERT_EQ(cdyn_rnea(c.m, c.ws, q, nq, v, nv, a, nv, fext.data(), 6 * nb, out.data(), nv),
              CDYN_OK);
    ASSERT_EQ(cd::rnea(model, data, st.q, st.v, st.a, fx.data()), cd::Status::Ok);
    EXPECT_SAME(out.data(), data.tau.data(), nv);
    ASSERT_EQ(cdyn_aba(c.m, c.ws, q, nq, v, nv, st.tau.data(), nv, nullptr, 0, out.data(), nv),
              CDYN_OK);
    ASSERT_EQ(cd::aba(model, data, st.q, st.v, st.tau), cd::Status::Ok);
    EXPECT_SAME(out.data(), data.ddq.data(), nv);
    ASSERT_EQ(
        cdyn_aba(c.m, c.ws, q, nq, v, nv, st.tau.data(), nv, fext.data(), 6 * nb, out.data(), nv),
        CDYN_OK);
    ASSERT_EQ(cd::aba(model, data, st.q, st.v, st.tau, fx.data()), cd::Status::Ok);
    EXPECT_SAME(out.data(), data.ddq.data(), nv);
    ASSERT_EQ(cdyn_nonlinear_effects(c.m, c.ws, q, nq, v, nv, out.data(), nv), CDYN_OK);
    ASSERT_EQ(cd::nonLinearEffects(model, data, st.q, st.v), cd::Status::Ok);
    EXPECT_SAME(out.data(), data.nle.data(), nv);
    ASSERT_EQ(cdyn_generalized_gravity(c.m, c.ws, q, nq, out.data(), nv), CDYN_OK);
    ASSERT_EQ(cd::generalizedGravity(model, data, st.q), cd::Status::Ok);
    EXPECT_SAME(out.data(), data.nle.data(), nv);
    const int ldm = nv + 3;  // a leading dimension larger than nv
    std::vector<double> M(ldm * std::max(nv, 1), -7.0);
    ASSERT_EQ(cdyn_crba(c.m, c.ws, q, nq, M.data(), ldm), CDYN_OK);
    ASSERT_EQ(cd::crba(model, data, st.q), cd::Status::Ok);
    for (int j = 0; j < nv; ++j) {
      EXPECT_SAME(M.data() + j * ldm, data.M.col(j).data(), nv);
      for (int i = nv; i < ldm; ++i) EXPECT_EQ(M[i + j * ldm], -7.0) << "padding overwritten";
    }
    double T = 0, V = 0;
    ASSERT_EQ(cdyn_kinetic_energy(c.m, c.ws, q, nq, v, nv, &T), CDYN_OK);
    EXPECT_EQ(T, cd::kineticEnergy(model, data, st.q, st.v));
    ASSERT_EQ(cdyn_potential_energy(c.m, c.ws, q, nq, &V), CDYN_OK);
    EXPECT_EQ(V, cd::potentialEnergy(model, data, st.q));
    double com[3];
    ASSERT_EQ(cdyn_center_of_mass(c.m, c.ws, q, nq, com), CDYN_OK);
    ASSERT_EQ(cd::forwardKinematics(model, data, st.q), cd::Status::Ok);
    EXPECT_SAME(com, cd::centerOfMass(model, data).data(), 3);

    // Configuration space.
    ASSERT_EQ(cdyn_integrate(c.m, c.ws, q, nq, v, nv, 0.37, out2.data(), nq), CDYN_OK);
    EXPECT_SAME(out2.data(), cd::integrate(model, st.q, st.v, 0.37).data(), nq);
    std::vector<double> qi(q, q + nq);  // in place (output aliases input)
    ASSERT_EQ(cdyn_integrate(c.m, c.ws, qi.data(), nq, v, nv, 0.37, qi.data(), nq), CDYN_OK);
    EXPECT_SAME(qi.data(), out2.data(), nq);
    cd::VecX qs = st.q * 1.5;
    std::vector<double> qn(qs.data(), qs.data() + nq);
    ASSERT_EQ(cdyn_normalize_configuration(c.m, c.ws, qn.data(), nq), CDYN_OK);
    cd::normalizeConfiguration(model, qs);
    EXPECT_SAME(qn.data(), qs.data(), nq);
    ASSERT_EQ(cdyn_neutral_configuration(c.m, c.ws, out2.data(), nq), CDYN_OK);
    EXPECT_SAME(out2.data(), cd::neutralConfiguration(model).data(), nq);

    // Kinematics and frames.
    ASSERT_EQ(cdyn_forward_kinematics(c.m, c.ws, q, nq, v, nv, a, nv), CDYN_OK);
    ASSERT_EQ(cd::forwardKinematics(model, data, st.q, st.v, st.a), cd::Status::Ok);
    const int ldj = 8;
    std::vector<double> J(ldj * std::max(nv, 1)), J2(ldj * std::max(nv, 1));
    cd::Mat6X Jc(6, nv);
    for (int f = 0; f < nf; ++f) {
      const cd::Transform X = cd::framePlacement(model, data, f);
      double R[12], p[3], Tm[20];
      ASSERT_EQ(cdyn_frame_placement(c.m, c.ws, f, R, 4, p), CDYN_OK);
      for (int j = 0; j < 3; ++j) EXPECT_SAME(R + 4 * j, X.R.col(j).data(), 3);
      EXPECT_SAME(p, X.p.data(), 3);
      ASSERT_EQ(cdyn_frame_placement_matrix(c.m, c.ws, f, Tm, 5), CDYN_OK);
      for (int j = 0; j < 3; ++j) EXPECT_SAME(Tm + 5 * j, X.R.col(j).data(), 3);
      EXPECT_SAME(Tm + 15, X.p.data(), 3);
      EXPECT_EQ(Tm[3], 0.0);
      EXPECT_EQ(Tm[18], 1.0);
      for (int rf = 0; rf < 3; ++rf) {
        const auto r = static_cast<cd::ReferenceFrame>(rf);
        double m6[6], m3[3];
        ASSERT_EQ(cdyn_frame_velocity(c.m, c.ws, f, rf, m6), CDYN_OK);
        EXPECT_SAME(m6, cd::frameVelocity(model, data, f, r).data(), 6);
        ASSERT_EQ(cdyn_frame_acceleration(c.m, c.ws, f, rf, m6), CDYN_OK);
        EXPECT_SAME(m6, cd::frameAcceleration(model, data, f, r).data(), 6);
        ASSERT_EQ(cdyn_frame_classical_acceleration(c.m, c.ws, f, rf, m3), CDYN_OK);
        EXPECT_SAME(m3, cd::frameClassicalAcceleration(model, data, f, r).data(), 3);
        ASSERT_EQ(cdyn_frame_jacobian(c.m, c.ws, f, rf, J.data(), ldj), CDYN_OK);
        ASSERT_EQ(cd::frameJacobian(model, data, f, r, Jc), cd::Status::Ok);
        for (int j = 0; j < nv; ++j) EXPECT_SAME(J.data() + j * ldj, Jc.col(j).data(), 6);
      }
    }
    // compute_frame_jacobian = FK(q) + jacobian, and leaves the placements valid.
    const int f = nf - 1;
    ASSERT_EQ(cdyn_compute_frame_jacobian(c.m, c.ws, q, nq, f, CDYN_WORLD, J2.data(), ldj),
              CDYN_OK);
    ASSERT_EQ(cd::computeFrameJacobian(model, data, st.q, f, cd::ReferenceFrame::World, Jc),
              cd::Status::Ok);
    for (int j = 0; j < nv; ++j) EXPECT_SAME(J2.data() + j * ldj, Jc.col(j).data(), 6);
    double R[9], p[3];
    EXPECT_EQ(cdyn_frame_placement(c.m, c.ws, f, R, 3, p), CDYN_OK);
    // ... but not velocities.
    double m6[6];
    EXPECT_EQ(cdyn_frame_velocity(c.m, c.ws, f, CDYN_LOCAL, m6), CDYN_ERR_INVALID_ARGUMENT);
  }
}

/// Model queries agree with the C++ model.
void compareQueries(const cd::Model& model, const cdyn_model* m) {
  int n = -1;
  ASSERT_EQ(cdyn_model_nbodies(m, &n), CDYN_OK);
  EXPECT_EQ(n, model.nbodies);
  ASSERT_EQ(cdyn_model_nq(m, &n), CDYN_OK);
  EXPECT_EQ(n, model.nq);
  ASSERT_EQ(cdyn_model_nv(m, &n), CDYN_OK);
  EXPECT_EQ(n, model.nv);
  ASSERT_EQ(cdyn_model_nframes(m, &n), CDYN_OK);
  EXPECT_EQ(n, static_cast<int>(model.frames.size()));
  const char* s = nullptr;
  ASSERT_EQ(cdyn_model_name(m, &s), CDYN_OK);
  EXPECT_EQ(std::string(s), model.name);
  double mass = 0, g[3];
  ASSERT_EQ(cdyn_model_total_mass(m, &mass), CDYN_OK);
  EXPECT_EQ(mass, model.totalMass());
  ASSERT_EQ(cdyn_model_gravity(m, g), CDYN_OK);
  EXPECT_SAME(g, model.gravity.data(), 3);
  for (int i = 0; i < model.nbodies; ++i) {
    int k = -2;
    ASSERT_EQ(cdyn_model_body_name(m, i, &s), CDYN_OK);
    EXPECT_EQ(std::string(s), model.bodyNames[i]);
    ASSERT_EQ(cdyn_model_body_index(m, s, &k), CDYN_OK);
    EXPECT_EQ(k, i);
    ASSERT_EQ(cdyn_model_body_parent(m, i, &k), CDYN_OK);
    EXPECT_EQ(k, model.parent[i]);
    ASSERT_EQ(cdyn_model_joint_name(m, i, &s), CDYN_OK);
    EXPECT_EQ(std::string(s), model.jointNames[i]);
    ASSERT_EQ(cdyn_model_joint_index(m, s, &k), CDYN_OK);
    EXPECT_EQ(k, i);
    ASSERT_EQ(cdyn_model_joint_type(m, i, &k), CDYN_OK);
    EXPECT_EQ(k, static_cast<int>(model.joints[i].type));
    int iq, nq, iv, nv;
    ASSERT_EQ(cdyn_model_joint_coordinates(m, i, &iq, &nq, &iv, &nv), CDYN_OK);
    EXPECT_EQ(iq, model.idx_q[i]);
    EXPECT_EQ(nq, model.nqs[i]);
    EXPECT_EQ(iv, model.idx_v[i]);
    EXPECT_EQ(nv, model.nvs[i]);
    EXPECT_EQ(cdyn_model_joint_coordinates(m, i, nullptr, nullptr, nullptr, nullptr), CDYN_OK);
  }
  for (int i = 0; i < model.nq; ++i) {
    int k = -1;
    ASSERT_EQ(cdyn_model_position_name(m, i, &s), CDYN_OK);
    EXPECT_EQ(std::string(s), model.positionNames[i]);
    ASSERT_EQ(cdyn_model_position_index(m, s, &k), CDYN_OK);
    EXPECT_EQ(k, i);
  }
  for (int i = 0; i < model.nv; ++i) {
    int k = -1;
    ASSERT_EQ(cdyn_model_velocity_name(m, i, &s), CDYN_OK);
    EXPECT_EQ(std::string(s), model.velocityNames[i]);
    ASSERT_EQ(cdyn_model_velocity_index(m, s, &k), CDYN_OK);
    EXPECT_EQ(k, i);
  }
  for (int f = 0; f < static_cast<int>(model.frames.size()); ++f) {
    int k = -2;
    ASSERT_EQ(cdyn_model_frame_name(m, f, &s), CDYN_OK);
    EXPECT_EQ(std::string(s), model.frames[f].name);
    ASSERT_EQ(cdyn_model_frame_index(m, s, &k), CDYN_OK);
    EXPECT_EQ(k, f);
    ASSERT_EQ(cdyn_model_frame_body(m, f, &k), CDYN_OK);
    EXPECT_EQ(k, model.frames[f].body);
  }
  std::vector<double> lo(model.nq), hi(model.nq), vl(model.nv), el(model.nv);
  ASSERT_EQ(cdyn_model_position_limits(m, lo.data(), hi.data(), model.nq), CDYN_OK);
  EXPECT_SAME(lo.data(), model.lowerPositionLimit.data(), model.nq);
  EXPECT_SAME(hi.data(), model.upperPositionLimit.data(), model.nq);
  ASSERT_EQ(cdyn_model_velocity_limits(m, vl.data(), model.nv), CDYN_OK);
  EXPECT_SAME(vl.data(), model.velocityLimit.data(), model.nv);
  ASSERT_EQ(cdyn_model_effort_limits(m, el.data(), model.nv), CDYN_OK);
  EXPECT_SAME(el.data(), model.effortLimit.data(), model.nv);
}

// Third-party models of the shared folder (CLUSTERDYN_SHARED_DIR): a test that needs one of them
// skips itself, with a message, when it is absent; the others use the bundled models/.
std::string pendulumPath() { return sharedPath("urdfplus/double_pendulum.urdf"); }
std::string cheetahPath() { return sharedPath("urdfplus/mini_cheetah_approximate.urdf"); }
/// A bundled floating-base tree (no chords): nq 19, nv 18.
std::string floatingTreePath() { return cd::test::modelsPath("cd_quadruped_approximate.urdf"); }

#define SKIP_WITHOUT_SHARED(path)                                                          \
  do {                                                                                     \
    if (!std::filesystem::exists(path))                                                    \
      GTEST_SKIP() << "missing " << (path) << " (third-party model of the shared folder, " \
                   << "CLUSTERDYN_SHARED_DIR)";                                            \
  } while (0)

TEST(CApi, SharedTreeModelsMatchCxx) {
  SKIP_WITHOUT_SHARED(sharedPath("urdfplus"));
  const auto files = sharedTreeModelFiles();
  ASSERT_GE(files.size(), 4u);
  std::mt19937_64 rng(42);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    const cd::Model model = cd::loadModel(path).treeModel;
    CModel c;
    loadC(c, path, false);
    compareQueries(model, c.m);
    compareWithCxx(model, c, rng, 5);
    // The same model from a string.
    CModel s;
    loadC(s, cd::test::readTextFile(path), true);
    compareWithCxx(model, s, rng, 2);
  }
}

TEST(CApi, RandomModelsWithAllJointTypesMatchCxx) {
  std::mt19937_64 rng(7);
  for (int k = 0; k < 12; ++k) {
    cd::test::RandomModelOptions o;
    o.nbodies = 3 + k % 5;
    o.floatingBase = k % 3 == 0;
    o.fixedLinkProbability = 0.2;
    const std::string urdf = cd::test::randomUrdfString(rng, o);
    SCOPED_TRACE(urdf);
    const cd::Model model = cd::buildClusterModel(cd::parseUrdfString(urdf)).treeModel;
    CModel c;
    loadC(c, urdf, true);
    compareQueries(model, c.m);
    compareWithCxx(model, c, rng, 3);
  }
}

TEST(CApi, LoadOptions) {
  // The flag is rejected when the URDF has its own floating joint.
  char err[512];
  cdyn_model* m = reinterpret_cast<cdyn_model*>(0x1);
  EXPECT_EQ(cdyn_model_load(CDYN_ABI_VERSION, floatingTreePath().c_str(), CDYN_LOAD_FLOATING_BASE,
                            nullptr, &m, err, sizeof err),
            CDYN_ERR_PARSE);
  EXPECT_EQ(m, nullptr);
  EXPECT_NE(std::string(err).find("floating"), std::string::npos) << err;

  SKIP_WITHOUT_SHARED(pendulumPath());
  // Floating base added by the flag (the pendulum's base link gets a mass so that the floating
  // body is not massless) and a custom gravity.
  std::string urdf = cd::test::readTextFile(pendulumPath());
  const std::string base = "<link name=\"base_link\"/>";
  ASSERT_NE(urdf.find(base), std::string::npos);
  urdf.replace(urdf.find(base), base.size(),
               "<link name=\"base_link\"><inertial><mass value=\"3\"/><inertia ixx=\"0.1\" "
               "iyy=\"0.2\" izz=\"0.3\"/></inertial></link>");
  const double g[3] = {0.5, -1.0, -3.0};
  CModel c;
  loadC(c, urdf, true, CDYN_LOAD_FLOATING_BASE, g);
  cd::ModelOptions o;
  o.floatingBase = true;
  o.gravity = cd::Vec3(g[0], g[1], g[2]);
  const cd::Model model = cd::buildClusterModel(cd::parseUrdfString(urdf), o).treeModel;
  EXPECT_EQ(model.nq, 9);
  compareQueries(model, c.m);
  int type = -1;
  ASSERT_EQ(cdyn_model_joint_type(c.m, 0, &type), CDYN_OK);
  EXPECT_EQ(type, CDYN_JOINT_FLOATING);
  const char* name = nullptr;
  ASSERT_EQ(cdyn_model_joint_name(c.m, 0, &name), CDYN_OK);
  EXPECT_STREQ(name, "root_joint");
  std::mt19937_64 rng(3);
  compareWithCxx(model, c, rng, 3);
}

TEST(CApi, LoadErrors) {
  char err[512];
  cdyn_model* m = nullptr;
  // Version check.
  EXPECT_EQ(cdyn_model_load(CDYN_ABI_VERSION + 1, floatingTreePath().c_str(), 0, nullptr, &m, err,
                            sizeof err),
            CDYN_ERR_VERSION);
  EXPECT_NE(std::string(err).find("ABI"), std::string::npos) << err;
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(cdyn_check_version(CDYN_ABI_VERSION), CDYN_OK);
  EXPECT_EQ(cdyn_check_version(CDYN_ABI_VERSION + 1), CDYN_ERR_VERSION);
  // Missing file.
  EXPECT_EQ(
      cdyn_model_load(CDYN_ABI_VERSION, "/nonexistent/robot.urdf", 0, nullptr, &m, err, sizeof err),
      CDYN_ERR_PARSE);
  EXPECT_NE(std::string(err).find("/nonexistent/robot.urdf"), std::string::npos) << err;
  // Parse error in a string: "<string>:line: ..." .
  const std::string bad =
      "<robot name=\"r\">\n  <link name=\"a\"/>\n  <joint name=\"j\" "
      "type=\"revolute\"><parent link=\"a\"/><child link=\"zz\"/></joint>\n"
      "</robot>\n";
  EXPECT_EQ(cdyn_model_load_string(CDYN_ABI_VERSION, bad.data(), bad.size(), 0, nullptr, &m, err,
                                   sizeof err),
            CDYN_ERR_PARSE);
  EXPECT_EQ(std::string(err).rfind("<string>:3:", 0), 0u) << err;
  const std::string malformed = "<robot name=\"r\"><link name=\"a\">";
  EXPECT_EQ(cdyn_model_load_string(CDYN_ABI_VERSION, malformed.data(), malformed.size(), 0, nullptr,
                                   &m, err, sizeof err),
            CDYN_ERR_PARSE);
  EXPECT_NE(std::string(err).find("malformed XML"), std::string::npos) << err;
  // The error buffer is truncated, never overflowed; it may be absent.
  char small[8];
  std::memset(small, 'x', sizeof small);
  EXPECT_EQ(cdyn_model_load(CDYN_ABI_VERSION, "/nonexistent.urdf", 0, nullptr, &m, small, 8),
            CDYN_ERR_PARSE);
  EXPECT_EQ(std::strlen(small), 7u);
  EXPECT_EQ(cdyn_model_load(CDYN_ABI_VERSION, "/nonexistent.urdf", 0, nullptr, &m, nullptr, 0),
            CDYN_ERR_PARSE);
  // Argument errors.
  EXPECT_EQ(cdyn_model_load(CDYN_ABI_VERSION, nullptr, 0, nullptr, &m, err, sizeof err),
            CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_model_load(CDYN_ABI_VERSION, floatingTreePath().c_str(), 0, nullptr, nullptr, err,
                            sizeof err),
            CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_model_load_string(CDYN_ABI_VERSION, nullptr, 5, 0, nullptr, &m, err, sizeof err),
            CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_model_load(CDYN_ABI_VERSION, floatingTreePath().c_str(), 0x80, nullptr, &m, err,
                            sizeof err),
            CDYN_ERR_INVALID_ARGUMENT);
  const double nanG[3] = {0, std::nan(""), 0};
  EXPECT_EQ(
      cdyn_model_load(CDYN_ABI_VERSION, floatingTreePath().c_str(), 0, nanG, &m, err, sizeof err),
      CDYN_ERR_NON_FINITE);
  EXPECT_EQ(m, nullptr);
}

TEST(CApi, ComputeErrors) {
  // Expected messages name the Mini Cheetah's sizes and frames.
  SKIP_WITHOUT_SHARED(cheetahPath());
  SKIP_WITHOUT_SHARED(pendulumPath());
  CModel c, other;
  loadC(c, cheetahPath(), false);
  loadC(other, pendulumPath(), false);
  int nq = 0, nv = 0, nb = 0;
  ASSERT_EQ(cdyn_model_nq(c.m, &nq), CDYN_OK);
  ASSERT_EQ(cdyn_model_nv(c.m, &nv), CDYN_OK);
  ASSERT_EQ(cdyn_model_nbodies(c.m, &nb), CDYN_OK);
  std::vector<double> q(nq), v(nv, 0.1), tau(nv, 1.0), out(nv, 123.0), fext(6 * nb, 0.5);
  ASSERT_EQ(cdyn_neutral_configuration(c.m, c.ws, q.data(), nq), CDYN_OK);
  auto lastError = [&] { return std::string(cdyn_workspace_last_error(c.ws)); };

  // Sizes: the status, a message naming the argument, and the output untouched.
  EXPECT_EQ(cdyn_aba(c.m, c.ws, q.data(), nq - 1, v.data(), nv, tau.data(), nv, nullptr, 0,
                     out.data(), nv),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(lastError(), "q has length 18, expected 19");
  EXPECT_EQ(out[0], 123.0);
  EXPECT_EQ(cdyn_aba(c.m, c.ws, q.data(), nq, v.data(), nv, tau.data(), nv, nullptr, 0, out.data(),
                     nv + 1),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(cdyn_rnea(c.m, c.ws, q.data(), nq, v.data(), nv, tau.data(), nv, fext.data(), 6,
                      out.data(), nv),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_NE(lastError().find("fext"), std::string::npos);
  EXPECT_EQ(cdyn_rnea(c.m, c.ws, q.data(), nq, v.data(), nv, tau.data(), nv, nullptr, 6 * nb,
                      out.data(), nv),
            CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_crba(c.m, c.ws, q.data(), nq, out.data(), nv - 1), CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(cdyn_frame_jacobian(c.m, c.ws, 0, CDYN_LOCAL, out.data(), 5), CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(out[0], 123.0);
  // A success clears the message.
  ASSERT_EQ(cdyn_aba(c.m, c.ws, q.data(), nq, v.data(), nv, tau.data(), nv, fext.data(), 6 * nb,
                     out.data(), nv),
            CDYN_OK);
  EXPECT_EQ(lastError(), "");

  // Null pointers.
  EXPECT_EQ(
      cdyn_aba(c.m, c.ws, nullptr, nq, v.data(), nv, tau.data(), nv, nullptr, 0, out.data(), nv),
      CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(lastError(), "q is NULL");
  EXPECT_EQ(
      cdyn_aba(c.m, c.ws, q.data(), nq, v.data(), nv, tau.data(), nv, nullptr, 0, nullptr, nv),
      CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_aba(nullptr, c.ws, q.data(), nq, v.data(), nv, tau.data(), nv, nullptr, 0,
                     out.data(), nv),
            CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_aba(c.m, nullptr, q.data(), nq, v.data(), nv, tau.data(), nv, nullptr, 0,
                     out.data(), nv),
            CDYN_ERR_NULL_POINTER);
  double e = 0;
  EXPECT_EQ(cdyn_kinetic_energy(c.m, c.ws, q.data(), nq, v.data(), nv, nullptr),
            CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_center_of_mass(c.m, c.ws, q.data(), nq, nullptr), CDYN_ERR_NULL_POINTER);

  // Non-finite values and non-unit quaternions.
  std::vector<double> bad = v;
  bad[3] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(
      cdyn_aba(c.m, c.ws, q.data(), nq, bad.data(), nv, tau.data(), nv, nullptr, 0, out.data(), nv),
      CDYN_ERR_NON_FINITE);
  EXPECT_EQ(lastError(), "v[3] is not finite");
  EXPECT_EQ(cdyn_kinetic_energy(c.m, c.ws, q.data(), nq, bad.data(), nv, &e), CDYN_ERR_NON_FINITE);
  std::vector<double> badF = fext;
  badF[13] = std::nan("");
  EXPECT_EQ(cdyn_rnea(c.m, c.ws, q.data(), nq, v.data(), nv, tau.data(), nv, badF.data(), 6 * nb,
                      out.data(), nv),
            CDYN_ERR_NON_FINITE);
  std::vector<double> q2(nq);
  EXPECT_EQ(cdyn_integrate(c.m, c.ws, q.data(), nq, v.data(), nv, std::nan(""), q2.data(), nq),
            CDYN_ERR_NON_FINITE);
  std::vector<double> badQ = q;
  badQ[6] = 0.5;  // floating-base quaternion w
  EXPECT_EQ(cdyn_aba(c.m, c.ws, badQ.data(), nq, v.data(), nv, tau.data(), nv, nullptr, 0,
                     out.data(), nv),
            CDYN_ERR_NOT_UNIT_QUATERNION);
  EXPECT_EQ(cdyn_potential_energy(c.m, c.ws, badQ.data(), nq, &e), CDYN_ERR_NOT_UNIT_QUATERNION);
  EXPECT_EQ(cdyn_integrate(c.m, c.ws, badQ.data(), nq, v.data(), nv, 0.1, q2.data(), nq),
            CDYN_ERR_NOT_UNIT_QUATERNION);
  ASSERT_EQ(cdyn_normalize_configuration(c.m, c.ws, badQ.data(), nq), CDYN_OK);
  EXPECT_EQ(badQ[6], 1.0);
  badQ[0] = std::nan("");
  EXPECT_EQ(cdyn_normalize_configuration(c.m, c.ws, badQ.data(), nq), CDYN_ERR_NON_FINITE);

  // Handles: mismatch, wrong kind, freed.
  EXPECT_EQ(cdyn_aba(c.m, other.ws, q.data(), nq, v.data(), nv, tau.data(), nv, nullptr, 0,
                     out.data(), nv),
            CDYN_ERR_WORKSPACE_MISMATCH);
  EXPECT_NE(std::string(cdyn_workspace_last_error(other.ws)).find("another model"),
            std::string::npos);
  cdyn_workspace* fake = reinterpret_cast<cdyn_workspace*>(c.m);
  EXPECT_EQ(
      cdyn_aba(c.m, fake, q.data(), nq, v.data(), nv, tau.data(), nv, nullptr, 0, out.data(), nv),
      CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(cdyn_aba(reinterpret_cast<cdyn_model*>(c.ws), c.ws, q.data(), nq, v.data(), nv,
                     tau.data(), nv, nullptr, 0, out.data(), nv),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(cdyn_model_nq(reinterpret_cast<cdyn_model*>(c.ws), &nq), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(cdyn_workspace_last_error(nullptr), "workspace is NULL");
  EXPECT_STREQ(cdyn_workspace_last_error(fake), "not a valid cdyn_workspace handle");

  // Frames: indices, reference frames, and the forward-kinematics requirement.
  double m6[6], R[9], p[3];
  ASSERT_EQ(
      cdyn_rnea(c.m, c.ws, q.data(), nq, v.data(), nv, tau.data(), nv, nullptr, 0, out.data(), nv),
      CDYN_OK);
  EXPECT_EQ(cdyn_frame_placement(c.m, c.ws, 0, R, 3, p), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_NE(lastError().find("cdyn_forward_kinematics"), std::string::npos);
  ASSERT_EQ(cdyn_forward_kinematics(c.m, c.ws, q.data(), nq, nullptr, 0, nullptr, 0), CDYN_OK);
  EXPECT_EQ(cdyn_frame_placement(c.m, c.ws, 0, R, 3, p), CDYN_OK);
  EXPECT_EQ(cdyn_frame_placement(c.m, c.ws, 0, R, 2, p), CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(cdyn_frame_placement_matrix(c.m, c.ws, 0, R, 3), CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(cdyn_frame_velocity(c.m, c.ws, 0, CDYN_LOCAL, m6), CDYN_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(cdyn_forward_kinematics(c.m, c.ws, q.data(), nq, v.data(), nv, nullptr, 0), CDYN_OK);
  EXPECT_EQ(cdyn_frame_velocity(c.m, c.ws, 0, CDYN_LOCAL, m6), CDYN_OK);
  EXPECT_EQ(cdyn_frame_acceleration(c.m, c.ws, 0, CDYN_LOCAL, m6), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(cdyn_frame_velocity(c.m, c.ws, 0, 3, m6), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(cdyn_frame_velocity(c.m, c.ws, 0, -1, m6), CDYN_ERR_INVALID_ARGUMENT);
  int nf = 0;
  ASSERT_EQ(cdyn_model_nframes(c.m, &nf), CDYN_OK);
  EXPECT_EQ(cdyn_frame_velocity(c.m, c.ws, nf, CDYN_LOCAL, m6), CDYN_ERR_INVALID_INDEX);
  EXPECT_EQ(lastError(), "frame index 14 out of range [0, 14)");
  EXPECT_EQ(cdyn_frame_velocity(c.m, c.ws, -1, CDYN_LOCAL, m6), CDYN_ERR_INVALID_INDEX);
  EXPECT_EQ(cdyn_forward_kinematics(c.m, c.ws, q.data(), nq, nullptr, 0, v.data(), nv),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(cdyn_frame_placement(c.m, c.ws, 0, R, 3, p), CDYN_ERR_INVALID_ARGUMENT);  // failed FK

  // Queries.
  const char* s = nullptr;
  int k = 0;
  EXPECT_EQ(cdyn_model_body_name(c.m, nb, &s), CDYN_ERR_INVALID_INDEX);
  EXPECT_EQ(cdyn_model_body_name(c.m, -1, &s), CDYN_ERR_INVALID_INDEX);
  EXPECT_EQ(cdyn_model_body_name(c.m, 0, nullptr), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_model_joint_index(c.m, "no such joint", &k), CDYN_ERR_NOT_FOUND);
  EXPECT_EQ(k, -1);
  EXPECT_EQ(cdyn_model_frame_index(c.m, nullptr, &k), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_model_position_name(c.m, nq, &s), CDYN_ERR_INVALID_INDEX);
  EXPECT_EQ(cdyn_model_velocity_index(c.m, "base_to_floating_base:wz", &k), CDYN_OK);
  EXPECT_EQ(k, 2);
  EXPECT_EQ(cdyn_model_nq(nullptr, &k), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_model_nq(c.m, nullptr), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_model_velocity_limits(c.m, out.data(), nv - 1), CDYN_ERR_INVALID_SIZE);
}

TEST(CApi, SingularInertiaIsAStatus) {
  // A massless leaf on a revolute joint: the articulated inertia along the joint is 0.
  const std::string urdf =
      "<robot name=\"r\"><link name=\"base\"/>"
      "<link name=\"a\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\"/>"
      "</inertial></link><link name=\"tip\"/>"
      "<joint name=\"j1\" type=\"continuous\"><parent link=\"base\"/><child link=\"a\"/>"
      "<axis xyz=\"0 0 1\"/></joint>"
      "<joint name=\"j2\" type=\"continuous\"><parent link=\"a\"/><child link=\"tip\"/>"
      "<axis xyz=\"0 0 1\"/></joint></robot>";
  CModel c;
  loadC(c, urdf, true);
  double q[2] = {0, 0}, v[2] = {0, 0}, tau[2] = {1, 1}, ddq[2];
  EXPECT_EQ(cdyn_aba(c.m, c.ws, q, 2, v, 2, tau, 2, nullptr, 0, ddq, 2),
            CDYN_ERR_NOT_POSITIVE_DEFINITE);
  EXPECT_NE(std::string(cdyn_workspace_last_error(c.ws)).find("'tip'"), std::string::npos)
      << cdyn_workspace_last_error(c.ws);
}

TEST(CApi, WorkspaceInCallerMemory) {
  CModel c;
  loadC(c, floatingTreePath(), false);
  size_t size = 0;
  ASSERT_EQ(cdyn_workspace_size(c.m, &size), CDYN_OK);
  ASSERT_GT(size, 1000u);
  std::vector<unsigned char> mem(size + 1);
  cdyn_workspace* ws = nullptr;
  EXPECT_EQ(cdyn_workspace_init_in(c.m, mem.data(), 100, &ws), CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(ws, nullptr);
  EXPECT_EQ(cdyn_workspace_init_in(c.m, nullptr, size, &ws), CDYN_ERR_NULL_POINTER);
  // Any alignment: the size includes the slack.
  for (int offset = 0; offset < 2; ++offset) {
    ASSERT_EQ(cdyn_workspace_init_in(c.m, mem.data() + offset, size, &ws), CDYN_OK);
    ASSERT_GE(reinterpret_cast<unsigned char*>(ws), mem.data());
    ASSERT_LT(reinterpret_cast<unsigned char*>(ws), mem.data() + mem.size());
    const cd::Model model = cd::loadModel(floatingTreePath()).treeModel;
    std::mt19937_64 rng(11);
    CModel view;  // borrow the caller-memory workspace for the comparison
    view.m = c.m;
    view.ws = ws;
    compareWithCxx(model, view, rng, 2);
    view.m = nullptr;
    view.ws = nullptr;
    // The model cannot be freed while a workspace exists.
    EXPECT_EQ(cdyn_model_free(c.m), CDYN_ERR_INVALID_ARGUMENT);
    ASSERT_EQ(cdyn_workspace_free(ws), CDYN_OK);
    // A freed caller-memory workspace is recognized.
    EXPECT_EQ(cdyn_workspace_free(ws), CDYN_ERR_INVALID_ARGUMENT);
    double q[19];
    EXPECT_EQ(cdyn_neutral_configuration(c.m, ws, q, 19), CDYN_ERR_INVALID_ARGUMENT);
  }
  EXPECT_EQ(cdyn_workspace_free(nullptr), CDYN_OK);
  EXPECT_EQ(cdyn_model_free(nullptr), CDYN_OK);
  EXPECT_EQ(cdyn_workspace_create(nullptr, &ws), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_workspace_create(c.m, nullptr), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_workspace_size(c.m, nullptr), CDYN_ERR_NULL_POINTER);
}

TEST(CApi, VersionAndStatusStrings) {
  EXPECT_EQ(cdyn_version(), CDYN_VERSION_NUMBER);
  EXPECT_STREQ(cdyn_version_string(), "0.2.0");
  const cdyn_status all[] = {CDYN_OK,
                             CDYN_ERR_INVALID_SIZE,
                             CDYN_ERR_NON_FINITE,
                             CDYN_ERR_NOT_UNIT_QUATERNION,
                             CDYN_ERR_NOT_POSITIVE_DEFINITE,
                             CDYN_ERR_INVALID_INDEX,
                             CDYN_ERR_CONSTRAINT_FAILURE,
                             CDYN_ERR_WORKSPACE_MISMATCH,
                             CDYN_ERR_INVALID_ARGUMENT,
                             CDYN_ERR_NULL_POINTER,
                             CDYN_ERR_VERSION,
                             CDYN_ERR_PARSE,
                             CDYN_ERR_INTERNAL,
                             CDYN_ERR_NOT_FOUND,
                             CDYN_ERR_OUT_OF_MEMORY};
  for (cdyn_status s : all) {
    EXPECT_STRNE(cdyn_status_string(s), "unknown status") << s;
    if (s > 0 && s < 100)
      EXPECT_STREQ(cdyn_status_string(s), cd::statusName(static_cast<cd::Status>(s)));
  }
  EXPECT_STREQ(cdyn_status_string(static_cast<cdyn_status>(77)), "unknown status");
  EXPECT_STREQ(cdyn_status_string(static_cast<cdyn_status>(-1)), "unknown status");
}

// =============================================================================================
// Cluster tree (loops): queries, independent-coordinate dynamics, loop closure, errors.
// =============================================================================================

/// The bundled models (models/*.urdf) and the shared URDF+ models with chords (those present).
std::vector<std::string> loopModelFiles() {
  std::vector<std::string> files;
  for (const char* name :
       {"cd_belt_leg", "cd_differential", "cd_four_bar", "cd_geared_chain", "cd_mimic_gripper",
        "cd_quadruped", "cd_quadruped_approximate", "cd_six_bar"})
    files.push_back(cd::test::modelsPath(std::string(name) + ".urdf"));
  for (const char* name :
       {"four_bar", "mini_cheetah", "mit_humanoid", "mit_humanoid_leg", "revolute_rotor_chain"}) {
    const std::string path = sharedPath(std::string("urdfplus/") + name + ".urdf");
    if (std::filesystem::exists(path))
      files.push_back(path);
    else
      std::cout << "[   NOTE   ] missing " << path << ": bundled models only\n";
  }
  return files;
}

/// Generated URDF+ mechanisms: one per mechanism kind, fixed and floating base.
std::vector<std::string> generatedLoopUrdfs() {
  std::vector<std::string> out;
  int seed = 0;
  for (auto kind : cd::testgen::allMechanismKinds()) {
    for (int fl = 0; fl < 2; ++fl) {
      std::mt19937_64 rng(5100 + seed++);
      cd::testgen::GeneratorOptions o;
      o.floatingBase = fl;
      o.treeLinks = 2;
      o.mechanisms = 1;
      o.kinds = {kind};
      o.robotName = std::string("capi_") + cd::testgen::mechanismName(kind);
      out.push_back(cd::testgen::generateLoopModel(rng, o).urdf);
    }
  }
  return out;
}

std::string fourBarPath() { return cd::test::modelsPath("cd_four_bar.urdf"); }

/// A random closed spanning state, made with the C++ API on its own workspace `gen`: the
/// independent coordinates of loop clusters move at most 0.3 from the reference configuration
/// (support::randomClosedStateNearReference, up to 40 draws).
using cd::support::ClosedState;
bool closedStateNearReference(const cd::ClusterModel& cm, cd::ClusterData& gen,
                              std::mt19937_64& rng, ClosedState& s) {
  return cd::support::randomClosedStateNearReference(cm, gen, rng, s, 0.3, 40);
}

/// The whole-model G (nv x ny, block diagonal) and g after clusterConstraintMatrices.
void assembleConstraint(const cd::ClusterModel& cm, const cd::ClusterData& data, cd::MatX& G,
                        cd::VecX& g) {
  G.setZero(cm.treeModel.nv, cm.ny);
  g.setZero(cm.treeModel.nv);
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const cd::Cluster& c = cm.clusters[k];
    G.block(c.v0, c.y0, c.nv, c.ny) = data.explicitMatrix(k);
    g.segment(c.v0, c.nv) = data.explicitBias(k);
  }
}

/// Text query: whole, sized by a first call, and truncated.
template <typename F>
void compareText(F&& query, const cdyn_model* m, const std::string& expected) {
  size_t needed = 0;
  ASSERT_EQ(query(m, nullptr, 0, &needed), CDYN_OK);
  EXPECT_EQ(needed, expected.size() + 1);
  std::vector<char> buf(needed, 'x');
  ASSERT_EQ(query(m, buf.data(), buf.size(), nullptr), CDYN_OK);
  EXPECT_EQ(std::string(buf.data()), expected);
  char small[6];
  ASSERT_EQ(query(m, small, sizeof small, &needed), CDYN_OK);
  EXPECT_EQ(std::string(small), expected.substr(0, 5));
  EXPECT_EQ(query(m, nullptr, 3, &needed), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(query(nullptr, buf.data(), buf.size(), &needed), CDYN_ERR_NULL_POINTER);
}

/// Cluster-tree queries agree with the C++ cluster model.
void compareClusterQueries(const cd::ClusterModel& cm, const cdyn_model* m) {
  int n = -1;
  ASSERT_EQ(cdyn_model_nclusters(m, &n), CDYN_OK);
  EXPECT_EQ(n, static_cast<int>(cm.clusters.size()));
  ASSERT_EQ(cdyn_model_ny(m, &n), CDYN_OK);
  EXPECT_EQ(n, cm.ny);
  ASSERT_EQ(cdyn_model_nyq(m, &n), CDYN_OK);
  EXPECT_EQ(n, cm.nyq);
  ASSERT_EQ(cdyn_model_nloops(m, &n), CDYN_OK);
  EXPECT_EQ(n, static_cast<int>(cm.loops.size()));
  ASSERT_EQ(cdyn_model_nrelations(m, &n), CDYN_OK);
  EXPECT_EQ(n, static_cast<int>(cm.relations.size()));
  const char* s = nullptr;
  for (int i = 0; i < cm.nyq; ++i) {
    int k = -1;
    ASSERT_EQ(cdyn_model_independent_position_name(m, i, &s), CDYN_OK);
    EXPECT_EQ(std::string(s), cm.independentPositionNames[i]);
    ASSERT_EQ(cdyn_model_independent_position_index(m, s, &k), CDYN_OK);
    EXPECT_EQ(k, i);
  }
  for (int i = 0; i < cm.ny; ++i) {
    int k = -1;
    ASSERT_EQ(cdyn_model_independent_velocity_name(m, i, &s), CDYN_OK);
    EXPECT_EQ(std::string(s), cm.independentVelocityNames[i]);
    ASSERT_EQ(cdyn_model_independent_velocity_index(m, s, &k), CDYN_OK);
    EXPECT_EQ(k, i);
  }
  EXPECT_EQ(cdyn_model_independent_position_name(m, cm.nyq, &s), CDYN_ERR_INVALID_INDEX);
  EXPECT_EQ(cdyn_model_independent_velocity_name(m, -1, &s), CDYN_ERR_INVALID_INDEX);
  std::vector<int> iq(cm.nyq + 1, -9), iv(cm.ny + 1, -9);
  ASSERT_EQ(cdyn_model_independent_indices(m, iq.data(), cm.nyq, iv.data(), cm.ny), CDYN_OK);
  for (int i = 0; i < cm.nyq; ++i) EXPECT_EQ(iq[i], cm.independentPosition[i]);
  for (int i = 0; i < cm.ny; ++i) EXPECT_EQ(iv[i], cm.independentVelocity[i]);
  EXPECT_EQ(iq[cm.nyq], -9);
  EXPECT_EQ(cdyn_model_independent_indices(m, nullptr, 0, iv.data(), cm.ny), CDYN_OK);
  EXPECT_EQ(cdyn_model_independent_indices(m, iq.data(), cm.nyq + 1, nullptr, 0),
            CDYN_ERR_INVALID_SIZE);
  std::vector<double> qref(cm.treeModel.nq);
  ASSERT_EQ(cdyn_model_reference_configuration(m, qref.data(), cm.treeModel.nq), CDYN_OK);
  EXPECT_SAME(qref.data(), cm.qReference.data(), cm.treeModel.nq);
  EXPECT_EQ(cdyn_model_reference_configuration(m, qref.data(), cm.treeModel.nq - 1),
            CDYN_ERR_INVALID_SIZE);
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const cd::Cluster& c = cm.clusters[k];
    ASSERT_EQ(cdyn_model_cluster_name(m, k, &s), CDYN_OK);
    EXPECT_EQ(std::string(s), c.name);
    int idx = -1;
    ASSERT_EQ(cdyn_model_cluster_index(m, s, &idx), CDYN_OK);
    EXPECT_EQ(cm.clusters[idx].name, c.name);  // the first cluster of that name
    int parent, output, first, nb, kind;
    ASSERT_EQ(cdyn_model_cluster_info(m, k, &parent, &output, &first, &nb, &kind), CDYN_OK);
    EXPECT_EQ(parent, c.parent);
    EXPECT_EQ(output, c.outputBody);
    EXPECT_EQ(first, c.firstBody);
    EXPECT_EQ(nb, c.nbodies);
    EXPECT_EQ(kind, c.implicit()      ? CDYN_CLUSTER_IMPLICIT
                    : c.constrained() ? CDYN_CLUSTER_EXPLICIT
                                      : CDYN_CLUSTER_UNCONSTRAINED);
    EXPECT_EQ(cdyn_model_cluster_info(m, k, nullptr, nullptr, nullptr, nullptr, nullptr), CDYN_OK);
    int q0, nq, v0, nv, yq0, nyq, y0, ny;
    ASSERT_EQ(cdyn_model_cluster_coordinates(m, k, &q0, &nq, &v0, &nv, &yq0, &nyq, &y0, &ny),
              CDYN_OK);
    EXPECT_EQ(q0, c.q0);
    EXPECT_EQ(nq, c.nq);
    EXPECT_EQ(v0, c.v0);
    EXPECT_EQ(nv, c.nv);
    EXPECT_EQ(yq0, c.yq0);
    EXPECT_EQ(nyq, c.nyq);
    EXPECT_EQ(y0, c.y0);
    EXPECT_EQ(ny, c.ny);
  }
  const int ncl = static_cast<int>(cm.clusters.size());
  EXPECT_EQ(cdyn_model_cluster_name(m, ncl, &s), CDYN_ERR_INVALID_INDEX);
  EXPECT_EQ(cdyn_model_cluster_info(m, -1, nullptr, nullptr, nullptr, nullptr, nullptr),
            CDYN_ERR_INVALID_INDEX);
  EXPECT_EQ(cdyn_model_cluster_coordinates(m, ncl, nullptr, nullptr, nullptr, nullptr, nullptr,
                                           nullptr, nullptr, nullptr),
            CDYN_ERR_INVALID_INDEX);
  for (int b = 0; b < cm.treeModel.nbodies; ++b) {
    int k = -2;
    ASSERT_EQ(cdyn_model_body_cluster(m, b, &k), CDYN_OK);
    EXPECT_EQ(k, cm.bodyCluster[b]);
  }
  EXPECT_EQ(cdyn_model_body_cluster(m, cm.treeModel.nbodies, &n), CDYN_ERR_INVALID_INDEX);
  compareText(cdyn_model_describe, m, cd::describeModel(cm.treeModel));
  compareText(cdyn_model_describe_clusters, m, cd::describeClusterTree(cm));
  compareText(cdyn_model_cluster_tree_dot, m, cd::clusterTreeDot(cm));
}

/// Every cluster compute function against C++ on random closed states (C and C++ warm starts
/// go through the same sequence of solves).
void compareClusterCompute(const cd::ClusterModel& cm, const cdyn_model* m, cdyn_workspace* ws,
                           std::mt19937_64& rng, int samples) {
  const int nq = cm.treeModel.nq, nv = cm.treeModel.nv, ny = cm.ny, nyq = cm.nyq,
            nb = cm.treeModel.nbodies;
  cd::ClusterData data(cm), gen(cm);
  auto err = [&] { return std::string(cdyn_workspace_last_error(ws)); };
  for (int sample = 0; sample < samples; ++sample) {
    SCOPED_TRACE("sample " + std::to_string(sample));
    ClosedState st;
    ASSERT_TRUE(closedStateNearReference(cm, gen, rng, st));
    const cd::VecX tauY = cd::test::randomVector(ny, rng);
    const cd::VecX tauS = cd::test::randomVector(nv, rng);
    const cd::VecX ydd = cd::test::randomVector(ny, rng);
    const std::vector<cd::Force> fx = cd::test::randomForces(cm.treeModel, rng);
    std::vector<double> fext(6 * nb);
    for (int i = 0; i < nb; ++i)
      for (int r = 0; r < 6; ++r) fext[6 * i + r] = fx[i][r];
    const double *q = st.q.data(), *v = st.v.data();
    std::vector<double> oy(ny + 1, -5.0), ov(nv + 1, -5.0), oq(nq + 1, -5.0), oyq(nyq + 1, -5.0);

    // Forward dynamics: independent efforts, with and without fext and the qdd output.
    ASSERT_EQ(
        cdyn_ce_aba(m, ws, q, nq, v, nv, tauY.data(), ny, nullptr, 0, oy.data(), ny, ov.data(), nv),
        CDYN_OK)
        << err();
    ASSERT_EQ(cd::ceAba(cm, data, st.q, st.v, tauY), cd::Status::Ok);
    EXPECT_SAME(oy.data(), data.ydd.data(), ny);
    EXPECT_SAME(ov.data(), data.qdd.data(), nv);
    EXPECT_EQ(oy[ny], -5.0);
    EXPECT_EQ(ov[nv], -5.0);
    ASSERT_EQ(cdyn_ce_aba(m, ws, q, nq, v, nv, tauY.data(), ny, fext.data(), 6 * nb, oy.data(), ny,
                          nullptr, 0),
              CDYN_OK);
    ASSERT_EQ(cd::ceAba(cm, data, st.q, st.v, tauY, fx.data()), cd::Status::Ok);
    EXPECT_SAME(oy.data(), data.ydd.data(), ny);
    // ... spanning efforts.
    ASSERT_EQ(cdyn_ce_aba_spanning_forces(m, ws, q, nq, v, nv, tauS.data(), nv, fext.data(), 6 * nb,
                                          oy.data(), ny, ov.data(), nv),
              CDYN_OK);
    ASSERT_EQ(cd::ceAbaSpanningForces(cm, data, st.q, st.v, tauS, fx.data()), cd::Status::Ok);
    EXPECT_SAME(oy.data(), data.ydd.data(), ny);
    EXPECT_SAME(ov.data(), data.qdd.data(), nv);
    // Inverse dynamics.
    ASSERT_EQ(cdyn_ce_rnea(m, ws, q, nq, v, nv, ydd.data(), ny, fext.data(), 6 * nb, oy.data(), ny,
                           ov.data(), nv),
              CDYN_OK);
    ASSERT_EQ(cd::ceRnea(cm, data, st.q, st.v, ydd, fx.data()), cd::Status::Ok);
    EXPECT_SAME(oy.data(), data.tauY.data(), ny);
    EXPECT_SAME(ov.data(), data.qdd.data(), nv);
    ASSERT_EQ(
        cdyn_ce_rnea(m, ws, q, nq, v, nv, ydd.data(), ny, nullptr, 0, oy.data(), ny, nullptr, 0),
        CDYN_OK);
    ASSERT_EQ(cd::ceRnea(cm, data, st.q, st.v, ydd), cd::Status::Ok);
    EXPECT_SAME(oy.data(), data.tauY.data(), ny);
    // H and C (leading dimension larger than ny: the padding stays untouched).
    const int ldh = ny + 2;
    std::vector<double> H(ldh * std::max(ny, 1), -7.0);
    ASSERT_EQ(cdyn_cluster_mass_matrix(m, ws, q, nq, H.data(), ldh), CDYN_OK);
    ASSERT_EQ(cd::clusterMassMatrix(cm, data, st.q), cd::Status::Ok);
    for (int j = 0; j < ny; ++j) {
      EXPECT_SAME(H.data() + j * ldh, data.H.col(j).data(), ny);
      for (int i = ny; i < ldh; ++i) EXPECT_EQ(H[i + j * ldh], -7.0) << "padding overwritten";
    }
    ASSERT_EQ(cdyn_cluster_bias(m, ws, q, nq, v, nv, oy.data(), ny), CDYN_OK);
    ASSERT_EQ(cd::clusterBias(cm, data, st.q, st.v), cd::Status::Ok);
    EXPECT_SAME(oy.data(), data.C.data(), ny);
    // G, g of the model and of each cluster.
    const int ldg = nv + 1;
    std::vector<double> G(ldg * std::max(ny, 1), -7.0), g(nv);
    ASSERT_EQ(cdyn_constraint_matrices(m, ws, q, nq, v, nv, G.data(), ldg, g.data(), nv), CDYN_OK);
    ASSERT_EQ(cd::clusterConstraintMatrices(cm, data, st.q, st.v), cd::Status::Ok);
    cd::MatX Gc;
    cd::VecX gc;
    assembleConstraint(cm, data, Gc, gc);
    for (int j = 0; j < ny; ++j) {
      EXPECT_SAME(G.data() + j * ldg, Gc.col(j).data(), nv);
      EXPECT_EQ(G[nv + j * ldg], -7.0) << "padding overwritten";
    }
    EXPECT_SAME(g.data(), gc.data(), nv);
    ASSERT_EQ(cdyn_constraint_matrices(m, ws, q, nq, v, nv, G.data(), ldg, nullptr, 0), CDYN_OK);
    for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
      const cd::Cluster& c = cm.clusters[k];
      std::vector<double> Gk(std::max(1, c.nv) * std::max(c.ny, 1)), gk(c.nv);
      ASSERT_EQ(cdyn_cluster_constraint_matrices(m, ws, k, q, nq, v, nv, Gk.data(),
                                                 std::max(1, c.nv), gk.data(), c.nv),
                CDYN_OK);
      for (int j = 0; j < c.ny; ++j)
        EXPECT_SAME(Gk.data() + j * std::max(1, c.nv), data.explicitMatrix(k).col(j).data(), c.nv);
      EXPECT_SAME(gk.data(), data.explicitBias(k).data(), c.nv);
    }
    // Coordinates.
    ASSERT_EQ(cdyn_spanning_to_independent(m, ws, q, nq, v, nv, oyq.data(), nyq, oy.data(), ny),
              CDYN_OK);
    cd::VecX yc(nyq), ydc(ny);
    ASSERT_EQ(cd::spanningToIndependent(cm, data, st.q, st.v, yc, ydc), cd::Status::Ok);
    EXPECT_SAME(oyq.data(), yc.data(), nyq);
    EXPECT_SAME(oy.data(), ydc.data(), ny);
    // Position solves: with a guess, then warm-started from the previous solution.
    const cd::VecX& qref = cm.qReference;
    ASSERT_EQ(cdyn_solve_loop_closure(m, ws, st.y.data(), nyq, qref.data(), nq, oq.data(), nq),
              CDYN_OK)
        << err();
    data.q = qref;
    ASSERT_EQ(cd::solveLoopClosure(cm, data, st.y), cd::Status::Ok);
    EXPECT_SAME(oq.data(), data.q.data(), nq);
    EXPECT_EQ(oq[nq], -5.0);
    int iterations = -1;
    double residual = -1.0;
    ASSERT_EQ(cdyn_last_loop_closure(m, ws, &iterations, &residual), CDYN_OK);
    EXPECT_EQ(iterations, data.lastIterations);
    EXPECT_EQ(residual, data.lastResidual);
    EXPECT_EQ(cdyn_last_loop_closure(m, ws, nullptr, nullptr), CDYN_OK);
    ASSERT_EQ(cdyn_solve_loop_closure(m, ws, st.y.data(), nyq, nullptr, 0, oq.data(), nq), CDYN_OK);
    ASSERT_EQ(cd::solveLoopClosure(cm, data, st.y), cd::Status::Ok);
    EXPECT_SAME(oq.data(), data.q.data(), nq);
    ASSERT_EQ(cdyn_independent_to_spanning(m, ws, st.y.data(), nyq, st.ydot.data(), ny, nullptr, 0,
                                           oq.data(), nq, ov.data(), nv),
              CDYN_OK);
    ASSERT_EQ(cd::independentToSpanning(cm, data, st.y, st.ydot), cd::Status::Ok);
    EXPECT_SAME(oq.data(), data.q.data(), nq);
    EXPECT_SAME(ov.data(), data.v.data(), nv);
    ASSERT_EQ(cdyn_independent_to_spanning(m, ws, st.y.data(), nyq, st.ydot.data(), ny, qref.data(),
                                           nq, oq.data(), nq, ov.data(), nv),
              CDYN_OK);
    data.q = qref;
    ASSERT_EQ(cd::independentToSpanning(cm, data, st.y, st.ydot), cd::Status::Ok);
    EXPECT_SAME(oq.data(), data.q.data(), nq);
    EXPECT_SAME(ov.data(), data.v.data(), nv);
    // Forward dynamics from (y, ydot), with every optional output and with none.
    std::vector<double> oq2(nq), ov2(nv), oa2(nv);
    ASSERT_EQ(cdyn_ce_aba_independent(m, ws, st.y.data(), nyq, st.ydot.data(), ny, tauY.data(), ny,
                                      fext.data(), 6 * nb, oy.data(), ny, oq2.data(), nq,
                                      ov2.data(), nv, oa2.data(), nv),
              CDYN_OK)
        << err();
    ASSERT_EQ(cd::ceAbaIndependent(cm, data, st.y, st.ydot, tauY, fx.data()), cd::Status::Ok);
    EXPECT_SAME(oy.data(), data.ydd.data(), ny);
    EXPECT_SAME(oq2.data(), data.q.data(), nq);
    EXPECT_SAME(ov2.data(), data.v.data(), nv);
    EXPECT_SAME(oa2.data(), data.qdd.data(), nv);
    ASSERT_EQ(
        cdyn_ce_aba_independent(m, ws, st.y.data(), nyq, st.ydot.data(), ny, tauY.data(), ny,
                                nullptr, 0, oy.data(), ny, nullptr, 0, nullptr, 0, nullptr, 0),
        CDYN_OK);
    ASSERT_EQ(cd::ceAbaIndependent(cm, data, st.y, st.ydot, tauY), cd::Status::Ok);
    EXPECT_SAME(oy.data(), data.ydd.data(), ny);
    // Projection of a perturbed state (outputs aliasing the inputs).
    cd::VecX qp = cd::integrate(cm.treeModel, st.q, cd::test::randomVector(nv, rng), 0.01);
    const cd::VecX vp = st.v + 0.1 * cd::test::randomVector(nv, rng);
    std::vector<double> qa(qp.data(), qp.data() + nq), va(vp.data(), vp.data() + nv);
    ASSERT_EQ(cdyn_project_to_constraints(m, ws, qa.data(), nq, va.data(), nv, qa.data(), nq,
                                          va.data(), nv),
              CDYN_OK)
        << err();
    ASSERT_EQ(cd::projectToConstraints(cm, data, qp, vp), cd::Status::Ok);
    EXPECT_SAME(qa.data(), data.q.data(), nq);
    EXPECT_SAME(va.data(), data.v.data(), nv);
    EXPECT_EQ(err(), "");
  }
}

TEST(CApiClusters, ModelsMatchCxx) {
  std::mt19937_64 rng(99);
  std::vector<std::string> files = loopModelFiles();
  for (const std::string& f : sharedTreeModelFiles()) files.push_back(f);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    const cd::ClusterModel cm = cd::loadModel(path);
    CModel c;
    loadC(c, path, false);
    compareQueries(cm.treeModel, c.m);
    compareClusterQueries(cm, c.m);
    compareClusterCompute(cm, c.m, c.ws, rng, 3);
    compareWithCxx(cm.treeModel, c, rng, 1);  // tree functions on the spanning tree
  }
}

TEST(CApiClusters, GeneratedLoopModelsMatchCxx) {
  std::mt19937_64 rng(5);
  for (const std::string& urdf : generatedLoopUrdfs()) {
    SCOPED_TRACE(urdf);
    const cd::ClusterModel cm = cd::buildClusterModel(cd::parseUrdfString(urdf));
    CModel c;
    loadC(c, urdf, true);
    compareClusterQueries(cm, c.m);
    compareClusterCompute(cm, c.m, c.ws, rng, 2);
  }
}

TEST(CApiClusters, CallerMemoryWorkspace) {
  const std::string path = cd::test::modelsPath("cd_six_bar.urdf");
  const cd::ClusterModel cm = cd::loadModel(path);
  CModel c;
  loadC(c, path, false);
  size_t size = 0;
  ASSERT_EQ(cdyn_workspace_size(c.m, &size), CDYN_OK);
  std::vector<unsigned char> mem(size + 3);
  cdyn_workspace* ws = nullptr;
  ASSERT_EQ(cdyn_workspace_init_in(c.m, mem.data() + 3, size, &ws), CDYN_OK);
  std::mt19937_64 rng(8);
  compareClusterCompute(cm, c.m, ws, rng, 3);
  ASSERT_EQ(cdyn_workspace_free(ws), CDYN_OK);
}

TEST(CApiClusters, TreeModelsReduceToTreeAlgorithms) {
  // No chords: ny = nv, y = q, G = identity, and CE-ABA = ABA.
  const std::string path = floatingTreePath();
  CModel c;
  loadC(c, path, false);
  int nq, nv, ny, nyq;
  ASSERT_EQ(cdyn_model_nq(c.m, &nq), CDYN_OK);
  ASSERT_EQ(cdyn_model_nv(c.m, &nv), CDYN_OK);
  ASSERT_EQ(cdyn_model_ny(c.m, &ny), CDYN_OK);
  ASSERT_EQ(cdyn_model_nyq(c.m, &nyq), CDYN_OK);
  ASSERT_EQ(ny, nv);
  ASSERT_EQ(nyq, nq);
  std::vector<double> q(nq), v(nv, 0.2), tau(nv, 0.5), a1(nv), a2(nv), G(nv * nv);
  ASSERT_EQ(cdyn_neutral_configuration(c.m, c.ws, q.data(), nq), CDYN_OK);
  ASSERT_EQ(
      cdyn_aba(c.m, c.ws, q.data(), nq, v.data(), nv, tau.data(), nv, nullptr, 0, a1.data(), nv),
      CDYN_OK);
  ASSERT_EQ(cdyn_ce_aba(c.m, c.ws, q.data(), nq, v.data(), nv, tau.data(), nv, nullptr, 0,
                        a2.data(), nv, nullptr, 0),
            CDYN_OK);
  for (int i = 0; i < nv; ++i) EXPECT_NEAR(a1[i], a2[i], 1e-9 * (1 + std::abs(a1[i])));
  ASSERT_EQ(
      cdyn_constraint_matrices(c.m, c.ws, q.data(), nq, v.data(), nv, G.data(), nv, nullptr, 0),
      CDYN_OK);
  for (int i = 0; i < nv; ++i)
    for (int j = 0; j < nv; ++j) EXPECT_EQ(G[i + j * nv], i == j ? 1.0 : 0.0);
}

TEST(CApiClusters, IgnoreConstraintsFlag) {
  std::string urdf = cd::test::readTextFile(fourBarPath());
  CModel c;
  loadC(c, urdf, true, CDYN_LOAD_IGNORE_CONSTRAINTS);
  cd::UrdfDescription d = cd::parseUrdfString(urdf);
  d.loops.clear();
  d.couplings.clear();
  for (auto& j : d.joints) {
    j.mimic.present = false;
    j.independentGiven = false;
  }
  const cd::ClusterModel cm = cd::buildClusterModel(d);
  EXPECT_EQ(cm.ny, 3);
  compareQueries(cm.treeModel, c.m);
  compareClusterQueries(cm, c.m);
  std::mt19937_64 rng(4);
  compareClusterCompute(cm, c.m, c.ws, rng, 2);
  int n = -1;
  ASSERT_EQ(cdyn_model_nloops(c.m, &n), CDYN_OK);
  EXPECT_EQ(n, 0);
  // Both flags together, and an unknown bit.
  CModel both;
  loadC(both, urdf, true, CDYN_LOAD_IGNORE_CONSTRAINTS | CDYN_LOAD_FLOATING_BASE);
  ASSERT_EQ(cdyn_model_ny(both.m, &n), CDYN_OK);
  EXPECT_EQ(n, 9);
  cdyn_model* m = nullptr;
  char err[256];
  EXPECT_EQ(cdyn_model_load_string(CDYN_ABI_VERSION, urdf.data(), urdf.size(), 16u, nullptr, &m,
                                   err, sizeof err),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(err, "unknown load flags 0x10");
  // A file the cluster builder rejects (two independent coordinates for a 1-dof loop) is a
  // parse error naming the element; the flag loads it as a tree.
  std::string bad = urdf;
  const std::string dep = "\"rocker_joint\" type=\"revolute\" independent=\"false\"";
  ASSERT_NE(bad.find(dep), std::string::npos);
  bad.replace(bad.find(dep), dep.size(), "\"rocker_joint\" type=\"revolute\" independent=\"true\"");
  EXPECT_EQ(cdyn_model_load_string(CDYN_ABI_VERSION, bad.data(), bad.size(), 0, nullptr, &m, err,
                                   sizeof err),
            CDYN_ERR_PARSE);
  EXPECT_EQ(m, nullptr);
  EXPECT_EQ(std::string(err).rfind("<string>:", 0), 0u) << err;
  EXPECT_NE(std::string(err).find("coupler_to_rocker"), std::string::npos) << err;
  CModel tree;
  loadC(tree, bad, true, CDYN_LOAD_IGNORE_CONSTRAINTS);
}

TEST(CApiClusters, LogLevel) {
  int level = -1;
  ASSERT_EQ(cdyn_get_log_level(&level), CDYN_OK);
  const int initial = level;
  EXPECT_EQ(cdyn_set_log_level(CDYN_LOG_ERROR), CDYN_OK);
  ASSERT_EQ(cdyn_get_log_level(&level), CDYN_OK);
  EXPECT_EQ(level, CDYN_LOG_ERROR);
  EXPECT_EQ(static_cast<int>(cd::logLevel()), CDYN_LOG_ERROR);
  EXPECT_EQ(cdyn_set_log_level(5), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(cdyn_set_log_level(-1), CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(cdyn_get_log_level(nullptr), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_set_log_level(initial), CDYN_OK);
}

TEST(CApiClusters, ComputeErrors) {
  const std::string path = cd::test::modelsPath("cd_quadruped.urdf");
  const cd::ClusterModel cm = cd::loadModel(path);
  CModel c, other;
  loadC(c, path, false);
  loadC(other, fourBarPath(), false);
  const int nq = cm.treeModel.nq, nv = cm.treeModel.nv, ny = cm.ny, nyq = cm.nyq,
            nb = cm.treeModel.nbodies;
  auto lastError = [&] { return std::string(cdyn_workspace_last_error(c.ws)); };
  std::vector<double> q(cm.qReference.data(), cm.qReference.data() + nq), v(nv, 0.0), y(nyq),
      yd(ny, 0.1), tau(ny, 1.0), tauS(nv, 1.0), out(nv + nq, 123.0), H(ny * ny), fext(6 * nb, 0.5);
  ASSERT_EQ(cdyn_spanning_to_independent(c.m, c.ws, q.data(), nq, v.data(), nv, y.data(), nyq,
                                         out.data(), ny),
            CDYN_OK);
  std::fill(out.begin(), out.end(), 123.0);
  double* o = out.data();

  // Sizes (status, message naming the argument, output untouched), including optional outputs.
  EXPECT_EQ(cdyn_ce_aba(c.m, c.ws, q.data(), nq, v.data(), nv, tau.data(), nv, nullptr, 0, o, ny,
                        nullptr, 0),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(lastError(), "tau has length 30, expected 18");
  EXPECT_EQ(cdyn_ce_aba(c.m, c.ws, q.data(), nq, v.data(), nv, tau.data(), ny, nullptr, 0, o, ny,
                        o + ny, nv - 1),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(lastError(), "qdd has length 29, expected 30");
  EXPECT_EQ(cdyn_ce_aba(c.m, c.ws, q.data(), nq, v.data(), nv, tau.data(), ny, nullptr, 0, o, ny,
                        nullptr, nv),
            CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(lastError(), "qdd is NULL");
  EXPECT_EQ(cdyn_ce_aba_spanning_forces(c.m, c.ws, q.data(), nq, v.data(), nv, tauS.data(), ny,
                                        nullptr, 0, o, ny, nullptr, 0),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(cdyn_ce_rnea(c.m, c.ws, q.data(), nq, v.data(), nv, tau.data(), ny, fext.data(), 6, o,
                         ny, nullptr, 0),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_NE(lastError().find("fext"), std::string::npos);
  EXPECT_EQ(cdyn_ce_aba_independent(c.m, c.ws, y.data(), nyq - 1, yd.data(), ny, tau.data(), ny,
                                    nullptr, 0, o, ny, nullptr, 0, nullptr, 0, nullptr, 0),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(lastError(), "y has length 18, expected 19");
  EXPECT_EQ(cdyn_cluster_mass_matrix(c.m, c.ws, q.data(), nq, H.data(), ny - 1),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(lastError(), "ldh is 17, expected >= 18");
  EXPECT_EQ(cdyn_cluster_mass_matrix(c.m, c.ws, q.data(), nq, nullptr, ny), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_cluster_bias(c.m, c.ws, q.data(), nq, v.data(), nv, o, nv), CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(
      cdyn_constraint_matrices(c.m, c.ws, q.data(), nq, v.data(), nv, H.data(), nv - 1, nullptr, 0),
      CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(lastError(), "ldg is 29, expected >= 30");
  EXPECT_EQ(cdyn_constraint_matrices(c.m, c.ws, q.data(), nq, v.data(), nv, o, nv, o, ny),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(lastError(), "g has length 18, expected 30");
  EXPECT_EQ(
      cdyn_cluster_constraint_matrices(c.m, c.ws, 13, q.data(), nq, v.data(), nv, o, 2, nullptr, 0),
      CDYN_ERR_INVALID_INDEX);
  EXPECT_EQ(lastError(), "cluster index 13 out of range [0, 13)");
  EXPECT_EQ(cdyn_solve_loop_closure(c.m, c.ws, y.data(), nyq, q.data(), nq - 1, o, nq),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(lastError(), "q_guess has length 30, expected 31");
  EXPECT_EQ(cdyn_spanning_to_independent(c.m, c.ws, q.data(), nq, v.data(), nv, o, nyq, o, nyq),
            CDYN_ERR_INVALID_SIZE);
  EXPECT_EQ(cdyn_project_to_constraints(c.m, c.ws, q.data(), nq, v.data(), nv, o, nq, o, nq),
            CDYN_ERR_INVALID_SIZE);
  for (int i = 0; i < nv + nq; ++i) ASSERT_EQ(out[i], 123.0) << "output touched at " << i;

  // Null pointers and handles.
  EXPECT_EQ(cdyn_ce_aba(c.m, c.ws, nullptr, nq, v.data(), nv, tau.data(), ny, nullptr, 0, o, ny,
                        nullptr, 0),
            CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(lastError(), "q is NULL");
  EXPECT_EQ(cdyn_ce_rnea(nullptr, c.ws, q.data(), nq, v.data(), nv, tau.data(), ny, nullptr, 0, o,
                         ny, nullptr, 0),
            CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_solve_loop_closure(c.m, nullptr, y.data(), nyq, nullptr, 0, o, nq),
            CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_ce_aba(c.m, other.ws, q.data(), nq, v.data(), nv, tau.data(), ny, nullptr, 0, o,
                        ny, nullptr, 0),
            CDYN_ERR_WORKSPACE_MISMATCH);
  EXPECT_NE(std::string(cdyn_workspace_last_error(other.ws)).find("another model"),
            std::string::npos);
  EXPECT_EQ(cdyn_last_loop_closure(c.m, other.ws, nullptr, nullptr), CDYN_ERR_WORKSPACE_MISMATCH);
  EXPECT_EQ(cdyn_cluster_bias(c.m, reinterpret_cast<cdyn_workspace*>(c.m), q.data(), nq, v.data(),
                              nv, o, ny),
            CDYN_ERR_INVALID_ARGUMENT);
  int k = 0;
  EXPECT_EQ(cdyn_model_ny(nullptr, &k), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_model_nyq(c.m, nullptr), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_model_nclusters(reinterpret_cast<cdyn_model*>(c.ws), &k),
            CDYN_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(cdyn_model_cluster_index(c.m, "no such cluster", &k), CDYN_ERR_NOT_FOUND);
  EXPECT_EQ(cdyn_model_independent_velocity_index(c.m, "lf_knee_rotor_joint", &k),
            CDYN_ERR_NOT_FOUND);  // a dependent joint
  EXPECT_EQ(cdyn_model_independent_velocity_index(c.m, nullptr, &k), CDYN_ERR_NULL_POINTER);

  // Non-finite inputs.
  std::vector<double> bad = v;
  bad[4] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(cdyn_ce_aba(c.m, c.ws, q.data(), nq, bad.data(), nv, tau.data(), ny, nullptr, 0, o, ny,
                        nullptr, 0),
            CDYN_ERR_NON_FINITE);
  EXPECT_EQ(lastError(), "v[4] is not finite");
  std::vector<double> badT = tau;
  badT[2] = std::nan("");
  EXPECT_EQ(cdyn_ce_aba(c.m, c.ws, q.data(), nq, v.data(), nv, badT.data(), ny, nullptr, 0, o, ny,
                        nullptr, 0),
            CDYN_ERR_NON_FINITE);
  EXPECT_EQ(lastError(), "tau[2] is not finite");
  EXPECT_EQ(cdyn_ce_rnea(c.m, c.ws, q.data(), nq, v.data(), nv, badT.data(), ny, nullptr, 0, o, ny,
                         nullptr, 0),
            CDYN_ERR_NON_FINITE);
  std::vector<double> badF = fext;
  badF[20] = std::nan("");
  EXPECT_EQ(cdyn_ce_aba(c.m, c.ws, q.data(), nq, v.data(), nv, tau.data(), ny, badF.data(), 6 * nb,
                        o, ny, nullptr, 0),
            CDYN_ERR_NON_FINITE);
  std::vector<double> badY = y;
  badY[9] = std::nan("");
  EXPECT_EQ(cdyn_solve_loop_closure(c.m, c.ws, badY.data(), nyq, nullptr, 0, o, nq),
            CDYN_ERR_NON_FINITE);
  EXPECT_EQ(lastError(), "y[9] is not finite");
  EXPECT_EQ(cdyn_independent_to_spanning(c.m, c.ws, y.data(), nyq, badT.data(), ny, nullptr, 0, o,
                                         nq, o + nq, nv),
            CDYN_ERR_NON_FINITE);
  EXPECT_EQ(lastError(), "ydot[2] is not finite");
  EXPECT_EQ(cdyn_ce_aba_independent(c.m, c.ws, badY.data(), nyq, yd.data(), ny, tau.data(), ny,
                                    nullptr, 0, o, ny, nullptr, 0, nullptr, 0, nullptr, 0),
            CDYN_ERR_NON_FINITE);
  std::vector<double> badQ = q;
  badQ[10] = std::nan("");
  EXPECT_EQ(cdyn_solve_loop_closure(c.m, c.ws, y.data(), nyq, badQ.data(), nq, o, nq),
            CDYN_ERR_NON_FINITE);
  EXPECT_EQ(lastError(), "q_guess[10] is not finite");
  EXPECT_EQ(cdyn_cluster_mass_matrix(c.m, c.ws, badQ.data(), nq, H.data(), ny),
            CDYN_ERR_NON_FINITE);
  badQ = q;
  badQ[6] = 0.5;  // floating-base quaternion w
  EXPECT_EQ(cdyn_ce_rnea(c.m, c.ws, badQ.data(), nq, v.data(), nv, tau.data(), ny, nullptr, 0, o,
                         ny, nullptr, 0),
            CDYN_ERR_NOT_UNIT_QUATERNION);
  EXPECT_EQ(
      cdyn_project_to_constraints(c.m, c.ws, badQ.data(), nq, v.data(), nv, o, nq, o + nq, nv),
      CDYN_ERR_NOT_UNIT_QUATERNION);

  // A spanning state that violates the couplings.
  std::vector<double> vbad = v;
  int iv = -1;
  ASSERT_EQ(cdyn_model_velocity_index(c.m, "lf_knee_rotor_joint", &iv), CDYN_OK);
  vbad[iv] = 1.0;
  EXPECT_EQ(cdyn_ce_aba(c.m, c.ws, q.data(), nq, vbad.data(), nv, tau.data(), ny, nullptr, 0, o, ny,
                        nullptr, 0),
            CDYN_ERR_CONSTRAINT_FAILURE);
  EXPECT_NE(lastError().find("v violates the velocity constraints"), std::string::npos)
      << lastError();
  // ... which projection repairs.
  std::vector<double> qp(nq), vp(nv);
  ASSERT_EQ(cdyn_project_to_constraints(c.m, c.ws, q.data(), nq, vbad.data(), nv, qp.data(), nq,
                                        vp.data(), nv),
            CDYN_OK);
  EXPECT_EQ(vp[iv], 0.0);
  EXPECT_EQ(cdyn_ce_aba(c.m, c.ws, qp.data(), nq, vp.data(), nv, tau.data(), ny, nullptr, 0, o, ny,
                        nullptr, 0),
            CDYN_OK);
}

TEST(CApiClusters, LoopThatCannotClose) {
  // The four-bar with the ROCKER as independent coordinate: the rocker only swings through a
  // limited range, so for larger rocker angles the loop cannot be closed.
  std::string urdf = cd::test::readTextFile(fourBarPath());
  auto replace = [&](const std::string& a, const std::string& b) {
    const auto pos = urdf.find(a);
    ASSERT_NE(pos, std::string::npos) << a;
    urdf.replace(pos, a.size(), b);
  };
  replace("\"crank_joint\" type=\"continuous\" independent=\"true\"",
          "\"crank_joint\" type=\"continuous\" independent=\"false\"");
  replace("\"rocker_joint\" type=\"revolute\" independent=\"false\"",
          "\"rocker_joint\" type=\"revolute\" independent=\"true\"");
  const cd::ClusterModel cm = cd::buildClusterModel(cd::parseUrdfString(urdf));
  CModel c;
  loadC(c, urdf, true);
  ASSERT_EQ(cm.nyq, 1);
  const int nq = cm.treeModel.nq, nv = cm.treeModel.nv;
  const char* name = nullptr;
  ASSERT_EQ(cdyn_model_independent_position_name(c.m, 0, &name), CDYN_OK);
  EXPECT_STREQ(name, "rocker_joint");
  std::vector<double> q(nq, 9.0), v(nv), qref(nq);
  ASSERT_EQ(cdyn_model_reference_configuration(c.m, qref.data(), nq), CDYN_OK);
  const double yBad[1] = {2.5}, yGood[1] = {0.1}, ydot[1] = {0.3};
  EXPECT_EQ(cdyn_solve_loop_closure(c.m, c.ws, yBad, 1, nullptr, 0, q.data(), nq),
            CDYN_ERR_CONSTRAINT_FAILURE);
  const std::string msg = cdyn_workspace_last_error(c.ws);
  EXPECT_NE(msg.find("coupler_to_rocker"), std::string::npos) << msg;
  EXPECT_EQ(q[0], 9.0) << "output written by a failed solve";
  int iterations = -1;
  double residual = -1;
  ASSERT_EQ(cdyn_last_loop_closure(c.m, c.ws, &iterations, &residual), CDYN_OK);
  EXPECT_GT(residual, 1e-6);
  EXPECT_EQ(std::string(cdyn_workspace_last_error(c.ws)), msg);  // the query keeps the message
  // The same failure through the other position-level entry points.
  double ydd[1], tau[1] = {0.0};
  EXPECT_EQ(cdyn_independent_to_spanning(c.m, c.ws, yBad, 1, ydot, 1, nullptr, 0, q.data(), nq,
                                         v.data(), nv),
            CDYN_ERR_CONSTRAINT_FAILURE);
  EXPECT_EQ(cdyn_ce_aba_independent(c.m, c.ws, yBad, 1, ydot, 1, tau, 1, nullptr, 0, ydd, 1,
                                    nullptr, 0, nullptr, 0, nullptr, 0),
            CDYN_ERR_CONSTRAINT_FAILURE);
  // After the failure the warm start is the reference configuration again: a good y now gives
  // exactly what C++ gives from the reference configuration.
  ASSERT_EQ(cdyn_solve_loop_closure(c.m, c.ws, yGood, 1, nullptr, 0, q.data(), nq), CDYN_OK)
      << cdyn_workspace_last_error(c.ws);
  EXPECT_STREQ(cdyn_workspace_last_error(c.ws), "");
  cd::ClusterData data(cm);
  data.q = cm.qReference;
  ASSERT_EQ(cd::solveLoopClosure(cm, data, Eigen::Map<const cd::VecX>(yGood, 1)), cd::Status::Ok);
  EXPECT_SAME(q.data(), data.q.data(), nq);
  // A configuration far from closure given to the dynamics is rejected, naming the cluster.
  std::vector<double> qOpen = qref;
  qOpen[0] += 0.2;
  std::vector<double> v0(nv, 0.0);
  EXPECT_EQ(cdyn_ce_aba(c.m, c.ws, qOpen.data(), nq, v0.data(), nv, tau, 1, nullptr, 0, ydd, 1,
                        nullptr, 0),
            CDYN_ERR_CONSTRAINT_FAILURE);
  EXPECT_NE(std::string(cdyn_workspace_last_error(c.ws)).find("q violates the constraints"),
            std::string::npos)
      << cdyn_workspace_last_error(c.ws);
}

}  // namespace

TEST(CApiClusters, CutLoopsFlagLeavesTheLoopsOpen) {
  const std::string urdf = cd::test::readTextFile(fourBarPath());
  CModel embedded, cut;
  loadC(embedded, urdf, true);
  loadC(cut, urdf, true, CDYN_LOAD_CUT_LOOPS);
  int nv = 0, nyE = 0, nyC = 0;
  ASSERT_EQ(cdyn_model_nv(cut.m, &nv), CDYN_OK);
  ASSERT_EQ(cdyn_model_ny(embedded.m, &nyE), CDYN_OK);
  ASSERT_EQ(cdyn_model_ny(cut.m, &nyC), CDYN_OK);
  EXPECT_EQ(nyC, nv);  // every spanning joint is a coordinate once the loop is cut
  EXPECT_LT(nyE, nyC);
  cd::ModelOptions o;
  o.cutLoops = true;
  const cd::ClusterModel cm = cd::buildClusterModel(cd::parseUrdfString(urdf), o);
  EXPECT_EQ(cm.cutLoops.size(), 1u);
  EXPECT_EQ(cm.ny, nyC);
}
