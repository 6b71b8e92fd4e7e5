// Random closed states of a cluster model: the one implementation used by the tests (tests/,
// capi/tests/), the CLI, the demo and the benchmarks (tools/). Header-only on purpose: the
// benchmarks link a different build of the library (clusterdyn_core_native), so this header
// depends on the public C++ API only (no GoogleTest, no test_util).
#pragma once

#include <functional>
#include <random>

#include "clusterdyn/cluster_algorithms.hpp"
#include "clusterdyn/configuration.hpp"
#include "clusterdyn/independent_configuration.hpp"

namespace clusterdyn::support {

/// A state satisfying the loop constraints: spanning (q, v) and its independent (y, y_dot).
struct ClosedState {
  VecX q, v, y, ydot;
};

/// n numbers uniform in [lo, hi) (the same draws as clusterdyn::test::randomVector).
inline VecX uniformVector(Eigen::Index n, std::mt19937_64& rng, double lo = -1.0, double hi = 1.0) {
  VecX x(n);
  for (Eigen::Index i = 0; i < n; ++i) x[i] = std::uniform_real_distribution<double>(lo, hi)(rng);
  return x;
}

/// Random closed state over the whole configuration space: independent positions y taken from
/// randomConfiguration(tree, rng, range) (1-dof joints in [-range, range], random base pose),
/// y_dot uniform in [-1, 1], closed with independentToSpanning warm-started from the reference
/// configuration. If the loop closure fails (a linkage that does not assemble that far from its
/// reference pose), the range is halved for the next of up to `attempts` draws (1: no retry).
/// Returns false if no closed state was found; on success data.q, data.v also hold the state.
inline bool randomClosedState(const ClusterModel& cm, ClusterData& data, std::mt19937_64& rng,
                              ClosedState& out, double range = 1.0, int attempts = 8) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  VecX y(cm.nyq), ydot(cm.ny);
  for (int k = 0; k < cm.ny; ++k) ydot[k] = u(rng);
  for (int attempt = 0; attempt < attempts; ++attempt, range *= 0.5) {
    const VecX qr = randomConfiguration(cm.treeModel, rng, range);
    for (int k = 0; k < cm.nyq; ++k) y[k] = qr[cm.independentPosition[k]];
    data.q = cm.qReference;
    if (independentToSpanning(cm, data, y, ydot) == Status::Ok) {
      out.q = data.q, out.v = data.v, out.y = y, out.ydot = ydot;
      return true;
    }
  }
  return false;
}

/// Independent coordinates (y, y_dot = 0) of the reference configuration.
inline Status referenceIndependentState(const ClusterModel& cm, ClusterData& data, VecX& y,
                                        VecX& ydot) {
  y.resize(cm.nyq);
  ydot.resize(cm.ny);
  return spanningToIndependent(cm, data, cm.qReference, VecX::Zero(cm.treeModel.nv), y, ydot);
}

/// Random closed state near the reference branch of every loop: the independent positions of
/// tree clusters come from randomConfiguration(tree, rng, 1.0); those of constrained clusters
/// (loops, couplings) are their reference values plus uniform offsets in
/// [-loopRange, loopRange] (an independent multi-dof joint: moved by integrateIndependent along
/// such a tangent); y_dot uniform in [-1, 1]. Closed with independentToSpanning
/// warm-started from the reference configuration; `accept` (if given) may reject a closed state
/// (e.g. an ill-conditioned one). Up to `attempts` draws. Returns false if the reference
/// configuration has no independent coordinates or no draw was closed and accepted; on success
/// data.q, data.v also hold the state.
inline bool randomClosedStateNearReference(
    const ClusterModel& cm, ClusterData& data, std::mt19937_64& rng, ClosedState& out,
    double loopRange, int attempts,
    const std::function<bool(const ClosedState&)>& accept = nullptr) {
  VecX yRef, ydRef;
  if (referenceIndependentState(cm, data, yRef, ydRef) != Status::Ok) return false;
  for (int attempt = 0; attempt < attempts; ++attempt) {
    out.y = yRef;
    const VecX qr = randomConfiguration(cm.treeModel, rng, 1.0);
    for (const Cluster& c : cm.clusters) {
      if (!c.constrained()) {
        out.y.segment(c.yq0, c.nyq) = qr.segment(c.q0, c.nq);
      } else if (c.nyq == c.ny) {  // 1-dof independent joints
        out.y.segment(c.yq0, c.nyq) += uniformVector(c.nyq, rng, -loopRange, loopRange);
      } else {  // an independent multi-dof joint (a quaternion): moved along its tangent
        VecX e = VecX::Zero(cm.ny);
        e.segment(c.y0, c.ny) = uniformVector(c.ny, rng, -loopRange, loopRange);
        integrateIndependent(cm, out.y, e, 1.0, out.y);
      }
    }
    out.ydot = uniformVector(cm.ny, rng);
    data.q = cm.qReference;  // warm start near the reference branch
    if (independentToSpanning(cm, data, out.y, out.ydot) != Status::Ok) continue;
    out.q = data.q;
    out.v = data.v;
    if (accept && !accept(out)) continue;
    return true;
  }
  return false;
}

}  // namespace clusterdyn::support
