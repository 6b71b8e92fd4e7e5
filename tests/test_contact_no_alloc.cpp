// contactStep and the contact solvers must not touch the heap once ContactData exists: every
// allocation while an AllocationScope is armed is counted (alloc_counter.hpp).
#include <gtest/gtest.h>

#include <random>

#include "alloc_counter.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "contact/contact_detail.hpp"
#include "contact_fixtures.hpp"
#include "test_util.hpp"

using namespace clusterdyn;
using test::AllocationScope;
using test::noAllocation;

TEST(ContactNoAlloc, StepsWithBothSolversRunWithoutHeap) {
  for (const bool cut : {false, true}) {  // loops embedded, or cut into bilateral rows
    ModelOptions o;
    o.floatingBase = true;
    o.cutLoops = cut;
    const ClusterModel cm = loadModel(test::modelsPath("cd_parallel_walker.urdf"), o);
    const ConstraintSet loops = cutLoopConstraints(cm);
    ContactProblem problem(cm, &loops);
    scenes::addWalkerFeet(cm, problem, 0.8);
    ClusterData data(cm);
    ContactData cd(cm, problem);
    VecX q, v;
    ASSERT_TRUE(test::closedSpanningState(cm, data, scenes::uprightAt(cm, 0.27 + 0.002),
                                          VecX::Zero(cm.ny), q, v));
    const VecX tau = VecX::Zero(cm.ny);
    StepSettings st;
    st.contact.maxIterations = 2000;
    for (int pass = 0; pass < 2; ++pass) {  // the second pass reuses warm workspaces
      AllocationScope scope;
      Status s[40];
      // Falls 2 mm, lands, then stands. PGS only with the loops embedded: on the cut loops (their
      // 5 rows per planar loop are redundant) it does not converge (docs/contact.md).
      for (int k = 0; k < 40; ++k) {
        st.solver = k % 2 && !cut ? StepSettings::Solver::Pgs : StepSettings::Solver::Admm;
        s[k] = contactStep(cm, data, problem, cd, q, v, tau, st);
      }
      EXPECT_TRUE(noAllocation(scope.stop(), cut ? "cut loops" : "embedded loops"));
      for (int k = 0; k < 40; ++k) EXPECT_EQ(s[k], Status::Ok) << k << ": " << data.errorMessage();
    }
    EXPECT_GT(cd.lambda.tail(12).cwiseAbs().maxCoeff(), 0.0);  // the feet did touch down
  }
}

TEST(ContactNoAlloc, AdmmNewtonPolishRunsWithoutHeap) {
  // The polish (both phases: mode changes, then damped steps on fixed modes) on problems with
  // Coulomb (one frictionless), Bilateral and Inactive blocks, G of deficient rank, from
  // starting points far from the solution so that phase 2 runs too.
  std::mt19937_64 rng(7);
  const int m = 14;
  std::vector<ConeBlock> blocks = {{ConeType::Bilateral, 0, 2, 0.0},
                                   {ConeType::Coulomb, 2, 3, 0.7},
                                   {ConeType::Coulomb, 5, 3, 0.0},
                                   {ConeType::Inactive, 8, 3, 0.5},
                                   {ConeType::Coulomb, 11, 3, 0.4}};
  ContactSolverWorkspace ws(m);
  ContactSolverSettings s;
  ContactResiduals r;
  int phase2 = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const MatX A = MatX::Random(m, 9);
    const MatX G = A * A.transpose();
    const VecX g = A * test::randomVector(9, rng) + 0.1 * VecX::Ones(m);
    VecX start = 0.3 * test::randomVector(m, rng);
    for (const ConeBlock& b : blocks) detail::projectCone(b, start.data() + b.row0);
    int steps = 0;
    AllocationScope scope;
    detail::polishContactSolution(G, g, blocks, s, ws, start, r, steps);
    EXPECT_TRUE(noAllocation(scope.stop(), "polish"));
    phase2 += steps > 8;
  }
  EXPECT_GT(phase2, 0);
}

TEST(ContactNoAlloc, PatchContactsRunWithoutHeap) {
  // Rolling, torsional and point feet and a rolling caller contact (the elliptic cone's
  // projections, the ellipsoid of PGS, the touching-point rows): no heap in the steps either.
  ModelOptions o;
  o.floatingBase = true;
  const ClusterModel cm = loadModel(test::modelsPath("cd_parallel_walker.urdf"), o);
  ContactProblem problem(cm);
  const double torsion[3] = {0.0, 0.01, 0.0}, rolling[3] = {0.02, 0.0, 0.0};
  const char* legs[4] = {"lf", "rf", "lh", "rh"};
  for (int i = 0; i < 3; ++i)
    problem.addGroundFoot(std::string(legs[i]) + "_foot",
                          cm.treeModel.bodyId(std::string(legs[i]) + "_coupler"),
                          Vec3(0.03, 0.0, -0.05), 0.02, 0.8, torsion[i], rolling[i]);
  problem.addPointContact("rh_patch", cm.treeModel.bodyId("rh_coupler"), Vec3(0.03, 0.0, -0.07),
                          ConeType::Rolling);
  ClusterData data(cm);
  ContactData cd(cm, problem);
  cd.mu[3] = 0.6;
  cd.muTorsion[3] = 0.005;
  cd.muRolling[3] = 0.01;
  VecX q, v;
  ASSERT_TRUE(test::closedSpanningState(cm, data, scenes::uprightAt(cm, 0.27 + 0.002),
                                        VecX::Zero(cm.ny), q, v));
  const VecX tau = VecX::Zero(cm.ny);
  StepSettings st;
  st.contact.maxIterations = 2000;
  for (int pass = 0; pass < 2; ++pass) {
    AllocationScope scope;
    for (int k = 0; k < 40; ++k) {
      st.solver = k % 2 ? StepSettings::Solver::Pgs : StepSettings::Solver::Admm;
      const Status s = contactStep(cm, data, problem, cd, q, v, tau, st);
      (void)s;  // convergence is not the point here (tested elsewhere)
    }
    EXPECT_TRUE(noAllocation(scope.stop(), "patch contacts"));
  }
  EXPECT_GT(cd.lambda.cwiseAbs().maxCoeff(), 0.0);  // the feet did touch down
}

// Couplings only (the mini cheetah's rotor transmissions): the step's spanning integration and
// relation residuals, and the closure's Newton for a state off the relations.
TEST(ContactNoAlloc, CouplingsOnlyStepRunsWithoutHeap) {
  CLUSTERDYN_SKIP_WITHOUT_SHARED(test::sharedPath("urdfplus/mini_cheetah.urdf"));
  const ClusterModel cm = loadModel(test::sharedPath("urdfplus/mini_cheetah.urdf"));
  ASSERT_FALSE(cm.hasImplicitClusters());
  ContactProblem problem(cm);
  scenes::addCheetahFeet(cm, problem, 0.8);
  ClusterData data(cm);
  ContactData cd(cm, problem);
  VecX q, v;
  ASSERT_TRUE(
      test::closedSpanningState(cm, data, scenes::uprightAt(cm, 0.3), VecX::Zero(cm.ny), q, v));
  const VecX tau = VecX::Zero(cm.ny);
  const StepSettings st;
  const Cluster& c = cm.clusters.back();
  const int rotor = cm.treeModel.idx_q[cm.treeModel.velocityOwner[c.v0 + c.dependent[0]]];
  for (int pass = 0; pass < 2; ++pass) {
    AllocationScope scope;
    Status s[21];
    for (int k = 0; k < 20; ++k) s[k] = contactStep(cm, data, problem, cd, q, v, tau, st);
    q[rotor] += 1e-9;  // off the relations: Newton
    s[20] = contactStep(cm, data, problem, cd, q, v, tau, st);
    EXPECT_TRUE(noAllocation(scope.stop(), "couplings"));
    for (int k = 0; k < 21; ++k) EXPECT_EQ(s[k], Status::Ok) << k << ": " << data.errorMessage();
  }
}
