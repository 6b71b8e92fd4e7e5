// The cluster-tree compute functions must not touch the heap once ClusterData exists
// (cluster_data.hpp): every allocation while an AllocationScope is armed is counted
// (alloc_counter.hpp replaces the global allocation functions of this binary; a failure prints
// the backtrace of the first allocation — run addr2line on the addresses for lines).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <limits>
#include <new>
#include <random>

#include "alloc_counter.hpp"
#include "closed_states.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "loop_model_generator.hpp"
#include "test_util.hpp"

using namespace clusterdyn;
namespace fs = std::filesystem;

namespace {

using test::AllocationScope;
using test::noAllocation;

struct ModelCase {
  std::string name;
  ClusterModel cm;
};

bool hasChords(const std::string& path) {
  const std::string s = clusterdyn::test::readTextFile(path);
  return s.find("<loop") != std::string::npos || s.find("<coupling") != std::string::npos ||
         s.find("<mimic") != std::string::npos;
}

std::vector<ModelCase> modelCases() {
  std::vector<std::string> files;
  const std::string shared = clusterdyn::test::sharedPath("urdfplus");
  if (fs::exists(shared)) {
    for (const auto& e : fs::directory_iterator(shared))
      if (e.path().extension() == ".urdf" && hasChords(e.path().string()))
        files.push_back(e.path().string());
    for (const char* rel :
         {"benchmarks/variable_four_bar_urdf/four_bar_branch_2_3.urdf",
          "benchmarks/variable_four_bar_urdf/four_bar_branch_6_10.urdf",
          "benchmarks/variable_revolute_pair_urdf/revolute_rotor_pair_branch_2_3.urdf",
          "benchmarks/parallel_chains/Implicit/depth5/loop_size5.urdf",
          "benchmarks/parallel_chains/Implicit/depth10/loop_size17.urdf",
          "benchmarks/parallel_chains/Explicit/depth10/loop_size8.urdf"})
      if (fs::exists(shared + "/" + rel)) files.push_back(shared + "/" + rel);
  }
  const std::string models = CLUSTERDYN_MODELS_DIR;
  if (fs::exists(models))
    for (const auto& e : fs::directory_iterator(models))
      if ((e.path().extension() == ".urdf" && hasChords(e.path().string())) ||
          e.path().extension() == ".xml")  // MJCF: loaded with their joint dynamics
        files.push_back(e.path().string());
  std::sort(files.begin(), files.end());
  std::vector<ModelCase> out;
  for (const auto& f : files) {
    try {
      out.push_back({fs::path(f).filename().string(), buildClusterModel(parseModelFile(f))});
    } catch (const ModelError& e) {
      ADD_FAILURE() << e.what();
    }
  }
  // Generated mechanisms of every kind (fixed and floating base).
  int seed = 0;
  for (auto kind : testgen::allMechanismKinds()) {
    std::mt19937_64 rng(6100 + seed++);
    testgen::GeneratorOptions o;
    o.floatingBase = seed % 2;
    o.treeLinks = 2;
    o.mechanisms = 2;
    o.kinds = {kind, testgen::MechanismKind::CrankRocker};
    const auto r = testgen::generateLoopModel(rng, o);
    out.push_back({std::string("generated_") + testgen::mechanismName(kind),
                   buildClusterModel(parseUrdfString(r.urdf, "generated.urdf"))});
  }
  return out;
}

const std::vector<ModelCase>& allCases() {
  static const std::vector<ModelCase> cases = modelCases();
  return cases;
}

/// Closed random states prepared before the counter is armed.
struct States {
  std::vector<VecX> q, v, y, yd, tauY, tauS, ydd, qPerturbed, vPerturbed, qViolating, vViolating;
  std::vector<std::vector<Force>> fext;
};

States makeStates(const ClusterModel& cm, int n, std::mt19937_64& rng) {
  States s;
  ClusterData data(cm);
  VecX yRef(cm.nyq), ydRef(cm.ny);
  EXPECT_EQ(
      spanningToIndependent(cm, data, cm.qReference, VecX::Zero(cm.treeModel.nv), yRef, ydRef),
      Status::Ok);
  for (int i = 0; i < n; ++i) {
    support::ClosedState st;  // one draw: loop clusters within 0.2 of the reference
    if (!support::randomClosedStateNearReference(cm, data, rng, st, 0.2, 1) &&
        !support::randomClosedStateNearReference(cm, data, rng, st, 0.05, 1))  // (Stewart)
      continue;
    s.q.push_back(data.q);
    s.v.push_back(data.v);
    s.y.push_back(st.y);
    s.yd.push_back(st.ydot);
    s.tauY.push_back(clusterdyn::test::randomVector(cm.ny, rng));
    s.tauS.push_back(clusterdyn::test::randomVector(cm.treeModel.nv, rng));
    s.ydd.push_back(clusterdyn::test::randomVector(cm.ny, rng));
    s.fext.push_back(clusterdyn::test::randomForces(cm.treeModel, rng));
    s.qPerturbed.push_back(integrate(cm.treeModel, data.q,
                                     clusterdyn::test::randomVector(cm.treeModel.nv, rng), 1e-3));
    s.vPerturbed.push_back(data.v +
                           clusterdyn::test::randomVector(cm.treeModel.nv, rng, -0.1, 0.1));
    VecX qv = data.q, vv = data.v;
    for (const Cluster& c : cm.clusters)
      if (c.constrained() && !c.dependent.empty()) {
        const int body = cm.treeModel.velocityOwner[c.v0 + c.dependent[0]];
        qv[cm.treeModel.idx_q[body]] += 1e-2;
        vv[c.v0 + c.dependent[0]] += 1e-1;
      }
    s.qViolating.push_back(qv);
    s.vViolating.push_back(vv);
  }
  EXPECT_GE(s.q.size(), static_cast<size_t>(n / 2)) << "too few closed states";
  return s;
}

TEST(ClusterNoAlloc, CounterSeesEveryKindOfAllocation) {
  {
    AllocationScope a;  // volatile: a new/delete pair could be elided otherwise
    int* volatile p = new int(1);
    delete p;
    double* volatile d = new double[3];
    delete[] d;
    EXPECT_EQ(a.stop(), 2);
  }
  {
    AllocationScope a;
    VecX x(50);
    x.setZero();
    void* volatile p = std::malloc(8);
    p = std::realloc(p, 64);
    std::free(p);
    EXPECT_EQ(a.stop(), 3);
  }
  {
    ASSERT_FALSE(allCases().empty());
    const ClusterModel& cm = allCases().front().cm;
    AllocationScope a;
    ClusterData data(cm);
    EXPECT_GT(a.stop(), 0);  // creating the workspace does allocate
  }
}

TEST(ClusterNoAlloc, SuccessfulCallsDoNotAllocate) {
  for (const ModelCase& mc : allCases()) {
    SCOPED_TRACE(mc.name);
    const ClusterModel& cm = mc.cm;
    std::mt19937_64 rng(11);
    const States s = makeStates(cm, 8, rng);
    const int ns = static_cast<int>(s.q.size());
    ASSERT_GT(ns, 0);
    ClusterData data(cm);
    ClusterDerivativeData dd(cm);
    VecX yOut(cm.nyq), ydOut(cm.ny);
    double sink = 0.0;
    int failures = 0;
    Status firstFailure = Status::Ok;
    auto check = [&](Status st) {
      if (st != Status::Ok) {
        if (failures++ == 0) firstFailure = st;
      }
    };
    const int iterations = 250;  // x 16 calls
    AllocationScope armed;
    for (int it = 0; it < iterations; ++it) {
      const int i = it % ns;
      const Force* f = s.fext[i].data();
      check(ceAba(cm, data, s.q[i], s.v[i], s.tauY[i]));
      check(ceAba(cm, data, s.q[i], s.v[i], s.tauY[i], f));
      sink += data.ydd.sum() + data.qdd.sum();
      check(ceAbaSpanningForces(cm, data, s.q[i], s.v[i], s.tauS[i]));
      check(ceAbaSpanningForces(cm, data, s.q[i], s.v[i], s.tauS[i], f));
      check(ceAbaIndependent(cm, data, s.y[i], s.yd[i], s.tauY[i]));
      check(ceAbaIndependent(cm, data, s.y[i], s.yd[i], s.tauY[i], f));
      check(ceRnea(cm, data, s.q[i], s.v[i], s.ydd[i]));
      check(ceRnea(cm, data, s.q[i], s.v[i], s.ydd[i], f));
      sink += data.tauY.sum();
      check(clusterMassMatrix(cm, data, s.q[i]));
      sink += data.H.sum();
      check(clusterBias(cm, data, s.q[i], s.v[i]));
      sink += data.C.sum();
      check(solveLoopClosure(cm, data, s.y[i]));
      check(independentToSpanning(cm, data, s.y[i], s.yd[i]));
      check(projectToConstraints(cm, data, s.qPerturbed[i], s.vPerturbed[i]));
      sink += data.q.sum() + data.v.sum();
      check(clusterConstraintMatrices(cm, data, s.q[i], s.v[i]));
      check(spanningToIndependent(cm, data, s.q[i], s.v[i], yOut, ydOut));
      sink += yOut.sum() + ydOut.sum();
      data.q = s.q[i];  // same size: plain copy
      check(solveLoopClosure(cm, data, s.y[(i + 1) % ns]));
      // (multi-dof joints in loops included: the RSU ankle and leg, the delta, the Stewart)
      check(computeCeRneaDerivatives(cm, data, dd, s.q[i], s.v[i], s.ydd[i], f));
      check(computeCeAbaDerivatives(cm, data, dd, s.q[i], s.v[i], s.tauY[i], f));
      check(computeClusterMinverse(cm, data, dd, s.q[i]));
      sink += dd.Hinv(0, 0);
      sink += dd.dtau_dy.sum() + dd.dydd_dy.sum() + dd.Hinv.sum();
    }
    const long count = armed.stop();
    EXPECT_TRUE(noAllocation(count, mc.name + ": successful cluster calls"));
    EXPECT_EQ(failures, 0) << statusName(firstFailure) << ": " << data.errorMessage();
    EXPECT_TRUE(std::isfinite(sink));
  }
}

TEST(ClusterNoAlloc, BallHingeDampersAndSpringsDoNotAllocate) {
  // cd_rod_leg: its ball joint replaced by three hinges that carry its damper (Model::ballHinges,
  // evaluated in every algorithm's passive forces); a spring too.
  std::string xml = clusterdyn::test::readTextFile(clusterdyn::test::modelsPath("cd_rod_leg.xml"));
  const std::string ball = "type=\"ball\" damping=\"0.01\"";
  ASSERT_NE(xml.find(ball), std::string::npos);
  xml.replace(xml.find(ball), ball.size(), "type=\"ball\" damping=\"0.01\" stiffness=\"0.3\"");
  const ClusterModel cm = buildClusterModel(parseModelString(xml, "rod_leg.xml"));
  ASSERT_EQ(cm.treeModel.ballHinges.size(), 1u);
  const Model& t = cm.treeModel;
  std::mt19937_64 rng(13);
  const States s = makeStates(cm, 4, rng);
  ASSERT_GT(s.q.size(), 0u);
  ClusterData data(cm);
  Data td(t);
  double sink = 0.0;
  int failures = 0;
  AllocationScope armed;
  for (int it = 0; it < 40; ++it) {
    const int i = it % static_cast<int>(s.q.size());
    failures += ceAba(cm, data, s.q[i], s.v[i], s.tauY[i]) != Status::Ok;
    failures += ceRnea(cm, data, s.q[i], s.v[i], s.ydd[i]) != Status::Ok;
    failures += clusterBias(cm, data, s.q[i], s.v[i]) != Status::Ok;
    failures += aba(t, td, s.q[i], s.v[i], s.tauS[i]) != Status::Ok;
    failures += nonLinearEffects(t, td, s.q[i], s.v[i]) != Status::Ok;
    failures += computePotentialEnergy(t, td, s.q[i]) != Status::Ok;
    sink += data.ydd.sum() + data.tauY.sum() + data.C.sum() + td.ddq.sum() + td.nle.sum() +
            td.potentialEnergy;
  }
  EXPECT_TRUE(noAllocation(armed.stop(), "cd_rod_leg with ball hinges: passive forces"));
  EXPECT_EQ(failures, 0);
  EXPECT_TRUE(std::isfinite(sink));
}

TEST(ClusterNoAlloc, FailedCallsDoNotAllocate) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (const ModelCase& mc : allCases()) {
    SCOPED_TRACE(mc.name);
    const ClusterModel& cm = mc.cm;
    const Model& t = cm.treeModel;
    std::mt19937_64 rng(12);
    const States s = makeStates(cm, 2, rng);
    ASSERT_GT(s.q.size(), 0u);
    const VecX &q = s.q[0], &v = s.v[0], &y = s.y[0], &yd = s.yd[0], &tau = s.tauY[0];
    VecX qNan = q, vNan = v, tauInf = tau, yNan = y, tauSInf = s.tauS[0];
    qNan[t.nq - 1] = nan;
    vNan[0] = nan;
    tauInf[cm.ny - 1] = inf;
    yNan[0] = nan;
    tauSInf[0] = inf;
    const VecX qShort = VecX::Zero(t.nq - 1), vLong = VecX::Zero(t.nv + 1),
               yShort = VecX::Zero(cm.nyq > 0 ? cm.nyq - 1 : 1);
    std::vector<Force> fNan = s.fext[0];
    fNan[t.nbodies - 1][4] = nan;
    VecX yOut(cm.nyq), ydOut(cm.ny), yBad(cm.nyq + 1);
    const bool constrained = cm.hasLoops();
    const ClusterModel& other =
        &allCases().front().cm != &cm ? allCases().front().cm : allCases().back().cm;
    ClusterData data(cm);
    ClusterData otherData(other);
    int ok = 0, failed = 0;
    const int iterations = 200;
    AllocationScope armed;
    for (int it = 0; it < iterations; ++it) {
      const Status results[] = {
          ceAba(cm, data, qNan, v, tau),
          ceAba(cm, data, q, vNan, tau),
          ceAba(cm, data, q, v, tauInf),
          ceAba(cm, data, q, v, tau, fNan.data()),
          ceAba(cm, data, qShort, v, tau),
          ceAba(cm, otherData, q, v, tau),
          ceAbaSpanningForces(cm, data, q, v, tauSInf),
          ceAbaSpanningForces(cm, data, q, vLong, s.tauS[0]),
          ceAbaIndependent(cm, data, yNan, yd, tau),
          ceAbaIndependent(cm, data, y, yd, tauInf),
          ceRnea(cm, data, q, v, tauInf),
          ceRnea(cm, data, qNan, v, tau),
          ceRnea(cm, data, q, v, tau, fNan.data()),
          clusterMassMatrix(cm, data, qNan),
          clusterMassMatrix(cm, data, qShort),
          clusterBias(cm, data, q, vNan),
          solveLoopClosure(cm, data, yNan),
          solveLoopClosure(cm, data, yShort),
          independentToSpanning(cm, data, y, vLong),
          projectToConstraints(cm, data, qNan, v),
          clusterConstraintMatrices(cm, data, q, vNan),
          spanningToIndependent(cm, data, q, v, yBad, ydOut),
          // Constraint violations (models with chords).
          constrained ? ceAba(cm, data, s.qViolating[0], v, tau) : Status::InvalidArgument,
          constrained ? ceAba(cm, data, q, s.vViolating[0], tau) : Status::InvalidArgument,
          constrained ? ceRnea(cm, data, s.qViolating[0], v, tau) : Status::InvalidArgument,
          constrained ? clusterMassMatrix(cm, data, s.qViolating[0]) : Status::InvalidArgument,
          constrained ? clusterBias(cm, data, q, s.vViolating[0]) : Status::InvalidArgument,
      };
      for (Status st : results) (st == Status::Ok ? ok : failed)++;
    }
    const long count = armed.stop();
    EXPECT_TRUE(noAllocation(count, mc.name + ": failed cluster calls"));
    EXPECT_EQ(ok, 0);
    EXPECT_NE(std::string(data.errorMessage()), "");
    // The workspace still works, still without allocating.
    AllocationScope again;
    const Status st1 = ceAba(cm, data, q, v, tau);
    data.q = q;
    const Status st2 = ceAbaIndependent(cm, data, y, yd, tau);
    const long afterCount = again.stop();
    EXPECT_TRUE(noAllocation(afterCount, mc.name + ": calls after failures"));
    EXPECT_EQ(st1, Status::Ok) << data.errorMessage();
    EXPECT_EQ(st2, Status::Ok) << data.errorMessage();
  }
}

TEST(ClusterNoAlloc, LoopClosureFailureDoesNotAllocate) {
  // Implicit parallel chain: for independent angles far from the reference the connecting rod
  // cannot reach and the Newton solve fails (ConstraintFailure with a formatted message, which
  // must go to the static buffer); failed and successful solves must not allocate.
  const std::string path = clusterdyn::test::sharedPath(
      "urdfplus/benchmarks/parallel_chains/Implicit/depth5/loop_size5.urdf");
  if (!fs::exists(path)) GTEST_SKIP() << "missing " << path;
  const ClusterModel cm = loadModel(path);
  ClusterData data(cm);
  std::mt19937_64 rng(1);
  std::vector<VecX> ys;
  for (int i = 0; i < 50; ++i) ys.push_back(clusterdyn::test::randomVector(cm.nyq, rng, -3, 3));
  const VecX yd = VecX::Ones(cm.ny), tau = VecX::Ones(cm.ny);
  int failed = 0;
  AllocationScope armed;
  for (int it = 0; it < 400; ++it) {
    const VecX& y = ys[it % ys.size()];
    data.q = cm.qReference;
    failed += solveLoopClosure(cm, data, y) != Status::Ok;
    data.q = cm.qReference;
    failed += ceAbaIndependent(cm, data, y, yd, tau) != Status::Ok;
  }
  const long count = armed.stop();
  EXPECT_TRUE(noAllocation(count, "failed / successful loop-closure solves"));
  EXPECT_GT(failed, 0) << "the failure path was not exercised";
  EXPECT_LT(failed, 800) << "the success path was not exercised";
}

}  // namespace
