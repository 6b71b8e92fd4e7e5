// Google Benchmark of the cluster-tree algorithms (constraint embedding, Chignoli et al. 2023,
// §VI):
//
//  * robots: CE-ABA, CE-RNEA, cluster mass matrix H and bias C on shared/urdfplus/{mini_cheetah,
//    mit_humanoid, four_bar}.urdf and on the bundled models/cd_*.urdf, plus the tree ABA on the
//    *_approximate.urdf versions (rotors folded into the links) for the CE-ABA / ABA ratio;
//  * fig8: CE-ABA vs. number of clusters, benchmarks/variable_*_urdf/*_branch_B_D.urdf (B branches
//    of D sub-mechanisms), and the tree ABA on the approx_*_branch_B_D.urdf versions;
//  * fig10: CE-ABA vs. loop size, benchmarks/parallel_chains/{Implicit,Explicit}/depthT/
//    loop_sizeL.urdf, and the tree ABA on the approx_loop_sizeL.urdf versions.
//
// Benchmarks are registered for the files found (a missing folder is skipped). Names are
// "<ALGORITHM>/<group>/<model>" with ALGORITHM in CE_ABA, CE_RNEA, CLUSTER_H, CLUSTER_C, ABA and
// group in robot, bundled, fig8, fig10 (e.g. "CE_ABA/fig8/four_bar_branch_2_3",
// "ABA/fig10/Implicit/depth5/approx_loop_size5"); the label is the URDF path relative to its
// model folder, and counters give the model size: bodies, nv (spanning), ny (independent),
// clusters, max_cluster_bodies, loops, relations, and per family branches / depth (fig8) or
// tree_depth / loop_size (fig10). With --benchmark_format=json these are plain fields of each
// entry. Each benchmark cycles through 64 random closed states (seed 12345): independent y,
// y_dot uniform (joints in [-1, 1]), closed with independentToSpanning; tau_y, y_ddot uniform in
// [-1, 1]. CE-ABA includes the cluster kinematics and, for implicit loops, G and g.
//
//   clusterdyn_bench_cluster --benchmark_filter='fig8' --benchmark_format=json
//
// Folders: compiled in, overridden by the environment variables CLUSTERDYN_BENCH_URDF_DIR
// (shared/urdfplus) and CLUSTERDYN_BENCH_MODELS_DIR (the repository's models/).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <random>
#include <regex>
#include <string>
#include <tuple>
#include <vector>

#include "closed_states.hpp"
#include "clusterdyn/clusterdyn.hpp"

using namespace clusterdyn;
namespace fs = std::filesystem;

namespace {

constexpr size_t kPool = 64;  // random states per model, cycled through

using Counters = std::vector<std::pair<std::string, double>>;

struct ClusterFixture {
  std::string name, label;
  ClusterModel model;
  std::unique_ptr<ClusterData> data;
  std::vector<support::ClosedState> states;
  std::vector<VecX> tauY, ydd;
  Counters counters;
};

struct TreeFixture {
  std::string name, label;
  Model model;
  std::unique_ptr<Data> data;
  std::vector<VecX> q, v, tau;
  Counters counters;
};

std::vector<std::unique_ptr<ClusterFixture>> clusterFixtures;
std::vector<std::unique_ptr<TreeFixture>> treeFixtures;

void setCounters(benchmark::State& state, const Counters& counters) {
  for (const auto& [name, value] : counters) state.counters[name] = value;
}

/// Loads a cluster model and its closed states; nullptr (with a message) if any algorithm
/// rejects the model or the states.
ClusterFixture* addClusterFixture(const std::string& path, const std::string& name,
                                  const std::string& label, Counters extra) {
  auto f = std::make_unique<ClusterFixture>();
  f->name = name;
  f->label = label;
  try {
    f->model = loadModel(path);
  } catch (const ModelError& e) {
    std::fprintf(stderr, "clusterdyn_bench_cluster: skipping %s: %s\n", path.c_str(), e.what());
    return nullptr;
  }
  f->data = std::make_unique<ClusterData>(f->model);
  const ClusterModel& cm = f->model;
  ClusterData& d = *f->data;
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (size_t k = 0; k < kPool; ++k) {
    support::ClosedState s;
    if (!support::randomClosedState(cm, d, rng, s)) {
      std::fprintf(stderr, "clusterdyn_bench_cluster: skipping %s: no closed state: %s\n",
                   path.c_str(), d.errorMessage());
      return nullptr;
    }
    VecX tau(cm.ny), a(cm.ny);
    for (int i = 0; i < cm.ny; ++i) tau[i] = u(rng), a[i] = u(rng);
    f->states.push_back(s), f->tauY.push_back(tau), f->ydd.push_back(a);
  }
  // Every algorithm must accept the states (the timed loops do not check the Status).
  const support::ClosedState& s = f->states[0];
  const Status st[] = {ceAba(cm, d, s.q, s.v, f->tauY[0]), ceRnea(cm, d, s.q, s.v, f->ydd[0]),
                       clusterMassMatrix(cm, d, s.q), clusterBias(cm, d, s.q, s.v)};
  for (Status x : st)
    if (x != Status::Ok) {
      std::fprintf(stderr, "clusterdyn_bench_cluster: skipping %s: %s: %s\n", path.c_str(),
                   statusName(x), d.errorMessage());
      return nullptr;
    }
  f->counters = {{"bodies", cm.treeModel.nbodies},
                 {"nv", cm.treeModel.nv},
                 {"ny", cm.ny},
                 {"clusters", static_cast<double>(cm.clusters.size())},
                 {"max_cluster_bodies", cm.maxClusterBodies},
                 {"loops", static_cast<double>(cm.loops.size())},
                 {"relations", static_cast<double>(cm.relations.size())}};
  f->counters.insert(f->counters.end(), extra.begin(), extra.end());
  clusterFixtures.push_back(std::move(f));
  return clusterFixtures.back().get();
}

TreeFixture* addTreeFixture(const std::string& path, const std::string& name,
                            const std::string& label, Counters extra) {
  auto f = std::make_unique<TreeFixture>();
  f->name = name;
  f->label = label;
  try {
    f->model = loadTreeModel(path);
  } catch (const ModelError& e) {
    std::fprintf(stderr, "clusterdyn_bench_cluster: skipping %s: %s\n", path.c_str(), e.what());
    return nullptr;
  }
  f->data = std::make_unique<Data>(f->model);
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int nv = f->model.nv;
  for (size_t k = 0; k < kPool; ++k) {
    f->q.push_back(randomConfiguration(f->model, rng));
    VecX v(nv), tau(nv);
    for (int i = 0; i < nv; ++i) v[i] = u(rng), tau[i] = u(rng);
    f->v.push_back(v), f->tau.push_back(tau);
  }
  if (aba(f->model, *f->data, f->q[0], f->v[0], f->tau[0]) != Status::Ok) {
    std::fprintf(stderr, "clusterdyn_bench_cluster: skipping %s: %s\n", path.c_str(),
                 f->data->errorMessage());
    return nullptr;
  }
  f->counters = {{"bodies", f->model.nbodies}, {"nv", f->model.nv}};
  f->counters.insert(f->counters.end(), extra.begin(), extra.end());
  treeFixtures.push_back(std::move(f));
  return treeFixtures.back().get();
}

// ---------------------------------------------------------------------------------------------
// Timed loops.

void BM_CE_ABA(benchmark::State& state, ClusterFixture* f) {
  size_t k = 0;
  for (auto _ : state) {
    const size_t i = k++ % kPool;
    ceAba(f->model, *f->data, f->states[i].q, f->states[i].v, f->tauY[i]);
    benchmark::DoNotOptimize(f->data->ydd.data());
    benchmark::ClobberMemory();
  }
  setCounters(state, f->counters);
  state.SetLabel(f->label);
}

void BM_CE_RNEA(benchmark::State& state, ClusterFixture* f) {
  size_t k = 0;
  for (auto _ : state) {
    const size_t i = k++ % kPool;
    ceRnea(f->model, *f->data, f->states[i].q, f->states[i].v, f->ydd[i]);
    benchmark::DoNotOptimize(f->data->tauY.data());
    benchmark::ClobberMemory();
  }
  setCounters(state, f->counters);
  state.SetLabel(f->label);
}

void BM_CLUSTER_H(benchmark::State& state, ClusterFixture* f) {
  size_t k = 0;
  for (auto _ : state) {
    const size_t i = k++ % kPool;
    clusterMassMatrix(f->model, *f->data, f->states[i].q);
    benchmark::DoNotOptimize(f->data->H.data());
    benchmark::ClobberMemory();
  }
  setCounters(state, f->counters);
  state.SetLabel(f->label);
}

void BM_CLUSTER_C(benchmark::State& state, ClusterFixture* f) {
  size_t k = 0;
  for (auto _ : state) {
    const size_t i = k++ % kPool;
    clusterBias(f->model, *f->data, f->states[i].q, f->states[i].v);
    benchmark::DoNotOptimize(f->data->C.data());
    benchmark::ClobberMemory();
  }
  setCounters(state, f->counters);
  state.SetLabel(f->label);
}

void BM_ABA(benchmark::State& state, TreeFixture* f) {
  size_t k = 0;
  for (auto _ : state) {
    const size_t i = k++ % kPool;
    aba(f->model, *f->data, f->q[i], f->v[i], f->tau[i]);
    benchmark::DoNotOptimize(f->data->ddq.data());
    benchmark::ClobberMemory();
  }
  setCounters(state, f->counters);
  state.SetLabel(f->label);
}

// ---------------------------------------------------------------------------------------------
// Registration.

void registerAll(ClusterFixture* f) {
  if (!f) return;
  benchmark::RegisterBenchmark(("CE_ABA/" + f->name).c_str(), BM_CE_ABA, f);
  benchmark::RegisterBenchmark(("CE_RNEA/" + f->name).c_str(), BM_CE_RNEA, f);
  benchmark::RegisterBenchmark(("CLUSTER_H/" + f->name).c_str(), BM_CLUSTER_H, f);
  benchmark::RegisterBenchmark(("CLUSTER_C/" + f->name).c_str(), BM_CLUSTER_C, f);
}

void registerAba(TreeFixture* f) {
  if (f) benchmark::RegisterBenchmark(("ABA/" + f->name).c_str(), BM_ABA, f);
}

/// Regular files of a folder whose name matches `pattern` (sorted by name); empty if the folder
/// does not exist.
std::vector<fs::path> filesMatching(const fs::path& dir, const std::regex& pattern) {
  std::vector<fs::path> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.is_regular_file() && std::regex_match(e.path().filename().string(), pattern))
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

/// Robots: the named shared models and every bundled model; ABA on the approximate trees.
void registerRobots(const fs::path& urdfplus, const fs::path& bundled) {
  for (const char* name : {"mini_cheetah", "mit_humanoid", "four_bar"}) {
    const fs::path p = urdfplus / (std::string(name) + ".urdf");
    if (fs::exists(p))
      registerAll(
          addClusterFixture(p.string(), std::string("robot/") + name, p.filename().string(), {}));
    const fs::path a = urdfplus / (std::string(name) + "_approximate.urdf");
    if (fs::exists(a))
      registerAba(
          addTreeFixture(a.string(), "robot/" + a.stem().string(), a.filename().string(), {}));
  }
  static const std::regex urdf(R"(cd_.*\.urdf)");
  for (const fs::path& p : filesMatching(bundled, urdf)) {
    const std::string stem = p.stem().string();
    if (stem.size() > 12 && stem.compare(stem.size() - 12, 12, "_approximate") == 0)
      registerAba(
          addTreeFixture(p.string(), "bundled/" + stem, "models/" + p.filename().string(), {}));
    else
      registerAll(
          addClusterFixture(p.string(), "bundled/" + stem, "models/" + p.filename().string(), {}));
  }
}

/// Fig. 8: benchmarks/variable_*_urdf/[approx_]<mechanism>_branch_B_D.urdf, sorted by
/// (folder, B, D).
void registerFig8(const fs::path& urdfplus) {
  const fs::path root = urdfplus / "benchmarks";
  std::error_code ec;
  if (!fs::is_directory(root, ec)) return;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root, ec)) {
    const std::string n = e.path().filename().string();
    if (e.is_directory() && n.rfind("variable_", 0) == 0) dirs.push_back(e.path());
  }
  std::sort(dirs.begin(), dirs.end());
  static const std::regex file(R"((approx_)?(.*)_branch_(\d+)_(\d+)\.urdf)");
  for (const fs::path& dir : dirs) {
    struct Entry {
      int b, d;
      bool approx;
      fs::path path;
    };
    std::vector<Entry> entries;
    for (const fs::path& p : filesMatching(dir, file)) {
      std::smatch m;
      const std::string n = p.filename().string();
      std::regex_match(n, m, file);
      entries.push_back({std::stoi(m[3]), std::stoi(m[4]), m[1].matched, p});
    }
    std::sort(entries.begin(), entries.end(), [](const Entry& x, const Entry& y) {
      return std::tie(x.approx, x.b, x.d) < std::tie(y.approx, y.b, y.d);
    });
    for (const Entry& e : entries) {
      const std::string label = dir.filename().string() + "/" + e.path.filename().string();
      const Counters extra = {{"branches", e.b}, {"depth", e.d}};
      const std::string name = "fig8/" + e.path.stem().string();
      if (e.approx)
        registerAba(addTreeFixture(e.path.string(), name, label, extra));
      else if (ClusterFixture* f = addClusterFixture(e.path.string(), name, label, extra))
        benchmark::RegisterBenchmark(("CE_ABA/" + f->name).c_str(), BM_CE_ABA, f);
    }
  }
}

/// Fig. 10: benchmarks/parallel_chains/{Implicit,Explicit}/depthT/[approx_]loop_sizeL.urdf,
/// sorted by (kind, T, L).
void registerFig10(const fs::path& urdfplus) {
  static const std::regex depthDir(R"(depth(\d+))");
  static const std::regex file(R"((approx_)?loop_size(\d+)\.urdf)");
  for (const char* kind : {"Implicit", "Explicit"}) {
    const fs::path root = urdfplus / "benchmarks" / "parallel_chains" / kind;
    std::error_code ec;
    if (!fs::is_directory(root, ec)) continue;
    std::vector<std::pair<int, fs::path>> depths;
    for (const auto& e : fs::directory_iterator(root, ec)) {
      std::smatch m;
      const std::string n = e.path().filename().string();
      if (e.is_directory() && std::regex_match(n, m, depthDir))
        depths.emplace_back(std::stoi(m[1]), e.path());
    }
    std::sort(depths.begin(), depths.end());
    for (const auto& [depth, dir] : depths) {
      std::vector<std::tuple<bool, int, fs::path>> entries;
      for (const fs::path& p : filesMatching(dir, file)) {
        std::smatch m;
        const std::string n = p.filename().string();
        std::regex_match(n, m, file);
        entries.emplace_back(m[1].matched, std::stoi(m[2]), p);
      }
      std::sort(entries.begin(), entries.end());
      for (const auto& [approx, size, p] : entries) {
        const std::string sub = std::string(kind) + "/" + dir.filename().string() + "/";
        const std::string name = "fig10/" + sub + p.stem().string();
        const std::string label = "parallel_chains/" + sub + p.filename().string();
        const Counters extra = {{"tree_depth", depth}, {"loop_size", size}};
        if (approx)
          registerAba(addTreeFixture(p.string(), name, label, extra));
        else if (ClusterFixture* f = addClusterFixture(p.string(), name, label, extra))
          benchmark::RegisterBenchmark(("CE_ABA/" + f->name).c_str(), BM_CE_ABA, f);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  setLogLevel(LogLevel::Error);  // the third-party models trigger inertia warnings
  const char* urdfEnv = std::getenv("CLUSTERDYN_BENCH_URDF_DIR");
  const char* modelsEnv = std::getenv("CLUSTERDYN_BENCH_MODELS_DIR");
  const fs::path urdfplus = urdfEnv ? urdfEnv : CLUSTERDYN_BENCH_URDF_DIR;
  const fs::path bundled = modelsEnv ? modelsEnv : CLUSTERDYN_BENCH_MODELS_DIR;

  registerRobots(urdfplus, bundled);
  registerFig8(urdfplus);
  registerFig10(urdfplus);
  if (clusterFixtures.empty() && treeFixtures.empty()) {
    std::fprintf(stderr, "clusterdyn_bench_cluster: no models found in %s or %s\n",
                 urdfplus.c_str(), bundled.c_str());
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
