// ceAba without external forces leaves the cluster motion subspace S of a cluster in composite
// form unwritten (its pass 2 works from the spanning-tree inertia, its pass 3 is a forward sweep
// over the cluster's joints: ClusterWorkspace::sDeferred), and the readers of S after ceAba
// write it first (completeMotionSubspaces). On the Stewart platform (cd_stewart.urdf: a ball
// joint in its loop cluster, d = 6, the composite form), each reader after a ceAba whose S is
// deferred (the workspace holding the S of another state) against its own oracle: S written by
// ceAba with external forces at the same state; the contact problem's Delassus matrix, row
// Jacobian and impulse response against delassusMatrix, constraintJacobian and H^-1 Jc^T lambda
// on a fresh workspace; the Delassus matrix and proxPV after ceAba against a fresh workspace.
// (The constraint forces and the CE-ABA derivatives after ceAba on this model:
// test_constraint_forces.cpp and test_constrained_derivatives.cpp.)
#include <gtest/gtest.h>

#include <random>

#include "closed_states.hpp"
#include "cluster/cluster_kinematics.hpp"
#include "cluster/cluster_workspace.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "test_util.hpp"
#include "tree/tree_step.hpp"

using namespace clusterdyn;

namespace {

double relativeDifference(const MatX& a, const MatX& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

/// The index of the model's one cluster in composite form (-1 when none).
int compositeCluster(const ClusterData& data) {
  const std::vector<ClusterWorkspace>& ws = detail::scratch(data);
  int found = -1;
  for (int k = 0; k < static_cast<int>(ws.size()); ++k)
    if (ws[k].composite.active) found = found < 0 ? k : -2;
  return found;
}

struct Stewart {
  ClusterModel cm = loadModel(test::modelsPath("cd_stewart.urdf"));
};

/// Two closed states of the Stewart platform near its reference pose.
void twoStates(const ClusterModel& cm, ClusterData& data, std::mt19937_64& rng,
               support::ClosedState& a, support::ClosedState& b) {
  ASSERT_TRUE(support::randomClosedStateNearReference(cm, data, rng, a, 0.05, 40));
  ASSERT_TRUE(support::randomClosedStateNearReference(cm, data, rng, b, 0.05, 40));
}

}  // namespace

TEST(DeferredSubspace, CeAbaDefersOnlyTheCompositeClustersSubspace) {
  const Stewart s;
  const ClusterModel& cm = s.cm;
  ClusterData data(cm), withForces(cm);
  const int k = compositeCluster(data);
  ASSERT_GE(k, 0);  // the composite form is in use: the test is not vacuous
  std::mt19937_64 rng(20261126);
  support::ClosedState a, b;
  twoStates(cm, data, rng, a, b);
  const VecX tau = support::uniformVector(cm.ny, rng, -2.0, 2.0);
  const std::vector<Force> zero(cm.treeModel.nbodies, Force::Zero());
  // S of state a in data, then ceAba at b without external forces: S deferred (still a's).
  ASSERT_EQ(ceAba(cm, data, a.q, a.v, tau, zero.data()), Status::Ok) << data.errorMessage();
  EXPECT_FALSE(detail::scratch(data)[k].sDeferred);
  const MatX Sa = detail::scratch(data)[k].S;
  ASSERT_EQ(ceAba(cm, data, b.q, b.v, tau), Status::Ok) << data.errorMessage();
  EXPECT_TRUE(detail::scratch(data)[k].sDeferred);
  EXPECT_EQ(detail::scratch(data)[k].S, Sa);  // not written
  for (int j = 0; j < static_cast<int>(cm.clusters.size()); ++j)
    if (j != k) EXPECT_FALSE(detail::scratch(data)[j].sDeferred) << j;
  // With external forces (zero: the same accelerations) ceAba writes S at b.
  ASSERT_EQ(ceAba(cm, withForces, b.q, b.v, tau, zero.data()), Status::Ok);
  EXPECT_FALSE(detail::scratch(withForces)[k].sDeferred);
  const MatX& Sb = detail::scratch(withForces)[k].S;
  ASSERT_GT(relativeDifference(Sa, Sb), 1e-6);  // the two states' S differ
  EXPECT_EQ(data.qdd, withForces.qdd);
  EXPECT_EQ(data.ydd, withForces.ydd);
  detail::completeMotionSubspaces(cm, data);  // S at b from ceAba's kinematics: the same S
  EXPECT_FALSE(detail::scratch(data)[k].sDeferred);
  EXPECT_EQ(detail::scratch(data)[k].S, Sb);
  // The forward sweep of pass 3 against Xh a_out + c + S y_ddot (ceAba with external forces
  // takes the same sweep: compare with eq. 61 written out here).
  const Cluster& c = cm.clusters[k];
  const ClusterWorkspace& w = detail::scratch(data)[k];
  const Motion a0 = detail::gravityAcceleration(cm.treeModel);
  const Motion ao = c.outputBody >= 0 ? data.treeData.a_gf[c.outputBody] : a0;
  for (int body = c.firstBody; body < c.firstBody + c.nbodies; ++body) {
    const int l = body - c.firstBody;
    const Motion expected = w.outputTb[l].actInvMotion(ao) + w.c.segment<6>(6 * l) +
                            w.S.middleRows<6>(6 * l) * data.ydd.segment(c.y0, c.ny);
    EXPECT_TRUE(test::isClose(data.treeData.a_gf[body], expected, 1e-12)) << body;
  }
  // The delta's clusters (idle columns) take the pattern path: nothing deferred.
  const ClusterModel delta = loadModel(test::modelsPath("cd_delta.urdf"));
  ClusterData dd(delta);
  EXPECT_EQ(compositeCluster(dd), -1);
  support::ClosedState sd;
  ASSERT_TRUE(support::randomClosedStateNearReference(delta, dd, rng, sd, 0.05, 40));
  ASSERT_EQ(ceAba(delta, dd, sd.q, sd.v, VecX::Zero(delta.ny)), Status::Ok);
  for (const ClusterWorkspace& wd : detail::scratch(dd)) EXPECT_FALSE(wd.sDeferred);
}

TEST(DeferredSubspace, ContactProblemAfterCeAbaMatchesTheStandalonePasses) {
  // A sphere foot on the platform against a ground plane through it: assembleContactProblem
  // runs ceAba (S deferred) and reads S in the Delassus propagation and the row Jacobian;
  // contactStep reads it again in the impulse response.
  const Stewart s;
  const ClusterModel& cm = s.cm;
  ClusterData data(cm), other(cm);
  std::mt19937_64 rng(20261127);
  support::ClosedState a, b;
  twoStates(cm, data, rng, a, b);
  const VecX tau = support::uniformVector(cm.ny, rng, -2.0, 2.0);
  ContactProblem problem(cm);
  problem.addGroundFoot("platform_foot", cm.treeModel.bodyId("platform"), Vec3(0.05, -0.03, 0.0),
                        0.01, 0.8);
  ContactData cd(cm, problem);
  StepSettings st;
  st.activationDistance = 1e9;  // the contact is in the problem at any gap
  st.contact.tolerance = 1e-12;
  st.contact.maxIterations = 20000;
  ASSERT_EQ(assembleContactProblem(cm, data, problem, cd, b.q, b.v, tau, st), Status::Ok)
      << data.errorMessage();
  // The ground 2 mm above the foot's lowest point (normal +z): the foot penetrates.
  problem.setGround(Vec3::UnitZ(), problem.ground().offset + cd.gap[0] + 2e-3);
  // The workspace left with the S of state a (ceAba with external forces there).
  const std::vector<Force> zero(cm.treeModel.nbodies, Force::Zero());
  ASSERT_EQ(ceAba(cm, data, a.q, a.v, tau, zero.data()), Status::Ok) << data.errorMessage();
  VecX q = b.q, v = b.v;
  ASSERT_EQ(assembleContactProblem(cm, data, problem, cd, q, v, tau, st), Status::Ok)
      << data.errorMessage();
  EXPECT_NEAR(cd.gap[0], -2e-3, 1e-12);
  const ConstraintSet& set = problem.rows();
  ConstraintData ref(cm, set);
  ASSERT_EQ(delassusMatrix(cm, other, set, ref, q), Status::Ok) << other.errorMessage();
  EXPECT_LT(relativeDifference(cd.rows.delassus, ref.delassus), 1e-12);
  ASSERT_EQ(constraintJacobian(cm, other, set, ref, q, v), Status::Ok) << other.errorMessage();
  ASSERT_EQ(clusterMassMatrix(cm, other, q), Status::Ok) << other.errorMessage();
  const Eigen::LLT<MatX> H(other.H);
  EXPECT_LT(relativeDifference(cd.rows.delassus, ref.jacobian * H.solve(ref.jacobian.transpose())),
            1e-10);
  const Mat3 T = cd.frame[0].transpose();  // the rows turned into the contact frame
  EXPECT_LT(relativeDifference(cd.Jc, T * ref.jacobian), 1e-12);
  EXPECT_LT(relativeDifference(cd.G, T * ref.delassus * T.transpose()), 1e-12);
  // One step: y_dot+ - y_dot_free = H^-1 Jc^T lambda.
  const Status step = contactStep(cm, data, problem, cd, q, v, tau, st);
  ASSERT_TRUE(step == Status::Ok || step == Status::NotConverged) << data.errorMessage();
  const VecX expected = H.solve(cd.Jc.transpose() * cd.lambda);
  ASSERT_GT(expected.cwiseAbs().maxCoeff(), 1e-6);  // the contact pushes
  EXPECT_LT(relativeDifference(cd.ydot - cd.ydotFree, expected), 1e-10);
}

TEST(DeferredSubspace, ConstrainedSolversAfterCeAbaMatchAFreshWorkspace) {
  // The Delassus matrix, constrainedAba and proxPV write S in their own pass 1: after a ceAba
  // that deferred it, the same results as on a workspace that never ran ceAba.
  const Stewart s;
  const ClusterModel& cm = s.cm;
  ClusterData data(cm);
  std::mt19937_64 rng(20261128);
  support::ClosedState a, b;
  twoStates(cm, data, rng, a, b);
  const VecX tau = support::uniformVector(cm.ny, rng, -2.0, 2.0);
  ConstraintSet set(cm);
  set.addContact("platform", ConstraintType::Point);
  ConstraintData cd(cm, set), cdFresh(cm, set);
  ProximalSettings settings;
  for (const bool prox : {false, true}) {
    SCOPED_TRACE(prox ? "proxPv" : "constrainedAba");
    const auto solve = [&](ClusterData& d, ConstraintData& c) {
      return prox ? proxPv(cm, d, set, c, a.q, a.v, tau, settings)
                  : constrainedAba(cm, d, set, c, a.q, a.v, tau, settings);
    };
    ClusterData fresh(cm);
    ASSERT_EQ(ceAba(cm, data, a.q, a.v, tau), Status::Ok) << data.errorMessage();
    ASSERT_EQ(solve(data, cd), Status::Ok) << data.errorMessage();
    ASSERT_EQ(solve(fresh, cdFresh), Status::Ok) << fresh.errorMessage();
    EXPECT_EQ(data.ydd, fresh.ydd);
    EXPECT_EQ(cd.lambda, cdFresh.lambda);
  }
  ClusterData fresh(cm);
  ASSERT_EQ(ceAba(cm, data, b.q, b.v, tau), Status::Ok) << data.errorMessage();
  ASSERT_EQ(delassusMatrix(cm, data, set, cd, b.q), Status::Ok) << data.errorMessage();
  ASSERT_EQ(delassusMatrix(cm, fresh, set, cdFresh, b.q), Status::Ok) << fresh.errorMessage();
  EXPECT_EQ(cd.delassus, cdFresh.delassus);
}
