// The public input validation (validation.hpp) and the closure's warm-start policy
// (setClosureWarmStart; data.q back to qReference after a ConstraintFailure), which the C API
// relies on instead of its own copies.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "clusterdyn/clusterdyn.hpp"
#include "test_util.hpp"

namespace cd = clusterdyn;
using cd::Status;
using cd::VecX;

namespace {

/// cd_four_bar with a 0.05 m rocker (instead of 0.22 m): the rocker now turns fully and the
/// crank only rocks, so the closure has no solution for crank angles near 90 degrees (the
/// coupler's far end cannot reach the rocker): a ConstraintFailure that is not a bug.
cd::ClusterModel shortRockerFourBar() {
  std::string text = cd::test::readTextFile(cd::test::modelsPath("cd_four_bar.urdf"));
  const std::string from = "<origin xyz=\"0.22 0 0\"/>", to = "<origin xyz=\"0.05 0 0\"/>";
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos);
  text.replace(at, from.size(), to);
  return cd::buildClusterModel(cd::parseUrdfString(text, "short_rocker_four_bar.urdf"));
}

}  // namespace

TEST(Validation, VectorSizeAndFiniteness) {
  const cd::Model m = cd::loadTreeModel(cd::test::modelsPath("cd_quadruped_approximate.urdf"));
  cd::Data data(m);
  VecX x = VecX::Zero(m.nv);
  EXPECT_EQ(cd::validateVector(data, x, m.nv, "v"), Status::Ok);
  EXPECT_EQ(cd::validateVector(data, x, m.nv + 1, "v"), Status::InvalidSize);
  EXPECT_NE(std::string(data.errorMessage()).find("v has size"), std::string::npos)
      << data.errorMessage();
  x[3] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(cd::validateVector(data, x, m.nv, "v"), Status::NonFinite);
  EXPECT_NE(std::string(data.errorMessage()).find("v[3] is not finite"), std::string::npos)
      << data.errorMessage();
}

TEST(Validation, ConfigurationQuaternions) {
  const cd::Model m = cd::loadTreeModel(cd::test::modelsPath("cd_quadruped_approximate.urdf"));
  ASSERT_EQ(m.nq, m.nv + 1);  // the floating base's unit quaternion
  cd::Data data(m);
  VecX q = cd::neutralConfiguration(m);
  EXPECT_EQ(cd::validateConfiguration(m, data, q), Status::Ok);
  q *= 2.0;  // the quaternion block is no longer unit
  EXPECT_EQ(cd::validateConfiguration(m, data, q), Status::NotUnitQuaternion);
  EXPECT_EQ(cd::validateConfiguration(m, data, q.head(m.nq - 1)), Status::InvalidSize);
}

TEST(Validation, WarmStartIsCheckedBeforeItChanges) {
  const cd::ClusterModel cm = cd::loadModel(cd::test::modelsPath("cd_four_bar.urdf"));
  cd::ClusterData data(cm);
  ASSERT_EQ(cd::solveLoopClosure(cm, data, VecX::Constant(cm.nyq, 0.4)), Status::Ok);
  const VecX before = data.q;
  VecX guess = before;
  guess[1] = std::numeric_limits<double>::infinity();
  EXPECT_EQ(cd::setClosureWarmStart(cm, data, guess), Status::NonFinite);
  EXPECT_EQ(cd::setClosureWarmStart(cm, data, guess.head(cm.treeModel.nq - 1)),
            Status::InvalidSize);
  EXPECT_EQ(data.q, before);  // untouched by the rejected calls
  guess = before;
  guess[1] += 0.01;
  ASSERT_EQ(cd::setClosureWarmStart(cm, data, guess), Status::Ok);
  EXPECT_EQ(data.q, guess);
  const cd::ClusterModel otherModel = cd::loadModel(cd::test::modelsPath("cd_four_bar.urdf"));
  cd::ClusterData other(otherModel);
  EXPECT_EQ(cd::setClosureWarmStart(cm, other, guess), Status::WorkspaceMismatch);
}

TEST(Validation, FailedClosureResetsTheWarmStartToTheReference) {
  const cd::ClusterModel cm = shortRockerFourBar();
  cd::ClusterData data(cm);
  const VecX ydot = VecX::Ones(cm.ny), tau = VecX::Zero(cm.ny);
  const VecX reachable = VecX::Constant(cm.nyq, 0.5), unreachable = VecX::Constant(cm.nyq, 1.5708);

  // Each entry point that may fail to close leaves data.q = qReference after the failure.
  for (int entry = 0; entry < 4; ++entry) {
    SCOPED_TRACE("entry point " + std::to_string(entry));
    ASSERT_EQ(cd::solveLoopClosure(cm, data, reachable), Status::Ok);
    ASSERT_GT((data.q - cm.qReference).norm(), 1e-3);  // the warm start has moved
    Status s = Status::Ok;
    if (entry == 0) s = cd::solveLoopClosure(cm, data, unreachable);
    if (entry == 1) s = cd::independentToSpanning(cm, data, unreachable, ydot);
    if (entry == 2) s = cd::ceAbaIndependent(cm, data, unreachable, ydot, tau);
    if (entry == 3) {
      VecX q = data.q;
      q[cm.independentPosition[0]] = unreachable[0];
      s = cd::projectToConstraints(cm, data, q, VecX::Zero(cm.treeModel.nv));
    }
    EXPECT_EQ(s, Status::ConstraintFailure) << data.treeData.errorMessage();
    EXPECT_EQ(data.q, cm.qReference);
  }
  // Rejected inputs (checked first) leave the warm start where it was.
  ASSERT_EQ(cd::solveLoopClosure(cm, data, reachable), Status::Ok);
  const VecX closed = data.q;
  VecX bad = reachable;
  bad[0] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(cd::solveLoopClosure(cm, data, bad), Status::NonFinite);
  EXPECT_EQ(data.q, closed);
}
