// The contact step's Delassus matrix and impulse response are read from the CE-ABA of the free
// motion (src/constrained/delassus_aba.hpp) instead of a position pass and pass 2 of their own.
// Oracles: the standalone delassusMatrix at the same q, and the dense J H^-1 J^T (H from
// clusterMassMatrix, J from constraintJacobian); the step's velocity change y_dot+ - y_dot_free
// equals H^-1 Jc^T lambda; the problem's Jc and G are the dense Jacobian and the Delassus matrix
// turned into the contact frames. On the mini cheetah (rotors CE-ABA keeps in their output body's
// frame, flat rotor-link clusters), with a contact on a rotor (the fallback to delassusMatrix),
// and on the walker with its loops embedded (implicit clusters) and cut into bilateral rows.
#include <gtest/gtest.h>

#include <filesystem>

#include "clusterdyn/clusterdyn.hpp"
#include "test_util.hpp"

using namespace clusterdyn;

namespace {

/// max |a - b| / max(1, max |b|).
double relativeDifference(const MatX& a, const MatX& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

/// Assembles the step's problem at the closed state (y, ydot) and one step; checks the Delassus
/// matrix of the rows (world-aligned) against delassusMatrix and the dense oracle, and the
/// step's velocity change against H^-1 Jc^T lambda.
void checkScene(const ClusterModel& cm, const ContactProblem& problem, VecX y, const VecX& ydot) {
  ClusterData data(cm), other(cm);
  ContactData cd(cm, problem);
  ASSERT_EQ(independentToSpanning(cm, data, y, ydot), Status::Ok) << data.errorMessage();
  VecX q = data.q, v = data.v;
  VecX tau = VecX::LinSpaced(cm.ny, -1.0, 2.0);
  StepSettings st;
  st.activationDistance = 1e9;  // every contact in the problem
  st.contact.tolerance = 1e-12;
  st.contact.maxIterations = 20000;
  ASSERT_EQ(assembleContactProblem(cm, data, problem, cd, q, v, tau, st), Status::Ok)
      << data.errorMessage();
  // Lower the base (y[2], its height) until every contact penetrates by at least 1 mm.
  ASSERT_EQ(cm.independentPosition[2], 2);
  y[2] -= cd.gap.maxCoeff() + 1e-3;
  ASSERT_EQ(independentToSpanning(cm, data, y, ydot), Status::Ok) << data.errorMessage();
  q = data.q;
  v = data.v;
  {  // the workspace last used at another configuration (poses of its own left in it)
    VecX y2 = y;
    y2.tail(cm.nyq - 7) *= 0.5;
    ASSERT_EQ(independentToSpanning(cm, data, y2, ydot), Status::Ok) << data.errorMessage();
    ConstraintData elsewhere(cm, problem.rows());
    ASSERT_EQ(delassusMatrix(cm, data, problem.rows(), elsewhere, data.q), Status::Ok);
  }
  ASSERT_EQ(assembleContactProblem(cm, data, problem, cd, q, v, tau, st), Status::Ok)
      << data.errorMessage();
  const MatX stepD = cd.rows.delassus;
  const ConstraintSet& set = problem.rows();
  ConstraintData ref(cm, set);
  ASSERT_EQ(delassusMatrix(cm, other, set, ref, q), Status::Ok) << other.errorMessage();
  EXPECT_LT(relativeDifference(stepD, ref.delassus), 1e-12);
  ASSERT_EQ(constraintJacobian(cm, other, set, ref, q, v), Status::Ok) << other.errorMessage();
  ASSERT_EQ(clusterMassMatrix(cm, other, q), Status::Ok) << other.errorMessage();
  const Eigen::LLT<MatX> H(other.H);
  const MatX dense = ref.jacobian * H.solve(ref.jacobian.transpose());
  EXPECT_LT(relativeDifference(stepD, dense), 1e-10);
  // The problem's Jc and G: the dense Jacobian's rows and the Delassus matrix turned into the
  // contact frames (T: R_i^T on each point contact's rows), G exactly symmetric.
  const int m = set.rows();
  MatX T = MatX::Identity(m, m);
  for (size_t i = 0; i < problem.contacts().size(); ++i) {
    ASSERT_EQ(problem.contacts()[i].cone, ConeType::Coulomb);
    const int r = set.rowOffset(problem.bilateralCount() + static_cast<int>(i));
    T.block<3, 3>(r, r) = cd.frame[i].transpose();
  }
  EXPECT_LT(relativeDifference(cd.Jc, T * ref.jacobian), 1e-12);
  EXPECT_LT(relativeDifference(cd.G, T * ref.delassus * T.transpose()), 1e-12);
  EXPECT_EQ((cd.G - cd.G.transpose()).cwiseAbs().maxCoeff(), 0.0);
  // One step: y_dot+ - y_dot_free = H^-1 Jc^T lambda (Jc and lambda in contact frames).
  const Status s = contactStep(cm, data, problem, cd, q, v, tau, st);
  ASSERT_TRUE(s == Status::Ok || s == Status::NotConverged) << data.errorMessage();
  const VecX expected = H.solve(cd.Jc.transpose() * cd.lambda);
  ASSERT_GT(expected.cwiseAbs().maxCoeff(), 1e-6);  // the contacts push
  EXPECT_LT(relativeDifference(cd.ydot - cd.ydotFree, expected), 1e-10);
}

VecX cheetahState(const ClusterModel& cm) {
  VecX y = VecX::Zero(cm.nyq);
  y[2] = 0.25;
  y.segment<4>(3) = Eigen::Quaterniond(Eigen::AngleAxisd(0.1, Vec3(1, 2, 3).normalized())).coeffs();
  for (int i = 7; i < cm.nyq; ++i) y[i] = 0.3 * std::sin(1.7 * i);
  return y;
}

}  // namespace

TEST(ContactAfterAba, CheetahPointFeetEqualTheStandaloneDelassusAndTheDenseResponse) {
  CLUSTERDYN_SKIP_WITHOUT_SHARED(test::sharedPath("urdfplus/mini_cheetah.urdf"));
  const ClusterModel cm = loadModel(test::sharedPath("urdfplus/mini_cheetah.urdf"));
  ContactProblem p(cm);
  for (const char* leg : {"FR", "FL", "HR", "HL"})
    p.addGroundFoot(std::string(leg) + "_foot",
                    cm.treeModel.bodyId(std::string(leg) + "_knee_link"), Vec3(0.0, 0.0, -0.19),
                    0.0, 0.8);
  VecX ydot = VecX::LinSpaced(cm.ny, -0.5, 0.7);
  checkScene(cm, p, cheetahState(cm), ydot);
}

TEST(ContactAfterAba, ContactOnARotorTakesTheStandalonePassesAndAgrees) {
  CLUSTERDYN_SKIP_WITHOUT_SHARED(test::sharedPath("urdfplus/mini_cheetah.urdf"));
  const ClusterModel cm = loadModel(test::sharedPath("urdfplus/mini_cheetah.urdf"));
  ContactProblem p(cm);
  p.addGroundFoot("FR_foot", cm.treeModel.bodyId("FR_knee_link"), Vec3(0.0, 0.0, -0.19), 0.0, 0.8);
  p.addGroundFoot("rotor", cm.treeModel.bodyId("HL_knee_rotor"), Vec3(0.02, 0.0, 0.0), 0.0, 0.8);
  VecX ydot = VecX::LinSpaced(cm.ny, 0.4, -0.6);
  checkScene(cm, p, cheetahState(cm), ydot);
}

TEST(ContactAfterAba, WalkerEmbeddedAndCutLoopsEqualTheStandaloneDelassusAndTheDenseResponse) {
  for (const bool cut : {false, true}) {
    SCOPED_TRACE(cut ? "loops cut into bilateral rows" : "loops embedded");
    ModelOptions o;
    o.floatingBase = true;
    const ClusterModel ce = loadModel(test::modelsPath("cd_parallel_walker.urdf"), o);
    o.cutLoops = true;
    const ClusterModel cc = loadModel(test::modelsPath("cd_parallel_walker.urdf"), o);
    ClusterData de(ce);
    VecX y = VecX::Zero(ce.nyq), ydot = VecX::LinSpaced(ce.ny, -0.3, 0.4);
    y[2] = 0.26;
    y.segment<4>(3) = Eigen::Quaterniond(Eigen::AngleAxisd(0.05, Vec3::UnitX())).coeffs();
    for (int i = 0; i < 4; ++i) y[7 + i] = 0.1 * (i + 1);
    ASSERT_EQ(independentToSpanning(ce, de, y, ydot), Status::Ok) << de.errorMessage();
    const ClusterModel& cm = cut ? cc : ce;
    const ConstraintSet loops = cutLoopConstraints(cc);
    ContactProblem p = cut ? ContactProblem(cc, &loops) : ContactProblem(ce);
    for (const char* leg : {"lf", "rf", "lh", "rh"})
      p.addGroundFoot(std::string(leg) + "_foot",
                      cm.treeModel.bodyId(std::string(leg) + "_coupler"), Vec3(0.03, 0.0, -0.05),
                      0.02, 0.8);
    if (!cut) {
      checkScene(ce, p, y, ydot);
      continue;
    }
    // The cut model (a tree): its independent coordinates are the embedded model's spanning
    // ones, mapped by name.
    ASSERT_EQ(cc.nyq, cc.treeModel.nq);
    VecX yc(cc.nyq), ydc(cc.ny);
    for (int i = 0; i < cc.nyq; ++i)
      yc[i] = de.q[ce.treeModel.positionIndex(cc.independentPositionNames[i])];
    for (int i = 0; i < cc.ny; ++i)
      ydc[i] = de.v[ce.treeModel.velocityIndex(cc.independentVelocityNames[i])];
    checkScene(cc, p, yc, ydc);
  }
}
