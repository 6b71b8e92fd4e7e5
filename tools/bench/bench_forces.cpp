// Google Benchmark of the constraint forces (constraint_forces.hpp): CE-ABA alone vs. CE-ABA
// followed by ceAbaConstraintForces (every tree-joint force, loop wrench and coupling force),
// on models/cd_quadruped.urdf and shared/urdfplus/{mini_cheetah,mit_humanoid}.urdf. Each
// benchmark cycles through 64 random closed states (seed 12345, tools/support/closed_states.hpp)
// with tau_y uniform in [-1, 1]. Names: "CE_ABA/<model>" and "CE_ABA_FORCES/<model>".
//
//   clusterdyn_bench_forces --benchmark_repetitions=15 --benchmark_report_aggregates_only=true
//       --benchmark_enable_random_interleaving=true    (one command line)
//
// Folders: compiled in, overridden by CLUSTERDYN_BENCH_URDF_DIR / CLUSTERDYN_BENCH_MODELS_DIR.
//
// Instruction counts (independent of machine load), per call = (total(3N) - total(N)) / 2N:
//   valgrind --tool=callgrind clusterdyn_bench_forces --instructions MODEL.urdf ceaba|forces N
// ("forces": CE-ABA + ceAbaConstraintForces).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
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
  std::unique_ptr<ClusterData> data;
  std::unique_ptr<JointForces> forces;
  std::vector<support::ClosedState> states;
  std::vector<VecX> tauY;
};

std::vector<std::unique_ptr<Fixture>> fixtures;

std::string folder(const char* env, const char* compiled) {
  const char* e = std::getenv(env);
  return e && *e ? e : compiled;
}

bool addFixture(const std::string& path, const std::string& name) {
  if (!fs::exists(path)) {
    std::fprintf(stderr, "bench_forces: %s not found, skipped\n", path.c_str());
    return false;
  }
  auto f = std::make_unique<Fixture>();
  f->name = name;
  f->model = loadModel(path);
  f->data = std::make_unique<ClusterData>(f->model);
  f->forces = std::make_unique<JointForces>(f->model);
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  while (f->states.size() < kPool) {
    support::ClosedState s;
    if (!support::randomClosedState(f->model, *f->data, rng, s)) return false;
    VecX tau(f->model.ny);
    for (int k = 0; k < f->model.ny; ++k) tau[k] = u(rng);
    if (ceAba(f->model, *f->data, s.q, s.v, tau) != Status::Ok ||
        ceAbaConstraintForces(f->model, *f->data, *f->forces, tau) != Status::Ok) {
      std::fprintf(stderr, "bench_forces: %s: %s\n", name.c_str(), f->data->errorMessage());
      return false;
    }
    f->states.push_back(s);
    f->tauY.push_back(tau);
  }
  fixtures.push_back(std::move(f));
  return true;
}

void benchCeAba(benchmark::State& state, Fixture* f) {
  size_t i = 0;
  for (auto _ : state) {
    const Status s = ceAba(f->model, *f->data, f->states[i].q, f->states[i].v, f->tauY[i]);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(f->data->ydd.data());
    benchmark::ClobberMemory();
    i = (i + 1) % kPool;
  }
}

void benchCeAbaForces(benchmark::State& state, Fixture* f) {
  size_t i = 0;
  for (auto _ : state) {
    Status s = ceAba(f->model, *f->data, f->states[i].q, f->states[i].v, f->tauY[i]);
    if (s == Status::Ok) s = ceAbaConstraintForces(f->model, *f->data, *f->forces, f->tauY[i]);
    benchmark::DoNotOptimize(s);
    benchmark::DoNotOptimize(f->forces->joint.data());
    benchmark::ClobberMemory();
    i = (i + 1) % kPool;
  }
}

}  // namespace

/// --instructions MODEL.urdf ceaba|forces N: N calls on one closed state (for callgrind).
int instructions(const std::string& path, const std::string& mode, int n) {
  const ClusterModel cm = loadModel(path);
  ClusterData data(cm);
  JointForces forces(cm);
  std::mt19937_64 rng(1);
  support::ClosedState s;
  if (!support::randomClosedState(cm, data, rng, s)) return 1;
  const VecX tau = VecX::Constant(cm.ny, 0.3);
  double sink = 0.0;
  for (int i = 0; i < n; ++i) {
    if (ceAba(cm, data, s.q, s.v, tau) != Status::Ok) return 1;
    if (mode == "forces" && ceAbaConstraintForces(cm, data, forces, tau) != Status::Ok) return 1;
    sink += data.ydd[0] + forces.joint[0][0];
  }
  std::printf("%s %s %d calls (checksum %g)\n", path.c_str(), mode.c_str(), n, sink);
  return 0;
}

int main(int argc, char** argv) {
  setLogLevel(LogLevel::Off);
  if (argc == 5 && std::string(argv[1]) == "--instructions")
    return instructions(argv[2], argv[3], std::atoi(argv[4]));
  const std::string urdf = folder("CLUSTERDYN_BENCH_URDF_DIR", CLUSTERDYN_BENCH_URDF_DIR);
  const std::string models = folder("CLUSTERDYN_BENCH_MODELS_DIR", CLUSTERDYN_BENCH_MODELS_DIR);
  addFixture(models + "/cd_quadruped.urdf", "cd_quadruped");
  addFixture(urdf + "/mini_cheetah.urdf", "mini_cheetah");
  addFixture(urdf + "/mit_humanoid.urdf", "mit_humanoid");
  for (auto& f : fixtures) {
    benchmark::RegisterBenchmark(("CE_ABA/" + f->name).c_str(), benchCeAba, f.get());
    benchmark::RegisterBenchmark(("CE_ABA_FORCES/" + f->name).c_str(), benchCeAbaForces, f.get());
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
