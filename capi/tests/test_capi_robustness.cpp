// C API robustness: singular loop configurations and overflowing inputs give documented
// statuses with a message (never CDYN_OK with NaN), the workspace stays usable, and the header's
// promises about leading dimensions and the floating joint's frame hold; MJCF text opens no
// files and its load warnings reach the C API.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "clusterdyn.h"
#include "test_models.hpp"

namespace {

struct CModel {
  cdyn_model* m = nullptr;
  cdyn_workspace* ws = nullptr;
  int nq = 0, nv = 0, ny = 0, nyq = 0;
  explicit CModel(const std::string& pathOrXml, bool isString = false) {
    char err[512];
    const cdyn_status s =
        isString
            ? cdyn_model_load_string(CDYN_ABI_VERSION, pathOrXml.data(), pathOrXml.size(), 0,
                                     nullptr, &m, err, sizeof err)
            : cdyn_model_load(CDYN_ABI_VERSION, pathOrXml.c_str(), 0, nullptr, &m, err, sizeof err);
    EXPECT_EQ(s, CDYN_OK) << err;
    if (s != CDYN_OK) return;
    EXPECT_EQ(cdyn_workspace_create(m, &ws), CDYN_OK);
    cdyn_model_nq(m, &nq);
    cdyn_model_nv(m, &nv);
    cdyn_model_ny(m, &ny);
    cdyn_model_nyq(m, &nyq);
  }
  ~CModel() {
    cdyn_workspace_free(ws);
    cdyn_model_free(m);
  }
  std::string error() const { return cdyn_workspace_last_error(ws); }
};

const std::string kFourBar = CAPI_SHARED_URDF "/four_bar.urdf";
const std::string kModels = CAPI_MODELS_DIR;

// shared/urdfplus/four_bar.urdf is a parallelogram: y = 0 is the branch point of the
// parallelogram and crossed branches (Kd loses rank).
// Its tests skip themselves when the shared folder (third-party models) is absent.
#define SKIP_WITHOUT_SHARED_FOUR_BAR()                                                         \
  do {                                                                                         \
    if (!std::filesystem::exists(kFourBar))                                                    \
      GTEST_SKIP() << "missing " << kFourBar << " (third-party model, CLUSTERDYN_SHARED_DIR)"; \
  } while (0)

TEST(Robustness, ParallelogramBranchPoint) {
  SKIP_WITHOUT_SHARED_FOUR_BAR();
  CModel c(kFourBar);
  ASSERT_TRUE(c.m);
  std::vector<double> q(c.nq), v(c.nv), qdd(c.nv);
  double ydd = 0.0;
  for (double y : {0.0, 1e-9, 1e-6}) {
    const double ydot = 1.0, tau = 0.0;
    EXPECT_EQ(cdyn_independent_to_spanning(c.m, c.ws, &y, 1, &ydot, 1, nullptr, 0, q.data(), c.nq,
                                           v.data(), c.nv),
              CDYN_ERR_CONSTRAINT_FAILURE);
    EXPECT_NE(c.error().find("cluster 'loop1'"), std::string::npos) << c.error();
    EXPECT_NE(c.error().find("smallest singular value"), std::string::npos) << c.error();
    EXPECT_EQ(cdyn_ce_aba_independent(c.m, c.ws, &y, 1, &ydot, 1, &tau, 1, nullptr, 0, &ydd, 1,
                                      nullptr, 0, nullptr, 0, nullptr, 0),
              CDYN_ERR_CONSTRAINT_FAILURE);
  }
  // The workspace is usable afterwards: the parallelogram branch at y = 0.4.
  const double y = 0.4, ydot = 1.0;
  ASSERT_EQ(cdyn_independent_to_spanning(c.m, c.ws, &y, 1, &ydot, 1, nullptr, 0, q.data(), c.nq,
                                         v.data(), c.nv),
            CDYN_OK)
      << c.error();
  EXPECT_NEAR(q[1], -0.4, 1e-9);
  EXPECT_NEAR(q[2], 0.4, 1e-9);
  EXPECT_NEAR(v[1], -1.0, 1e-9);
  EXPECT_NEAR(v[2], 1.0, 1e-9);
  // CE-ABA and the constraint matrices at the aligned spanning state report the singularity.
  const std::vector<double> q0(c.nq, 0.0), v0 = {1.0, -1.0, 1.0};
  const double tau = 0.0;
  EXPECT_EQ(cdyn_ce_aba(c.m, c.ws, q0.data(), c.nq, v0.data(), c.nv, &tau, 1, nullptr, 0, &ydd, 1,
                        qdd.data(), c.nv),
            CDYN_ERR_CONSTRAINT_FAILURE);
  EXPECT_NE(c.error().find("singular"), std::string::npos) << c.error();
  std::vector<double> G(c.nv * c.ny);
  EXPECT_EQ(cdyn_constraint_matrices(c.m, c.ws, q0.data(), c.nq, v0.data(), c.nv, G.data(), c.nv,
                                     nullptr, 0),
            CDYN_ERR_CONSTRAINT_FAILURE);
}

TEST(Robustness, ClosureJump) {
  SKIP_WITHOUT_SHARED_FOUR_BAR();
  CModel c(kFourBar);
  ASSERT_TRUE(c.m);
  std::vector<double> q(c.nq);
  const double far = 1.5708, y = 0.5;
  ASSERT_EQ(cdyn_solve_loop_closure(c.m, c.ws, &far, 1, nullptr, 0, q.data(), c.nq), CDYN_OK);
  ASSERT_EQ(cdyn_solve_loop_closure(c.m, c.ws, &y, 1, nullptr, 0, q.data(), c.nq), CDYN_OK)
      << c.error();
  int it = 0;
  double res = 1.0;
  ASSERT_EQ(cdyn_last_loop_closure(c.m, c.ws, &it, &res), CDYN_OK);
  EXPECT_LE(res, 1e-12);
  EXPECT_NEAR(q[1], -0.5, 1e-9);  // the parallelogram branch of the warm start
  EXPECT_NEAR(q[2], 0.5, 1e-9);
}

TEST(Robustness, OverflowNamesTheInput) {
  CModel c(kModels + "/cd_four_bar.urdf");
  ASSERT_TRUE(c.m);
  std::vector<double> q(c.nq, 0.0), v(c.nv, 1e200), tau(c.nv, 0.0), ddq(c.nv);
  EXPECT_EQ(cdyn_aba(c.m, c.ws, q.data(), c.nq, v.data(), c.nv, tau.data(), c.nv, nullptr, 0,
                     ddq.data(), c.nv),
            CDYN_ERR_NON_FINITE);
  EXPECT_NE(c.error().find("input v is out of range"), std::string::npos) << c.error();
  const double y = 0.5, t = 0.0;
  double ydd = 0.0;
  for (double ydot : {1e160, 1e300}) {
    EXPECT_EQ(cdyn_ce_aba_independent(c.m, c.ws, &y, 1, &ydot, 1, &t, 1, nullptr, 0, &ydd, 1,
                                      nullptr, 0, nullptr, 0, nullptr, 0),
              CDYN_ERR_NON_FINITE);
    EXPECT_NE(c.error().find("input ydot is out of range"), std::string::npos) << c.error();
  }
  const double ydot = 1e6;  // fast but representable
  ASSERT_EQ(cdyn_ce_aba_independent(c.m, c.ws, &y, 1, &ydot, 1, &t, 1, nullptr, 0, &ydd, 1, nullptr,
                                    0, nullptr, 0, nullptr, 0),
            CDYN_OK)
      << c.error();
  EXPECT_TRUE(std::isfinite(ydd));
  EXPECT_STREQ(cdyn_workspace_last_error(c.ws), "");
}

// The turntable-slider of tests/support/test_models.hpp (a 2 kg block on a slider along
// (0.6, 0, 0.8), a tool frame 1e308 m beyond it): finite but huge inputs to every tree compute
// call give CDYN_ERR_NON_FINITE with a message naming the input, never CDYN_OK with Inf/NaN.
using clusterdyn::support::kSliderUrdf;

TEST(Robustness, HugeInputsNameTheInput) {
  CModel c(kSliderUrdf, true);
  ASSERT_TRUE(c.m);
  ASSERT_EQ(c.nv, 2);
  auto named = [&](cdyn_status s, const char* input) {
    EXPECT_EQ(s, CDYN_ERR_NON_FINITE) << c.error();
    EXPECT_NE(c.error().find(std::string("input ") + input + " is out of range"), std::string::npos)
        << c.error();
  };
  const double zero[2] = {0, 0}, one[2] = {1, 1}, qFar[2] = {0, 1e300}, qMid[2] = {0, 0.5};
  double out[2] = {7, 7}, M[4] = {7, 7, 7, 7}, e = 7, H[4];
  const double vFast[2] = {1e200, 0}, aHuge[2] = {0, 1e308}, vSlide[2] = {0, 1e160};
  named(cdyn_crba(c.m, c.ws, qFar, 2, M, 2), "q");
  EXPECT_EQ(M[0], 7.0);  // untouched on failure
  named(cdyn_rnea(c.m, c.ws, qMid, 2, vFast, 2, zero, 2, nullptr, 0, out, 2), "v");
  named(cdyn_rnea(c.m, c.ws, zero, 2, zero, 2, aHuge, 2, nullptr, 0, out, 2), "a");
  EXPECT_EQ(out[0], 7.0);
  named(cdyn_nonlinear_effects(c.m, c.ws, qMid, 2, vFast, 2, out, 2), "v");
  named(cdyn_kinetic_energy(c.m, c.ws, zero, 2, vSlide, 2, &e), "v");
  const double qTop[2] = {0, 1.7e308};
  named(cdyn_potential_energy(c.m, c.ws, qTop, 2, &e), "q");
  EXPECT_EQ(e, 7.0);
  named(cdyn_center_of_mass(c.m, c.ws, qTop, 2, out), "q");
  named(cdyn_cluster_mass_matrix(c.m, c.ws, qFar, 2, H, 2), "q");
  const double qFk[2] = {0, 1e100}, vFk[2] = {1e250, 0};
  named(cdyn_forward_kinematics(c.m, c.ws, qFk, 2, vFk, 2, nullptr, 0), "v");
  // The tool frame at q_slide = 1.5e308: the block is at x = 0.9e308, the tool beyond double range.
  int tool = -1;
  ASSERT_EQ(cdyn_model_frame_index(c.m, "tool", &tool), CDYN_OK);
  const double qTool[2] = {0, 1.5e308};
  double R[9], p[3], J[12];
  EXPECT_EQ(cdyn_compute_frame_jacobian(c.m, c.ws, qTool, 2, tool, CDYN_LOCAL_WORLD_ALIGNED, J, 6),
            CDYN_ERR_NON_FINITE);
  EXPECT_NE(c.error().find("out of range"), std::string::npos) << c.error();
  const cdyn_status fk = cdyn_forward_kinematics(c.m, c.ws, qTool, 2, nullptr, 0, nullptr, 0);
  if (fk == CDYN_OK) {  // the tool is a frame on the block: its placement overflows
    EXPECT_EQ(cdyn_frame_placement(c.m, c.ws, tool, R, 3, p), CDYN_ERR_NON_FINITE);
    EXPECT_NE(c.error().find("out of range"), std::string::npos) << c.error();
  } else {
    EXPECT_EQ(fk, CDYN_ERR_NON_FINITE);
  }
  // Moderate inputs afterwards: CDYN_OK, finite, empty message.
  ASSERT_EQ(cdyn_crba(c.m, c.ws, qMid, 2, M, 2), CDYN_OK) << c.error();
  EXPECT_NEAR(M[0], 0.1 + 0.1 + 2.0 * 0.3 * 0.3, 1e-9);  // izz + izz + m (0.6 q_slide)^2
  EXPECT_STREQ(cdyn_workspace_last_error(c.ws), "");
  ASSERT_EQ(cdyn_rnea(c.m, c.ws, qMid, 2, one, 2, one, 2, nullptr, 0, out, 2), CDYN_OK);
  EXPECT_TRUE(std::isfinite(out[0]) && std::isfinite(out[1]));
  ASSERT_EQ(cdyn_kinetic_energy(c.m, c.ws, zero, 2, one, 2, &e), CDYN_OK);
  EXPECT_TRUE(std::isfinite(e));
}

// Found by fuzz_capi (tests/fuzz/regressions/capi/empty_constraint_set_dense): the dense
// constrained dynamics on an empty constraint set (m = 0) read the max of an empty residual.
TEST(Robustness, EmptyConstraintSetDense) {
  CModel c(kModels + "/cd_four_bar.urdf");
  ASSERT_TRUE(c.m);
  cdyn_constraint_set* set = nullptr;
  cdyn_constraint_workspace* cws = nullptr;
  ASSERT_EQ(cdyn_constraint_set_create(c.m, &set), CDYN_OK);
  ASSERT_EQ(cdyn_constraint_workspace_create(c.m, set, &cws), CDYN_OK);
  std::vector<double> q(c.nq), v(c.nv), qdd(c.nv), qddRef(c.nv);
  const double y = 0.5, ydot = 1.0, tau = 0.3;
  ASSERT_EQ(cdyn_independent_to_spanning(c.m, c.ws, &y, 1, &ydot, 1, nullptr, 0, q.data(), c.nq,
                                         v.data(), c.nv),
            CDYN_OK);
  double ydd = 7.0, yddRef = 0.0;
  ASSERT_EQ(cdyn_ce_aba(c.m, c.ws, q.data(), c.nq, v.data(), c.nv, &tau, 1, nullptr, 0, &yddRef, 1,
                        qddRef.data(), c.nv),
            CDYN_OK);
  cdyn_proximal_result res;
  using Solve =
      cdyn_status (*)(const cdyn_constraint_set*, cdyn_constraint_workspace*, const double*,
                      const double*, const double*, const double*, const cdyn_proximal_settings*,
                      double*, double*, double*, int, cdyn_proximal_result*);
  for (Solve solve : {Solve(cdyn_constrained_dynamics_dense), Solve(cdyn_prox_pv)}) {
    res.residual = -1.0;
    ASSERT_EQ(solve(set, cws, q.data(), v.data(), &tau, nullptr, nullptr, &ydd, qdd.data(), nullptr,
                    0, &res),
              CDYN_OK)
        << cdyn_constraint_workspace_last_error(cws);
    EXPECT_EQ(res.residual, 0.0);
    EXPECT_EQ(res.converged, 1);
    EXPECT_NEAR(ydd, yddRef, 1e-9);
    for (int i = 0; i < c.nv; ++i) EXPECT_NEAR(qdd[i], qddRef[i], 1e-9);
  }
  EXPECT_EQ(cdyn_constraint_workspace_free(cws), CDYN_OK);
  EXPECT_EQ(cdyn_constraint_set_free(set), CDYN_OK);
}

// Header: rows r..ld-1 of every matrix output are left untouched.
TEST(Robustness, LeadingDimensionPaddingUntouched) {
  CModel c(kModels + "/cd_quadruped.urdf");
  ASSERT_TRUE(c.m);
  std::vector<double> q(c.nq), v(c.nv, 0.0);
  ASSERT_EQ(cdyn_model_reference_configuration(c.m, q.data(), c.nq), CDYN_OK);
  const double sentinel = -12345.678;
  auto checkPadding = [&](const std::vector<double>& A, int rows, int cols, int ld,
                          const char* what) {
    for (int j = 0; j < cols; ++j)
      for (int i = rows; i < ld; ++i)
        ASSERT_EQ(A[i + j * ld], sentinel) << what << " (" << i << ", " << j << ")";
  };
  const int pad = 3;
  std::vector<double> M((c.nv + pad) * c.nv, sentinel);
  ASSERT_EQ(cdyn_crba(c.m, c.ws, q.data(), c.nq, M.data(), c.nv + pad), CDYN_OK);
  checkPadding(M, c.nv, c.nv, c.nv + pad, "M");
  std::vector<double> H((c.ny + pad) * c.ny, sentinel);
  ASSERT_EQ(cdyn_cluster_mass_matrix(c.m, c.ws, q.data(), c.nq, H.data(), c.ny + pad), CDYN_OK);
  checkPadding(H, c.ny, c.ny, c.ny + pad, "H");
  std::vector<double> G((c.nv + pad) * c.ny, sentinel);
  ASSERT_EQ(cdyn_constraint_matrices(c.m, c.ws, q.data(), c.nq, v.data(), c.nv, G.data(),
                                     c.nv + pad, nullptr, 0),
            CDYN_OK);
  checkPadding(G, c.nv, c.ny, c.nv + pad, "G");
  std::vector<double> J((6 + pad) * c.nv, sentinel);
  ASSERT_EQ(cdyn_compute_frame_jacobian(c.m, c.ws, q.data(), c.nq, 1, 0, J.data(), 6 + pad),
            CDYN_OK);
  checkPadding(J, 6, c.nv, 6 + pad, "J");
  std::vector<double> R((3 + pad) * 3, sentinel), T((4 + pad) * 4, sentinel);
  double p[3];
  ASSERT_EQ(cdyn_frame_placement(c.m, c.ws, 1, R.data(), 3 + pad, p), CDYN_OK);
  checkPadding(R, 3, 3, 3 + pad, "R");
  ASSERT_EQ(cdyn_frame_placement_matrix(c.m, c.ws, 1, T.data(), 4 + pad), CDYN_OK);
  checkPadding(T, 4, 4, 4 + pad, "T");
}

// The one error path (capi_errors.hpp): an exception in a call with no handle to hold its message
// (here std::bad_alloc in cdyn_constraint_workspace_create, whose workspace is not made yet) is a
// status AND a message in cdyn_last_error, as the header promises of every refusal. (Before the
// one table, this path returned CDYN_ERR_OUT_OF_MEMORY and left cdyn_last_error untouched.)
// The allocation is made to fail by an address-space limit a few MB above the process's size
// (skipped under sanitizers and valgrind, which reserve or intercept address space).
TEST(Robustness, OutOfMemoryLeavesAMessage) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "address-space limits do not apply under sanitizers";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
  GTEST_SKIP() << "address-space limits do not apply under sanitizers";
#endif
#endif
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload && std::strstr(preload, "vgpreload")) GTEST_SKIP() << "under valgrind";
  // A 1500-link chain: its constraint workspace holds two dense 1500 x 1500 matrices (36 MB).
  const int n = 1500;
  std::string xml = "<robot name=\"chain\"><link name=\"l0\"/>";
  for (int i = 1; i <= n; ++i) {  // link li and joint ji from l(i-1)
    const std::string parent = "l" + std::to_string(i - 1), child = "l" + std::to_string(i);
    xml += "<link name=\"" + child + "\"><inertial><mass value=\"1\"/><inertia ixx=\"0.01\" " +
           "iyy=\"0.01\" izz=\"0.01\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial></link>" +
           "<joint name=\"j" + child + "\" type=\"continuous\"><parent link=\"" + parent +
           "\"/><child link=\"" + child + "\"/><axis xyz=\"0 1 0\"/></joint>";
  }
  xml += "</robot>";
  cdyn_model* m = nullptr;
  char err[256];
  ASSERT_EQ(cdyn_model_load_string(CDYN_ABI_VERSION, xml.data(), xml.size(), 0, nullptr, &m, err,
                                   sizeof err),
            CDYN_OK)
      << err;
  cdyn_constraint_set* set = nullptr;
  ASSERT_EQ(cdyn_constraint_set_create(m, &set), CDYN_OK);
  int nq = 0;
  ASSERT_EQ(cdyn_model_nq(nullptr, &nq), CDYN_ERR_NULL_POINTER);  // some other message first
  ASSERT_STRNE(cdyn_last_error(), "out of memory");
  // Address space now in use (/proc/self/statm: total program size in pages) + 8 MB.
  long pages = 0;
  std::ifstream("/proc/self/statm") >> pages;
  ASSERT_GT(pages, 0);
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &old), 0);
  rlimit tight = old;
  tight.rlim_cur = static_cast<rlim_t>(pages) * sysconf(_SC_PAGESIZE) + (8u << 20);
  if (old.rlim_cur != RLIM_INFINITY && old.rlim_cur < tight.rlim_cur)
    GTEST_SKIP() << "address-space limit already tight";
  ASSERT_EQ(setrlimit(RLIMIT_AS, &tight), 0);
  cdyn_constraint_workspace* cws = nullptr;
  const cdyn_status s = cdyn_constraint_workspace_create(m, set, &cws);
  setrlimit(RLIMIT_AS, &old);
  EXPECT_EQ(s, CDYN_ERR_OUT_OF_MEMORY);
  EXPECT_STREQ(cdyn_last_error(), "out of memory");
  EXPECT_EQ(cws, nullptr);
  cdyn_constraint_workspace_free(cws);
  EXPECT_EQ(cdyn_constraint_set_free(set), CDYN_OK);
  EXPECT_EQ(cdyn_model_free(m), CDYN_OK);
}

// Header: the floating joint's position q[0..3) is the child origin in the JOINT frame (the
// parent link frame moved by the joint's <origin>), not in the parent link frame.
TEST(Robustness, FloatingJointOriginFrame) {
  const std::string xml = R"(<robot name="f">
  <link name="world"/>
  <link name="body"><inertial><mass value="2"/>
    <inertia ixx="0.1" ixy="0" ixz="0" iyy="0.2" iyz="0" izz="0.3"/></inertial></link>
  <joint name="free" type="floating"><parent link="world"/><child link="body"/>
    <origin xyz="1 2 3" rpy="0 0 1.5707963267948966"/></joint>
</robot>)";
  CModel c(xml, true);
  ASSERT_TRUE(c.m);
  ASSERT_EQ(c.nq, 7);
  int frame = -1;
  ASSERT_EQ(cdyn_model_frame_index(c.m, "body", &frame), CDYN_OK);
  const double q[7] = {0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0};
  ASSERT_EQ(cdyn_forward_kinematics(c.m, c.ws, q, 7, nullptr, 0, nullptr, 0), CDYN_OK);
  double R[9], p[3];
  ASSERT_EQ(cdyn_frame_placement(c.m, c.ws, frame, R, 3, p), CDYN_OK);
  // x = 0.5 along the joint frame's x axis, which is the world's y axis (yaw 90 deg).
  EXPECT_NEAR(p[0], 1.0, 1e-12);
  EXPECT_NEAR(p[1], 2.5, 1e-12);
  EXPECT_NEAR(p[2], 3.0, 1e-12);
  EXPECT_NEAR(R[1], 1.0, 1e-12);  // body x axis = world y
}

}  // namespace

// MJCF load warnings reach the C API (cdyn_model_nwarnings / cdyn_model_warnings), and text
// never opens local files (an <include> is CDYN_ERR_PARSE naming the element, even when the
// file exists in the working directory).
TEST(Robustness, MjcfWarningsAndTextWithoutFiles) {
  const std::string xml =
      "<mujoco>\n<worldbody>\n<camera name=\"c\"/>\n<body name=\"a\">\n"
      "<joint name=\"ja\"/>\n<geom size=\"0.1\"/>\n</body>\n</worldbody>\n"
      "<actuator><motor joint=\"ja\"/></actuator>\n</mujoco>\n";
  cdyn_model* m = nullptr;
  char err[512];
  ASSERT_EQ(cdyn_model_load_string(CDYN_ABI_VERSION, xml.data(), xml.size(), 0, nullptr, &m, err,
                                   sizeof err),
            CDYN_OK)
      << err;
  int n = -1;
  ASSERT_EQ(cdyn_model_nwarnings(m, &n), CDYN_OK);
  EXPECT_EQ(n, 2);
  size_t needed = 0;
  ASSERT_EQ(cdyn_model_warnings(m, nullptr, 0, &needed), CDYN_OK);
  std::vector<char> buf(needed);
  ASSERT_EQ(cdyn_model_warnings(m, buf.data(), buf.size(), nullptr), CDYN_OK);
  const std::string text(buf.data());
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "<string>:3: <camera>: ignored (no effect on the "
            "dynamics)")
      << text;
  EXPECT_NE(text.find("<string>:9: <actuator>: ignored"), std::string::npos) << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  EXPECT_EQ(cdyn_model_nwarnings(nullptr, &n), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_model_nwarnings(m, nullptr), CDYN_ERR_NULL_POINTER);
  EXPECT_EQ(cdyn_model_free(m), CDYN_OK);
  // a URDF file: no warnings
  ASSERT_EQ(cdyn_model_load(CDYN_ABI_VERSION, CAPI_MODELS_DIR "/cd_four_bar.urdf", 0, nullptr, &m,
                            err, sizeof err),
            CDYN_OK)
      << err;
  ASSERT_EQ(cdyn_model_nwarnings(m, &n), CDYN_OK);
  EXPECT_EQ(n, 0);
  ASSERT_EQ(cdyn_model_warnings(m, nullptr, 0, &needed), CDYN_OK);
  EXPECT_EQ(needed, 1u);
  EXPECT_EQ(cdyn_model_free(m), CDYN_OK);

  // <include> in text: refused, although the working directory holds the file
  const std::string dir =
      ::testing::TempDir() + "clusterdyn_" + std::to_string(::getpid()) + "_capi_mjcf_text/";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "leg.xml") << "<mujocoinclude>\n<body name=\"leg\">\n<joint/>\n"
                                    "<geom size=\"0.1\"/>\n</body>\n</mujocoinclude>\n";
  const auto cwd = std::filesystem::current_path();
  std::filesystem::current_path(dir);
  const std::string inc =
      "<mujoco>\n<worldbody>\n<include file=\"leg.xml\"/>\n</worldbody>\n</mujoco>\n";
  m = reinterpret_cast<cdyn_model*>(1);
  EXPECT_EQ(cdyn_model_load_string(CDYN_ABI_VERSION, inc.data(), inc.size(), 0, nullptr, &m, err,
                                   sizeof err),
            CDYN_ERR_PARSE);
  EXPECT_EQ(m, nullptr);
  EXPECT_NE(std::string(err).find("<string>:3: <include>"), std::string::npos) << err;
  EXPECT_NE(std::string(err).find("opens no files"), std::string::npos) << err;
  std::filesystem::current_path(cwd);
  // ... and resolved against the directory given to cdyn_model_load_string_dir
  ASSERT_EQ(cdyn_model_load_string_dir(CDYN_ABI_VERSION, inc.data(), inc.size(), dir.c_str(), 0,
                                       nullptr, &m, err, sizeof err),
            CDYN_OK)
      << err;
  ASSERT_EQ(cdyn_model_nbodies(m, &n), CDYN_OK);
  EXPECT_EQ(n, 1);
  const char* link = nullptr;
  ASSERT_EQ(cdyn_model_body_name(m, 0, &link), CDYN_OK);
  EXPECT_STREQ(link, "leg");
  EXPECT_EQ(cdyn_model_free(m), CDYN_OK);
  m = reinterpret_cast<cdyn_model*>(1);
  EXPECT_EQ(cdyn_model_load_string_dir(CDYN_ABI_VERSION, inc.data(), inc.size(), nullptr, 0,
                                       nullptr, &m, err, sizeof err),
            CDYN_ERR_PARSE);  // NULL base_dir: no files, as cdyn_model_load_string
  EXPECT_EQ(m, nullptr);
  std::filesystem::remove_all(dir);
}
