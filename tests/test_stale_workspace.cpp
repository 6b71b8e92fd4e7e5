// Workspace values another algorithm left behind. Every entry point that reads a workspace field
// it does not write itself (the loops' bias g after a velocity step with Bias::Skip, the motion
// subspace S that ceAba defers in the composite form: ClusterWorkspace::sDeferred, the rotor
// bodies completeRotorBodies fills in) must give, after any other algorithm ran at another
// state, the results of a fresh workspace, bit for bit. And the regression this file began
// with: the contact step's impulse response with a contact on a rotor (the fallback to
// delassusMatrix's passes, src/contact/step.cpp) read the loop bias g of the step's own CE-ABA.
#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <random>
#include <sstream>

#include "closed_states.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "test_util.hpp"

using namespace clusterdyn;

namespace {

double relativeDifference(const MatX& a, const MatX& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

/// The crank-rocker four-bar (its loop's bias g = -K_d^-1 Kdot v is non-zero in motion, unlike
/// a parallelogram's) with a geared arm on the crank: an arm link and its rotor, a {link, rotor}
/// cluster whose rotor CE-ABA keeps in its output body's (the crank's) frame.
ClusterModel fourBarWithRotorArm() {
  std::ifstream in(test::modelsPath("cd_four_bar.urdf"));
  std::stringstream text;
  text << in.rdbuf();
  std::string xml = text.str();
  const std::string arm = R"(
  <link name="arm">
    <inertial><origin xyz="0.06 0 0"/><mass value="0.3"/>
      <inertia ixx="1e-4" ixy="0" ixz="0" iyy="4e-4" iyz="0" izz="4e-4"/></inertial>
  </link>
  <joint name="arm_joint" type="continuous">
    <parent link="crank"/><child link="arm"/><origin xyz="0.1 0 0"/><axis xyz="0 1 0"/>
  </joint>
  <link name="arm_rotor">
    <inertial><origin xyz="0 0 0"/><mass value="0.07"/>
      <inertia ixx="3e-5" ixy="0" ixz="0" iyy="5e-5" iyz="0" izz="3e-5"/></inertial>
  </link>
  <joint name="arm_rotor_joint" type="continuous" independent="false">
    <parent link="crank"/><child link="arm_rotor"/><origin xyz="0.05 0 0"/><axis xyz="0 1 0"/>
  </joint>
  <coupling name="arm_gear">
    <predecessor link="arm"/><successor link="arm_rotor"/><ratio value="8"/>
  </coupling>
)";
  xml.insert(xml.rfind("</robot>"), arm);
  return buildClusterModel(parseUrdfString(xml, "four_bar_arm.urdf"));
}

/// The world point of `local` on body b at the configuration data was last closed at.
Vec3 worldPoint(const ClusterData& data, int b, const Vec3& local) {
  const Transform& X = data.treeData.oMi[b];
  return X.R * local + X.p;
}

}  // namespace

// A contact on a rotor (delassusMatrix's own passes instead of CE-ABA's, step.cpp's fallback)
// in a model whose loop has a non-zero bias g: the impulse response is that of the rows alone
// (pass 3 at zero velocity), without the g the step's CE-ABA of the free motion left (its
// U^T c, eq. 53). Oracle: y_dot+ - y_dot_free = H^-1 Jc^T lambda with H from clusterMassMatrix,
// on a fresh workspace and on one last used at another state. Before the fix: relative error
// 0.25 on both.
TEST(StaleWorkspace, RotorContactFallbackCarriesNoLoopBiasOfTheFreeMotion) {
  const ClusterModel cm = fourBarWithRotorArm();
  ASSERT_EQ(cm.ny, 2);
  ASSERT_TRUE(cm.hasImplicitClusters());
  const int rotor = cm.treeModel.bodyId("arm_rotor");
  for (const bool used : {false, true}) {
    SCOPED_TRACE(used ? "workspace used at another state" : "fresh workspace");
    ClusterData data(cm), other(cm);
    const VecX y = (VecX(2) << 0.4, -0.3).finished();
    const VecX ydot = (VecX(2) << 2.5, -1.5).finished();
    ASSERT_EQ(independentToSpanning(cm, data, y, ydot), Status::Ok) << data.errorMessage();
    VecX q = data.q, v = data.v;
    ContactProblem p(cm);
    p.addGroundFoot("rotor", rotor, Vec3(0.02, 0.0, 0.0), 0.0, 0.8);
    // The ground plane 1 mm above the contact point (penetrating).
    p.setGround(Vec3::UnitZ(), worldPoint(data, rotor, Vec3(0.02, 0.0, 0.0)).z() + 1e-3);
    ContactData cd(cm, p);
    StepSettings st;
    st.activationDistance = 1e9;
    st.contact.tolerance = 1e-12;
    st.contact.maxIterations = 20000;
    const VecX tau = (VecX(2) << 0.3, -0.2).finished();
    if (used) {  // a step at another state
      const VecX y2 = (VecX(2) << -0.9, 1.1).finished(), yd2 = (VecX(2) << -3.0, 4.0).finished();
      ASSERT_EQ(independentToSpanning(cm, data, y2, yd2), Status::Ok) << data.errorMessage();
      VecX q2 = data.q, v2 = data.v;
      const Status s2 = contactStep(cm, data, p, cd, q2, v2, tau, st);
      ASSERT_TRUE(s2 == Status::Ok || s2 == Status::NotConverged) << data.errorMessage();
    }
    const VecX q0 = q;
    const Status s = contactStep(cm, data, p, cd, q, v, tau, st);
    ASSERT_TRUE(s == Status::Ok || s == Status::NotConverged) << data.errorMessage();
    ASSERT_EQ(clusterMassMatrix(cm, other, q0), Status::Ok) << other.errorMessage();
    const Eigen::LLT<MatX> H(other.H);
    const VecX expected = H.solve(cd.Jc.transpose() * cd.lambda);
    ASSERT_GT(expected.cwiseAbs().maxCoeff(), 1e-6);  // the contact pushes
    EXPECT_LT(relativeDifference(cd.ydot - cd.ydotFree, expected), 1e-10)
        << "ydot - ydotFree = " << (cd.ydot - cd.ydotFree).transpose()
        << "\nH^-1 Jc^T lambda = " << expected.transpose();
  }
}
