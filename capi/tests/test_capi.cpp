// C API vs C++ API: every C function on every shared tree model and on random models must give
// the C++ result bit for bit; every misuse must give the documented status and a message.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "clusterdyn.h"
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

std::string pendulumPath() { return sharedPath("urdfplus/double_pendulum.urdf"); }
std::string cheetahPath() { return sharedPath("urdfplus/mini_cheetah_approximate.urdf"); }

TEST(CApi, SharedTreeModelsMatchCxx) {
  const auto files = sharedTreeModelFiles();
  ASSERT_GE(files.size(), 4u);
  std::mt19937_64 rng(42);
  for (const std::string& path : files) {
    SCOPED_TRACE(path);
    const cd::Model model = cd::loadTreeModel(path);
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
    const cd::Model model = cd::buildTreeModel(cd::parseUrdfString(urdf));
    CModel c;
    loadC(c, urdf, true);
    compareQueries(model, c.m);
    compareWithCxx(model, c, rng, 3);
  }
}

TEST(CApi, LoadOptions) {
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
  const cd::Model model = cd::buildTreeModel(cd::parseUrdfString(urdf), o);
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

  // The flag is rejected when the URDF has its own floating joint.
  char err[512];
  cdyn_model* m = reinterpret_cast<cdyn_model*>(0x1);
  EXPECT_EQ(cdyn_model_load(CDYN_ABI_VERSION, cheetahPath().c_str(), CDYN_LOAD_FLOATING_BASE,
                            nullptr, &m, err, sizeof err),
            CDYN_ERR_PARSE);
  EXPECT_EQ(m, nullptr);
  EXPECT_NE(std::string(err).find("floating"), std::string::npos) << err;
}

TEST(CApi, LoadErrors) {
  char err[512];
  cdyn_model* m = nullptr;
  // Version check.
  EXPECT_EQ(cdyn_model_load(CDYN_ABI_VERSION + 1, pendulumPath().c_str(), 0, nullptr, &m, err,
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
  EXPECT_EQ(cdyn_model_load(CDYN_ABI_VERSION, pendulumPath().c_str(), 0, nullptr, nullptr, err,
                            sizeof err),
            CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_model_load_string(CDYN_ABI_VERSION, nullptr, 5, 0, nullptr, &m, err, sizeof err),
            CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(
      cdyn_model_load(CDYN_ABI_VERSION, pendulumPath().c_str(), 0x80, nullptr, &m, err, sizeof err),
      CDYN_ERR_INVALID_ARGUMENT);
  const double nanG[3] = {0, std::nan(""), 0};
  EXPECT_EQ(cdyn_model_load(CDYN_ABI_VERSION, pendulumPath().c_str(), 0, nanG, &m, err, sizeof err),
            CDYN_ERR_NON_FINITE);
  EXPECT_EQ(m, nullptr);
}

TEST(CApi, ComputeErrors) {
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
  loadC(c, cheetahPath(), false);
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
    const cd::Model model = cd::loadTreeModel(cheetahPath());
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
  EXPECT_STREQ(cdyn_version_string(), "0.1.0");
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

}  // namespace
