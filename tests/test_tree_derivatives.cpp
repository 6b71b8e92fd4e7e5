// Analytical derivatives of RNEA and ABA and the recursive M^-1 (derivatives.hpp) against
// independent oracles: central finite differences on the configuration manifold (q (+) delta =
// integrate(q, delta)) with one Richardson step, M from crba, M^-1 M = I, and
// d ABA = -M^-1 d RNEA evaluated separately at ddq.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <limits>
#include <numeric>

#include "test_util.hpp"

namespace clusterdyn::test {
namespace {

struct Case {
  std::string name;
  Model model;
};

/// Random trees with every joint type (revolute, prismatic, spherical, planar; floating base on
/// odd k; fused fixed links).
std::vector<Case> randomCases() {
  std::vector<Case> out;
  std::mt19937_64 rng(2024);
  for (int k = 0; k < 8; ++k) {
    RandomModelOptions o;
    o.nbodies = 3 + 2 * k;
    o.floatingBase = k % 2 == 1;
    o.fixedLinkProbability = 0.2;
    o.branchProbability = 0.4;
    o.sphericalWeight = 1.5;
    o.planarWeight = 1.5;
    out.push_back({"random_" + std::to_string(k), randomTreeModel(rng, o)});
  }
  return out;
}

std::vector<Case> fileCases(const std::vector<std::string>& paths) {
  std::vector<Case> out;
  for (const std::string& path : paths)
    out.push_back({path.substr(path.find_last_of('/') + 1), loadTreeModel(path)});
  return out;
}

/// The spanning tree (ClusterModel::treeModel, joint dynamics off) of every model file bundled
/// in models/: URDF+ and MJCF, loops, couplings and rotors included, floating base where the
/// file has one (loops that load cut only: the cut model's tree). The spanning tree numbers its
/// bodies cluster by cluster, so a body's subtree need not own a contiguous range of velocity
/// columns (cd_quadruped: the abduction rotor, a child of the trunk, sits between the abduction
/// link and that link's descendants).
std::vector<Case> spanningTreeCases() {
  std::vector<std::string> paths;
  for (const auto& e : std::filesystem::directory_iterator(modelsDir()))
    if (e.path().extension() == ".urdf" || e.path().extension() == ".xml")
      paths.push_back(e.path().string());
  std::sort(paths.begin(), paths.end());
  std::vector<Case> out;
  ModelOptions embedded, cut;
  embedded.jointDynamics = cut.jointDynamics = false;
  cut.cutLoops = true;
  for (const std::string& path : paths) {
    const std::string name = path.substr(path.find_last_of('/') + 1);
    try {
      out.push_back({name, loadModel(path, embedded).treeModel});
    } catch (const ModelError&) {  // a loop that loads cut only (models/README)
      out.push_back({name + " (cut)", loadModel(path, cut).treeModel});
    }
  }
  return out;
}

/// Random trees renumbered breadth first (siblings' subtrees interleave in the velocity order).
std::vector<Case> breadthFirstCases() {
  std::vector<Case> out;
  for (const Case& c : randomCases()) {
    const Model& m = c.model;
    std::vector<int> depth(m.nbodies, 0), order(m.nbodies);
    for (int i = 0; i < m.nbodies; ++i) depth[i] = m.parent[i] < 0 ? 0 : depth[m.parent[i]] + 1;
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return depth[a] < depth[b]; });
    out.push_back({c.name + "_breadth_first", permuteBodies(m, order)});
  }
  return out;
}

/// True when every body's subtree owns the velocity columns [idx_v_i, end) with nothing else in
/// between (a depth-first numbering).
bool subtreesContiguous(const Model& m) {
  for (int i = 0; i < m.nbodies; ++i) {
    int count = 0, end = 0;
    for (int j = i; j < m.nbodies; ++j) {
      int a = j;
      while (a > i) a = m.parent[a];
      if (a != i) continue;
      count += m.nvs[j];
      end = std::max(end, m.idx_v[j] + m.nvs[j]);
    }
    if (end - m.idx_v[i] != count) return false;
  }
  return true;
}

using Fn = std::function<VecX(const VecX& q, const VecX& v)>;

/// d f / d q (tangent columns) and d f / d v by central differences with step h and h / 2
/// combined by Richardson extrapolation (error O(h^4)).
void finiteDifferences(const Model& model, const Fn& f, const VecX& q, const VecX& v, MatX& dq,
                       MatX& dv, double h = 2e-3) {
  const int nv = model.nv;
  const Eigen::Index m = f(q, v).size();
  dq.resize(m, nv);
  dv.resize(m, nv);
  auto central = [&](int k, double step, bool config) {
    VecX e = VecX::Zero(nv);
    e[k] = step;
    if (config)
      return VecX((f(integrate(model, q, e, 1.0), v) - f(integrate(model, q, -e, 1.0), v)) /
                  (2.0 * step));
    return VecX((f(q, v + e) - f(q, v - e)) / (2.0 * step));
  };
  for (int k = 0; k < nv; ++k) {
    dq.col(k) = (4.0 * central(k, h / 2, true) - central(k, h, true)) / 3.0;
    dv.col(k) = (4.0 * central(k, h / 2, false) - central(k, h, false)) / 3.0;
  }
}

/// Tolerances of the comparisons whose error grows with the conditioning of M (ABA's ddq
/// against aba(), its finite differences, -M^-1 d RNEA from a separate call); M^-1 M = I stays
/// at 1e-10 everywhere.
struct AbaTolerances {
  double ddq = 1e-12, finiteDifferences = 1e-8, separate = 1e-10;
};

/// All oracles on one model at a few random states (with and without external forces).
void checkModel(const Model& model, int nstates = 3, const AbaTolerances& tol = {}) {
  std::mt19937_64 rng(99);
  Data data(model), other(model);
  DerivativeData dd(model), dd2(model);
  for (int s = 0; s < nstates; ++s) {
    SCOPED_TRACE("state " + std::to_string(s));
    const RandomState st = randomState(model, rng);
    const std::vector<Force> forces = randomForces(model, rng);
    const Force* fext = s % 2 == 1 ? forces.data() : nullptr;

    // RNEA: tau, d tau / dq, d tau / dv against finite differences, d tau / da against crba.
    ASSERT_EQ(computeRNEADerivatives(model, data, dd, st.q, st.v, st.a, fext), Status::Ok)
        << data.errorMessage();
    ASSERT_EQ(rnea(model, other, st.q, st.v, st.a, fext), Status::Ok);
    EXPECT_TRUE(isClose(dd.tau, other.tau, 1e-12));
    const Fn tauOf = [&](const VecX& q, const VecX& v) {
      EXPECT_EQ(rnea(model, other, q, v, st.a, fext), Status::Ok);
      return other.tau;
    };
    MatX fdq, fdv;
    finiteDifferences(model, tauOf, st.q, st.v, fdq, fdv);
    EXPECT_TRUE(isClose(dd.dtau_dq, fdq, 1e-8));
    EXPECT_TRUE(isClose(dd.dtau_dv, fdv, 1e-8));
    ASSERT_EQ(crba(model, other, st.q), Status::Ok);
    EXPECT_TRUE(isClose(dd.dtau_da, other.M, 1e-12));

    // M^-1: recursive, M^-1 M = I.
    ASSERT_EQ(computeMinverse(model, data, dd2, st.q), Status::Ok) << data.errorMessage();
    const MatX I = MatX::Identity(model.nv, model.nv);
    EXPECT_TRUE(isClose(dd2.Minv * other.M, I, 1e-10));
    EXPECT_TRUE(isClose(dd2.Minv, dd2.Minv.transpose(), 1e-14));

    // ABA: ddq, d ddq / d(q, v) against finite differences, d ddq / d tau = M^-1.
    ASSERT_EQ(computeABADerivatives(model, data, dd, st.q, st.v, st.tau, fext), Status::Ok)
        << data.errorMessage();
    ASSERT_EQ(aba(model, other, st.q, st.v, st.tau, fext), Status::Ok);
    EXPECT_TRUE(isClose(dd.ddq, other.ddq, tol.ddq));
    EXPECT_TRUE(isClose(dd.Minv, dd2.Minv, 1e-12));
    const Fn ddqOf = [&](const VecX& q, const VecX& v) {
      EXPECT_EQ(aba(model, other, q, v, st.tau, fext), Status::Ok);
      return other.ddq;
    };
    finiteDifferences(model, ddqOf, st.q, st.v, fdq, fdv);
    EXPECT_TRUE(isClose(dd.ddq_dq, fdq, tol.finiteDifferences));
    EXPECT_TRUE(isClose(dd.ddq_dv, fdv, tol.finiteDifferences));
    // Consistency: -M^-1 d RNEA / d(q, v) at a = ddq, from a separate RNEA-derivative call.
    ASSERT_EQ(computeRNEADerivatives(model, other, dd2, st.q, st.v, dd.ddq, fext), Status::Ok);
    EXPECT_TRUE(isClose(dd.ddq_dq, -dd2.Minv * dd2.dtau_dq, tol.separate));
    EXPECT_TRUE(isClose(dd.ddq_dv, -dd2.Minv * dd2.dtau_dv, tol.separate));
    EXPECT_TRUE(isClose(dd2.tau, st.tau, 1e-10));  // RNEA(ABA(tau)) = tau
  }
}

TEST(TreeDerivatives, RandomTreesEveryJointType) {
  for (const Case& c : randomCases()) {
    SCOPED_TRACE(c.name);
    checkModel(c.model);
  }
}

TEST(TreeDerivatives, BundledTreeModels) {
  const std::vector<Case> cases = fileCases(bundledTreeModelFiles());
  ASSERT_FALSE(cases.empty());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    checkModel(c.model);
  }
}

TEST(TreeDerivatives, SharedApproximateModels) {
  CLUSTERDYN_SKIP_WITHOUT_SHARED(sharedPath("urdfplus"));
  const std::vector<Case> cases = fileCases(sharedTreeModelFiles());
  ASSERT_FALSE(cases.empty());
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    checkModel(c.model, 2);
  }
}

TEST(TreeDerivatives, EveryBundledModelSpanningTree) {
  const std::vector<Case> cases = spanningTreeCases();
  ASSERT_GE(cases.size(), 15u);
  bool interleaved = false;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    if (c.name == "cd_quadruped.urdf") {
      EXPECT_EQ(c.model.joints[0].type, JointType::Floating);
      EXPECT_FALSE(subtreesContiguous(c.model));  // the case this test is for
    }
    interleaved = interleaved || !subtreesContiguous(c.model);
    // The loop models' spanning trees carry rods and rotors far lighter than their links
    // (cond(M) up to 1e7 on cd_rsu_leg): aba() and the finite differences of ABA lose digits
    // to roundoff (a smaller step makes them worse); measured worst 5e-7 (cd_delta), 3e-12,
    // 1.2e-10. d RNEA and M^-1 M = I keep their tolerances.
    checkModel(c.model, 2, {1e-11, 2e-6, 1e-9});
  }
  EXPECT_TRUE(interleaved);
}

TEST(TreeDerivatives, RandomTreesBreadthFirst) {
  int interleaved = 0;
  for (const Case& c : breadthFirstCases()) {
    SCOPED_TRACE(c.name);
    interleaved += !subtreesContiguous(c.model);
    checkModel(c.model, 2);
  }
  EXPECT_GE(interleaved, 4);
}

/// Every scratch array of the workspaces filled with NaN (as if left by another model state or
/// never written): computeABADerivatives and computeMinverse must write every output entry and
/// read no scratch they did not write in the same call (the shared F of the M^-1 backward pass
/// is never zeroed, A_i is not formed for leaves, the lower triangle is mirrored row by row).
void poison(Data& data, DerivativeData& dd) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  // (Not dtau_*: their entries between different branches are zero from the construction on.)
  for (MatX* m : {&dd.Minv, &dd.ddq_dq, &dd.ddq_dv}) m->setConstant(nan);
  dd.F.setConstant(nan);
  for (Mat6X& A : dd.FA) A.setConstant(nan);
  for (int i = 0; i < (int)data.IA.size(); ++i) {
    data.IA[i].setConstant(nan);
    data.pA[i].setConstant(nan);
    data.c[i].setConstant(nan);
    data.u[i].setConstant(nan);
    data.Dinv[i].setConstant(nan);
  }
}

TEST(TreeDerivatives, PoisonedWorkspacesGiveTheSameResults) {
  std::vector<Case> cases = randomCases();
  for (Case& c : breadthFirstCases()) cases.push_back(std::move(c));
  for (Case& c : spanningTreeCases()) cases.push_back(std::move(c));
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Model& model = c.model;
    std::mt19937_64 rng(5);
    const RandomState st = randomState(model, rng);
    const std::vector<Force> forces = randomForces(model, rng);
    Data data(model), fresh(model);
    DerivativeData dd(model), ref(model);
    ASSERT_EQ(computeABADerivatives(model, fresh, ref, st.q, st.v, st.tau, forces.data()),
              Status::Ok);
    poison(data, dd);
    ASSERT_EQ(computeABADerivatives(model, data, dd, st.q, st.v, st.tau, forces.data()),
              Status::Ok);
    EXPECT_TRUE(dd.ddq == ref.ddq);
    EXPECT_TRUE(dd.ddq_dq == ref.ddq_dq);
    EXPECT_TRUE(dd.ddq_dv == ref.ddq_dv);
    EXPECT_TRUE(dd.Minv == ref.Minv);
    ASSERT_EQ(computeMinverse(model, fresh, ref, st.q), Status::Ok);
    poison(data, dd);
    ASSERT_EQ(computeMinverse(model, data, dd, st.q), Status::Ok);
    EXPECT_TRUE(dd.Minv == ref.Minv);
    EXPECT_TRUE(isClose(dd.Minv, dd.Minv.transpose(), 0.0));
  }
}

TEST(TreeDerivatives, ZeroVelocityGravityOnly) {
  // v = 0, a = 0: d tau / dq is the gravity Jacobian, d tau / dv = 0 exactly (no Coriolis).
  std::mt19937_64 rng(7);
  RandomModelOptions o;
  o.nbodies = 7;
  o.floatingBase = true;
  const Model model = randomTreeModel(rng, o);
  Data data(model);
  DerivativeData dd(model);
  const VecX q = randomConfiguration(model, rng), z = VecX::Zero(model.nv);
  ASSERT_EQ(computeRNEADerivatives(model, data, dd, q, z, z), Status::Ok);
  EXPECT_EQ(dd.dtau_dv.cwiseAbs().maxCoeff(), 0.0);
  EXPECT_GT(dd.dtau_dq.cwiseAbs().maxCoeff(), 1e-3);
}

TEST(TreeDerivatives, RejectsBadArguments) {
  std::mt19937_64 rng(3);
  RandomModelOptions o;
  o.nbodies = 5;
  o.floatingBase = true;
  const Model model = randomTreeModel(rng, o);
  const Model otherModel = model;
  Data data(model), otherData(otherModel);
  DerivativeData dd(model), otherDd(otherModel);
  const RandomState st = randomState(model, rng);
  VecX vNan = st.v, qBad = st.q, tauShort = VecX::Zero(model.nv - 1);
  vNan[1] = std::numeric_limits<double>::quiet_NaN();
  qBad.segment<4>(model.idx_q[0] + 3) *= 2.0;
  std::vector<Force> fext = randomForces(model, rng);
  fext[2][0] = std::numeric_limits<double>::infinity();

  EXPECT_EQ(computeRNEADerivatives(model, data, dd, st.q, vNan, st.a), Status::NonFinite);
  EXPECT_NE(std::string(data.errorMessage()).find("v["), std::string::npos);
  EXPECT_EQ(computeRNEADerivatives(model, data, dd, st.q, st.v, tauShort), Status::InvalidSize);
  EXPECT_NE(std::string(data.errorMessage()).find("a has size"), std::string::npos);
  EXPECT_EQ(computeRNEADerivatives(model, data, dd, qBad, st.v, st.a), Status::NotUnitQuaternion);
  EXPECT_EQ(computeRNEADerivatives(model, data, dd, st.q, st.v, st.a, fext.data()),
            Status::NonFinite);
  EXPECT_EQ(computeRNEADerivatives(model, data, otherDd, st.q, st.v, st.a),
            Status::WorkspaceMismatch);
  EXPECT_EQ(computeRNEADerivatives(model, otherData, dd, st.q, st.v, st.a),
            Status::WorkspaceMismatch);
  EXPECT_EQ(computeABADerivatives(model, data, dd, st.q, st.v, tauShort), Status::InvalidSize);
  EXPECT_NE(std::string(data.errorMessage()).find("tau has size"), std::string::npos);
  EXPECT_EQ(computeABADerivatives(model, data, dd, st.q, vNan, st.tau), Status::NonFinite);
  EXPECT_EQ(computeMinverse(model, data, dd, VecX::Zero(model.nq + 1)), Status::InvalidSize);
  EXPECT_EQ(computeMinverse(model, data, otherDd, st.q), Status::WorkspaceMismatch);
  // The workspaces still work.
  EXPECT_EQ(computeABADerivatives(model, data, dd, st.q, st.v, st.tau), Status::Ok);
  EXPECT_STREQ(data.errorMessage(), "");
}

TEST(TreeDerivatives, SingularArticulatedInertiaIsReported) {
  Model model;
  model.parent = {-1, 0};
  model.joints = {Joint::revolute(Vec3::UnitZ()), Joint::revolute(Vec3::UnitY())};
  model.jointPlacement = {Transform(), Transform(Mat3::Identity(), Vec3(0.2, 0, 0))};
  model.inertias = {SpatialInertia::fromMassComInertia(1, Vec3(0.1, 0, 0), 0.01 * Mat3::Identity()),
                    SpatialInertia()};
  model.bodyNames = {"a", "b"};
  model.jointNames = {"ja", "jb"};
  model.finalize();
  Data data(model);
  DerivativeData dd(model);
  const VecX q = neutralConfiguration(model), v = VecX::Ones(model.nv);
  EXPECT_EQ(computeMinverse(model, data, dd, q), Status::NotPositiveDefinite);
  EXPECT_NE(std::string(data.errorMessage()).find("'b'"), std::string::npos);
  EXPECT_EQ(computeABADerivatives(model, data, dd, q, v, v), Status::NotPositiveDefinite);
}

}  // namespace
}  // namespace clusterdyn::test
