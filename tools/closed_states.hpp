// Random closed states of a cluster model (header-only; shared by the CLI, the demo and the
// benchmarks, which link different builds of the library).
#pragma once

#include <random>

#include "clusterdyn/cluster_algorithms.hpp"
#include "clusterdyn/configuration.hpp"

namespace clusterdyn::tools {

/// A state satisfying the loop constraints: spanning (q, v) and its independent (y, y_dot).
struct ClosedState {
  VecX q, v, y, ydot;
};

/// Random closed state: independent positions y taken from randomConfiguration(tree, rng, range)
/// (1-dof joints in [-range, range], random base pose), y_dot uniform in [-1, 1], closed with
/// independentToSpanning warm-started from the reference configuration. If the loop closure
/// fails (a linkage that does not assemble that far from its reference pose), the range is
/// halved, up to 8 times. Returns false if no closed state was found.
inline bool randomClosedState(const ClusterModel& cm, ClusterData& data, std::mt19937_64& rng,
                              ClosedState& out, double range = 1.0) {
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  VecX y(cm.nyq), ydot(cm.ny);
  for (int k = 0; k < cm.ny; ++k) ydot[k] = u(rng);
  for (int attempt = 0; attempt < 8; ++attempt, range *= 0.5) {
    const VecX qr = randomConfiguration(cm.tree, rng, range);
    for (int k = 0; k < cm.nyq; ++k) y[k] = qr[cm.independentPosition[k]];
    data.q = cm.qReference;
    if (independentToSpanning(cm, data, y, ydot) == Status::Ok) {
      out.q = data.q, out.v = data.v, out.y = y, out.ydot = ydot;
      return true;
    }
  }
  return false;
}

}  // namespace clusterdyn::tools
