// computeConstrainedDynamicsDerivatives must not touch the heap once its workspaces exist: every
// allocation while an AllocationScope is armed is counted (alloc_counter.hpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "alloc_counter.hpp"
#include "closed_states.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "clusterdyn/constrained_derivatives.hpp"
#include "test_util.hpp"

using namespace clusterdyn;
using test::AllocationScope;
using test::noAllocation;

TEST(ConstrainedDerivativesNoAlloc, RunsWithoutHeap) {
  ModelOptions cutAll;
  cutAll.cutLoops = true;
  struct Case {
    const char* file;
    bool cut;
    const char* contact;  ///< link with a point contact (Baumgarte gains, world-aligned)
    const char* loop;     ///< link held to the first body at a point (nullptr: none)
  };
  // Contacts on a floating quadruped with rotors; implicit loop clusters (no set); the RSU
  // leg's embedded loops (ball joints) plus a contact, and the same loops cut; a cut
  // (rank-deficient) loop set; MJCF joint dynamics (cd_geared_leg: armature, springs,
  // dampers, embedded gears) with a foot contact.
  for (const Case& k : {Case{"cd_quadruped.urdf", false, "lf_foot", "rf_foot"},
                        Case{"cd_parallel_walker.urdf", false, nullptr, nullptr},
                        Case{"cd_rsu_leg.urdf", false, "foot", nullptr},
                        Case{"cd_rsu_leg.urdf", true, "foot", nullptr},
                        Case{"cd_six_bar.urdf", true, nullptr, nullptr},
                        Case{"cd_geared_leg.xml", false, "shank", nullptr}}) {
    const ClusterModel cm = loadModel(test::modelsPath(k.file), k.cut ? cutAll : ModelOptions{});
    ConstraintSet set = k.cut ? cutLoopConstraints(cm) : ConstraintSet(cm);
    const Model& tree = cm.treeModel;
    if (k.contact) {
      RigidConstraint c;
      c.name = "contact";
      c.type = ConstraintType::Point;
      c.body1 = tree.frames[tree.frameId(k.contact)].body;
      c.placement1 = tree.frames[tree.frameId(k.contact)].placement;
      c.frame = ReferenceFrame::LocalWorldAligned;
      c.kp = 10.0, c.kd = 2.0;
      set.add(c);
    }
    if (k.loop) {
      RigidConstraint c;
      c.name = "loop";
      c.type = ConstraintType::Point;  // the leg has 3 joints: a weld would over-constrain it
      c.body1 = tree.frames[tree.frameId(k.loop)].body;
      c.placement1 = tree.frames[tree.frameId(k.loop)].placement;  // the foot, not the knee
      c.body2 = 0;
      set.add(c);
    }
    ClusterData data(cm);
    ConstrainedDerivativeData cdd(cm, set);
    std::mt19937_64 rng(4);
    support::ClosedState st;  // a random closed state (the straight leg is singular)
    ASSERT_TRUE(support::randomClosedState(cm, data, rng, st, 0.5));
    const VecX q = st.q, v = st.v;
    const VecX tau = test::randomVector(cm.ny, rng);
    std::vector<Force> fext(cm.treeModel.nbodies, Force::Constant(0.5));
    VecX qbad = q;
    qbad[0] = std::nan("");
    for (int pass = 0; pass < 2; ++pass) {
      AllocationScope scope;
      const Status a = computeConstrainedDynamicsDerivatives(cm, data, set, cdd, q, v, tau);
      char msgA[256];
      std::snprintf(msgA, sizeof msgA, "%s", data.errorMessage());
      const Status b =
          computeConstrainedDynamicsDerivatives(cm, data, set, cdd, q, v, tau, fext.data());
      const Status c = computeConstrainedDynamicsDerivatives(cm, data, set, cdd, qbad, v, tau);
      EXPECT_TRUE(noAllocation(scope.stop(), k.file));
      EXPECT_EQ(a, Status::Ok) << k.file << ": " << msgA;
      EXPECT_EQ(b, Status::Ok) << k.file << ": " << data.errorMessage();
      EXPECT_EQ(c, Status::NonFinite) << k.file;
    }
  }
}
