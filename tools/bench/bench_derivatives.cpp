// Benchmark of the analytical derivatives (docs/derivatives.md): the cluster-tree derivatives
// computeCeRneaDerivatives / computeCeAbaDerivatives on shared/urdfplus/ROBOT.urdf, central finite
// differences of our own CE-ABA on the same robot (4 ny calls of ceAbaIndependent: y (+/-) h e_k
// on the manifold, y_dot +/- h e_k; the perturbed y are prepared outside the timed loop, which
// favours the finite differences), and the tree derivatives computeRNEADerivatives /
// computeABADerivatives on ROBOT_approximate.urdf (rotors folded into the links).
//
//   clusterdyn_bench_derivatives [google benchmark flags]      wall clock, names ALGO/ROBOT
//   clusterdyn_bench_derivatives count ROBOT ALGO N             N calls on one state, for
//                                                               valgrind --tool=callgrind
// ALGO: dcernea, dceaba, fdceaba, ceaba, chinv (H^-1 by computeClusterMinverse) on ROBOT.urdf;
// drnea, daba, minv (computeMinverse) on ROBOT_approximate.urdf.
// Per-call instructions = (Ir(3N) - Ir(N)) / 2N. Robots: mini_cheetah, mit_humanoid.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "closed_states.hpp"
#include "clusterdyn/clusterdyn.hpp"

using namespace clusterdyn;

namespace {

struct Fixture {
  ClusterModel cm;
  Model tree;
  std::unique_ptr<ClusterData> data;
  std::unique_ptr<ClusterDerivativeData> dd;
  std::unique_ptr<Data> treeData;
  std::unique_ptr<DerivativeData> treeDd;
  support::ClosedState st;
  VecX tauY, ydd, qTree, vTree, tauTree;
  std::vector<VecX> yPlus, yMinus;  // y moved by integrate(+/- h e_k) (finite differences)
  MatX fd;                          // ny x 2 ny: d ydd / d(y, y_dot)
};

constexpr double kStep = 1e-6;

std::unique_ptr<Fixture> makeFixture(const std::string& robot) {
  const std::string dir = std::string(CLUSTERDYN_BENCH_URDF_DIR) + "/";
  auto f = std::make_unique<Fixture>();
  f->cm = loadModel(dir + robot + ".urdf");
  f->tree = loadTreeModel(dir + robot + "_approximate.urdf");
  f->data = std::make_unique<ClusterData>(f->cm);
  f->dd = std::make_unique<ClusterDerivativeData>(f->cm);
  f->treeData = std::make_unique<Data>(f->tree);
  f->treeDd = std::make_unique<DerivativeData>(f->tree);
  std::mt19937_64 rng(12345);
  if (!support::randomClosedState(f->cm, *f->data, rng, f->st)) return nullptr;
  f->tauY = support::uniformVector(f->cm.ny, rng);
  f->ydd = support::uniformVector(f->cm.ny, rng);
  f->qTree = randomConfiguration(f->tree, rng, 1.0);
  f->vTree = support::uniformVector(f->tree.nv, rng);
  f->tauTree = support::uniformVector(f->tree.nv, rng);
  const ClusterModel& cm = f->cm;
  for (int k = 0; k < cm.ny; ++k)
    for (double s : {1.0, -1.0}) {
      VecX dq = VecX::Zero(cm.treeModel.nv);
      dq[cm.independentVelocity[k]] = s * kStep;
      const VecX qs = integrate(cm.treeModel, f->st.q, dq, 1.0);
      VecX y(cm.nyq);
      for (int i = 0; i < cm.nyq; ++i) y[i] = qs[cm.independentPosition[i]];
      (s > 0 ? f->yPlus : f->yMinus).push_back(y);
    }
  f->fd.setZero(cm.ny, 2 * cm.ny);
  return f;
}

/// Central finite differences of ceAbaIndependent in (y, y_dot) into f.fd.
Status finiteDifferences(Fixture& f) {
  const int ny = f.cm.ny;
  ClusterData& data = *f.data;
  VecX yd = f.st.ydot;
  for (int k = 0; k < ny; ++k) {
    Status s = ceAbaIndependent(f.cm, data, f.yPlus[k], f.st.ydot, f.tauY);
    f.fd.col(k) = data.ydd;
    s = s == Status::Ok ? ceAbaIndependent(f.cm, data, f.yMinus[k], f.st.ydot, f.tauY) : s;
    f.fd.col(k) -= data.ydd;
    yd[k] += kStep;
    s = s == Status::Ok ? ceAbaIndependent(f.cm, data, f.st.y, yd, f.tauY) : s;
    f.fd.col(ny + k) = data.ydd;
    yd[k] -= 2 * kStep;
    s = s == Status::Ok ? ceAbaIndependent(f.cm, data, f.st.y, yd, f.tauY) : s;
    f.fd.col(ny + k) -= data.ydd;
    yd[k] += kStep;
    if (s != Status::Ok) return s;
  }
  f.fd *= 0.5 / kStep;
  return Status::Ok;
}

Status run(Fixture& f, const std::string& algo) {
  if (algo == "dcernea")
    return computeCeRneaDerivatives(f.cm, *f.data, *f.dd, f.st.q, f.st.v, f.ydd);
  if (algo == "dceaba")
    return computeCeAbaDerivatives(f.cm, *f.data, *f.dd, f.st.q, f.st.v, f.tauY);
  if (algo == "fdceaba") return finiteDifferences(f);
  if (algo == "ceaba") return ceAba(f.cm, *f.data, f.st.q, f.st.v, f.tauY);
  if (algo == "chinv") return computeClusterMinverse(f.cm, *f.data, *f.dd, f.st.q);
  if (algo == "drnea")
    return computeRNEADerivatives(f.tree, *f.treeData, *f.treeDd, f.qTree, f.vTree, f.tauTree);
  if (algo == "daba")
    return computeABADerivatives(f.tree, *f.treeData, *f.treeDd, f.qTree, f.vTree, f.tauTree);
  if (algo == "minv") return computeMinverse(f.tree, *f.treeData, *f.treeDd, f.qTree);
  return Status::InvalidArgument;
}

const char* const kAlgos[] = {"dcernea", "dceaba", "fdceaba", "ceaba",
                              "chinv",   "drnea",  "daba",    "minv"};
const char* const kRobots[] = {"mini_cheetah", "mit_humanoid"};

}  // namespace

int main(int argc, char** argv) {
  setLogLevel(LogLevel::Error);
  if (argc == 5 && std::string(argv[1]) == "count") {
    auto f = makeFixture(argv[2]);
    const int n = std::atoi(argv[4]);
    if (!f || n <= 0) return 2;
    for (int i = 0; i < n; ++i)
      if (run(*f, argv[3]) != Status::Ok) {
        std::fprintf(stderr, "%s failed: %s\n", argv[3], f->data->errorMessage());
        return 1;
      }
    return 0;
  }
  std::vector<std::unique_ptr<Fixture>> fixtures;
  for (const char* robot : kRobots) {
    auto f = makeFixture(robot);
    if (!f) {
      std::fprintf(stderr, "%s: no closed state, skipped\n", robot);
      continue;
    }
    Fixture* fp = f.get();
    fixtures.push_back(std::move(f));
    for (const char* algo : kAlgos) {
      const std::string a = algo;
      benchmark::RegisterBenchmark((a + "/" + robot).c_str(), [fp, a](benchmark::State& state) {
        for (auto _ : state)
          if (run(*fp, a) != Status::Ok) state.SkipWithError("call failed");
      });
    }
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
