// Checks the numbers written by test_capi_fortran against the C++ API: same inputs (read back
// exactly, 17 significant digits), aba with/without external forces, crba, frame placement and
// Jacobian of the last frame on the spanning tree; in independent coordinates the closed state
// from (y, ydot), ceAba with/without external forces, H, C, G and g.
// Usage: capi_fortran_check robot.urdf results.txt
#include <cmath>
#include <cstdio>
#include <fstream>
#include <vector>

#include "clusterdyn/clusterdyn.hpp"

namespace cd = clusterdyn;

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  std::ifstream in(argv[2]);
  int nq = 0, nv = 0, nb = 0;
  if (!(in >> nq >> nv >> nb)) {
    std::fprintf(stderr, "cannot read %s\n", argv[2]);
    return 1;
  }
  auto read = [&](long n) {
    std::vector<double> x(n);
    for (double& d : x) in >> d;
    return x;
  };
  const auto q = read(nq), v = read(nv), tau = read(nv), fext = read(6 * nb), ddq = read(nv),
             ddq0 = read(nv), M = read(long(nv) * nv), p = read(3), R = read(9), J = read(6L * nv);
  int ny = 0, nyq = 0;
  in >> ny >> nyq;
  const auto y = read(nyq), ydot = read(ny), tauY = read(ny), qc = read(nq), vc = read(nv),
             ydd = read(ny), qdd = read(nv), ydd0 = read(ny), H = read(long(ny) * ny), C = read(ny),
             G = read(long(nv) * ny), g = read(nv);
  if (!in) {
    std::fprintf(stderr, "%s is truncated\n", argv[2]);
    return 1;
  }
  const cd::ClusterModel cm = cd::loadModel(argv[1]);
  const cd::Model& model = cm.treeModel;
  if (model.nq != nq || model.nv != nv || model.nbodies != nb) {
    std::fprintf(stderr, "sizes differ\n");
    return 1;
  }
  cd::Data data(model);
  const Eigen::Map<const cd::VecX> qm(q.data(), nq), vm(v.data(), nv), tm(tau.data(), nv);
  std::vector<cd::Force> f(nb);
  for (int i = 0; i < nb; ++i) f[i] = Eigen::Map<const cd::Force>(fext.data() + 6 * i);
  int failures = 0;
  auto compare = [&](const char* what, const double* a, const double* b, long n) {
    double scale = 1.0, err = 0.0;
    for (long i = 0; i < n; ++i) scale = std::max(scale, std::abs(b[i]));
    for (long i = 0; i < n; ++i) err = std::max(err, std::abs(a[i] - b[i]));
    std::printf("%-28s max |Fortran - C++| = %.3g (scale %.3g)\n", what, err, scale);
    if (!(err <= 1e-12 * scale)) ++failures;
  };
  if (cd::aba(model, data, qm, vm, tm, f.data()) != cd::Status::Ok) return 1;
  compare("aba with fext", ddq.data(), data.ddq.data(), nv);
  if (cd::aba(model, data, qm, vm, tm) != cd::Status::Ok) return 1;
  compare("aba", ddq0.data(), data.ddq.data(), nv);
  if (cd::crba(model, data, qm) != cd::Status::Ok) return 1;
  compare("crba (column-major)", M.data(), data.M.data(), long(nv) * nv);
  if (cd::forwardKinematics(model, data, qm) != cd::Status::Ok) return 1;
  const int frame = static_cast<int>(model.frames.size()) - 1;
  const cd::Transform X = cd::framePlacement(model, data, frame);
  compare("frame position", p.data(), X.p.data(), 3);
  compare("frame rotation", R.data(), X.R.data(), 9);
  cd::Mat6X Jc(6, nv);
  if (cd::frameJacobian(model, data, frame, cd::ReferenceFrame::LocalWorldAligned, Jc) !=
      cd::Status::Ok)
    return 1;
  compare("frame Jacobian", J.data(), Jc.data(), 6L * nv);

  // Independent coordinates (a fresh workspace: the warm start is the reference configuration,
  // as in the Fortran program's workspace).
  if (cm.ny != ny || cm.nyq != nyq) {
    std::fprintf(stderr, "independent sizes differ\n");
    return 1;
  }
  cd::ClusterData cdata(cm);
  const Eigen::Map<const cd::VecX> ym(y.data(), nyq), ydm(ydot.data(), ny), tym(tauY.data(), ny),
      qcm(qc.data(), nq), vcm(vc.data(), nv);
  if (cd::independentToSpanning(cm, cdata, ym, ydm) != cd::Status::Ok) return 1;
  compare("closed q from y", qc.data(), cdata.q.data(), nq);
  compare("closed v from ydot", vc.data(), cdata.v.data(), nv);
  if (cd::ceAba(cm, cdata, qcm, vcm, tym, f.data()) != cd::Status::Ok) return 1;
  compare("ce_aba with fext", ydd.data(), cdata.ydd.data(), ny);
  compare("ce_aba qdd", qdd.data(), cdata.qdd.data(), nv);
  if (cd::ceAba(cm, cdata, qcm, vcm, tym) != cd::Status::Ok) return 1;
  compare("ce_aba", ydd0.data(), cdata.ydd.data(), ny);
  if (cd::clusterMassMatrix(cm, cdata, qcm) != cd::Status::Ok) return 1;
  compare("cluster mass matrix", H.data(), cdata.H.data(), long(ny) * ny);
  if (cd::clusterBias(cm, cdata, qcm, vcm) != cd::Status::Ok) return 1;
  compare("cluster bias", C.data(), cdata.C.data(), ny);
  if (cd::clusterConstraintMatrices(cm, cdata, qcm, vcm) != cd::Status::Ok) return 1;
  cd::MatX Gc = cd::MatX::Zero(nv, ny);
  cd::VecX gc = cd::VecX::Zero(nv);
  for (int k = 0; k < static_cast<int>(cm.clusters.size()); ++k) {
    const cd::Cluster& c = cm.clusters[k];
    Gc.block(c.v0, c.y0, c.nv, c.ny) = cdata.explicitMatrix(k);
    gc.segment(c.v0, c.nv) = cdata.explicitBias(k);
  }
  compare("G (column-major)", G.data(), Gc.data(), long(nv) * ny);
  compare("g", g.data(), gc.data(), nv);
  return failures ? 1 : 0;
}
