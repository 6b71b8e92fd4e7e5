// Checks the numbers written by test_capi_fortran against the C++ API: same inputs (read back
// exactly, 17 significant digits), aba with/without external forces, crba, frame placement and
// Jacobian of the last frame. Usage: capi_fortran_check robot.urdf results.txt
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
  if (!in) {
    std::fprintf(stderr, "%s is truncated\n", argv[2]);
    return 1;
  }
  const cd::Model model = cd::loadTreeModel(argv[1]);
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
  return failures ? 1 : 0;
}
