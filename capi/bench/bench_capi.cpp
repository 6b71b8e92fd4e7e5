// Overhead of the C API: each C call (libclusterdyn.so: argument checks, Map wrapping, copy of
// the result into the caller's array) against the C++ call it wraps (static core, result left
// in Data / ClusterData): tree functions on the shared tree models, CE-ABA, CE-RNEA and the
// cluster mass matrix on bundled loop models (target: C call <= 3% over the C++ call). Run:
//   clusterdyn_capi_bench --benchmark_repetitions=10 --benchmark_report_aggregates_only=true
// and compare the medians of the C/... and Cxx/... rows of one model.
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "clusterdyn.h"
#include "clusterdyn/clusterdyn.hpp"

namespace cd = clusterdyn;

namespace {

struct Fixture {
  explicit Fixture(const std::string& file) : path(std::string(CLUSTERDYN_URDF_DIR) + "/" + file) {
    char err[512];
    if (cdyn_model_load(CDYN_ABI_VERSION, path.c_str(), 0, nullptr, &cm, err, sizeof err) !=
            CDYN_OK ||
        cdyn_workspace_create(cm, &ws) != CDYN_OK)
      std::abort();
    model = cd::loadModel(path).treeModel;  // the C model's spanning tree (same body numbering)
    data = std::make_unique<cd::Data>(model);
    const int nq = model.nq, nv = model.nv;
    q = cd::neutralConfiguration(model);
    cd::VecX dq(nv), vv(nv), aa(nv), tt(nv);
    for (int i = 0; i < nv; ++i) {
      dq[i] = std::sin(1.0 + i);
      vv[i] = std::cos(0.5 * i);
      aa[i] = 0.1 * i - 0.4;
      tt[i] = 0.3 * i - 1.0;
    }
    q = cd::integrate(model, q, dq, 0.7);
    v = vv;
    a = aa;
    tau = tt;
    out.resize(nv);
    M.resize(nv * nv);
    J.resize(6 * nv);
    Jc.resize(6, nv);
    frame = static_cast<int>(model.frames.size()) - 1;
    (void)nq;
  }
  ~Fixture() {
    cdyn_workspace_free(ws);
    cdyn_model_free(cm);
  }
  std::string path;
  cdyn_model* cm = nullptr;
  cdyn_workspace* ws = nullptr;
  cd::Model model;
  std::unique_ptr<cd::Data> data;
  cd::VecX q, v, a, tau;
  std::vector<double> out, M, J;
  cd::Mat6X Jc;
  int frame = 0;
};

Fixture& fixture(const std::string& file) {
  static std::map<std::string, std::unique_ptr<Fixture>> all;
  auto& f = all[file];
  if (!f) f = std::make_unique<Fixture>(file);
  return *f;
}

#define CHECK_OK(expr) \
  if ((expr) != decltype(expr){}) state.SkipWithError(#expr)

void C_rnea(benchmark::State& state, std::string file) {
  Fixture& f = fixture(file);
  const int nq = f.model.nq, nv = f.model.nv;
  for (auto _ : state)
    CHECK_OK(cdyn_rnea(f.cm, f.ws, f.q.data(), nq, f.v.data(), nv, f.a.data(), nv, nullptr, 0,
                       f.out.data(), nv));
  benchmark::DoNotOptimize(f.out.data());
}
void Cxx_rnea(benchmark::State& state, std::string file) {
  Fixture& f = fixture(file);
  for (auto _ : state) CHECK_OK(cd::rnea(f.model, *f.data, f.q, f.v, f.a));
  benchmark::DoNotOptimize(f.data->tau.data());
}
void C_aba(benchmark::State& state, std::string file) {
  Fixture& f = fixture(file);
  const int nq = f.model.nq, nv = f.model.nv;
  for (auto _ : state)
    CHECK_OK(cdyn_aba(f.cm, f.ws, f.q.data(), nq, f.v.data(), nv, f.tau.data(), nv, nullptr, 0,
                      f.out.data(), nv));
  benchmark::DoNotOptimize(f.out.data());
}
void Cxx_aba(benchmark::State& state, std::string file) {
  Fixture& f = fixture(file);
  for (auto _ : state) CHECK_OK(cd::aba(f.model, *f.data, f.q, f.v, f.tau));
  benchmark::DoNotOptimize(f.data->ddq.data());
}
void C_crba(benchmark::State& state, std::string file) {
  Fixture& f = fixture(file);
  const int nq = f.model.nq, nv = f.model.nv;
  for (auto _ : state) CHECK_OK(cdyn_crba(f.cm, f.ws, f.q.data(), nq, f.M.data(), nv));
  benchmark::DoNotOptimize(f.M.data());
}
void Cxx_crba(benchmark::State& state, std::string file) {
  Fixture& f = fixture(file);
  for (auto _ : state) CHECK_OK(cd::crba(f.model, *f.data, f.q));
  benchmark::DoNotOptimize(f.data->M.data());
}
void C_forward_kinematics(benchmark::State& state, std::string file) {
  Fixture& f = fixture(file);
  const int nq = f.model.nq, nv = f.model.nv;
  for (auto _ : state)
    CHECK_OK(cdyn_forward_kinematics(f.cm, f.ws, f.q.data(), nq, f.v.data(), nv, f.a.data(), nv));
}
void Cxx_forward_kinematics(benchmark::State& state, std::string file) {
  Fixture& f = fixture(file);
  for (auto _ : state) CHECK_OK(cd::forwardKinematics(f.model, *f.data, f.q, f.v, f.a));
}
void C_frame_jacobian(benchmark::State& state, std::string file) {
  Fixture& f = fixture(file);
  const int nq = f.model.nq;
  for (auto _ : state)
    CHECK_OK(cdyn_compute_frame_jacobian(f.cm, f.ws, f.q.data(), nq, f.frame, CDYN_WORLD,
                                         f.J.data(), 6));
  benchmark::DoNotOptimize(f.J.data());
}
void Cxx_frame_jacobian(benchmark::State& state, std::string file) {
  Fixture& f = fixture(file);
  for (auto _ : state)
    CHECK_OK(
        cd::computeFrameJacobian(f.model, *f.data, f.q, f.frame, cd::ReferenceFrame::World, f.Jc));
  benchmark::DoNotOptimize(f.Jc.data());
}
void C_frame_placement(benchmark::State& state, std::string file) {
  Fixture& f = fixture(file);
  double R[9], p[3];
  CHECK_OK(cdyn_forward_kinematics(f.cm, f.ws, f.q.data(), f.model.nq, nullptr, 0, nullptr, 0));
  for (auto _ : state) {
    CHECK_OK(cdyn_frame_placement(f.cm, f.ws, f.frame, R, 3, p));
    benchmark::DoNotOptimize(p);
  }
}
void Cxx_frame_placement(benchmark::State& state, std::string file) {
  Fixture& f = fixture(file);
  CHECK_OK(cd::forwardKinematics(f.model, *f.data, f.q));
  for (auto _ : state) {
    cd::Transform T = cd::framePlacement(f.model, *f.data, f.frame);
    benchmark::DoNotOptimize(T);
  }
}

/// A bundled loop model: C and C++ handles and a closed state (q, v) with efforts tauY.
struct ClusterFixture {
  explicit ClusterFixture(const std::string& file)
      : path(std::string(CLUSTERDYN_MODELS_DIR) + "/" + file) {
    char err[512];
    if (cdyn_model_load(CDYN_ABI_VERSION, path.c_str(), 0, nullptr, &cm, err, sizeof err) !=
            CDYN_OK ||
        cdyn_workspace_create(cm, &ws) != CDYN_OK)
      std::abort();
    model = cd::loadModel(path);
    data = std::make_unique<cd::ClusterData>(model);
    const int ny = model.ny, nv = model.treeModel.nv;
    cd::VecX y(model.nyq), ydot(ny);
    if (cd::spanningToIndependent(model, *data, model.qReference, cd::VecX::Zero(nv), y, ydot) !=
        cd::Status::Ok)
      std::abort();
    for (const cd::Cluster& c : model.clusters)  // move the loop coordinates off the reference
      if (c.implicit()) y.segment(c.yq0, c.nyq).array() += 0.3;
    tauY.resize(ny);
    ydd.resize(ny);
    for (int i = 0; i < ny; ++i) {
      ydot[i] = std::cos(0.5 * i);
      tauY[i] = 0.3 * i - 1.0;
      ydd[i] = 0.1 * i - 0.4;
    }
    if (cd::independentToSpanning(model, *data, y, ydot) != cd::Status::Ok) std::abort();
    q = data->q;
    v = data->v;
    out.resize(ny);
    H.resize(ny * ny);
  }
  ~ClusterFixture() {
    cdyn_workspace_free(ws);
    cdyn_model_free(cm);
  }
  std::string path;
  cdyn_model* cm = nullptr;
  cdyn_workspace* ws = nullptr;
  cd::ClusterModel model;
  std::unique_ptr<cd::ClusterData> data;
  cd::VecX q, v, tauY, ydd;
  std::vector<double> out, H;
};

ClusterFixture& clusterFixture(const std::string& file) {
  static std::map<std::string, std::unique_ptr<ClusterFixture>> all;
  auto& f = all[file];
  if (!f) f = std::make_unique<ClusterFixture>(file);
  return *f;
}

void C_ce_aba(benchmark::State& state, std::string file) {
  ClusterFixture& f = clusterFixture(file);
  const int nq = f.model.treeModel.nq, nv = f.model.treeModel.nv, ny = f.model.ny;
  for (auto _ : state)
    CHECK_OK(cdyn_ce_aba(f.cm, f.ws, f.q.data(), nq, f.v.data(), nv, f.tauY.data(), ny, nullptr, 0,
                         f.out.data(), ny, nullptr, 0));
  benchmark::DoNotOptimize(f.out.data());
}
void Cxx_ce_aba(benchmark::State& state, std::string file) {
  ClusterFixture& f = clusterFixture(file);
  for (auto _ : state) CHECK_OK(cd::ceAba(f.model, *f.data, f.q, f.v, f.tauY));
  benchmark::DoNotOptimize(f.data->ydd.data());
}
void C_ce_rnea(benchmark::State& state, std::string file) {
  ClusterFixture& f = clusterFixture(file);
  const int nq = f.model.treeModel.nq, nv = f.model.treeModel.nv, ny = f.model.ny;
  for (auto _ : state)
    CHECK_OK(cdyn_ce_rnea(f.cm, f.ws, f.q.data(), nq, f.v.data(), nv, f.ydd.data(), ny, nullptr, 0,
                          f.out.data(), ny, nullptr, 0));
  benchmark::DoNotOptimize(f.out.data());
}
void Cxx_ce_rnea(benchmark::State& state, std::string file) {
  ClusterFixture& f = clusterFixture(file);
  for (auto _ : state) CHECK_OK(cd::ceRnea(f.model, *f.data, f.q, f.v, f.ydd));
  benchmark::DoNotOptimize(f.data->tauY.data());
}
void C_cluster_mass_matrix(benchmark::State& state, std::string file) {
  ClusterFixture& f = clusterFixture(file);
  const int nq = f.model.treeModel.nq, ny = f.model.ny;
  for (auto _ : state)
    CHECK_OK(cdyn_cluster_mass_matrix(f.cm, f.ws, f.q.data(), nq, f.H.data(), ny));
  benchmark::DoNotOptimize(f.H.data());
}
void Cxx_cluster_mass_matrix(benchmark::State& state, std::string file) {
  ClusterFixture& f = clusterFixture(file);
  for (auto _ : state) CHECK_OK(cd::clusterMassMatrix(f.model, *f.data, f.q));
  benchmark::DoNotOptimize(f.data->H.data());
}

}  // namespace

int main(int argc, char** argv) {
  for (const char* file :
       {"double_pendulum.urdf", "mini_cheetah_approximate.urdf", "mit_humanoid_approximate.urdf"}) {
    const std::string f = file, m = f.substr(0, f.find('.'));
    for (auto [name, fn] :
         std::initializer_list<std::pair<const char*, void (*)(benchmark::State&, std::string)>>{
             {"C/rnea/", C_rnea},
             {"Cxx/rnea/", Cxx_rnea},
             {"C/aba/", C_aba},
             {"Cxx/aba/", Cxx_aba},
             {"C/crba/", C_crba},
             {"Cxx/crba/", Cxx_crba},
             {"C/forward_kinematics/", C_forward_kinematics},
             {"Cxx/forward_kinematics/", Cxx_forward_kinematics},
             {"C/frame_jacobian/", C_frame_jacobian},
             {"Cxx/frame_jacobian/", Cxx_frame_jacobian},
             {"C/frame_placement/", C_frame_placement},
             {"Cxx/frame_placement/", Cxx_frame_placement}})
      benchmark::RegisterBenchmark((std::string(name) + m).c_str(), fn, f);
  }
  for (const char* file : {"cd_four_bar.urdf", "cd_six_bar.urdf", "cd_quadruped.urdf"}) {
    const std::string f = file, m = f.substr(0, f.find('.'));
    for (auto [name, fn] :
         std::initializer_list<std::pair<const char*, void (*)(benchmark::State&, std::string)>>{
             {"C/ce_aba/", C_ce_aba},
             {"Cxx/ce_aba/", Cxx_ce_aba},
             {"C/ce_rnea/", C_ce_rnea},
             {"Cxx/ce_rnea/", Cxx_ce_rnea},
             {"C/cluster_mass_matrix/", C_cluster_mass_matrix},
             {"Cxx/cluster_mass_matrix/", Cxx_cluster_mass_matrix}})
      benchmark::RegisterBenchmark((std::string(name) + m).c_str(), fn, f);
  }
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
