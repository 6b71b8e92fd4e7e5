// C++ consumer of an installed clusterdyn (capi_install_cxx): loads a URDF(+) model with loops,
// builds a closed state from independent coordinates, runs CE-ABA (Chignoli et al. 2023, Alg. 1)
// and checks that CE-RNEA of its accelerations gives back the applied forces:
// ceRnea(q, v, ceAba(q, v, tau)) == tau to 1e-9, and that H ydd + C == tau.
//
// Usage: consumer_cxx model.urdf
#include <clusterdyn/clusterdyn.hpp>
#include <cmath>
#include <cstdio>
#include <exception>

int main(int argc, char** argv) {
  namespace cd = clusterdyn;
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s model.urdf\n", argv[0]);
    return 2;
  }
  cd::ClusterModel model;
  try {
    model = cd::loadModel(argv[1]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "cannot load %s: %s\n", argv[1], e.what());
    return 1;
  }
  if (model.ny < 1 || !model.hasLoops()) {
    std::fprintf(stderr, "%s: expected a model with chords and ny >= 1\n", argv[1]);
    return 1;
  }
  cd::ClusterData data(model);

  // A closed state: the reference configuration's independent coordinates moved a little.
  cd::VecX y(model.nyq), ydot(model.ny), tau(model.ny);
  for (int i = 0; i < model.nyq; ++i)
    y[i] = model.qReference[model.independentPosition[i]] + 0.1 + 0.05 * i;
  for (int i = 0; i < model.ny; ++i) {
    ydot[i] = 0.4 - 0.1 * i;
    tau[i] = 0.3 + 0.2 * i;
  }
  cd::Status s = cd::independentToSpanning(model, data, y, ydot);
  if (s != cd::Status::Ok) {
    std::fprintf(stderr, "independentToSpanning: %s\n", data.errorMessage());
    return 1;
  }
  const cd::VecX q = data.q, v = data.v;

  s = cd::ceAba(model, data, q, v, tau);
  if (s != cd::Status::Ok) {
    std::fprintf(stderr, "ceAba: %s\n", data.errorMessage());
    return 1;
  }
  const cd::VecX ydd = data.ydd;
  s = cd::ceRnea(model, data, q, v, ydd);
  if (s != cd::Status::Ok) {
    std::fprintf(stderr, "ceRnea: %s\n", data.errorMessage());
    return 1;
  }
  const double rneaError = (data.tauY - tau).cwiseAbs().maxCoeff();

  if (cd::clusterMassMatrix(model, data, q) != cd::Status::Ok ||
      cd::clusterBias(model, data, q, v) != cd::Status::Ok) {
    std::fprintf(stderr, "clusterMassMatrix/clusterBias: %s\n", data.errorMessage());
    return 1;
  }
  const double eomError = (data.H * ydd + data.C - tau).cwiseAbs().maxCoeff();

  std::printf(
      "%s: nq %d nv %d ny %d, |ydd| %.6g, |RNEA(ABA(tau)) - tau| %.3g, "
      "|H ydd + C - tau| %.3g\n",
      argv[1], model.treeModel.nq, model.treeModel.nv, model.ny, ydd.norm(), rneaError, eomError);
  const bool ok = std::isfinite(rneaError) && rneaError <= 1e-9 && std::isfinite(eomError) &&
                  eomError <= 1e-9 && ydd.norm() > 0.0;
  if (!ok) std::fprintf(stderr, "FAILED: errors above 1e-9 or zero accelerations\n");
  return ok ? 0 : 1;
}
