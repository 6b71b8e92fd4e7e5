// Google Benchmark of the spanning-tree algorithms (forward kinematics (q, v), RNEA, ABA, CRBA,
// the RNEA / ABA derivatives and M^-1)
// on the third-party URDF models of shared/urdfplus. Each benchmark cycles through a pool of
// random states (fixed seed). Report medians with
//   clusterdyn_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
// The model folder is compiled in; override it with the environment variable
// CLUSTERDYN_BENCH_URDF_DIR.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "clusterdyn/clusterdyn.hpp"

using namespace clusterdyn;

namespace {

constexpr size_t kPool = 64;  // random states per model, cycled through

struct Fixture {
  std::string name;
  Model model;
  std::unique_ptr<Data> data;
  std::unique_ptr<DerivativeData> derivatives;
  std::vector<VecX> q, v, a, tau;
};

std::unique_ptr<Fixture> makeFixture(const std::string& dir, const std::string& name) {
  auto f = std::make_unique<Fixture>();
  f->name = name;
  f->model = loadTreeModel(dir + "/" + name + ".urdf");  // floating models: type="floating"
  f->data = std::make_unique<Data>(f->model);
  f->derivatives = std::make_unique<DerivativeData>(f->model);
  std::mt19937_64 rng(12345);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int nv = f->model.nv;
  for (size_t k = 0; k < kPool; ++k) {
    f->q.push_back(randomConfiguration(f->model, rng));
    VecX v(nv), a(nv), tau(nv);
    for (int i = 0; i < nv; ++i) v[i] = u(rng), a[i] = u(rng), tau[i] = u(rng);
    f->v.push_back(v), f->a.push_back(a), f->tau.push_back(tau);
  }
  return f;
}

/// Model size as counters (plain fields of each entry with --benchmark_format=json) and the URDF
/// file as label, so that results parse into tables the same way as clusterdyn_bench_cluster's.
void describe(benchmark::State& state, const Fixture* f) {
  state.counters["bodies"] = f->model.nbodies;
  state.counters["nv"] = f->model.nv;
  state.SetLabel(f->name + ".urdf");
}

void BM_FK(benchmark::State& state, Fixture* f) {
  size_t k = 0;
  for (auto _ : state) {
    const size_t i = k++ % kPool;
    forwardKinematics(f->model, *f->data, f->q[i], f->v[i]);
    benchmark::DoNotOptimize(f->data->v.back().data());
    benchmark::ClobberMemory();
  }
  describe(state, f);
}

void BM_RNEA(benchmark::State& state, Fixture* f) {
  size_t k = 0;
  for (auto _ : state) {
    const size_t i = k++ % kPool;
    rnea(f->model, *f->data, f->q[i], f->v[i], f->a[i]);
    benchmark::DoNotOptimize(f->data->tau.data());
    benchmark::ClobberMemory();
  }
  describe(state, f);
}

void BM_ABA(benchmark::State& state, Fixture* f) {
  size_t k = 0;
  for (auto _ : state) {
    const size_t i = k++ % kPool;
    aba(f->model, *f->data, f->q[i], f->v[i], f->tau[i]);
    benchmark::DoNotOptimize(f->data->ddq.data());
    benchmark::ClobberMemory();
  }
  describe(state, f);
}

void BM_CRBA(benchmark::State& state, Fixture* f) {
  size_t k = 0;
  for (auto _ : state) {
    const size_t i = k++ % kPool;
    crba(f->model, *f->data, f->q[i]);
    benchmark::DoNotOptimize(f->data->M.data());
    benchmark::ClobberMemory();
  }
  describe(state, f);
}

void BM_RNEADerivatives(benchmark::State& state, Fixture* f) {
  size_t k = 0;
  for (auto _ : state) {
    const size_t i = k++ % kPool;
    computeRNEADerivatives(f->model, *f->data, *f->derivatives, f->q[i], f->v[i], f->a[i]);
    benchmark::DoNotOptimize(f->derivatives->dtau_dq.data());
    benchmark::ClobberMemory();
  }
  describe(state, f);
}

void BM_ABADerivatives(benchmark::State& state, Fixture* f) {
  size_t k = 0;
  for (auto _ : state) {
    const size_t i = k++ % kPool;
    computeABADerivatives(f->model, *f->data, *f->derivatives, f->q[i], f->v[i], f->tau[i]);
    benchmark::DoNotOptimize(f->derivatives->ddq_dq.data());
    benchmark::ClobberMemory();
  }
  describe(state, f);
}

void BM_Minverse(benchmark::State& state, Fixture* f) {
  size_t k = 0;
  for (auto _ : state) {
    const size_t i = k++ % kPool;
    computeMinverse(f->model, *f->data, *f->derivatives, f->q[i]);
    benchmark::DoNotOptimize(f->derivatives->Minv.data());
    benchmark::ClobberMemory();
  }
  describe(state, f);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  const char* env = std::getenv("CLUSTERDYN_BENCH_URDF_DIR");
  const std::string dir = env ? env : CLUSTERDYN_BENCH_URDF_DIR;

  static std::vector<std::unique_ptr<Fixture>> fixtures;
  for (const char* name : {"mini_cheetah_approximate", "mit_humanoid_approximate",
                           "tello_humanoid_approximate", "double_pendulum"}) {
    try {
      fixtures.push_back(makeFixture(dir, name));
    } catch (const ModelError& e) {
      std::fprintf(stderr, "clusterdyn_bench: skipping %s: %s\n", name, e.what());
      continue;
    }
    Fixture* f = fixtures.back().get();
    // Every algorithm must accept the states (the timed loops do not check the Status).
    const Status s[] = {
        forwardKinematics(f->model, *f->data, f->q[0], f->v[0]),
        rnea(f->model, *f->data, f->q[0], f->v[0], f->a[0]),
        aba(f->model, *f->data, f->q[0], f->v[0], f->tau[0]),
        crba(f->model, *f->data, f->q[0]),
        computeRNEADerivatives(f->model, *f->data, *f->derivatives, f->q[0], f->v[0], f->a[0]),
        computeABADerivatives(f->model, *f->data, *f->derivatives, f->q[0], f->v[0], f->tau[0]),
        computeMinverse(f->model, *f->data, *f->derivatives, f->q[0])};
    for (Status st : s)
      if (st != Status::Ok) {
        std::fprintf(stderr, "clusterdyn_bench: %s: %s\n", name, f->data->errorMessage());
        return 1;
      }
    benchmark::RegisterBenchmark(("FK/" + f->name).c_str(), BM_FK, f);
    benchmark::RegisterBenchmark(("RNEA/" + f->name).c_str(), BM_RNEA, f);
    benchmark::RegisterBenchmark(("ABA/" + f->name).c_str(), BM_ABA, f);
    benchmark::RegisterBenchmark(("CRBA/" + f->name).c_str(), BM_CRBA, f);
    benchmark::RegisterBenchmark(("RNEADerivatives/" + f->name).c_str(), BM_RNEADerivatives, f);
    benchmark::RegisterBenchmark(("ABADerivatives/" + f->name).c_str(), BM_ABADerivatives, f);
    benchmark::RegisterBenchmark(("Minverse/" + f->name).c_str(), BM_Minverse, f);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
