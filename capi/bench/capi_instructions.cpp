// Instruction-count comparison of a C API call with the C++ call it wraps, independent of machine
// load (docs/benchmarks.md). Run under valgrind --tool=callgrind with N and 3N calls and divide the
// difference of the totals by 2N:  clusterdyn_capi_instructions MODEL.urdf C|X N [aba|rnea]
// (C = cdyn_ce_aba / cdyn_ce_rnea, X = clusterdyn::ceAba / ceRnea; one closed state).
#include <clusterdyn.h>

#include <clusterdyn/clusterdyn.hpp>
#include <cstdio>
#include <cstdlib>
#include <vector>
int main(int argc, char** argv) {
  if (argc < 4 || (argv[2][0] != 'C' && argv[2][0] != 'X') || std::atoi(argv[3]) <= 0) {
    std::fprintf(stderr, "usage: %s MODEL.urdf C|X N [aba|rnea]\n", argv[0]);
    return 2;
  }
  const char* path = argv[1];
  const bool useC = argv[2][0] == 'C';
  const int N = atoi(argv[3]);
  const char* algo = argc > 4 ? argv[4] : "aba";
  cdyn_model* m = nullptr;
  char err[512];
  if (cdyn_model_load(CDYN_ABI_VERSION, path, 0, nullptr, &m, err, sizeof err) != CDYN_OK) {
    puts(err);
    return 1;
  }
  cdyn_workspace* ws = nullptr;
  cdyn_workspace_create(m, &ws);
  clusterdyn::setLogLevel(clusterdyn::LogLevel::Off);
  clusterdyn::ClusterModel cm = clusterdyn::loadModel(path);
  clusterdyn::ClusterData cd(cm);
  int nq, nv, ny, nyq;
  cdyn_model_nq(m, &nq);
  cdyn_model_nv(m, &nv);
  cdyn_model_ny(m, &ny);
  cdyn_model_nyq(m, &nyq);
  std::vector<double> y(nyq, 0.2), yd(ny, 0.3), q(nq), v(nv), tau(ny, 0.1), ydd(ny);
  clusterdyn::VecX q0 = clusterdyn::neutralConfiguration(cm.treeModel);
  for (int i = 0; i < nyq; ++i)
    if (cm.treeModel.joints[0].type == clusterdyn::JointType::Floating && i < 7) y[i] = q0[i];
  if (cdyn_independent_to_spanning(m, ws, y.data(), nyq, yd.data(), ny, nullptr, 0, q.data(), nq,
                                   v.data(), nv) != CDYN_OK) {
    puts(cdyn_workspace_last_error(ws));
    return 1;
  }
  Eigen::Map<const clusterdyn::VecX> Q(q.data(), nq), V(v.data(), nv), T(tau.data(), ny);
  bool rnea = algo[0] == 'r';
  for (int i = 0; i < N; ++i) {
    if (useC) {
      if (rnea)
        cdyn_ce_rnea(m, ws, q.data(), nq, v.data(), nv, tau.data(), ny, nullptr, 0, ydd.data(), ny,
                     nullptr, 0);
      else
        cdyn_ce_aba(m, ws, q.data(), nq, v.data(), nv, tau.data(), ny, nullptr, 0, ydd.data(), ny,
                    nullptr, 0);
    } else {
      if (rnea)
        clusterdyn::ceRnea(cm, cd, Q, V, T);
      else
        clusterdyn::ceAba(cm, cd, Q, V, T);
    }
  }
  return 0;
}
