// The constraint algorithms must not touch the heap once ConstraintData exists: every allocation
// while an AllocationScope is armed is counted (alloc_counter.hpp).
#include <gtest/gtest.h>

#include <random>

#include "alloc_counter.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "test_util.hpp"

using namespace clusterdyn;
using test::AllocationScope;
using test::noAllocation;

TEST(ConstraintsNoAlloc, EveryAlgorithmRunsWithoutHeap) {
  for (const char* file : {"cd_quadruped.urdf", "cd_belt_leg.urdf", "cd_six_bar.urdf"}) {
    const ClusterModel cm = loadModel(test::modelsPath(file));
    ClusterData data(cm);
    ConstraintSet contacts(cm), loops(cm);
    for (int b = cm.treeModel.nbodies - 1, n = 0; b >= 0 && n < 3; b -= 2, ++n) {
      RigidConstraint c;
      c.name = "c" + std::to_string(n);
      c.type = n % 2 ? ConstraintType::Point : ConstraintType::Weld;
      c.body1 = b;
      contacts.add(c);
      c.body2 = b > 0 ? b - 1 : -1;
      loops.add(c);
    }
    ConstraintData cdc(cm, contacts), cdl(cm, loops);
    std::mt19937_64 rng(3);
    const VecX q = cm.qReference, v = VecX::Zero(cm.treeModel.nv);
    const VecX tau = test::randomVector(cm.ny, rng);
    VecX qbad = q;
    qbad[0] = std::nan("");
    const ProximalSettings s;
    for (int pass = 0; pass < 2; ++pass) {  // the second pass reuses warm workspaces
      AllocationScope scope;
      Status st[12] = {delassusMatrix(cm, data, contacts, cdc, q),
                       dampedDelassusInverse(cm, data, contacts, cdc, q, 1e-6),
                       dampedDelassusInverse(cm, data, loops, cdl, q, 1e-6),
                       constrainedAba(cm, data, contacts, cdc, q, v, tau, s),
                       constrainedAba(cm, data, contacts, cdc, q, v, tau, s, nullptr, true),
                       proxPv(cm, data, contacts, cdc, q, v, tau, s),
                       proxPv(cm, data, loops, cdl, q, v, tau, s),
                       constrainedDynamicsDense(cm, data, loops, cdl, q, v, tau, s),
                       delassusMatrixLtl(cm, data, contacts, cdc, q),
                       constraintJacobian(cm, data, loops, cdl, q, v),
                       proxPv(cm, data, loops, cdl, qbad, v, tau, s),        // fails: NonFinite
                       constrainedAba(cm, data, loops, cdl, q, v, tau, s)};  // fails: two-body set
      EXPECT_TRUE(noAllocation(scope.stop(), file));
      for (int i = 0; i < 10; ++i)
        EXPECT_TRUE(st[i] == Status::Ok || st[i] == Status::NotConverged)
            << file << " call " << i << ": " << data.errorMessage();
      EXPECT_EQ(st[10], Status::NonFinite);
      EXPECT_EQ(st[11], Status::InvalidArgument);
    }
    // The accuracy paths: constrainedAba adapting mu both ways (a stall at a large mu, the
    // dynamics check at a tiny one), the damped inverse factorized at a tiny rho.
    ProximalSettings large = s, tiny = s;
    large.mu = 1.0;  // the quadruped stalls and shrinks it to 0.1
    tiny.mu = 1e-15;
    AllocationScope scope;
    const Status st[3] = {constrainedAba(cm, data, contacts, cdc, q, v, tau, large),
                          constrainedAba(cm, data, contacts, cdc, q, v, tau, tiny),
                          dampedDelassusInverse(cm, data, contacts, cdc, q, 1e-12)};
    EXPECT_TRUE(noAllocation(scope.stop(), file));
    for (int i = 0; i < 3; ++i)
      EXPECT_TRUE(st[i] == Status::Ok || st[i] == Status::NotConverged)
          << file << " accuracy call " << i << ": " << data.errorMessage();
  }
}
