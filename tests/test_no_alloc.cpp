// The compute functions must not touch the heap once Data exists (data.hpp): every allocation
// while an AllocationScope is armed is counted (alloc_counter.hpp replaces the global allocation
// functions of this binary).
#include <gtest/gtest.h>

#include <cstring>
#include <limits>

#include "alloc_counter.hpp"
#include "test_util.hpp"

namespace clusterdyn::test {
namespace {

struct Case {
  std::string name;
  Model model;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const std::string& path : sharedTreeModelFiles())
    out.push_back({path.substr(path.find_last_of('/') + 1), loadTreeModel(path)});
  for (const std::string& path : bundledTreeModelFiles())
    out.push_back({path.substr(path.find_last_of('/') + 1), loadTreeModel(path)});
  std::mt19937_64 rng(31);
  for (int k = 0; k < 6; ++k) {
    RandomModelOptions o;
    o.nbodies = 4 + 2 * k;
    o.floatingBase = k % 2 == 1;
    o.fixedLinkProbability = 0.25;
    o.branchProbability = 0.4;
    out.push_back({"random_" + std::to_string(k), randomTreeModel(rng, o)});
  }
  return out;
}

TEST(NoAlloc, CounterSeesEveryKindOfAllocation) {
  // Without this the zero counts below would prove nothing. (volatile pointers: the allocation
  // functions live in another translation unit, so the compiler could elide a new/delete pair.)
  {
    AllocationScope s;
    int* volatile p = new int(3);
    delete p;
    EXPECT_EQ(s.stop(), 1);
  }
  {
    AllocationScope s;
    double* volatile p = new double[5];
    delete[] p;
    EXPECT_EQ(s.stop(), 1);
  }
  {
    struct alignas(64) Wide {
      double x[8];
    };
    AllocationScope s;
    Wide* volatile p = new Wide;
    delete p;
    Wide* volatile q = new (std::nothrow) Wide[2];
    delete[] q;
    EXPECT_EQ(s.stop(), 2);
  }
  {
    AllocationScope s;
    VecX x(100);  // Eigen: aligned_malloc -> malloc
    x.setZero();
    EXPECT_GE(s.stop(), 1);
  }
  {
    AllocationScope s;
    void* volatile p = std::malloc(16);
    p = std::realloc(p, 64);
    std::free(p);
    void* volatile c = std::calloc(4, 8);
    std::free(c);
    EXPECT_EQ(s.stop(), 3);
  }
  const std::vector<Case> all = cases();
  {
    const Model& m = all.front().model;
    AllocationScope s;
    Data data(m);
    EXPECT_GT(s.stop(), 0);  // creating the workspace does allocate
  }
}

/// Runs every compute function many times on one model and counts the allocations.
void runEverything(const Model& model, int iterations) {
  std::mt19937_64 rng(77);
  const int nstates = 8;
  std::vector<RandomState> states;
  std::vector<std::vector<Force>> forces;
  for (int s = 0; s < nstates; ++s) {
    states.push_back(randomState(model, rng));
    forces.push_back(randomForces(model, rng));
  }
  Mat6X J(6, model.nv);
  VecX qBuffer = states[0].q;
  const int nf = static_cast<int>(model.frames.size());
  const ReferenceFrame rfs[] = {ReferenceFrame::Local, ReferenceFrame::World,
                                ReferenceFrame::LocalWorldAligned};
  Data data(model);  // the only allocation allowed: creating the workspace
  double sink = 0.0;
  int failures = 0;

  AllocationScope scope;
  for (int it = 0; it < iterations; ++it) {
    const RandomState& st = states[it % nstates];
    const Force* fext = forces[it % nstates].data();
    failures += forwardKinematics(model, data, st.q) != Status::Ok;
    failures += forwardKinematics(model, data, st.q, st.v) != Status::Ok;
    failures += forwardKinematics(model, data, st.q, st.v, st.a) != Status::Ok;
    for (int f = it % nf; f < nf; f += 3) {
      const ReferenceFrame rf = rfs[(it + f) % 3];
      sink += framePlacement(model, data, f).p.sum();
      sink += frameVelocity(model, data, f, rf).sum();
      sink += frameAcceleration(model, data, f, rf).sum();
      sink += frameClassicalAcceleration(model, data, f, rf).sum();
      failures += frameJacobian(model, data, f, rf, J) != Status::Ok;
      failures += frameJacobian(model, data, f, rf, data.J) != Status::Ok;
      sink += J(0, 0);
    }
    failures += computeFrameJacobian(model, data, st.q, it % nf, rfs[it % 3], J) != Status::Ok;
    failures += rnea(model, data, st.q, st.v, st.a) != Status::Ok;
    failures += rnea(model, data, st.q, st.v, st.a, fext) != Status::Ok;
    failures += nonLinearEffects(model, data, st.q, st.v) != Status::Ok;
    failures += generalizedGravity(model, data, st.q) != Status::Ok;
    failures += aba(model, data, st.q, st.v, st.tau) != Status::Ok;
    failures += aba(model, data, st.q, st.v, st.tau, fext) != Status::Ok;
    failures += crba(model, data, st.q) != Status::Ok;
    sink += kineticEnergy(model, data, st.q, st.v) + potentialEnergy(model, data, st.q);
    sink += centerOfMass(model, data).sum();
    qBuffer = st.q;  // same size: no reallocation
    normalizeConfiguration(model, qBuffer);
    sink += data.tau.sum() + data.ddq.sum() + data.M(0, 0) + data.nle.sum();
  }
  const long count = scope.stop();
  EXPECT_TRUE(noAllocation(count, "successful compute calls"));
  EXPECT_EQ(failures, 0) << data.errorMessage();
  EXPECT_TRUE(std::isfinite(sink));
}

TEST(NoAlloc, ComputeFunctionsDoNotAllocate) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    runEverything(c.model, 1000);
  }
}

TEST(NoAlloc, FailedCallsDoNotAllocate) {
  for (const Case& c : cases()) {
    SCOPED_TRACE(c.name);
    const Model& model = c.model;
    std::mt19937_64 rng(5);
    const RandomState st = randomState(model, rng);
    std::vector<Force> fext = randomForces(model, rng);
    const VecX qShort = VecX::Zero(model.nq - 1), vLong = VecX::Zero(model.nv + 1);
    VecX qNan = st.q, vNan = st.v, tauInf = st.tau;
    qNan[model.nq - 1] = std::numeric_limits<double>::quiet_NaN();
    vNan[0] = std::numeric_limits<double>::quiet_NaN();
    tauInf[model.nv - 1] = std::numeric_limits<double>::infinity();
    VecX qBadQuat = st.q;
    bool hasQuat = false;
    for (int i = 0; i < model.nbodies; ++i)
      if (model.joints[i].type == JointType::Floating) {
        qBadQuat.segment<4>(model.idx_q[i] + 3) *= 1.5;
        hasQuat = true;
      }
    std::vector<Force> fextNan = fext;
    fextNan[0][2] = std::numeric_limits<double>::quiet_NaN();
    Mat6X J(6, model.nv), Jbad(6, model.nv + 2);
    const Model other = model;
    Data data(model);
    int ok = 0, failed = 0;

    AllocationScope scope;
    for (int it = 0; it < 200; ++it) {
      const Status results[] = {
          forwardKinematics(model, data, qShort),
          forwardKinematics(model, data, st.q, vLong),
          forwardKinematics(model, data, st.q, st.v, vNan),
          rnea(model, data, qShort, st.v, st.a),
          rnea(model, data, qNan, st.v, st.a),
          rnea(model, data, st.q, st.v, st.a, fextNan.data()),
          nonLinearEffects(model, data, st.q, vLong),
          generalizedGravity(model, data, qNan),
          aba(model, data, st.q, st.v, tauInf),
          aba(model, data, st.q, vNan, st.tau),
          aba(model, data, st.q, st.v, st.tau, fextNan.data()),
          crba(model, data, qShort),
          crba(model, data, qNan),
          frameJacobian(model, data, -1, ReferenceFrame::Local, J),
          frameJacobian(model, data, 0, ReferenceFrame::Local, Jbad),
          computeFrameJacobian(model, data, qNan, 0, ReferenceFrame::World, J),
          aba(other, data, st.q, st.v, st.tau),
          rnea(other, data, st.q, st.v, st.a),
          crba(model, data, hasQuat ? qBadQuat : qNan),
      };
      for (Status s : results) (s == Status::Ok ? ok : failed)++;
      failed += std::isnan(kineticEnergy(model, data, st.q, vNan));
      failed += std::isnan(potentialEnergy(model, data, qShort));
    }
    const long count = scope.stop();
    EXPECT_TRUE(noAllocation(count, "failed compute calls"));
    EXPECT_EQ(ok, 0);
    EXPECT_EQ(failed, 200 * 21);
    EXPECT_NE(std::string(data.errorMessage()), "");
    // The workspace still works, still without allocating.
    AllocationScope again;
    const Status s = aba(model, data, st.q, st.v, st.tau, fext.data());
    EXPECT_TRUE(noAllocation(again.stop(), "aba after failures"));
    EXPECT_EQ(s, Status::Ok);
  }
}

TEST(NoAlloc, DerivativesDoNotAllocate) {
  std::vector<Case> all = cases();
  // Large trees: computeABADerivatives switches its dense products at nv = 64.
  std::mt19937_64 rng(17);
  for (int nb : {50, 75}) {
    RandomModelOptions o;
    o.nbodies = nb;
    o.floatingBase = true;
    all.push_back({"random_large_" + std::to_string(nb), randomTreeModel(rng, o)});
  }
  // Joint dynamics (MJCF armature, springs, dampers): cd_geared_leg's spanning tree, and a
  // random tree with every joint type carrying all three (free-joint springs included).
  all.push_back(
      {"cd_geared_leg.xml", buildTreeModel(parseMjcfFile(modelsPath("cd_geared_leg.xml")).urdf)});
  {
    RandomModelOptions o;
    o.nbodies = 9;
    o.floatingBase = true;
    Model m = randomTreeModel(rng, o);
    m.armature = randomVector(m.nv, rng, 0.01, 0.1);
    m.damping = randomVector(m.nv, rng, 0.1, 1.0);
    m.stiffness = randomVector(m.nv, rng, 0.5, 2.0);
    for (int b = 0; b < m.nbodies; ++b)
      if (m.joints[b].type == JointType::Planar)
        m.stiffness.segment(m.idx_v[b], m.nvs[b]).setZero();
    m.springPosition = randomConfiguration(m, rng);
    all.push_back({"random_joint_dynamics", m});
  }
  for (const Case& c : all) {
    SCOPED_TRACE(c.name);
    const Model& model = c.model;
    EXPECT_EQ(model.hasJointDynamics(),
              c.name == "cd_geared_leg.xml" || c.name == "random_joint_dynamics");
    std::mt19937_64 rng(13);
    const RandomState st = randomState(model, rng);
    const std::vector<Force> fext = randomForces(model, rng);
    VecX vNan = st.v;
    vNan[0] = std::numeric_limits<double>::quiet_NaN();
    const VecX qShort = VecX::Zero(model.nq - 1);
    Data data(model);
    DerivativeData dd(model);  // the workspaces: the only allocations allowed
    int failures = 0, rejected = 0;
    AllocationScope scope;
    for (int it = 0; it < 50; ++it) {
      const Force* f = it % 2 ? fext.data() : nullptr;
      failures += computeRNEADerivatives(model, data, dd, st.q, st.v, st.a, f) != Status::Ok;
      failures += computeMinverse(model, data, dd, st.q) != Status::Ok;
      failures += computeABADerivatives(model, data, dd, st.q, st.v, st.tau, f) != Status::Ok;
      rejected += computeRNEADerivatives(model, data, dd, st.q, vNan, st.a) != Status::Ok;
      rejected += computeABADerivatives(model, data, dd, qShort, st.v, st.tau) != Status::Ok;
      rejected += computeMinverse(model, data, dd, qShort) != Status::Ok;
    }
    EXPECT_TRUE(noAllocation(scope.stop(), "derivative calls"));
    EXPECT_EQ(failures, 0) << data.errorMessage();
    EXPECT_EQ(rejected, 150);
    EXPECT_TRUE(dd.ddq_dq.allFinite());
  }
}

TEST(NoAlloc, NotPositiveDefiniteFailureDoesNotAllocate) {
  Model model;
  model.parent = {-1, 0, 1};
  model.joints = {Joint::revolute(Vec3::UnitZ()), Joint::spherical(),
                  Joint::revolute(Vec3::UnitY())};
  model.jointPlacement = {Transform(), Transform(Mat3::Identity(), Vec3(0.2, 0, 0)),
                          Transform(Mat3::Identity(), Vec3(0.2, 0, 0))};
  model.inertias = {SpatialInertia::fromMassComInertia(1, Vec3(0.1, 0, 0), 0.01 * Mat3::Identity()),
                    SpatialInertia(), SpatialInertia()};
  model.bodyNames = {"a", "b", "c"};
  model.jointNames = {"ja", "jb", "jc"};
  model.finalize();
  const VecX q = neutralConfiguration(model), v = VecX::Ones(model.nv), tau = VecX::Ones(model.nv);
  Data data(model);
  AllocationScope scope;
  Status s = Status::Ok;
  for (int it = 0; it < 100; ++it) s = aba(model, data, q, v, tau);
  EXPECT_TRUE(noAllocation(scope.stop(), "aba with a singular articulated inertia"));
  EXPECT_EQ(s, Status::NotPositiveDefinite);
}

}  // namespace
}  // namespace clusterdyn::test
