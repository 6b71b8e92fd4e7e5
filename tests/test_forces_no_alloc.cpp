// The constraint-force functions (constraint_forces.hpp) must not touch the heap once the
// ClusterData and JointForces exist, on success and on rejected arguments.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>

#include "alloc_counter.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "loop_model_generator.hpp"
#include "test_util.hpp"

using namespace clusterdyn;
namespace fs = std::filesystem;

namespace {

using test::AllocationScope;
using test::noAllocation;

std::vector<std::pair<std::string, ClusterModel>> models() {
  std::vector<std::pair<std::string, ClusterModel>> out;
  for (const char* f : {"cd_quadruped.urdf", "cd_four_bar.urdf", "cd_belt_leg.urdf",
                        "cd_differential.urdf", "cd_six_bar.urdf", "cd_mimic_gripper.urdf"})
    out.emplace_back(f, loadModel(std::string(CLUSTERDYN_MODELS_DIR) + "/" + f));
  for (const char* f :
       {"mini_cheetah.urdf", "mit_humanoid.urdf", "tello_humanoid_approximate.urdf"}) {
    const std::string p = clusterdyn::test::sharedPath(std::string("urdfplus/") + f);
    if (fs::exists(p)) out.emplace_back(f, loadModel(p));
  }
  int seed = 0;
  for (auto kind : testgen::allMechanismKinds()) {
    std::mt19937_64 rng(9100 + seed++);
    testgen::GeneratorOptions o;
    o.floatingBase = seed % 2;
    o.treeLinks = 2;
    o.mechanisms = 2;
    o.kinds = {kind, testgen::MechanismKind::ParallelFourBars};
    const auto r = testgen::generateLoopModel(rng, o);
    out.emplace_back(std::string("generated_") + testgen::mechanismName(kind),
                     buildClusterModel(parseUrdfString(r.urdf, "generated.urdf")));
  }
  return out;
}

TEST(ForcesNoAlloc, ComputeCallsDoNotAllocate) {
  for (const auto& [name, cm] : models()) {
    SCOPED_TRACE(name);
    ClusterData data(cm);
    JointForces F(cm);
    std::mt19937_64 rng(3);
    VecX y(cm.nyq), yd(cm.ny);
    ASSERT_EQ(spanningToIndependent(cm, data, cm.qReference, VecX::Zero(cm.treeModel.nv), y, yd),
              Status::Ok);
    yd = clusterdyn::test::randomVector(cm.ny, rng);
    ASSERT_EQ(independentToSpanning(cm, data, y, yd), Status::Ok);
    const VecX q = data.q, v = data.v;
    const VecX tauY = clusterdyn::test::randomVector(cm.ny, rng);
    const VecX tauS = clusterdyn::test::randomVector(cm.treeModel.nv, rng);
    VecX badTau = tauY;
    badTau[0] = std::nan("");
    const VecX shortTau = VecX::Zero(cm.ny + 1);
    const auto fext = clusterdyn::test::randomForces(cm.treeModel, rng);
    Data td(cm.treeModel);
    std::vector<Force> treeF(cm.treeModel.nbodies);
    const VecX qTree = cm.qReference;
    int failures = 0, rejected = 0;
    double sink = 0.0;
    AllocationScope armed;
    for (int it = 0; it < 50; ++it) {
      failures += ceAba(cm, data, q, v, tauY, fext.data()) != Status::Ok;
      failures += ceAbaConstraintForces(cm, data, F, tauY) != Status::Ok;
      failures += jointForcesInWorld(cm, data, F) != Status::Ok;
      sink +=
          F.joint[0][0] + F.jointWorld[0][0] + F.relationJointForce.sum() + F.loopRowForce.sum();
      failures += ceAbaSpanningForces(cm, data, q, v, tauS) != Status::Ok;
      failures +=
          ceAbaConstraintForces(cm, data, F, tauS, GeneralizedForceLayout::Spanning) != Status::Ok;
      failures += ceRnea(cm, data, q, v, data.ydd) != Status::Ok;
      failures += ceRneaConstraintForces(cm, data, F) != Status::Ok;
      failures += aba(cm.treeModel, td, qTree, v, tauS) != Status::Ok;
      failures += abaJointForces(cm.treeModel, td, treeF) != Status::Ok;
      sink += treeF[0][0] + F.joint[0][1];
      rejected += ceAbaConstraintForces(cm, data, F, badTau) == Status::NonFinite;
      rejected += ceAbaConstraintForces(cm, data, F, shortTau) == Status::InvalidSize;
    }
    const long count = armed.stop();
    EXPECT_TRUE(noAllocation(count, "constraint-force calls"));
    EXPECT_EQ(failures, 0) << data.errorMessage();
    EXPECT_EQ(rejected, 100);
    EXPECT_TRUE(std::isfinite(sink));
  }
}

}  // namespace
