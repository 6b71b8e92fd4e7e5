// Google Benchmark of the constraint algorithms on cluster trees (Delassus matrix, damped inverse,
// constrainedABA, proxPV and the dense / L^T D L baselines):
//
//  * robot: shared/urdfplus/{mit_humanoid,mini_cheetah}{,_approximate}.urdf with the contacts of
//    the Pinocchio comparison (6D weld contacts on left_ankle_link / right_ankle_link; 3D point
//    contacts on the four *_knee_link), LOCAL frames at the link origins;
//  * loops: four_bar_branch_B_D (implicit four-bars) with k point contacts on leaf links, the
//    loops embedded in the cluster tree vs cut and solved as two-body constraints by proxPv;
//  * stem / chain / tree: scaling families built in memory (Sathya et al. 2024 Fig. 3/4;
//    Sathya & Carpentier 2024 Fig. 3): a stem with branches of 7 links welded at their tips, a
//    serial chain with 6D constraints every k links, a binary tree with 3D contacts at its leaves.
//
// Names are "<ALGORITHM>/<group>/<model>"; counters: nv, ny, m (rows), iterations (of the last
// proximal solve). Each benchmark cycles through 64 random closed states (seed 12345), tau
// uniform in [-1, 1]. Every call includes the kinematics it needs (as Pinocchio's do).
//
//   clusterdyn_bench_constrained --benchmark_filter=robot --benchmark_repetitions=10
//     --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "closed_states.hpp"
#include "clusterdyn/clusterdyn.hpp"

using namespace clusterdyn;
namespace fs = std::filesystem;

namespace {

constexpr size_t kPool = 64;

struct Fixture {
  std::string name;
  ClusterModel model;
  std::unique_ptr<ConstraintSet> set;
  std::unique_ptr<ClusterData> data;
  std::unique_ptr<ConstraintData> cdata;
  std::vector<support::ClosedState> states;
  std::vector<VecX> tau;
};
std::vector<std::unique_ptr<Fixture>> fixtures;

std::string urdfDir() {
  if (const char* e = std::getenv("CLUSTERDYN_BENCH_URDF_DIR")) return e;
  return CLUSTERDYN_BENCH_URDF_DIR;
}

Fixture* addFixture(const std::string& name, ClusterModel model,
                    const std::vector<std::pair<std::string, ConstraintType>>& contacts,
                    bool withCutLoops = false) {
  auto f = std::make_unique<Fixture>();
  f->name = name;
  f->model = std::move(model);
  f->set = std::make_unique<ConstraintSet>(f->model);
  for (const auto& [link, type] : contacts) f->set->addContact(link, type);
  if (withCutLoops) {
    const ConstraintSet loops = cutLoopConstraints(f->model);
    for (const RigidConstraint& c : loops.constraints()) f->set->add(c);
  }
  f->data = std::make_unique<ClusterData>(f->model);
  f->cdata = std::make_unique<ConstraintData>(f->model, *f->set);
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (size_t k = 0; k < kPool; ++k) {
    support::ClosedState s;
    if (!support::randomClosedState(f->model, *f->data, rng, s)) {
      std::fprintf(stderr, "%s: no closed state\n", name.c_str());
      return nullptr;
    }
    f->states.push_back(s);
    VecX t(f->model.ny);
    for (int i = 0; i < f->model.ny; ++i) t[i] = u(rng);
    f->tau.push_back(t);
  }
  fixtures.push_back(std::move(f));
  return fixtures.back().get();
}

enum class Algo {
  CeAba,
  Delassus,
  DampedInverse,
  ConstrainedAba,
  ConstrainedAbaOnePass,
  ProxPv,
  Dense,
  DelassusLtl
};

void run(benchmark::State& state, Fixture* f, Algo algo) {
  const ClusterModel& m = f->model;
  ClusterData& d = *f->data;
  ConstraintData& cd = *f->cdata;
  const ConstraintSet& set = *f->set;
  const ProximalSettings settings;
  ProximalSettings onePass;  // the three-sweep pass alone, stiff penalty (no iteration)
  onePass.mu = 1e-8;
  onePass.maxIterations = 0;
  size_t i = 0;
  for (auto _ : state) {
    const support::ClosedState& s = f->states[i % kPool];
    const VecX& tau = f->tau[i % kPool];
    ++i;
    Status st = Status::Ok;
    switch (algo) {
      case Algo::CeAba:
        st = ceAba(m, d, s.q, s.v, tau);
        break;
      case Algo::Delassus:
        st = delassusMatrix(m, d, set, cd, s.q);
        break;
      case Algo::DampedInverse:
        st = dampedDelassusInverse(m, d, set, cd, s.q, 1e-6);
        break;
      case Algo::ConstrainedAba:
        st = constrainedAba(m, d, set, cd, s.q, s.v, tau, settings);
        break;
      case Algo::ConstrainedAbaOnePass:
        st = constrainedAba(m, d, set, cd, s.q, s.v, tau, onePass);
        break;
      case Algo::ProxPv:
        st = proxPv(m, d, set, cd, s.q, s.v, tau, settings);
        break;
      case Algo::Dense:
        st = constrainedDynamicsDense(m, d, set, cd, s.q, s.v, tau, settings);
        break;
      case Algo::DelassusLtl:
        st = delassusMatrixLtl(m, d, set, cd, s.q);
        break;
    }
    if (st != Status::Ok && st != Status::NotConverged) {
      state.SkipWithError(d.errorMessage());
      return;
    }
    benchmark::DoNotOptimize(d.ydd.data());
    benchmark::DoNotOptimize(cd.delassus.data());
  }
  state.counters["nv"] = m.treeModel.nv;
  state.counters["ny"] = m.ny;
  state.counters["m"] = set.rows();
  state.counters["iterations"] = cd.result.iterations;
}

/// twoBody: no constrainedAba (contacts only); delassusOnly: the Delassus algorithms only (sets
/// with more rows than degrees of freedom, as in the Delassus scaling studies).
void registerAll(Fixture* f, const std::string& group, bool twoBody, bool delassusOnly = false) {
  if (!f) return;
  const std::pair<const char*, Algo> algos[] = {
      {"CE_ABA", Algo::CeAba},
      {"DELASSUS", Algo::Delassus},
      {"DAMPED_INVERSE", Algo::DampedInverse},
      {"CONSTRAINED_ABA", Algo::ConstrainedAba},
      {"CONSTRAINED_ABA_ONE_PASS", Algo::ConstrainedAbaOnePass},
      {"PROXPV", Algo::ProxPv},
      {"DENSE", Algo::Dense},
      {"DELASSUS_LTL", Algo::DelassusLtl}};
  for (const auto& [name, algo] : algos) {
    if (twoBody && (algo == Algo::ConstrainedAba || algo == Algo::ConstrainedAbaOnePass)) continue;
    if (delassusOnly && algo != Algo::Delassus && algo != Algo::DampedInverse &&
        algo != Algo::DelassusLtl)
      continue;
    benchmark::RegisterBenchmark((std::string(name) + "/" + group + "/" + f->name).c_str(),
                                 [f, algo = algo](benchmark::State& s) { run(s, f, algo); });
  }
}

// ---- Scaling families (URDF text generated here). -------------------------------------------

struct UrdfWriter {
  std::ostringstream links, joints;
  int count = 0;
  void link(const std::string& n) {
    links << "<link name=\"" << n << "\"><inertial><mass value=\"1\"/><origin xyz=\"0 0 0.1\"/>"
          << "<inertia ixx=\"0.01\" iyy=\"0.012\" izz=\"0.008\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>"
          << "</inertial></link>\n";
  }
  void joint(const std::string& parent, const std::string& child, const char* axis) {
    joints << "<joint name=\"j" << count++ << "\" type=\"revolute\"><parent link=\"" << parent
           << "\"/><child link=\"" << child << "\"/><origin xyz=\"0 0 0.2\"/><axis xyz=\"" << axis
           << "\"/><limit lower=\"-3\" upper=\"3\" effort=\"1\" velocity=\"1\"/></joint>\n";
  }
  std::string text(const std::string& name) {
    return "<robot name=\"" + name + "\">\n<link name=\"world\"/>\n" + links.str() + joints.str() +
           "</robot>\n";
  }
};

const char* axisOf(int i) { return i % 3 == 0 ? "1 0 0" : i % 3 == 1 ? "0 1 0" : "0 0 1"; }

/// A stem of `stem` links from a floating base with `branches` branches of 7 links hanging from
/// its tip, each branch tip welded (Sathya et al. 2024, Fig. 3).
Fixture* stemWithBranches(int stem, int branches) {
  UrdfWriter w;
  w.link("base");
  w.joints << "<joint name=\"float\" type=\"floating\"><parent link=\"world\"/><child "
              "link=\"base\"/></joint>\n";
  std::string prev = "base";
  for (int i = 0; i < stem; ++i) {
    const std::string n = "s" + std::to_string(i);
    w.link(n);
    w.joint(prev, n, axisOf(i));
    prev = n;
  }
  std::vector<std::pair<std::string, ConstraintType>> contacts;
  for (int b = 0; b < branches; ++b) {
    std::string p = prev;
    for (int i = 0; i < 7; ++i) {
      const std::string n = "b" + std::to_string(b) + "_" + std::to_string(i);
      w.link(n);
      w.joint(p, n, axisOf(i + b));
      p = n;
    }
    contacts.push_back({p, ConstraintType::Weld});
  }
  const std::string name = "stem" + std::to_string(stem) + "_branches" + std::to_string(branches);
  return addFixture(name, buildClusterModel(parseUrdfString(w.text(name), name + ".urdf")),
                    contacts);
}

/// A serial chain of k*k links with a 6D weld every k links (Sathya et al. 2024, Fig. 4a).
Fixture* chainWelds(int k) {
  UrdfWriter w;
  std::string prev = "world";
  std::vector<std::pair<std::string, ConstraintType>> contacts;
  for (int i = 0; i < k * k; ++i) {
    const std::string n = "l" + std::to_string(i);
    w.link(n);
    w.joint(prev, n, axisOf(i));
    prev = n;
    if ((i + 1) % k == 0) contacts.push_back({n, ConstraintType::Weld});
  }
  const std::string name = "chain" + std::to_string(k * k) + "_welds" + std::to_string(k);
  return addFixture(name, buildClusterModel(parseUrdfString(w.text(name), name + ".urdf")),
                    contacts);
}

/// A binary tree of the given depth under a floating base, 3D contacts at its leaves (Sathya &
/// Carpentier 2024, Fig. 3).
Fixture* binaryTree(int depth) {
  UrdfWriter w;
  w.link("base");
  w.joints << "<joint name=\"float\" type=\"floating\"><parent link=\"world\"/><child "
              "link=\"base\"/></joint>\n";
  std::vector<std::string> level = {"base"};
  std::vector<std::pair<std::string, ConstraintType>> contacts;
  int id = 0;
  for (int d = 0; d < depth; ++d) {
    std::vector<std::string> next;
    for (const std::string& p : level)
      for (int c = 0; c < 2; ++c) {
        const std::string n = "n" + std::to_string(id++);
        w.link(n);
        w.joint(p, n, axisOf(id));
        next.push_back(n);
      }
    level = next;
  }
  for (const std::string& l : level) contacts.push_back({l, ConstraintType::Point});
  const std::string name = "binary_tree_depth" + std::to_string(depth);
  return addFixture(name, buildClusterModel(parseUrdfString(w.text(name), name + ".urdf")),
                    contacts);
}

}  // namespace

int main(int argc, char** argv) {
  setLogLevel(LogLevel::Off);
  benchmark::Initialize(&argc, argv);
  const std::string dir = urdfDir();
  const std::vector<std::pair<std::string, ConstraintType>> humanoid = {
      {"left_ankle_link", ConstraintType::Weld}, {"right_ankle_link", ConstraintType::Weld}};
  const std::vector<std::pair<std::string, ConstraintType>> cheetah = {
      {"FR_knee_link", ConstraintType::Point},
      {"FL_knee_link", ConstraintType::Point},
      {"HR_knee_link", ConstraintType::Point},
      {"HL_knee_link", ConstraintType::Point}};
  for (const char* f : {"mit_humanoid_approximate", "mit_humanoid"})
    if (fs::exists(dir + "/" + f + ".urdf"))
      registerAll(addFixture(f, loadModel(dir + "/" + f + ".urdf"), humanoid), "robot", false);
  for (const char* f : {"mini_cheetah_approximate", "mini_cheetah"})
    if (fs::exists(dir + "/" + f + ".urdf"))
      registerAll(addFixture(f, loadModel(dir + "/" + f + ".urdf"), cheetah), "robot", false);
  // A loop robot with k point contacts on its leaf links: loops embedded (cluster tree) vs cut
  // (open tree + the loops as two-body constraints, proxPv only).
  for (const char* f : {"four_bar_branch_2_3", "four_bar_branch_4_3", "four_bar_branch_4_6"}) {
    const std::string path = dir + "/benchmarks/variable_four_bar_urdf/" + f + ".urdf";
    if (!fs::exists(path)) continue;
    ClusterModel embedded = loadModel(path);
    std::vector<std::pair<std::string, ConstraintType>> leaves;
    for (int b = 0; b < embedded.treeModel.nbodies; ++b)
      if (embedded.treeModel.children[b].empty() && leaves.size() < 4)
        leaves.push_back({embedded.treeModel.bodyNames[b], ConstraintType::Point});
    for (size_t k : {size_t(1), size_t(2)}) {
      const std::vector<std::pair<std::string, ConstraintType>> some(leaves.begin(),
                                                                     leaves.begin() + k);
      const std::string tag = std::string(f) + "_k" + std::to_string(k);
      registerAll(addFixture(tag + "_embedded", loadModel(path), some), "loops", false);
      ModelOptions cut;
      cut.cutLoops = true;
      registerAll(addFixture(tag + "_cut", loadModel(path, cut), some, true), "loops", true);
    }
  }
  for (int b : {1, 2, 4})
    for (int s : {2, 8, 16}) registerAll(stemWithBranches(s, b), "stem", false);
  for (int k : {2, 3, 4, 5, 6}) registerAll(chainWelds(k), "chain", false, true);
  for (int d : {2, 3, 4, 5}) registerAll(binaryTree(d), "tree", false, d > 2);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
