// Test helpers on the manifold of independent coordinates (y with its quaternions, nyq >= ny):
// random closed states near the reference and Richardson-extrapolated central differences of a
// function of (y, y_dot) along the tangent of y, the oracle of the CE-ABA / CE-RNEA derivatives.
#pragma once

#include <algorithm>
#include <random>

#include "closed_states.hpp"
#include "clusterdyn/clusterdyn.hpp"
#include "clusterdyn/independent_configuration.hpp"
#include "test_util.hpp"

namespace clusterdyn::test {

/// A closed state near the reference: y = yRef (+) e (e uniform in [-range, range] per tangent
/// direction), y_dot uniform in [-1, 1], closed from the reference configuration.
inline bool closedState(const ClusterModel& m, ClusterData& d, std::mt19937_64& rng, double range,
                        support::ClosedState& st) {
  VecX yRef, ydRef;
  if (support::referenceIndependentState(m, d, yRef, ydRef) != Status::Ok) return false;
  st.y.resize(m.nyq);
  if (integrateIndependent(m, yRef, randomVector(m.ny, rng, -range, range), 1.0, st.y) !=
      Status::Ok)
    return false;
  st.ydot = randomVector(m.ny, rng, -1.0, 1.0);
  d.q = m.qReference;
  if (independentToSpanning(m, d, st.y, st.ydot) != Status::Ok) return false;
  st.q = d.q;
  st.v = d.v;
  return true;
}

/// d f / d y (ny x ny, along the tangent: y (+) h e_k) by central differences extrapolated twice
/// (Richardson: h, h/2, h/4 with h = 2e-3, error O(h^6)), and d f / d y_dot by one central
/// difference of step 0.1 (exact: f is quadratic in y_dot for ABA and RNEA).
template <class F>
void manifoldJacobians(const ClusterModel& m, const VecX& y, const VecX& ydot, const F& f, MatX& dy,
                       MatX& dyd) {
  const int ny = m.ny;
  dy.resize(ny, ny);
  dyd.resize(ny, ny);
  VecX yp(m.nyq), ym(m.nyq);
  auto central = [&](int k, double h) {
    VecX e = VecX::Zero(ny);
    e[k] = h;
    integrateIndependent(m, y, e, 1.0, yp);
    integrateIndependent(m, y, -e, 1.0, ym);
    return VecX((f(yp, ydot) - f(ym, ydot)) / (2 * h));
  };
  for (int k = 0; k < ny; ++k) {
    const double h = 2e-3;
    const VecX d1 = central(k, h), d2 = central(k, h / 2), d4 = central(k, h / 4);
    dy.col(k) = (16.0 * (4.0 * d4 - d2) - (4.0 * d2 - d1)) / 45.0;
    VecX e = VecX::Zero(ny);
    e[k] = 0.1;  // quadratic in y_dot: exact central differences
    dyd.col(k) = (f(y, ydot + e) - f(y, ydot - e)) / 0.2;
  }
}

/// max |a - b| / max(1, max |b|): the error of a Jacobian a against its oracle b.
inline double oracleError(const MatX& a, const MatX& b) {
  return (a - b).cwiseAbs().maxCoeff() / std::max(1.0, b.cwiseAbs().maxCoeff());
}

}  // namespace clusterdyn::test
